"""FileSearch: a per-folder file index kept fresh in the background, fuzzy search and glob."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from traitlets import Float, Int, Unicode
from traitlets.config import LoggingConfigurable
from wcmatch import glob as wcglob

from terax_jupyter.exceptions import InvalidPattern, InvalidRequest, TeraxError
from terax_jupyter.security import Access, fileio
from terax_jupyter.security.walk import walk_files
from terax_jupyter.services.fs import ripgrep
from terax_jupyter.services.fs.ignore import PRUNED_DIRECTORIES, IgnoreRules

if TYPE_CHECKING:
    from terax_jupyter.security import CheckedPath, SecurityLayer
    from terax_jupyter.services.fs.fuzzy import FileList

_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB | wcglob.EXTGLOB


@dataclass
class FileIndex:
    """The file list of one folder and how it was made."""

    top: str
    files: FileList
    built_at: float
    build_seconds: float
    truncated: bool
    engine: str
    generation: int = 0
    refreshing: asyncio.Task[None] | None = field(default=None, repr=False)


class FileSearch(LoggingConfigurable):
    """Quick-open search and glob over an index built with ``rg --files`` (or a Python walk)."""

    max_files = Int(500_000, help="Most files one index holds; a larger tree is cut.").tag(
        config=True
    )
    scan_time_limit = Float(30.0, help="Seconds an index build may take before it is cut.").tag(
        config=True
    )
    index_ttl = Float(
        30.0, help="Seconds after which an index is rebuilt in the background on next use."
    ).tag(config=True)
    ripgrep_path = Unicode("", help="Path of the rg binary; empty finds the bundled one.").tag(
        config=True
    )
    fresh_wait = Float(
        0.5,
        help="After a change, a query waits for the rebuilt index if the last build took at "
        "most this many seconds; bigger trees answer from the old index while it rebuilds.",
    ).tag(config=True)

    def __init__(self, security: SecurityLayer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.security = security
        self._indexes: dict[str, FileIndex] = {}
        self._builds: dict[str, asyncio.Task[FileIndex]] = {}
        # Bumped by every change under a folder; an index built from an older one is stale.
        self._generations: dict[str, int] = {}

    @property
    def ripgrep(self) -> str | None:
        return ripgrep.find_ripgrep(self.ripgrep_path)

    # -- queries ---------------------------------------------------------------------

    async def search(self, query: str, *, path: str = "", limit: int = 50) -> dict[str, Any]:
        top = self._folder(path)
        index = await self.index_for(top)
        started = time.perf_counter()

        def run() -> tuple[list[Any], bool]:
            from terax_jupyter.services.fs.fuzzy import rank  # numpy: loaded on first use

            ranked = rank(query, index.files, limit)
            present = self._present(top, [m.path for m in ranked])
            kept = [m for m, ok in zip(ranked, present, strict=True) if ok]
            return kept, len(kept) < len(ranked)

        matches, dropped = await asyncio.to_thread(run)
        if dropped:
            self._stale(top)
        prefix = self._prefix(top)
        return {
            "query": query,
            "results": [
                {
                    "path": prefix + m.path,
                    "score": round(m.score, 2),
                    "positions": [p + len(prefix) for p in m.positions],
                }
                for m in matches
            ],
            **self._index_facts(index),
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 2),
        }

    async def glob(self, pattern: str, *, path: str = "", limit: int = 5000) -> dict[str, Any]:
        if not pattern.strip():
            raise InvalidPattern("The glob pattern is empty.")
        try:
            expressions = wcglob.translate(pattern.strip(), flags=_GLOB_FLAGS)[0]
            compiled = [re.compile(e) for e in expressions]
        except Exception as error:
            # wcmatch signals a brace expansion over its limit with its own exception class.
            raise InvalidPattern(f"The glob pattern is not valid: {error}.") from None
        top = self._folder(path)
        index = await self.index_for(top)

        def run() -> tuple[list[str], bool, bool]:
            found: list[str] = []
            cut = False
            for candidate in index.files.paths:
                if any(c.match(candidate) for c in compiled):
                    found.append(candidate)
                    if len(found) > limit:
                        found, cut = found[:limit], True
                        break
            found.sort()
            present = self._present(top, found)
            kept = [p for p, ok in zip(found, present, strict=True) if ok]
            return kept, cut, len(kept) < len(found)

        found, cut, dropped = await asyncio.to_thread(run)
        if dropped:
            self._stale(top)
        prefix = self._prefix(top)
        return {
            **self._index_facts(index),
            "pattern": pattern,
            "paths": [prefix + p for p in found],
            "truncated": cut or index.truncated,
        }

    async def close(self) -> None:
        """Stop index builds still running (server shutdown)."""
        tasks: list[asyncio.Task[Any]] = [t for t in self._builds.values() if not t.done()]
        tasks += [
            i.refreshing for i in self._indexes.values() if i.refreshing and not i.refreshing.done()
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def invalidate(self, folder: str | None = None) -> None:
        """Mark indexes stale (all, or those whose folder holds ``folder``)."""
        for top in list(self._indexes):
            if folder is None or folder == top or folder.startswith(top.rstrip("/") + "/"):
                self._generations[top] = self._generations.get(top, 0) + 1

    # -- the index -------------------------------------------------------------------

    async def index_for(self, top: CheckedPath) -> FileIndex:
        """The folder's index: built on first use, refreshed in the background when stale."""
        index = self._indexes.get(top.path)
        if index is None:
            return await self._build(top)
        changed = index.generation != self._generations.get(top.path, 0)
        expired = time.monotonic() - index.built_at > self.index_ttl
        if not (changed or expired):
            return index
        if index.refreshing is None or index.refreshing.done():
            index.refreshing = asyncio.ensure_future(self._refresh(top))
        if changed and index.build_seconds <= self.fresh_wait:
            # A small tree rebuilds in moments: answer with the file that was just created.
            try:
                await asyncio.wait_for(
                    asyncio.shield(index.refreshing), timeout=2 * self.fresh_wait
                )
            except asyncio.TimeoutError:
                return index
            return self._indexes.get(top.path, index)
        return index

    async def _refresh(self, top: CheckedPath) -> None:
        try:
            await self._build(top)
        except Exception:
            self.log.exception("Rebuilding the file index of %s failed", top.path)

    async def _build(self, top: CheckedPath) -> FileIndex:
        task = self._builds.get(top.path)
        if task is None or task.done():
            task = asyncio.ensure_future(self._scan(top))
            self._builds[top.path] = task
        return await asyncio.shield(task)

    async def _scan(self, top: CheckedPath) -> FileIndex:
        started = time.perf_counter()
        generation = self._generations.get(top.path, 0)
        rg = self.ripgrep
        if rg is not None:
            files, truncated = await ripgrep.list_files(
                rg, top.path, max_files=self.max_files, timeout=self.scan_time_limit
            )
            files = await asyncio.to_thread(self._without_denied, top, files)
            engine = "ripgrep"
        else:
            files, truncated = await asyncio.to_thread(self._walk, top)
            engine = "python"
        from terax_jupyter.services.fs.fuzzy import FileList  # numpy: loaded on first use

        prepared = await asyncio.to_thread(FileList.build, files)
        index = FileIndex(
            top.path,
            prepared,
            time.monotonic(),
            time.perf_counter() - started,
            truncated,
            engine,
            generation,
        )
        self._indexes[top.path] = index
        return index

    def _without_denied(self, top: CheckedPath, files: list[str]) -> list[str]:
        denied = self.security.deny.denied_among(files, base=top.path)
        return [f for i, f in enumerate(files) if i not in denied] if denied else files

    def _walk(self, top: CheckedPath) -> tuple[list[str], bool]:
        rules = IgnoreRules(top.path)
        result = walk_files(
            top,
            self.security.deny,
            skip_directory=lambda path, name: (
                name in PRUNED_DIRECTORIES or rules.is_ignored(path, is_dir=True)
            ),
            skip_file=lambda path: rules.is_ignored(path, is_dir=False),
            max_files=self.max_files,
            time_limit=self.scan_time_limit,
        )
        return result.files, result.truncated

    # -- helpers -----------------------------------------------------------------------

    def _present(self, top: CheckedPath, paths: list[str]) -> list[bool]:
        """Which of the index's ``paths`` are names in ``top`` now, with no link on the way.

        rg lists by path: a folder swapped for a link while it ran puts names from outside
        the folder (or under a protected one) in the index under innocent names. A name
        leaves only if it is there now, in folders proven to be what their canonical paths
        name (``fileio.ListedFiles``); the deny-list judged the same names when the index
        was built, and a proven path is its own canonical form.
        """
        present: list[bool] = []
        with fileio.ListedFiles(top, max_open=64) as listed:
            for path in paths:
                try:
                    present.append(listed.lstat(path) is not None)
                except (TeraxError, OSError):
                    present.append(False)
        return present

    def _stale(self, top: CheckedPath) -> None:
        """An index that named what is not there is rebuilt before its next answer."""
        self._generations[top.path] = self._generations.get(top.path, 0) + 1

    def _folder(self, path: str) -> CheckedPath:
        top = self.security.paths.check(path or self.security.roots.server_root, Access.READ)
        if not fileio.is_directory(top):
            raise InvalidRequest(f"{path} is not a folder.", reason="not_a_directory")
        return top

    def _prefix(self, top: CheckedPath) -> str:
        shown = self.security.paths.display(top.path)
        return shown + "/" if shown else ""

    @staticmethod
    def _index_facts(index: FileIndex) -> dict[str, Any]:
        return {
            "total_files": len(index.files),
            "truncated": index.truncated,
            "engine": index.engine,
            "index_age_s": round(time.monotonic() - index.built_at, 2),
            "index_build_ms": round(index.build_seconds * 1000, 1),
            "refreshing": index.refreshing is not None and not index.refreshing.done(),
        }
