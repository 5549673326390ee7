"""The temporary profile of a browser whose server died is removed by the next launch."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

from terax_jupyter.services.browser import launcher as launcher_module
from terax_jupyter.services.browser.launcher import OWNER_FILE, PROFILE_PREFIX, ChromiumLauncher


def profile_of(owner: int | None) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=PROFILE_PREFIX))
    if owner is not None:
        (folder / OWNER_FILE).write_text(str(owner), encoding="ascii")
    (folder / "data").mkdir()
    return folder


async def launch_and_close() -> tuple[str, Path]:
    launcher = ChromiumLauncher()
    await launcher.start()
    assert launcher.profile_dir is not None
    profile = launcher.profile_dir
    owner = (profile / OWNER_FILE).read_text(encoding="ascii")
    await launcher.close()
    return owner, profile


def test_a_launch_removes_the_profiles_of_dead_servers() -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid no longer runs
    orphaned = profile_of(dead.pid)
    alive = profile_of(1)  # init: an owner that is still running
    unowned = profile_of(None)  # no owner written: not ours to judge
    launcher_module._swept.clear()
    try:
        owner, profile = asyncio.run(launch_and_close())
        assert owner.isdigit()
        assert not orphaned.exists()
        assert alive.exists()
        assert unowned.exists()
        assert not profile.exists()  # its own profile went with close()
    finally:
        for folder in (orphaned, alive, unowned):
            shutil.rmtree(folder, ignore_errors=True)
