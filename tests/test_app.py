"""`jupyter terax [PATH]`: starts Lab with Terax at PATH, or fails in one line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

from terax_jupyter.app import AlreadyRunning, LaunchError, _split_arguments, preflight

LAUNCH_TIMEOUT = 60


def _isolated_environment(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[name] = str(tmp_path / name.lower())
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path / "lab-settings")
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).parent.parent), env.get("PYTHONPATH", "")]
    )
    return env


def _terax_command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "terax_jupyter", *arguments]


def _run(
    arguments: list[str], tmp_path: Path, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arguments,
        capture_output=True,
        text=True,
        timeout=LAUNCH_TIMEOUT,
        env=_isolated_environment(tmp_path),
        check=False,
        **kwargs,  # type: ignore[arg-type]
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- argument parsing (no server) ----------------------------------------------------------


def test_split_arguments_reads_traitlets_forms():
    positional, options = _split_arguments(
        ["--no-browser", "work", "--port", "9000", "--ServerApp.ip=0.0.0.0", "--read-only"]
    )
    assert positional == ["work"]
    assert options == {"no-browser": "", "port": "9000", "ServerApp.ip": "0.0.0.0", "read-only": ""}


def test_preflight_refuses_two_paths(tmp_path):
    with pytest.raises(LaunchError, match="one PATH"):
        preflight([str(tmp_path), str(tmp_path)])


def test_preflight_refuses_a_bad_port_number(tmp_path):
    with pytest.raises(LaunchError, match="must be a number"):
        preflight([str(tmp_path), "--port=eighty"])
    with pytest.raises(LaunchError, match="between 0 and 65535"):
        preflight([str(tmp_path), "--port=70000"])


def test_preflight_turns_off_port_retries_for_an_explicit_port(tmp_path):
    arguments = preflight([str(tmp_path), f"--port={_free_port()}"])
    assert arguments[-1] == "--ServerApp.port_retries=0"
    assert preflight([str(tmp_path)]) == [str(tmp_path)]


# -- the real command ------------------------------------------------------------------------


def test_missing_path_is_one_line_and_nonzero(tmp_path):
    result = _run(_terax_command(str(tmp_path / "nope"), "--no-browser"), tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert lines == [f"jupyter terax: {tmp_path / 'nope'}: no such file or folder"]
    assert "Traceback" not in result.stdout + result.stderr


def test_unreadable_path_is_one_line_and_nonzero(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        command = _terax_command(str(locked), "--no-browser")
        if os.geteuid() == 0:
            # Root ignores permission bits unless its DAC capabilities are dropped (util-linux).
            drop = "-dac_override,-dac_read_search"
            command = ["setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", *command]
        result = _run(command, tmp_path)
    finally:
        locked.chmod(stat.S_IRWXU)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"jupyter terax: {locked}: permission denied (the folder cannot be read)"
    ]


def test_busy_port_is_one_line_and_nonzero(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = _run(
            _terax_command(str(tmp_path), "--no-browser", "--ip=127.0.0.1", f"--port={port}"),
            tmp_path,
        )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"jupyter terax: port {port} on 127.0.0.1 is already in use; choose another with --port"
    ]


@contextlib.contextmanager
def _running_terax(tmp_path: Path, *arguments: str) -> Iterator[tuple[int, str, Path]]:
    """``jupyter terax`` in a subprocess with a fake browser; yields (port, token, browser log)."""
    browser_log = tmp_path / "browser.log"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$@" >> {browser_log}\n')
    browser.chmod(0o755)
    port = _free_port()
    env = _isolated_environment(tmp_path)
    env["BROWSER"] = str(browser)
    process = subprocess.Popen(
        _terax_command(*arguments, "--ip=127.0.0.1", f"--port={port}", "--allow-root"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        url = _wait_for_token_url(process, port)
        yield port, url.split("token=", 1)[1], browser_log
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_starts_lab_rooted_at_path_and_prints_the_token_url(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "hello.py").write_text("print('hi')\n")
    with _running_terax(tmp_path, str(project)) as (port, token, browser_log):
        info = _get_json(f"http://127.0.0.1:{port}/terax/api/info", token)
        assert info["server_root"] == str(project.resolve())
        # Lab's page lists the Terax extension among those it loads.
        lab = _get(f"http://127.0.0.1:{port}/lab?token={token}")
        assert '"name": "terax-jupyter"' in lab or '"name":"terax-jupyter"' in lab
        deadline = time.monotonic() + 15
        while not browser_log.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert browser_log.exists(), "the browser was not opened"


def test_no_browser_does_not_open_one(tmp_path):
    with _running_terax(tmp_path, str(tmp_path), "--no-browser") as (_, _, browser_log):
        time.sleep(1.5)
        assert not browser_log.exists()


def _wait_for_token_url(process: subprocess.Popen[str], port: int) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + LAUNCH_TIMEOUT
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            if process.poll() is not None:
                break
            continue
        seen.append(line)
        if f"127.0.0.1:{port}/" in line and "token=" in line:
            url = line.strip().split()[-1]
            _wait_until_listening(port, deadline)
            return url
    raise AssertionError("no URL with a token was printed:\n" + "".join(seen))


def _wait_until_listening(port: int, deadline: float) -> None:
    # The URL is printed just before the server starts accepting connections.
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def _get(url: str, token: str | None = None) -> str:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"token {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode("utf-8")


def _get_json(url: str, token: str) -> dict[str, object]:
    return json.loads(_get(url, token))


def test_the_jupyter_subcommand_is_installed(tmp_path):
    # `jupyter terax` finds the `jupyter-terax` console script next to this interpreter.
    jupyter = Path(sys.executable).parent / "jupyter"
    result = _run([str(jupyter), "terax", str(tmp_path / "missing"), "--no-browser"], tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"jupyter terax: {tmp_path / 'missing'}: no such file or folder"
    ]


def test_help_shows_the_options_a_user_needs(tmp_path):
    result = _run(_terax_command("--help"), tmp_path)
    assert result.returncode == 0
    for needed in ("[PATH]", "--port", "--no-browser", "--ip", "--allow-root", "--read-only",
                   "jupyter terax mcp", "--help-all"):  # fmt: skip
        assert needed in result.stdout, needed


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_without_allow_root_ends_with_one_line_saying_what_to_do(tmp_path):
    result = _run(
        _terax_command(str(tmp_path), "--no-browser", "--ip=127.0.0.1", f"--port={_free_port()}"),
        tmp_path,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        "jupyter terax: refusing to run as root; start it as your own user, or add "
        "--allow-root if you mean to (as in a container)."
    )


def _server_file(runtime: Path, root: Path, port: int, pid: int) -> None:
    runtime.mkdir(parents=True, exist_ok=True)
    info = {"url": f"http://127.0.0.1:{port}/", "token": "t0k", "root_dir": str(root), "pid": pid}
    (runtime / f"jpserver-{pid}.json").write_text(json.dumps(info))


def test_preflight_offers_the_server_already_running_for_the_folder(tmp_path, monkeypatch):
    runtime, project, other = tmp_path / "runtime", tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    _server_file(runtime, project, 8123, os.getpid())  # a live process
    with pytest.raises(AlreadyRunning) as caught:
        preflight([str(project)])
    assert "http://127.0.0.1:8123/lab?token=t0k" in str(caught.value)
    with pytest.raises(AlreadyRunning):
        preflight([str(project / ".")])  # the same folder, written another way
    # Another folder, an explicit port, or a dead server's leftover file: start as asked.
    assert preflight([str(other)]) == [str(other)]
    assert preflight([str(project), "--port=0"])[:2] == [str(project), "--port=0"]
    assert preflight([str(project), "--help"]) == [str(project), "--help"]
    (runtime / f"jpserver-{os.getpid()}.json").unlink()
    _server_file(runtime, project, 8124, 2**22 + 7)  # no such process
    assert preflight([str(project)]) == [str(project)]


def test_a_second_launch_on_the_same_folder_prints_the_running_url(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    with _running_terax(tmp_path, str(project), "--no-browser") as (port, token, _):
        second = _run(_terax_command(str(project), "--no-browser", "--allow-root"), tmp_path)
        assert second.returncode == 0
        assert f"127.0.0.1:{port}/lab?token={token}" in second.stdout
        assert "give --port to start another" in second.stdout
        # No second server started: the first is the only one listed.
        listed = list((tmp_path / "jupyter_runtime_dir").glob("jpserver-*.json"))
        assert len(listed) == 1
