"""The path guard: literal check, canonicalization, canonical re-check, and the checked path."""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import OutsideWorkspace, PathChanged, PathDenied, ReadOnlyMode
from terax_jupyter.security.hardlinks import HardLinkRule
from terax_jupyter.security.normalize import reject_unusable, to_slashes

if TYPE_CHECKING:
    from terax_jupyter.security.denylist import DenyList
    from terax_jupyter.security.workspace import WorkspaceRoot, WorkspaceRoots


_DEFAULT_HARD_LINKS = HardLinkRule()


class Access(enum.Enum):
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class CheckedPath:
    """A canonical path the guard approved for one kind of access.

    Only the guard makes these; the I/O helpers in ``security.fileio`` take
    nothing else, and re-verify at open time that the path did not change.
    ``hard_links`` is the rule the I/O helpers apply before reading content.
    """

    path: str
    root: WorkspaceRoot
    access: Access
    follows_symlinks: bool = True
    hard_links: HardLinkRule = _DEFAULT_HARD_LINKS

    def __fspath__(self) -> str:
        return self.path

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def parent(self) -> str:
        return os.path.dirname(self.path)

    @property
    def is_root(self) -> bool:
        return os.path.normcase(self.path) == os.path.normcase(self.root.path)


class PathGuard:
    """Applies the security rules for paths; every file operation starts here."""

    def __init__(
        self,
        roots: WorkspaceRoots,
        deny: DenyList,
        *,
        read_only: bool = False,
        hard_links: HardLinkRule = _DEFAULT_HARD_LINKS,
    ) -> None:
        self.roots = roots
        self.deny = deny
        self.read_only = read_only
        self.hard_links = hard_links

    def refuse_writes(self, what: str) -> None:
        """Raise ``ReadOnlyMode`` on a read-only server, before anything changes; ``what``
        completes "The server is read-only: ..." (e.g. "AI settings cannot change")."""
        if self.read_only:
            raise ReadOnlyMode(f"The server is read-only: {what}.")

    def check(
        self,
        path: str,
        access: Access = Access.READ,
        *,
        follow_symlinks: bool = True,
    ) -> CheckedPath:
        """Check ``path`` and return its canonical form, or raise.

        Relative paths are relative to the server root. With ``follow_symlinks``
        false, a final symlink is the object itself (to delete or rename a link,
        not its target); its parent is still canonicalized.
        """
        reject_unusable(path)
        write = access is Access.WRITE
        if write and self.read_only:
            raise ReadOnlyMode("The server is read-only: the administrator turned off writes.")
        self._deny_check(path, write=write)

        literal = self._absolute(path)
        try:
            canonical = _canonical(literal, follow_symlinks=follow_symlinks)
        except OSError as error:
            # realpath only fails when a link it saw vanished or changed before it read it:
            # the path is changing under us (409, try again), not a fault of the server.
            raise PathChanged(
                f"{path} changed while it was being checked ({error.strerror}); try again."
            ) from None
        self._deny_check(canonical, write=write, shown=path)

        root = self.roots.containing(canonical)
        if root is None:
            raise OutsideWorkspace(
                f"{path} is outside the workspace roots; add its folder as a root to use it."
            )
        return CheckedPath(canonical, root, access, follow_symlinks, self.hard_links)

    def display(self, canonical: str) -> str:
        """How a canonical path is shown to clients: relative to the server root when inside it."""
        server_root = self.roots.server_root
        if os.path.normcase(canonical) == os.path.normcase(server_root):
            return ""
        relative = os.path.relpath(canonical, server_root)
        if relative == os.pardir or relative.startswith(os.pardir + os.sep):
            return canonical.replace(os.sep, "/")
        return relative.replace(os.sep, "/")

    def _absolute(self, path: str) -> str:
        native = to_slashes(path)
        if os.sep != "/":
            native = native.replace("/", os.sep)
        if os.path.isabs(native):
            return native
        # No lexical normpath: ``link/..`` must be resolved by the filesystem, not by text.
        return os.path.join(self.roots.server_root, native)

    def _deny_check(self, path: str, *, write: bool, shown: str | None = None) -> None:
        denial = self.deny.check(path, write=write)
        if denial is not None:
            verb = "written" if write else "read"
            raise PathDenied(
                f"{shown or path} is protected and cannot be {verb}: {denial.explain()}."
            )


def _canonical(literal: str, *, follow_symlinks: bool) -> str:
    if follow_symlinks:
        return os.path.realpath(literal)
    parent, name = os.path.split(literal.rstrip("/" + os.sep) or literal)
    if name in ("", ".", ".."):
        return os.path.realpath(literal)
    return os.path.join(os.path.realpath(parent), name)
