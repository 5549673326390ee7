"""The history: paginated ``git log`` over all refs with graph lanes that continue across pages.

One page is one ``git log --topo-order --skip=N -n M`` (git stops after the page). With a
commit-graph file git streams the topological order incrementally, so a page costs about the
same at any depth of a 50k-commit history; without one git walks every commit first. The
first log of a repository therefore writes the commit-graph in the background (what ``git
maintenance`` does), and later ones refresh it incrementally (``--split``) when refs moved.

The lane layout of a page depends on every row above it, so it is kept: per repository and
scope, the layout state at each page end, keyed by a hash of the refs. Page N+1 continues
page N from that state; a cursor minted under other refs is refused (409 ``history_changed``)
so a client never splices two different histories. A state the cache lost is rebuilt by
laying out the rows above the page again (5-8 us a row).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from terax_jupyter.exceptions import Conflict, InvalidRequest
from terax_jupyter.services.git.graph import (
    EMPTY_STATE,
    GraphLayout,
    LayoutState,
    flat_graph,
    row_graph,
)
from terax_jupyter.services.git.repository import check_relpath, check_revision
from terax_jupyter.services.git.runner import GitFailed

if TYPE_CHECKING:
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

log = logging.getLogger(__name__)

MAX_LIMIT = 1000
DEFAULT_LIMIT = 200
MAX_OFFSET = 10_000_000
MAX_FILTER = 1000
# The unit separator between fields; -z ends each record with NUL. The subject goes last so
# a stray separator inside it cannot shift the other fields.
LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%D%x1f%s"
# Refs that are not history: the stash (and its index/untracked commits), notes, maintenance
# prefetch refs. ``--exclude`` applies to the ``--all`` after it.
ALL_REFS = (
    "--exclude=refs/stash",
    "--exclude=refs/notes/*",
    "--exclude=refs/prefetch/*",
    "--all",
)
_CURSOR = re.compile(r"^([0-9a-f]{16})\.([0-9]{1,8})\.([0-9a-f]{8})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHECKPOINTS = 256  # layout states kept per repository scope
_SCOPES = 32  # repository scopes whose layouts are kept


class LogEntry(NamedTuple):
    oid: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str
    decorations: str
    subject: str


def parse_log(data: bytes) -> list[LogEntry]:
    """Records of ``git log -z --format=LOG_FORMAT``."""
    text = data.decode("utf-8", "replace")
    entries: list[LogEntry] = []
    append = entries.append
    for record in text.split("\0"):
        if not record:
            continue
        fields = record.lstrip("\n").split("\x1f", 6)
        if len(fields) != 7:
            continue
        oid, parents, author, email, date, decorations, subject = fields
        append(
            LogEntry(
                oid,
                tuple(parents.split()) if parents else (),
                author,
                email,
                date,
                decorations,
                subject,
            )
        )
    return entries


def parse_decorations(text: str) -> list[dict[str, str]]:
    """``%D`` under ``--decorate=full`` -> ``[{kind, name}]`` (HEAD first, then as git lists).

    ``HEAD -> refs/heads/main`` is the head and the branch it is on; a lone ``HEAD`` is a
    detached head. Refs outside heads/remotes/tags (the stash, notes) are left out.
    """
    if not text:
        return []
    refs: list[dict[str, str]] = []
    for item in text.split(", "):
        if item.startswith("HEAD -> "):
            refs.append({"kind": "head", "name": "HEAD"})
            item = item[8:]
        elif item == "HEAD":
            refs.append({"kind": "head", "name": "HEAD"})
            continue
        if item.startswith("tag: "):
            item = item[5:]
        if item.startswith("refs/heads/"):
            refs.append({"kind": "branch", "name": item[11:]})
        elif item.startswith("refs/remotes/"):
            name = item[13:]
            if not name.endswith("/HEAD"):
                refs.append({"kind": "remote", "name": name})
        elif item.startswith("refs/tags/"):
            refs.append({"kind": "tag", "name": item[10:]})
    return refs


def commit_json(entry: LogEntry, graph: dict[str, Any]) -> dict[str, Any]:
    return {
        "oid": entry.oid,
        "short": entry.oid[:7],
        "parents": list(entry.parents),
        "author": entry.author,
        "email": entry.email,
        "date": entry.date,
        "subject": entry.subject,
        "refs": parse_decorations(entry.decorations),
        "graph": graph,
    }


@dataclass(frozen=True)
class LogFilters:
    query: str | None = None
    author: str | None = None
    file: str | None = None
    ref: str | None = None  # not a filter of rows, but a cursor belongs to one scope

    @property
    def active(self) -> bool:
        return bool(self.query or self.author or self.file)

    def key(self) -> str:
        text = "\0".join((self.query or "", self.author or "", self.file or "", self.ref or ""))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]

    def arguments(self) -> list[str]:
        args: list[str] = []
        if self.query:
            args.append(f"--grep={self.query}")
        if self.author:
            args.append(f"--author={self.author}")
        if self.query or self.author:
            # What people type is text, not a regular expression ("fix (#12" must not fail).
            args += ["--regexp-ignore-case", "--fixed-strings"]
        return args


def check_filter(value: object, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"'{name}' must be a string.", reason="invalid_parameter")
    if _CONTROL.search(value):
        raise InvalidRequest(f"'{name}' contains a control character.", reason="invalid_parameter")
    if len(value) > MAX_FILTER:
        raise InvalidRequest(
            f"'{name}' is longer than {MAX_FILTER} characters.", reason="invalid_parameter"
        )
    return value


def check_limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidRequest(
            f"'limit' must be an integer from 1 to {MAX_LIMIT}.", reason="invalid_parameter"
        )
    return value


class Cursor(NamedTuple):
    snapshot: str
    offset: int
    filters: str

    def encode(self) -> str:
        return f"{self.snapshot}.{self.offset}.{self.filters}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        match = _CURSOR.match(text)
        if match is None or int(match[2]) > MAX_OFFSET:
            raise InvalidRequest("'cursor' is not a cursor this server gave.", reason="bad_cursor")
        return cls(match[1], int(match[2]), match[3])


@dataclass
class _Layouts:
    """The layout states of one (repository, scope) under one refs snapshot."""

    snapshot: str
    checkpoints: OrderedDict[int, tuple[LayoutState, str | None]] = field(
        default_factory=OrderedDict
    )

    def get(self, offset: int) -> tuple[LayoutState, str | None] | None:
        if offset == 0:
            return EMPTY_STATE, None
        found = self.checkpoints.get(offset)
        if found is not None:
            self.checkpoints.move_to_end(offset)
        return found

    def put(self, offset: int, state: LayoutState, last: str) -> None:
        self.checkpoints[offset] = (state, last)
        self.checkpoints.move_to_end(offset)
        while len(self.checkpoints) > _CHECKPOINTS:
            self.checkpoints.popitem(last=False)


class GitHistory:
    """Log pages with lanes, and the commit-graph upkeep that keeps them fast."""

    def __init__(
        self,
        runner: GitRunner,
        *,
        write_commit_graph: bool = True,
        changed_paths: bool = True,
        commit_graph_interval: float = 300.0,
        commit_graph_timeout: float = 600.0,
    ) -> None:
        self.runner = runner
        self.write_commit_graph = write_commit_graph
        self.changed_paths = changed_paths
        self.commit_graph_interval = commit_graph_interval
        self.commit_graph_timeout = commit_graph_timeout
        self._layouts: OrderedDict[tuple[str, str], _Layouts] = OrderedDict()
        self._graph_tasks: dict[str, asyncio.Task[None]] = {}
        self._graph_seen: dict[str, tuple[str, float]] = {}  # root -> (snapshot, time written)

    # -- log pages -----------------------------------------------------------------------

    async def log(
        self,
        repo: Repo,
        *,
        ref: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_LIMIT,
        query: str | None = None,
        author: str | None = None,
        file: str | None = None,
        may_write: bool = True,
    ) -> dict[str, Any]:
        """One page of history: ``{commits, cursor, total_known, graph}``.

        ``may_write``: the caller may change the repository, so the commit-graph may be
        written or refreshed; without it the read writes nothing.
        """
        limit = check_limit(limit)
        filters = LogFilters(
            check_filter(query, "query"),
            check_filter(author, "author"),
            check_relpath(repo, file) if file else None,
            ref or None,
        )
        position = Cursor.decode(cursor) if cursor else None
        if position is not None and position.filters != filters.key():
            raise InvalidRequest(
                "The cursor belongs to a history with other filters.", reason="bad_cursor"
            )
        scope: tuple[str, ...] = ALL_REFS
        scope_key = "--all"
        if ref:
            oid = await check_revision(self.runner, repo, ref, "ref")
            scope, scope_key = (oid,), oid
        snapshot = await self.snapshot(repo)
        if position is not None and position.snapshot != snapshot:
            raise Conflict(
                "The history changed since this page was listed (refs moved); "
                "reload it from the top.",
                reason="history_changed",
            )
        if may_write:
            self._maintain_commit_graph(repo, snapshot)
        offset = position.offset if position else 0
        if filters.active:
            return await self._flat_page(repo, scope, filters, snapshot, offset, limit)
        return await self._graph_page(repo, scope, scope_key, filters, snapshot, offset, limit)

    async def _flat_page(
        self,
        repo: Repo,
        scope: tuple[str, ...],
        filters: LogFilters,
        snapshot: str,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        entries = await self.read(
            repo, scope, skip=offset, count=limit + 1, extra=filters.arguments(), path=filters.file
        )
        page = entries[:limit]
        more = len(entries) > limit
        return {
            "commits": [commit_json(entry, flat_graph()) for entry in page],
            "cursor": Cursor(snapshot, offset + len(page), filters.key()).encode()
            if more
            else None,
            "total_known": offset + len(entries),
            "graph": False,
        }

    async def _graph_page(
        self,
        repo: Repo,
        scope: tuple[str, ...],
        scope_key: str,
        filters: LogFilters,
        snapshot: str,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        layouts = self._layouts_for(repo.root, scope_key, snapshot)
        checkpoint = layouts.get(offset)
        if checkpoint is not None:
            state, last = checkpoint
            if not offset:
                entries = await self.read(repo, scope, count=limit + 1)
            else:
                # One row of overlap proves git lists the same order as when the state was
                # saved (a commit-graph written in between must not shift the rows).
                entries = await self.read(repo, scope, skip=offset - 1, count=limit + 2)
                if not entries or entries[0].oid != last:
                    self._layouts.pop((repo.root, scope_key), None)
                    raise Conflict(
                        "The history changed since this page was listed; reload it from the top.",
                        reason="history_changed",
                    )
                entries = entries[1:]
        else:
            # The state was dropped (or the server restarted): lay the rows above out again,
            # reading only their ids and parents.
            above, entries = await asyncio.gather(
                self.read_graph(repo, scope, count=offset),
                self.read(repo, scope, skip=offset, count=limit + 1),
            )
            layout = GraphLayout()
            add = layout.add
            for oid, *parents in above:
                add(oid, parents)
            state = layout.state()
        page = entries[:limit]
        more = len(entries) > limit
        layout = GraphLayout(state)
        add = layout.add
        commits = [commit_json(entry, row_graph(add(entry.oid, entry.parents))) for entry in page]
        end = offset + len(page)
        if page:
            layouts.put(end, layout.state(), page[-1].oid)
        return {
            "commits": commits,
            "cursor": Cursor(snapshot, end, filters.key()).encode() if more else None,
            "total_known": offset + len(entries),
            "graph": True,
        }

    def _layouts_for(self, root: str, scope_key: str, snapshot: str) -> _Layouts:
        key = (root, scope_key)
        layouts = self._layouts.get(key)
        if layouts is None or layouts.snapshot != snapshot:
            layouts = _Layouts(snapshot)
            self._layouts[key] = layouts
        self._layouts.move_to_end(key)
        while len(self._layouts) > _SCOPES:
            self._layouts.popitem(last=False)
        return layouts

    async def read(
        self,
        repo: Repo,
        scope: tuple[str, ...] = ALL_REFS,
        *,
        skip: int = 0,
        count: int | None = None,
        extra: list[str] | None = None,
        path: str | None = None,
    ) -> list[LogEntry]:
        """Parsed ``git log --topo-order`` records of ``scope``."""
        args = [
            "log",
            "--no-show-signature",
            "--topo-order",
            "-z",
            "--decorate=full",
            f"--format={LOG_FORMAT}",
        ]
        if skip:
            args.append(f"--skip={skip}")
        if count is not None:
            args.append(f"--max-count={count}")
        args += extra or []
        args += scope
        args.append("--")
        if path:
            args.append(path)
        try:
            result = await self.runner.run(repo, *args)
        except GitFailed as error:
            if "does not have any commits" in error.stderr:
                return []  # an unborn branch given as the ref
            raise
        return parse_log(result.stdout)

    async def read_graph(
        self, repo: Repo, scope: tuple[str, ...] = ALL_REFS, *, count: int | None = None
    ) -> list[list[str]]:
        """``[oid, *parents]`` of each commit of ``scope`` in topological order: all a layout
        needs, at half the bytes of a page's records and one split per commit."""
        args = ["log", "--no-show-signature", "--topo-order", "-z", "--format=%H %P"]
        if count is not None:
            args.append(f"--max-count={count}")
        args += scope
        args.append("--")
        try:
            result = await self.runner.run(repo, *args)
        except GitFailed as error:
            if "does not have any commits" in error.stderr:
                return []
            raise
        return [record.split() for record in result.stdout.decode("ascii").split("\0") if record]

    async def snapshot(self, repo: Repo) -> str:
        """A hash of every ref and HEAD: equal snapshots list the same history."""
        result = await self.runner.run(repo, "show-ref", "--head", check=False)
        return hashlib.sha256(result.stdout).hexdigest()[:16]

    # -- commit-graph upkeep ---------------------------------------------------------------

    async def prepare(self, repo: Repo) -> None:
        """Start the commit-graph upkeep before the history is first read (a panel opening
        the repository calls it), so that even the first page is a fast one."""
        self._maintain_commit_graph(repo, await self.snapshot(repo))

    def _maintain_commit_graph(self, repo: Repo, snapshot: str) -> None:
        """Write or refresh the commit-graph in the background when it is missing or stale."""
        if not self.write_commit_graph:
            return
        root = repo.root
        task = self._graph_tasks.get(root)
        if task is not None and not task.done():
            return
        seen = self._graph_seen.get(root)
        now = time.monotonic()
        if seen is not None and (seen[0] == snapshot or now - seen[1] < self.commit_graph_interval):
            return
        self._graph_tasks[root] = asyncio.ensure_future(
            self._refresh_commit_graph(repo, snapshot, refresh=seen is not None)
        )

    async def _refresh_commit_graph(self, repo: Repo, snapshot: str, *, refresh: bool) -> None:
        root = repo.root
        try:
            if not refresh and await self.has_commit_graph(repo):
                # Someone (git gc, maintenance, fetch.writeCommitGraph) keeps one: ours would
                # only duplicate it. Refresh it when refs move, like theirs would.
                self._graph_seen[root] = (snapshot, time.monotonic())
                return
            await self.write_graph(repo)
            self._graph_seen[root] = (snapshot, time.monotonic())
        except Exception as error:  # the history works without it, only slower
            log.info("Not writing the commit-graph of %s: %s", root, error)
            self._graph_seen[root] = (snapshot, time.monotonic())
        finally:
            self._graph_tasks.pop(root, None)

    async def has_commit_graph(self, repo: Repo) -> bool:
        """Whether git has a commit-graph (one file or a split chain) for this repository."""
        result = await self.runner.run(
            repo,
            "rev-parse",
            "--git-path",
            "objects/info/commit-graph",
            "--git-path",
            "objects/info/commit-graphs/commit-graph-chain",
            check=False,
        )
        return _any_exists(repo.root, result.text.splitlines())

    async def write_graph(self, repo: Repo) -> None:
        """``git commit-graph write --reachable --split``: incremental after the first time."""
        args = ["commit-graph", "write", "--reachable", "--split", "--no-progress"]
        if self.changed_paths:
            args.append("--changed-paths")
        started = time.perf_counter()
        await self.runner.run(repo, *args, timeout=self.commit_graph_timeout)
        log.info("Wrote the commit-graph of %s in %.2f s", repo.root, time.perf_counter() - started)

    async def wait_commit_graph(self, root: str) -> None:
        """Wait for a background commit-graph write of ``root`` (tests, benchmarks)."""
        task = self._graph_tasks.get(root)
        if task is not None:
            with contextlib.suppress(Exception):
                await task

    async def close(self) -> None:
        for task in list(self._graph_tasks.values()):
            task.cancel()
        for task in list(self._graph_tasks.values()):
            with contextlib.suppress(BaseException):
                await task
        self._graph_tasks.clear()


def _any_exists(root: str, paths: list[str]) -> bool:
    """A stat or two of git's own files (their names came from git, not from a client)."""
    return any(os.path.exists(os.path.join(root, path)) for path in paths if path)
