"""Enumerate the files under a checked folder: no symlinked folders, nothing denied, bounded."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
    pending = [top.path]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                batch = list(entries)
        except OSError:
            continue
        for entry in batch:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if not skip_directory(entry.path, entry.name) and deny.check(entry.path, write=False) is None:
                    pending.append(entry.path)
                continue
            if skip_file is not None and skip_file(entry.path):
                continue
            result.files.append(os.path.relpath(entry.path, top.path).replace(os.sep, "/"))
        if len(result.files) >= max_files or time.monotonic() > deadline:
            result.truncated = True
            break
    if result.files:
        absolute = [os.path.join(top.path, relative) for relative in result.files]
        denied = deny.denied_among(absolute)
        if denied:
            result.files = [f for i, f in enumerate(result.files) if i not in denied]
    del result.files[max_files:]
    return result
