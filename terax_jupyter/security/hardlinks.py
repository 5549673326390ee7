"""The hard-link rule: a file with several names is read only where package managers make them.

A hard link is a second name for the same file. ``ln .env notes.txt`` (or a tar archive's
link entry, or ``cp -al``) gives a protected file, or a file outside every workspace root,
an ordinary name inside one; the deny-list and the roots judge names, so that name would
read the secret. The other names of a file cannot be found without searching the whole
filesystem, so the rule judges the file itself: a regular file with more than one name is
not read, searched or copied (its content is refused; its name is still listed), except in
the folders where package managers hard-link every file they install from their caches
(pnpm, bun and yarn's ``node_modules``, uv and conda's ``site-packages``). There a link to a
secret is still read: the limit is documented, and an administrator can refuse those too.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import AccessDenied, InvalidRequest

if TYPE_CHECKING:
    from collections.abc import Iterable

MODES = ("stores", "refuse", "allow")
# Folders (whole path segments, anywhere above the file) whose files package managers
# hard-link from a cache outside the project: pnpm (its virtual store and hoisted layout), bun,
# yarn's hardlinks modes and a project-local pnpm store; uv and conda environments (and pip
# installs into them) on Linux.
PACKAGE_STORES: tuple[str, ...] = ("node_modules", ".pnpm-store", "site-packages", "dist-packages")


@dataclass(frozen=True)
class HardLinkRule:
    """What Terax does with a regular file that has more than one name.

    ``stores`` (the default) reads such a file only inside a package store folder;
    ``refuse`` reads none; ``allow`` turns the rule off.
    """

    mode: str = "stores"
    stores: tuple[str, ...] = PACKAGE_STORES
    _folded: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidRequest(
                f"The hard-link setting must be one of {', '.join(MODES)}, not {self.mode!r}.",
                reason="invalid_setting",
            )
        object.__setattr__(self, "_folded", frozenset(s.casefold() for s in self.stores))

    @classmethod
    def build(cls, mode: str = "stores", extra_stores: Iterable[str] = ()) -> HardLinkRule:
        extra = tuple(s.strip().strip("/\\") for s in extra_stores if s.strip().strip("/\\"))
        return cls(mode, PACKAGE_STORES + extra)

    def check(self, path: str, info: os.stat_result) -> None:
        """Refuse (AccessDenied, reason ``hard_link``) to read the content of ``path``.

        ``info`` is the ``fstat`` of the descriptor about to be read, so the answer is
        about the file that is read, not about whatever the name points at later.
        """
        if info.st_nlink <= 1 or not stat.S_ISREG(info.st_mode) or self.mode == "allow":
            return
        if self.mode == "stores" and self.in_store(path):
            return
        name = os.path.basename(path)
        raise AccessDenied(
            f"{path} has {info.st_nlink} names (hard links). Another of them may be a protected "
            "file or a file outside the workspace, so Terax does not read, search or copy it. "
            f"To use it, give it its own copy: in a terminal, cp -p '{name}' '{name}.tmp' && "
            f"mv '{name}.tmp' '{name}' (the other names keep the old content). An administrator "
            "can allow such files with TeraxApp.hard_links = 'allow'.",
            reason="hard_link",
        )

    def in_store(self, path: str) -> bool:
        """Whether a folder above ``path`` is a package store (``node_modules``, ...)."""
        folders = path.replace("\\", "/").casefold().split("/")[:-1]
        return any(segment in self._folded for segment in folders)
