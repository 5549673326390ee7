"""A second Unix user on this machine, for tests of what another local account can reach.

The tests that need one run as root (as CI does): ``.ci/run`` creates the account, and
``other_user()`` creates it too when it is missing, so a plain ``pytest`` as root works on a
fresh machine. Without root nobody can act as another uid, and those tests skip saying so.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence

OTHER_USER = "terax-other"


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int
    home: str

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run as this user (its groups, its home, a clean environment)."""
        return [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--init-groups",
            "--reset-env",
            "--",
            *argv,
        ]

    def run(self, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("cwd", self.home)
        return subprocess.run(self.command(argv), check=False, **kwargs)

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        kwargs.setdefault("cwd", self.home)
        return subprocess.Popen(self.command(argv), **kwargs)


def other_user() -> OtherUser:
    """The second account (created when root and it is missing); skips without root."""
    if os.name != "posix" or os.geteuid() != 0:
        pytest.skip("acting as a second Unix user needs root (CI runs these as root)")
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to act as a second user")
    try:
        entry = pwd.getpwnam(OTHER_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/bash", OTHER_USER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(OTHER_USER)
    return OtherUser(entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir)
