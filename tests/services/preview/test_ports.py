"""Listening ports of a real process tree, through psutil."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.services.preview.ports import listening_ports, reachable_from_loopback

from .conftest import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

LISTENER = """
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
s.bind((host, port))
s.listen()
time.sleep(60)
"""


@pytest.fixture
def listen(tmp_path: Path) -> str:
    """A shell word that starts a listener: ``f"{listen} 127.0.0.1 8000"``."""
    script = tmp_path / "listen.py"
    script.write_text(LISTENER)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


@pytest.fixture
def session_of() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Shells leading their own sessions (as a terminal's shell does); killed with their jobs."""
    shells: list[subprocess.Popen[bytes]] = []
    yield shells
    for shell in shells:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGKILL)
        shell.wait(timeout=10)


def start(shells: list[subprocess.Popen[bytes]], script: str) -> int:
    shell = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    shells.append(shell)
    return shell.pid


def wait_for_ports(leader: int, wanted: set[int]) -> dict[int, tuple[int, str]]:
    deadline = time.monotonic() + 10
    while True:
        found = listening_ports(leader)
        if wanted <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_the_shell_itself_listening_is_found(
    listen: str, session_of: list[subprocess.Popen[bytes]]
) -> None:
    port = free_port()
    leader = start(session_of, f"exec {listen} 127.0.0.1 {port}")
    found = wait_for_ports(leader, {port})
    pid, name = found[port]
    assert pid == leader
    assert name.startswith("python")
    os.killpg(leader, signal.SIGKILL)
    session_of.pop().wait(timeout=10)
    assert listening_ports(leader) == {}


def test_children_wildcards_and_left_behind_jobs_are_found(
    listen: str, session_of: list[subprocess.Popen[bytes]]
) -> None:
    loopback, wildcard, left_behind, elsewhere = (free_port() for _ in range(4))
    jobs = [
        f"{listen} 127.0.0.1 {loopback} &",
        f"{listen} 0.0.0.0 {wildcard} &",
        # A double fork: the job's parent exits, so it is no descendant, but keeps the session.
        f"bash -c {shlex.quote(f'{listen} 127.0.0.1 {left_behind} & exit 0')} &",
    ]
    wanted = {loopback, wildcard, left_behind}
    try:
        socket.socket(socket.AF_INET6).close()
        v6 = free_port("::1")
        jobs.append(f"{listen} ::1 {v6} &")
        wanted.add(v6)
    except OSError:
        pass
    leader = start(session_of, " ".join([*jobs, "sleep 60"]))
    # A process of another session listening is not this terminal's.
    start(session_of, f"exec {listen} 127.0.0.1 {elsewhere}")
    found = wait_for_ports(leader, wanted)
    assert wanted <= set(found), found
    assert elsewhere not in found
    assert all(name.startswith("python") for _, name in found.values())


def test_a_dead_leader_has_no_ports() -> None:
    process = subprocess.Popen(["true"])
    process.wait()
    assert listening_ports(process.pid) == {}


@pytest.mark.parametrize(
    ("host", "reachable"),
    [
        ("127.0.0.1", True),
        ("127.0.1.1", True),
        ("::1", True),
        ("0.0.0.0", True),
        ("::", True),
        ("::ffff:127.0.0.1", True),
        ("192.168.1.5", False),
        ("10.0.0.1", False),
        ("fe80::1%eth0", False),
        ("not an address", False),
    ],
)
def test_reachable_from_loopback(host: str, reachable: bool) -> None:
    assert reachable_from_loopback(host) is reachable
