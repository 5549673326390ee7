"""FileManager: read, write, stat, list, create, rename, copy and delete inside workspace roots."""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import os
import stat
from typing import TYPE_CHECKING, Any

from traitlets import Int
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import (
    AlreadyExists,
    InvalidRequest,
    NotFound,
    ProtectedPath,
    StaleVersion,
    TooLarge,
    Unsupported,
)
from terax_jupyter.security import Access, fileio
from terax_jupyter.security.workspace import is_within
from terax_jupyter.services.fs.encoding import decode, encode, etag_for
from terax_jupyter.services.fs.ignore import IgnoreRules

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import CheckedPath, SecurityLayer

READ_FORMATS = ("auto", "text", "base64")


class FileManager(LoggingConfigurable):
    """File operations for the API and the agent's tools; every path goes through the guard."""

    max_read_bytes = Int(
        10 * 1024 * 1024, help="Largest file (bytes) the read API returns; larger gets 413."
    ).tag(config=True)
    max_write_bytes = Int(
        50 * 1024 * 1024, help="Largest content (bytes) the write API accepts."
    ).tag(config=True)

    def __init__(self, security: SecurityLayer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.security = security
        self._mutation_lock = asyncio.Lock()
        # Called with (kind, canonical path) after each change this manager makes, so that
        # indexes see it at once rather than at their next refresh.
        self.listeners: list[Callable[[str, str], None]] = []

    @property
    def guard(self) -> Any:
        return self.security.paths

    # -- reading ---------------------------------------------------------------------

    async def read(self, path: str, *, format: str = "auto") -> dict[str, Any]:
        if format not in READ_FORMATS:
            raise InvalidRequest(
                f"'format' must be one of {', '.join(READ_FORMATS)}.", reason="invalid_parameter"
            )
        checked = self.guard.check(path, Access.READ)
        data, info = await asyncio.to_thread(fileio.read_bytes, checked, self.max_read_bytes)
        if format == "base64":
            content, encoding = base64.b64encode(data).decode("ascii"), "base64"
        else:
            decoded = decode(data)
            if format == "text" and decoded.binary:
                raise Unsupported(f"{path} is a binary file.", reason="binary_file")
            content, encoding = decoded.content, decoded.encoding
        return {
            **self._describe(checked, info),
            "content": content,
            "encoding": encoding,
            "binary": encoding == "base64",
            "etag": etag_for(data, info.st_mtime_ns),
        }

    async def stat(self, path: str) -> dict[str, Any]:
        checked = self.guard.check(path, Access.READ, follow_symlinks=False)
        info = await asyncio.to_thread(fileio.stat_path, checked)
        return self._describe(checked, info)

    async def list(self, path: str = "", *, show_hidden: bool = True) -> dict[str, Any]:
        checked = self.guard.check(path or self.guard.roots.server_root, Access.READ)
        rows = await asyncio.to_thread(self._list_rows, checked, show_hidden)
        return {"path": self.guard.display(checked.path), "entries": rows}

    def _list_rows(self, checked: CheckedPath, show_hidden: bool) -> builtins.list[dict[str, Any]]:
        if not stat.S_ISDIR(fileio.stat_path(checked).st_mode):
            raise InvalidRequest(
                f"{self.guard.display(checked.path)} is not a folder.", reason="not_a_directory"
            )
        entries = fileio.list_directory(checked)
        if not show_hidden:
            entries = [e for e in entries if not e.name.startswith(".")]
        rules = IgnoreRules(checked.root.path)
        absolute = [os.path.join(checked.path, e.name) for e in entries]
        denied = self.security.deny.denied_among(absolute)
        rows = []
        for index, entry in enumerate(entries):
            is_dir = entry.kind == "directory" or entry.target_kind == "directory"
            rows.append(
                {
                    "name": entry.name,
                    "path": self.guard.display(absolute[index]),
                    "type": entry.kind,
                    "target_type": entry.target_kind,
                    "size": entry.size,
                    "mtime_ms": entry.mtime_ns // 1_000_000,
                    "mode": f"{entry.mode:o}",
                    "hidden": entry.name.startswith("."),
                    "ignored": rules.is_ignored(absolute[index], is_dir=is_dir),
                    "denied": index in denied,
                }
            )
        rows.sort(key=lambda row: (row["type"] != "directory", row["name"].lower()))
        return rows

    # -- writing ---------------------------------------------------------------------

    async def write(
        self,
        path: str,
        content: str,
        *,
        encoding: str = "utf-8",
        etag: str | None = None,
        overwrite: bool = False,
    ) -> dict[str, Any]:
        """Write a whole file atomically. An existing file needs its current etag (or overwrite)."""
        data = encode(content, encoding)
        if len(data) > self.max_write_bytes:
            raise TooLarge(
                f"The content is {len(data)} bytes; the limit is {self.max_write_bytes}."
            )
        checked = self.guard.check(path, Access.WRITE)
        async with self._mutation_lock:
            info = await asyncio.to_thread(self._write_checked, checked, data, etag, overwrite)
        self._changed("modified", checked.path)
        return {**self._describe(checked, info), "etag": etag_for(data, info.st_mtime_ns)}

    def _write_checked(
        self, checked: CheckedPath, data: bytes, etag: str | None, overwrite: bool
    ) -> os.stat_result:
        try:
            current, current_info = fileio.read_bytes(
                checked, max(self.max_read_bytes, self.max_write_bytes)
            )
        except NotFound:
            if etag:
                raise StaleVersion(f"{checked.path} was deleted since it was read.") from None
            return fileio.create_file(checked, data)
        if etag is not None:
            if etag != etag_for(current, current_info.st_mtime_ns):
                raise StaleVersion(
                    f"{self.guard.display(checked.path)} changed on disk since it was read; "
                    "reload it or overwrite."
                )
        elif not overwrite:
            raise AlreadyExists(
                f"{self.guard.display(checked.path)} exists; send its etag, or overwrite."
            )
        return fileio.write_atomic(checked, data)

    async def create(
        self, path: str, *, kind: str, content: str = "", parents: bool = False
    ) -> dict[str, Any]:
        if kind not in ("file", "directory"):
            raise InvalidRequest(
                "'type' must be 'file' or 'directory'.", reason="invalid_parameter"
            )
        checked = self.guard.check(path, Access.WRITE)
        async with self._mutation_lock:
            if kind == "directory":
                await asyncio.to_thread(fileio.make_directory, checked, parents=parents)
            else:
                data = encode(content, "utf-8")
                if parents and not checked.is_root:
                    parent = self.guard.check(checked.parent, Access.WRITE)
                    with contextlib.suppress(AlreadyExists):
                        await asyncio.to_thread(fileio.make_directory, parent, parents=True)
                await asyncio.to_thread(fileio.create_file, checked, data)
            info = await asyncio.to_thread(fileio.stat_path, checked)
        self._changed("created", checked.path)
        return self._describe(checked, info)

    async def rename(self, path: str, new_path: str, *, overwrite: bool = False) -> dict[str, Any]:
        source = self.guard.check(path, Access.WRITE, follow_symlinks=False)
        target = self.guard.check(new_path, Access.WRITE, follow_symlinks=False)
        self._refuse_roots(source, "renamed")
        if is_within(target.path, source.path) and target.path != source.path:
            raise InvalidRequest("A folder cannot be moved into itself.", reason="move_into_self")
        async with self._mutation_lock:
            await asyncio.to_thread(fileio.rename, source, target, overwrite=overwrite)
            info = await asyncio.to_thread(fileio.stat_path, target)
        self._changed("deleted", source.path)
        self._changed("created", target.path)
        return self._describe(target, info)

    async def copy(self, path: str, new_path: str, *, overwrite: bool = False) -> dict[str, Any]:
        source = self.guard.check(path, Access.READ, follow_symlinks=False)
        target = self.guard.check(new_path, Access.WRITE, follow_symlinks=False)
        deny = self.security.deny
        async with self._mutation_lock:
            await asyncio.to_thread(
                fileio.copy,
                source,
                target,
                overwrite=overwrite,
                skip=lambda p: deny.check(p, write=False) is not None,
            )
            info = await asyncio.to_thread(fileio.stat_path, target)
        self._changed("created", target.path)
        return self._describe(target, info)

    async def delete(self, path: str, *, recursive: bool = False) -> None:
        checked = self.guard.check(path, Access.WRITE, follow_symlinks=False)
        self._refuse_roots(checked, "deleted")
        async with self._mutation_lock:
            await asyncio.to_thread(fileio.delete, checked, recursive=recursive)
        self._changed("deleted", checked.path)

    # -- helpers -----------------------------------------------------------------------

    def _changed(self, kind: str, path: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(kind, path)
            except Exception:
                self.log.exception("A file-change listener failed for %s", path)

    def _refuse_roots(self, checked: CheckedPath, verb: str) -> None:
        if checked.is_root or self.guard.roots.is_root(checked.path):
            raise ProtectedPath(f"{checked.path} is a workspace root and cannot be {verb}.")
        for root in self.guard.roots.all():
            if is_within(root.path, checked.path):
                raise ProtectedPath(
                    f"{self.guard.display(checked.path)} holds the workspace root {root.path}; "
                    f"it cannot be {verb}."
                )

    def _describe(self, checked: CheckedPath, info: os.stat_result) -> dict[str, Any]:
        mode = info.st_mode
        kind = (
            "directory"
            if stat.S_ISDIR(mode)
            else "file"
            if stat.S_ISREG(mode)
            else "symlink"
            if stat.S_ISLNK(mode)
            else "other"
        )
        return {
            "path": self.guard.display(checked.path),
            "name": os.path.basename(checked.path),
            "type": kind,
            "size": info.st_size,
            "mtime_ms": info.st_mtime_ns // 1_000_000,
            "mode": f"{stat.S_IMODE(mode):o}",
            "root": checked.root.path,
        }
