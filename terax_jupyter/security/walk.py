"""Enumerate the files under a checked folder: no symlinked folders, nothing denied, bounded."""

from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import TeraxError
from terax_jupyter.security.fileio import open_directory

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security.denylist import DenyList
    from terax_jupyter.security.paths import CheckedPath


@dataclass
class WalkResult:
    """Relative ``/``-separated file paths, and whether a bound cut the walk short."""

    files: list[str] = field(default_factory=list)
    truncated: bool = False


def walk_files(
    top: CheckedPath,
    deny: DenyList,
    *,
    skip_directory: Callable[[str, str], bool],
    skip_file: Callable[[str], bool] | None = None,
    max_files: int,
    time_limit: float,
) -> WalkResult:
    """Breadth-first walk of ``top``. ``skip_directory(path, name)`` prunes a folder.

    Symlinked folders are not entered (they may lead anywhere); symlinked files
    are listed, since reading one goes through the guard again.
    """
    result = WalkResult()
    deadline = time.monotonic() + time_limit
    pending = deque([top.path])
    while pending:
        folder = pending.popleft()
        batch: list[tuple[str, bool]] = []
        try:
            # Opened without following a link and proven to be ``folder``: a folder swapped
            # for a symlink after it was queued is not listed. Entry types are read while
            # the descriptor is open (a type the listing lacks is a stat relative to it).
            with open_directory(folder) as fd, os.scandir(folder if fd is None else fd) as entries:
                for entry in entries:
                    try:
                        batch.append((entry.name, entry.is_dir(follow_symlinks=False)))
                    except OSError:
                        continue
        except (OSError, TeraxError):
            continue
        for name, is_dir in batch:
            path = os.path.join(folder, name)
            if is_dir:
                if not skip_directory(path, name) and deny.check(path, write=False) is None:
                    pending.append(path)
                continue
            if skip_file is not None and skip_file(path):
                continue
            result.files.append(os.path.relpath(path, top.path).replace(os.sep, "/"))
        if len(result.files) >= max_files or time.monotonic() > deadline:
            result.truncated = True
            break
    if result.files:
        denied = deny.denied_among(result.files, base=top.path)
        if denied:
            result.files = [f for i, f in enumerate(result.files) if i not in denied]
    del result.files[max_files:]
    return result
