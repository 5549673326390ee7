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
from terax_jupyter.services.git.graph import EMPTY_STATE, GraphLayout, LayoutState
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
# Which refs the graph starts from (``refs=``). "branches", the default, is what GitHub
# Desktop and jupyterlab-git show: branches, remote-tracking branches, tags and HEAD. It
# leaves out the namespaces hosts and review tools keep beside them (a mirror of a GitHub
# repository has a refs/pull/N/head for every pull request ever opened: 3,536 of flask's
# 3,671 refs; GitLab's refs/merge-requests, Gerrit's refs/changes, refs/reviewable, ...).
REF_SCOPES = ("branches", "all", "local")
DEFAULT_REFS = "branches"
# The refs (as ``show-ref`` names them) each scope starts from; the snapshot hashes only
# these, so a fetch of pull-request refs does not invalidate the cursors of a view that
# leaves them out.
_SCOPE_PREFIXES = {
    "branches": ("refs/heads/", "refs/remotes/", "refs/tags/"),
    "local": ("refs/heads/",),
}
_SCOPE_ARGS = {
    "branches": ("--branches", "--remotes", "--tags"),
    "local": ("--branches",),
}
# The ``show-ref --head`` lines of each scope's refs (HEAD always).
_SCOPE_LINES = {
    "branches": re.compile(r"^[0-9a-f]+ (?:HEAD|refs/(?:heads|remotes|tags)/.*)$", re.M),
    "local": re.compile(r"^[0-9a-f]+ (?:HEAD|refs/heads/.*)$", re.M),
    "all": re.compile(r"^[0-9a-f]+ (?!refs/stash$|refs/notes/|refs/prefetch/).*$", re.M),
}
_CURSOR = re.compile(r"^([0-9a-f]{16})\.([0-9]{1,8})\.([0-9a-f]{8})$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CHECKPOINTS = 256  # layout states kept per repository scope
_SCOPES = 32  # repository scopes whose layouts are kept
# From the second page on, a read takes this many rows more and keeps them for the next pages:
# a client scrolling through the history then costs one git run per 12k rows, not one per page
# (each of which walks the topological order again: 85-110 ms on flask's 12k commits without a
# commit-graph). The first page reads only itself, so that it comes fast; the second costs
# what git takes for up to 12k rows (a growing read ahead, tried, cost a third git run on
# flask's walk: 450-490 ms instead of 315-395).
_READ_AHEAD = 12_000
# Pages served from rows read ahead check the refs at most this often (seconds): each check
# is a process, and rows read under a snapshot continue it exactly whatever the refs do.
REFS_RECHECK = 1.0
_READ_AHEAD_SCOPES = 2  # scopes that keep rows read ahead (about 8 MB each at most)


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
    make = LogEntry._make
    for record in text.split("\0"):
        fields: list[Any] = record.split("\x1f", 6)
        if len(fields) != 7:
            continue  # the empty record after the last NUL
        if fields[0][:1] == "\n":  # git separates -z records with a newline too
            fields[0] = fields[0].lstrip("\n")
        fields[1] = tuple(fields[1].split())
        append(make(fields))
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


def commit_json(entry: LogEntry, graph: list[int] | None) -> dict[str, Any]:
    """One commit of a page; ``graph`` is its row (graph.Row), None in a flat list."""
    oid, parents, author, email, date, decorations, subject = entry
    return {
        "oid": oid,
        "short": oid[:7],
        "parents": list(parents),
        "author": author,
        "email": email,
        "date": date,
        "subject": subject,
        "refs": parse_decorations(decorations) if decorations else [],
        "graph": graph,
    }


@dataclass(frozen=True)
class LogFilters:
    query: str | None = None
    author: str | None = None
    file: str | None = None
    ref: str | None = None  # not a filter of rows, but a cursor belongs to one scope
    refs: str = DEFAULT_REFS  # the same

    @property
    def active(self) -> bool:
        return bool(self.query or self.author or self.file)

    def key(self) -> str:
        text = "\0".join(
            (self.query or "", self.author or "", self.file or "", self.ref or "", self.refs)
        )
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


def check_refs(value: object) -> str:
    """The ``refs`` choice: one of REF_SCOPES (None or "": the default)."""
    if value is None or value == "":
        return DEFAULT_REFS
    if not isinstance(value, str) or value not in REF_SCOPES:
        choices = ", ".join(f"'{choice}'" for choice in REF_SCOPES)
        raise InvalidRequest(
            f"'refs' must be one of {choices} (branches, remote branches, tags and HEAD; "
            "every ref, pull requests included; local branches and HEAD).",
            reason="invalid_parameter",
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

    # Rows one git run read past its page: ``ahead[i]`` is row ``ahead_start + i``;
    # ``ahead_complete``: the history ends with them.
    ahead_start: int = 0
    ahead: list[LogEntry] = field(default_factory=list)
    ahead_complete: bool = False

    def keep_ahead(self, start: int, entries: list[LogEntry], complete: bool) -> None:
        self.ahead_start, self.ahead, self.ahead_complete = start, entries, complete

    def read_ahead(self, offset: int, count: int, last: str | None) -> list[LogEntry] | None:
        """Rows ``offset..offset+count`` from what was read ahead, if it has them all (or
        the end of the history) and continues the row ``last`` the layout state was saved
        after; else None."""
        start = offset - self.ahead_start
        ahead = self.ahead
        if start < 1 or start > len(ahead) or ahead[start - 1].oid != last:
            return None
        if start + count > len(ahead) and not self.ahead_complete:
            return None
        return ahead[start : start + count]


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
        self._refs_seen: dict[str, tuple[float, str]] = {}  # root -> (when, show-ref's text)

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
        refs: str | None = None,
        may_write: bool = True,
    ) -> dict[str, Any]:
        """One page of history: ``{commits, cursor, total_known, graph, lanes}``.

        ``refs``: which refs the history starts from (REF_SCOPES; ``ref`` names one instead).
        ``may_write``: the caller may change the repository, so the commit-graph may be
        written or refreshed; without it the read writes nothing.
        """
        limit = check_limit(limit)
        refs = check_refs(refs)
        filters = LogFilters(
            check_filter(query, "query"),
            check_filter(author, "author"),
            check_relpath(repo, file) if file else None,
            ref or None,
            refs,
        )
        position = Cursor.decode(cursor) if cursor else None
        if position is not None and position.filters != filters.key():
            raise InvalidRequest(
                "The cursor belongs to a history with other filters.", reason="bad_cursor"
            )
        early: dict[str, Any] | None = None
        read_ahead = position is not None and not ref and not filters.active
        seen = self._refs_seen.get(repo.root)
        if read_ahead and seen and time.monotonic() - seen[0] < REFS_RECHECK:
            assert position is not None
            # Rows read ahead under the cursor's snapshot continue it exactly whatever the
            # refs do now; they are checked again at most every REFS_RECHECK seconds (a
            # walk through a history is one show-ref, not one per page).
            early = self._page_read_ahead(repo.root, f"refs={refs}", filters, position, limit)
            if early is not None and self.snapshot_of(seen[1], refs) == position.snapshot:
                self._layouts_for(repo.root, f"refs={refs}", position.snapshot)
                return early
        show = asyncio.ensure_future(self.show_refs(repo))
        try:
            if read_ahead and early is None:
                assert position is not None
                # A page from rows read ahead needs no git but the refs check: lay it out
                # while show-ref runs (it has forked by the first yield), use it if the refs
                # did not move.
                await asyncio.sleep(0)
                early = self._page_read_ahead(repo.root, f"refs={refs}", filters, position, limit)
            refs_text = await show
        finally:
            if not show.done():
                show.cancel()
        snapshot = self.snapshot_of(refs_text, None if ref else refs)
        if ref:
            oid = await check_revision(self.runner, repo, ref, "ref")
            scope: tuple[str, ...] = (oid,)
            scope_key = oid
        else:
            scope = scope_arguments(refs_text, refs)
            scope_key = f"refs={refs}"
        if position is not None and position.snapshot != snapshot:
            raise Conflict(
                "The history changed since this page was listed (refs moved); "
                "reload it from the top.",
                reason="history_changed",
            )
        if may_write:
            # The commit-graph covers every ref: its upkeep follows all of them.
            self._maintain_commit_graph(repo, self.snapshot_of(refs_text, None))
        if early is not None:
            self._layouts_for(repo.root, scope_key, snapshot)  # most recently used
            return early
        offset = position.offset if position else 0
        if filters.active:
            return await self._flat_page(repo, scope, filters, snapshot, offset, limit)
        return await self._graph_page(repo, scope, scope_key, filters, snapshot, offset, limit)

    def _page_read_ahead(
        self, root: str, scope_key: str, filters: LogFilters, position: Cursor, limit: int
    ) -> dict[str, Any] | None:
        """The page at a cursor from rows read ahead under the cursor's snapshot, or None."""
        layouts = self._layouts.get((root, scope_key))
        if layouts is None or layouts.snapshot != position.snapshot or not position.offset:
            return None
        checkpoint = layouts.checkpoints.get(position.offset)
        if checkpoint is None:
            return None
        state, last = checkpoint
        entries = layouts.read_ahead(position.offset, limit + 1, last)
        if entries is None:
            return None
        return self._lay_out(
            layouts, state, entries, filters, position.snapshot, position.offset, limit
        )

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
            "commits": [commit_json(entry, None) for entry in page],
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
            elif (ahead := layouts.read_ahead(offset, limit + 1, last)) is not None:
                entries = ahead  # (log() takes this path before show-ref returns)
            else:
                # One row of overlap proves git lists the same order as when the state was
                # saved (a commit-graph written in between must not shift the rows).
                count = limit + 2 + _READ_AHEAD
                entries = await self.read(repo, scope, skip=offset - 1, count=count)
                if not entries or entries[0].oid != last:
                    self._layouts.pop((repo.root, scope_key), None)
                    raise Conflict(
                        "The history changed since this page was listed; reload it from the top.",
                        reason="history_changed",
                    )
                layouts.keep_ahead(offset - 1, entries, len(entries) < count)
                entries = entries[1 : limit + 2]
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
        return self._lay_out(layouts, state, entries, filters, snapshot, offset, limit)

    @staticmethod
    def _lay_out(
        layouts: _Layouts,
        state: LayoutState,
        entries: list[LogEntry],
        filters: LogFilters,
        snapshot: str,
        offset: int,
        limit: int,
    ) -> dict[str, Any]:
        """A graph page of ``entries`` (``limit`` of them, one more says there are more)
        laid out from ``state``; the state at its end is kept."""
        page = entries[:limit]
        more = len(entries) > limit
        layout = GraphLayout(state)
        top = layout.colors
        add = layout.add
        commits = [commit_json(entry, add(entry.oid, entry.parents)) for entry in page]
        end = offset + len(page)
        if page:
            layouts.put(end, layout.state(), page[-1].oid)
        return {
            "commits": commits,
            "cursor": Cursor(snapshot, end, filters.key()).encode() if more else None,
            "total_known": offset + len(entries),
            "graph": True,
            # The lane colours above the first row: with them a page is drawn on its own.
            "lanes": list(top),
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
        for older in list(self._layouts.values())[:-_READ_AHEAD_SCOPES]:
            older.keep_ahead(0, [], False)
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

    async def show_refs(self, repo: Repo) -> str:
        """``git show-ref --head``: every ref and HEAD, with their object ids."""
        result = await self.runner.run(repo, "show-ref", "--head", check=False)
        text = result.stdout.decode("utf-8", "surrogateescape")
        self._refs_seen[repo.root] = (time.monotonic(), text)
        return text

    @staticmethod
    def snapshot_of(refs_text: str, refs: str | None) -> str:
        """A hash of the refs a scope starts from (``refs`` None: all of them): equal
        snapshots list the same history."""
        if refs is not None:
            # One regular expression over the whole listing: a mirror has thousands of refs.
            refs_text = "\n".join(_SCOPE_LINES[refs].findall(refs_text))
        text = refs_text.encode("utf-8", "surrogateescape")
        return hashlib.sha256(text).hexdigest()[:16]

    async def snapshot(self, repo: Repo, refs: str | None = None) -> str:
        """The snapshot of the refs now (``snapshot_of``)."""
        return self.snapshot_of(await self.show_refs(repo), refs)

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


def scope_arguments(refs_text: str, refs: str) -> tuple[str, ...]:
    """The ``git log`` arguments that start the history from the refs of a scope.

    HEAD is given by its object id from the same ``show-ref`` the snapshot hashed: there is
    no ``--head`` option, ``HEAD`` itself fails on an unborn branch, and a detached HEAD is
    on no branch.
    """
    if refs == "all":
        return ALL_REFS
    head = refs_text.partition("\n")[0].split(" ")
    args = _SCOPE_ARGS[refs]
    if len(head) == 2 and head[1] == "HEAD" and re.fullmatch(r"[0-9a-f]{40,64}", head[0]):
        return (*args, head[0])
    return args


def _any_exists(root: str, paths: list[str]) -> bool:
    """A stat or two of git's own files (their names came from git, not from a client)."""
    return any(os.path.exists(os.path.join(root, path)) for path in paths if path)
