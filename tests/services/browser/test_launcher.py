"""ChromiumLauncher: finding the binary, start-up, its environment, and a clean end."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import BrowserError, Timeout, Unavailable
from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.browser import launcher as launcher_module
from terax_jupyter.services.browser.cdp import CdpConnection
from terax_jupyter.services.browser.launcher import ChromiumLauncher, find_chromium
from terax_jupyter.services.browser.manager import BrowserManager
from terax_jupyter.services.browser.session import BrowserSession

from .driver_fixtures import live_group_members

if TYPE_CHECKING:
    from tests.second_user import OtherUser


def write_script(folder: Path, name: str, body: str) -> Path:
    """An executable: ``body`` run by sh, unless it starts with its own ``#!``."""
    script = folder / name
    script.write_text(body if body.startswith("#!") else "#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


# A stand-in browser (Debian's Python, stdlib only): records its arguments, environment and
# open descriptors, leaves a child in its process group, and answers the start-up call on its
# DevTools pipe as Chromium does (read fd 3 up to a NUL, answer on fd 4).
FAKE_BROWSER = """#!/usr/bin/python3
import json, os, subprocess, sys
data = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--user-data-dir="))
os.makedirs(data)
folder = os.path.dirname(data)
with open(os.path.join(folder, "args.txt"), "w") as out:
    out.write("\\n".join(sys.argv[1:]) + "\\n")
with open(os.path.join(folder, "env.txt"), "w") as out:
    out.write("".join(f"{k}={v}\\n" for k, v in os.environ.items()))
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass  # the listing's own descriptor, closed by now
with open(os.path.join(folder, "fds.json"), "w") as out:
    json.dump(fds, out)
subprocess.Popen(["sleep", "60"], pass_fds=())
request = b""
while not request.endswith(b"\\0"):
    request += os.read(3, 65536)
call = json.loads(request[:-1])
answer = {"id": call["id"], "result": {"product": "FakeChrome/1.0", "method": call["method"]}}
os.write(4, json.dumps(answer).encode() + b"\\0")
os.read(3, 65536)  # until the server closes its end
"""


async def test_a_real_chromium_starts_answers_and_leaves_nothing_behind() -> None:
    launcher = ChromiumLauncher()
    pipe = await launcher.start()
    try:
        assert launcher.product is not None
        assert launcher.product.startswith("Chrome/")
        assert launcher.pid is not None
        assert launcher.running
        assert launcher.profile_dir is not None
        assert launcher.profile_dir.is_dir()
        assert not (launcher.profile_dir / "data" / "DevToolsActivePort").exists()  # no port
        profile, group = launcher.profile_dir, launcher.pid
        assert len(live_group_members(group)) > 1  # the browser and its helpers
        assert await launcher.start() is pipe  # started: the same pipe
        connection = await CdpConnection.connect(pipe)
        try:
            version = await connection.send("Browser.getVersion")
            assert "Chrome" in version["product"]
        finally:
            await connection.close()
    finally:
        await launcher.close()
    assert live_group_members(group) == []
    assert not profile.exists()
    assert not launcher.running
    assert pipe.lost is not None
    await launcher.close()  # twice is fine
    with pytest.raises(BrowserError, match="already used"):
        await launcher.start()


async def test_start_runs_the_browser_headless_private_and_locked_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    fake = write_script(tmp_path, "fake-chrome", FAKE_BROWSER)
    launcher = ChromiumLauncher(str(fake), close_grace=1)
    pipe = await launcher.start()
    assert launcher.product == "FakeChrome/1.0"  # it answered over fds 3 and 4
    assert launcher.profile_dir is not None
    profile, group = launcher.profile_dir, launcher.pid
    assert group is not None
    args = (profile / "args.txt").read_text().splitlines()
    environment = (profile / "env.txt").read_text()
    for flag in (
        "--headless=new",
        "--remote-debugging-pipe",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-extensions",
        "--proxy-server=http://127.0.0.1:9",
    ):
        assert flag in args
    assert [
        a for a in args if a.startswith(("--remote-debugging-port", "--remote-debugging-a"))
    ] == []
    assert f"--user-data-dir={profile / 'data'}" in args
    assert "sk-should-not-leak" not in environment
    assert f"HOME={profile / 'home'}" in environment
    # Nothing of the server's but the two ends of its DevTools pipe, on 3 and 4.
    fds = json.loads((profile / "fds.json").read_text())
    assert set(fds) - {"0", "1", "2"} == {"3", "4"}, fds
    assert fds["3"].startswith("pipe:")
    assert fds["4"].startswith("pipe:")
    assert fds["0"] == "/dev/null"
    assert os.getpgid(group) == group  # its own process group
    assert len(live_group_members(group)) == 2  # the browser and its sleeping child

    await launcher.close()
    assert live_group_members(group) == []
    assert not profile.exists()
    assert pipe.lost is not None


def test_the_sandbox_is_on_unless_the_server_is_root_or_the_admin_turns_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "profile"
    monkeypatch.setattr(launcher_module, "_is_root", lambda: False)
    assert "--no-sandbox" not in ChromiumLauncher().arguments("chromium", profile)
    assert ChromiumLauncher().sandboxed
    off = ChromiumLauncher(sandbox=False)
    assert not off.sandboxed
    assert "--no-sandbox" in off.arguments("chromium", profile)
    # As root Chromium does not start with its sandbox: off, whatever the setting.
    monkeypatch.setattr(launcher_module, "_is_root", lambda: True)
    assert "--no-sandbox" in ChromiumLauncher(sandbox=True).arguments("chromium", profile)

    assert BrowserManager(str(tmp_path), redactor=Redactor())._launcher().sandbox
    manager = BrowserManager(str(tmp_path), redactor=Redactor(), chromium_sandbox=False)
    assert not manager._launcher().sandbox


# Runs the browser as the other user, as a server that is not root would: the profile is
# handed over, then setpriv drops to that uid (descriptors 3 and 4 go through).
AS_OTHER = """
for a in "$@"; do case "$a" in --user-data-dir=*) data="${a#--user-data-dir=}";; esac; done
chown -R UID:GID "$(dirname "$data")"
exec setpriv --reuid=UID --regid=GID --init-groups -- /usr/bin/chromium "$@"
"""


def renderer_status(group: int) -> list[dict[str, str]]:
    """``/proc/<pid>/status`` fields of the group's renderers (their argv is rewritten into
    one string, so the type is looked for anywhere in it)."""
    found = []
    for pid in live_group_members(group):
        try:
            if b"--type=renderer" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            continue
        found.append(dict(line.split(":\t", 1) for line in lines if ":\t" in line))
    return found


async def test_a_server_that_is_not_root_runs_the_browser_in_its_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second_user: OtherUser
) -> None:
    script = AS_OTHER.replace("UID", str(second_user.uid)).replace("GID", str(second_user.gid))
    wrapper = write_script(tmp_path, "as-other", script)
    monkeypatch.setattr(launcher_module, "_is_root", lambda: False)  # as that user is not
    async with BrowserSession(ChromiumLauncher(str(wrapper)), owns_launcher=True) as browser:
        page = await browser.new_page()
        await page.navigate("about:blank")
        assert await page.evaluate("6 * 7") == 42  # driven over the pipe, through setpriv
        group = browser.launcher.pid
        assert group is not None
        renderers = renderer_status(group)
    assert renderers, "no renderer process was found"
    for status in renderers:
        assert status["Uid"].split()[0] == str(second_user.uid)
        assert status["Seccomp"] == "2"  # a seccomp-bpf filter: the sandbox
        assert len(status["NSpid"].split()) > 1  # in a PID namespace of its own


@pytest.mark.skipif(os.geteuid() != 0, reason="Chromium refuses its sandbox only as root")
async def test_a_sandbox_that_cannot_start_names_the_setting_to_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As root with the sandbox asked for, the real Chromium refuses to start: the same
    # failure a machine without user namespaces gives.
    monkeypatch.setattr(launcher_module, "_is_root", lambda: False)
    launcher = ChromiumLauncher()
    with pytest.raises(BrowserError, match="its sandbox could not start") as raised:
        await launcher.start()
    assert "c.BrowserManager.chromium_sandbox = False" in raised.value.message
    assert "--no-sandbox" in raised.value.message  # Chromium's own words follow
    assert raised.value.reason == "browser_start_failed"
    assert launcher.profile_dir is None
    assert not launcher.running


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


async def test_a_browser_that_never_answers_on_its_pipe_times_out_and_is_ended(
    tmp_path: Path,
) -> None:
    # It holds the pipe open (sleep inherits fds 3 and 4) and never answers.
    stuck = write_script(tmp_path, "stuck", "echo 'still thinking' >&2\nexec sleep 60\n")
    launcher = ChromiumLauncher(str(stuck), startup_timeout=0.5, close_grace=1)
    with pytest.raises(
        Timeout, match=r"did not answer on its DevTools pipe within 0\.5 s"
    ) as raised:
        await launcher.start()
    assert "still thinking" in raised.value.message
    assert launcher.pid is not None
    assert live_group_members(launcher.pid) == []
    assert launcher.profile_dir is None
