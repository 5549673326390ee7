"""A server that dies without closing its browser (killed, crashed) leaves no Chromium."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

LAUNCH = """
import asyncio, sys
from terax_jupyter.services.browser.launcher import ChromiumLauncher

async def main():
    launcher = ChromiumLauncher()
    await launcher.start()
    print(launcher.pid, launcher.profile_dir, flush=True)
    await asyncio.sleep(120)

asyncio.run(main())
"""


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_killed_server_takes_its_browser_with_it() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", LAUNCH], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert owner.stdout is not None
        pid = int(owner.stdout.readline().split()[0])
        assert alive(pid)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid), "the browser outlived the process that started it"
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
