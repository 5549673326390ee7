"""Closing sessions ends every process they started, leaves no zombies, leaks no descriptors."""

from __future__ import annotations

import asyncio
import shlex
import sys
from typing import TYPE_CHECKING

import pytest

from .helpers import (
    SHELLS,
    alive,
    at_prompt,
    open_descriptors,
    session_members,
    wait_for,
    zombie_children,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.pty.manager import PtyManager

PYTHON = shlex.quote(sys.executable)
# Each in its own way harder to end than the shell.
STUBBORN = [
    "sleep 1000 &",
    # A job that made itself a process group of its own.
    f"{PYTHON} -c 'import os, time; os.setpgid(0, 0); time.sleep(1000)' &",
    "nohup sleep 1001 >/dev/null 2>&1 &",
    # Ignores SIGHUP and SIGTERM: only SIGKILL ends it.
    f"{PYTHON} -c 'import signal as s, time; s.signal(s.SIGHUP, s.SIG_IGN); "
    "s.signal(s.SIGTERM, s.SIG_IGN); time.sleep(1000)' &",
    # Orphaned at once (its parent exits), so no longer the shell's descendant.
    "(sleep 1002 &)",
    # Starts another job when it gets SIGHUP: forked after the close began.
    "bash -c 'trap \"sleep 1004 & wait\" HUP; while :; do sleep 0.05; done' &",
]


async def test_close_ends_the_shell_its_jobs_and_their_orphans(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(close_grace=0.3)
    session = await manager.create(shell="bash")
    await at_prompt(session)
    shell = session.process.pid
    for command in STUBBORN:
        await manager.run(session.id, command, timeout=10)
    session.write(b"sleep 1003\r")  # and one in the foreground
    await wait_for(lambda: len(session_members(shell)) >= len(STUBBORN) + 2, 10, "jobs")
    members = session_members(shell)
    await manager.close(session.id)
    assert [pid for pid in members if alive(pid)] == []
    assert session_members(shell) == []
    assert zombie_children() == []
    assert session.exited


@pytest.mark.parametrize("shell", ["zsh", "fish"])
async def test_close_ends_background_jobs_of_other_shells(
    make_manager: Callable[..., PtyManager], shell: str
) -> None:
    manager = make_manager(close_grace=0.3)
    session = await manager.create(shell=shell)
    await at_prompt(session)
    await manager.run(session.id, "sleep 1000 &", timeout=10)
    await manager.run(session.id, "nohup sleep 1001 >/dev/null 2>&1 &", timeout=10)
    pid = session.process.pid
    await wait_for(lambda: len(session_members(pid)) >= 3, 10, "jobs")
    await manager.close(session.id)
    assert session_members(pid) == []
    assert zombie_children() == []


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_shell_that_exits_is_reaped(manager: PtyManager, shell: str) -> None:
    session = await manager.create(shell=shell)
    await at_prompt(session)
    pid = session.process.pid
    session.write(b"exit\r")
    assert await session.wait_exit(10) == 0
    await wait_for(lambda: session.id not in manager.sessions, 5, "forgotten")
    await wait_for(lambda: not alive(pid), 5, "reaped")
    assert zombie_children() == []


async def test_close_all_ends_every_session(manager: PtyManager) -> None:
    sessions = [await manager.create(shell=shell) for shell in SHELLS]
    for session in sessions:
        await at_prompt(session)
    pids = [s.process.pid for s in sessions]
    await manager.close_all()
    assert manager.sessions == {}
    assert not any(alive(pid) for pid in pids)
    assert zombie_children() == []


@pytest.mark.stress
async def test_churn_leaks_no_descriptors_and_no_processes(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(close_grace=0.3, max_sessions=16)

    async def one(number: int) -> int:
        session = await manager.create(shell="bash")
        result = await manager.run(session.id, f"echo churn-{number}", timeout=30)
        assert result["text"].strip() == f"churn-{number}"
        pid = session.process.pid
        await manager.close(session.id)
        return pid

    await one(-1)  # the thread pool and lazily opened files exist from here on
    baseline = open_descriptors()
    pids: list[int] = []
    for start in range(0, 200, 8):
        pids += await asyncio.gather(*(one(n) for n in range(start, start + 8)))
    assert len(set(pids)) == 200
    assert manager.sessions == {}
    assert open_descriptors() <= baseline
    assert not any(alive(pid) for pid in pids)
    assert zombie_children() == []
