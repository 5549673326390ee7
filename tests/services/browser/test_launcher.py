"""ChromiumLauncher: finding the binary, start-up, its environment, and a clean end."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

import pytest
import websockets.asyncio.client

from terax_jupyter.exceptions import BrowserError, Timeout, Unavailable
from terax_jupyter.services.browser.launcher import ChromiumLauncher, find_chromium

from .driver_fixtures import live_group_members

if TYPE_CHECKING:
    from pathlib import Path


def write_script(folder: Path, name: str, body: str) -> Path:
    script = folder / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


# A stand-in browser: writes DevToolsActivePort like Chromium, records its arguments and
# environment, then idles with a child in its process group.
FAKE_BROWSER = """
for a in "$@"; do case "$a" in --user-data-dir=*) data="${a#--user-data-dir=}";; esac; done
mkdir -p "$data"
printf '%s\\n' "$@" > "$data/../args.txt"
env > "$data/../env.txt"
sleep 60 &
printf '9222\\n/devtools/browser/fake-id\\n' > "$data/DevToolsActivePort"
wait
"""


async def test_a_real_chromium_starts_answers_and_leaves_nothing_behind() -> None:
    launcher = ChromiumLauncher()
    url = await launcher.start()
    try:
        assert url.startswith("ws://127.0.0.1:")
        assert "/devtools/browser/" in url
        assert launcher.pid is not None
        assert launcher.running
        assert launcher.profile_dir is not None
        assert launcher.profile_dir.is_dir()
        profile, group = launcher.profile_dir, launcher.pid
        assert len(live_group_members(group)) > 1  # the browser and its helpers
        async with websockets.asyncio.client.connect(url, proxy=None) as socket:
            await socket.send('{"id": 1, "method": "Browser.getVersion"}')
            assert "Chrome" in await socket.recv()
    finally:
        await launcher.close()
    assert live_group_members(group) == []
    assert not profile.exists()
    assert not launcher.running
    assert launcher.websocket_url is None
    await launcher.close()  # twice is fine


async def test_start_runs_the_browser_headless_private_and_locked_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    fake = write_script(tmp_path, "fake-chrome", FAKE_BROWSER)
    launcher = ChromiumLauncher(str(fake), close_grace=1)
    url = await launcher.start()
    assert url == "ws://127.0.0.1:9222/devtools/browser/fake-id"
    assert launcher.profile_dir is not None
    profile, group = launcher.profile_dir, launcher.pid
    assert group is not None
    args = (profile / "args.txt").read_text().splitlines()
    environment = (profile / "env.txt").read_text()
    for flag in (
        "--headless=new",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-extensions",
        "--no-sandbox",
        "--proxy-server=http://127.0.0.1:9",
    ):
        assert flag in args
    assert f"--user-data-dir={profile / 'data'}" in args
    assert "sk-should-not-leak" not in environment
    assert f"HOME={profile / 'home'}" in environment
    assert os.getpgid(group) == group  # its own process group
    assert len(live_group_members(group)) == 2  # the script and its sleeping child

    await launcher.close()
    assert live_group_members(group) == []
    assert not profile.exists()


async def test_a_missing_binary_is_unavailable_and_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(Unavailable, match="install Chromium") as raised:
        await ChromiumLauncher(str(tmp_path / "no-such-chromium")).start()
    assert raised.value.reason == "browser_missing"

    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unavailable, match="chromium, chromium-browser, google-chrome"):
        find_chromium()
    write_script(tmp_path, "google-chrome", "exit 0\n")
    assert find_chromium() == str(tmp_path / "google-chrome")


async def test_a_browser_that_dies_at_start_up_is_an_error_with_its_output(
    tmp_path: Path,
) -> None:
    broken = write_script(tmp_path, "broken", "echo 'cannot open display' >&2\nexit 3\n")
    launcher = ChromiumLauncher(str(broken))
    with pytest.raises(BrowserError, match="exit code 3") as raised:
        await launcher.start()
    assert "cannot open display" in raised.value.message
    assert launcher.profile_dir is None


async def test_a_browser_that_never_opens_its_port_times_out_and_is_ended(
    tmp_path: Path,
) -> None:
    stuck = write_script(tmp_path, "stuck", "echo 'still thinking' >&2\nexec sleep 60\n")
    launcher = ChromiumLauncher(str(stuck), startup_timeout=0.5, close_grace=1)
    with pytest.raises(Timeout, match=r"DevTools port within 0\.5 s") as raised:
        await launcher.start()
    assert "still thinking" in raised.value.message
    assert launcher.pid is not None
    assert live_group_members(launcher.pid) == []
    assert launcher.profile_dir is None
