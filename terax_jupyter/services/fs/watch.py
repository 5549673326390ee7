"""WatchService: file-change events for folders, debounced into batches, bounded per subscriber."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import stat
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from traitlets import Float, Int
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import InvalidRequest, TeraxError
from terax_jupyter.security import Access, fileio
from terax_jupyter.security.workspace import is_within

if TYPE_CHECKING:
    from collections.abc import Callable

    from watchdog.events import FileSystemEvent
    from watchdog.observers.api import ObservedWatch

    from terax_jupyter.security import CheckedPath, SecurityLayer

_KINDS = {"created", "deleted", "modified", "moved"}
# Files git rewrites when a repository's state changes: a commit, checkout, fetch or reset
# made anywhere (a terminal too). Their content stays denied; subscribers inside the
# repository only learn that it changed, as one "repository" event naming its root.
_GIT_STATE = re.compile(r"^(?P<root>.*)/\.git/(?:HEAD|index|packed-refs|[A-Z_]+_HEAD|refs/.+)$")


@dataclass(frozen=True)
class Subscription:
    id: int
    folder: str
    recursive: bool
    # The git state folders of the repository around ``folder``, watched with it.
    git_watches: tuple[tuple[str, bool], ...] = ()


class _Subscriber:
    """Collects one subscription's events off the observer thread; flushes on the event loop."""

    def __init__(
        self,
        subscription: Subscription,
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[list[dict[str, Any]] | None], None],
        debounce: float,
        max_pending: int,
    ) -> None:
        self.subscription = subscription
        self._loop = loop
        self._deliver = deliver
        self._debounce = debounce
        self._max_pending = max_pending
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, Any]] = {}
        self._overflow = False
        self._scheduled = False
        # The subscribed folder as the guard checked it: event paths are proven below it.
        self.top: CheckedPath | None = None

    def covers(self, path: str) -> bool:
        folder = self.subscription.folder
        if self.subscription.recursive:
            return is_within(path, folder)
        return os.path.dirname(path) == folder or path == folder

    def push(self, event: dict[str, Any]) -> None:
        with self._lock:
            if not self._overflow:
                earlier = self._pending.get(event["path"])
                if (
                    earlier is not None
                    and earlier["kind"] == "created"
                    and event["kind"] == "modified"
                ):
                    pass
                elif len(self._pending) >= self._max_pending and earlier is None:
                    self._overflow = True
                    self._pending.clear()
                else:
                    self._pending[event["path"]] = event
            if self._scheduled:
                return
            self._scheduled = True
        self._loop.call_soon_threadsafe(self._loop.call_later, self._debounce, self._flush)

    def _flush(self) -> None:
        with self._lock:
            events = list(self._pending.values())
            overflow = self._overflow
            self._pending.clear()
            self._overflow = False
            self._scheduled = False
        self._deliver(None if overflow else events)


class _Dispatcher:
    """A watch's handler: watchdog calls its ``dispatch`` for each event (no base class, so
    watchdog, slow to import, loads with the first watch and not with the server)."""

    def __init__(self, service: WatchService) -> None:
        self._service = service

    def dispatch(self, event: FileSystemEvent) -> None:
        if event.event_type in _KINDS:
            self._service.dispatch(event)


class WatchService(LoggingConfigurable):
    """One watchdog observer for the server; subscribers get batched, filtered events."""

    debounce = Float(0.15, help="Seconds events are gathered before a batch is sent.").tag(
        config=True
    )
    max_pending = Int(
        2000, help="Distinct paths per batch before it becomes an overflow notice."
    ).tag(config=True)

    def __init__(self, security: SecurityLayer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.security = security
        self._observer: Any = None
        self._watches: dict[tuple[str, bool], tuple[ObservedWatch, int]] = {}
        self._subscribers: dict[int, _Subscriber] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # Guards the watch table and every call into the observer. Not ``_lock``: the
        # observer's thread holds the observer's own lock while it dispatches (and then takes
        # ``_lock``), so calling into the observer under ``_lock`` deadlocked the event loop
        # when a socket closed during a burst of events. Order: _watch_lock, then _lock.
        self._watch_lock = threading.Lock()
        self.listeners: list[Callable[[str, str], None]] = []

    def subscribe(
        self,
        path: str,
        deliver: Callable[[list[dict[str, Any]] | None], None],
        *,
        recursive: bool = True,
    ) -> Subscription:
        """Watch a folder. ``deliver`` gets a list of events, or None when events were dropped."""
        folder = self.security.paths.check(path or self.security.roots.server_root, Access.READ)
        if not stat.S_ISDIR(fileio.stat_path(folder).st_mode):
            raise InvalidRequest(f"{path} is not a folder.", reason="not_a_directory")
        subscription = Subscription(
            next(self._ids), folder.path, recursive, self._git_state_folders(folder.path)
        )
        subscriber = _Subscriber(
            subscription, asyncio.get_running_loop(), deliver, self.debounce, self.max_pending
        )
        subscriber.top = folder
        with self._watch_lock:
            self._schedule(folder.path, recursive)
            for git_folder, git_recursive in subscription.git_watches:
                try:
                    self._schedule(git_folder, git_recursive)
                except OSError as error:
                    # Without it the subscription still works; commits made elsewhere go unseen.
                    self.log.info("Not watching %s: %s", git_folder, error)
        with self._lock:
            self._subscribers[subscription.id] = subscriber
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            if self._subscribers.pop(subscription.id, None) is None:
                return
        with self._watch_lock:
            for key in ((subscription.folder, subscription.recursive), *subscription.git_watches):
                self._unschedule(key)

    def _schedule(self, folder: str, recursive: bool) -> None:
        key = (folder, recursive)
        watch, count = self._watches.get(key, (None, 0))
        if watch is None:
            watch = self._ensure_observer().schedule(_Dispatcher(self), folder, recursive=recursive)
        self._watches[key] = (watch, count + 1)

    def _unschedule(self, key: tuple[str, bool]) -> None:
        watch, count = self._watches.get(key, (None, 0))
        if watch is None:
            return
        if count <= 1:
            del self._watches[key]
            self._observer.unschedule(watch)
        else:
            self._watches[key] = (watch, count - 1)

    def _git_state_folders(self, folder: str) -> tuple[tuple[str, bool], ...]:
        """``.git`` (its own files) and ``.git/refs`` of the repository around ``folder``.

        Only for a work tree inside the workspace; a folder that is itself a repository's
        root is watched recursively anyway, but a subfolder of one would miss commits.
        """
        current = folder
        while self.security.roots.containing(current) is not None:
            git_folder = os.path.join(current, ".git")
            if os.path.isdir(git_folder):
                refs = os.path.join(git_folder, "refs")
                return ((git_folder, False), (refs, True)) if os.path.isdir(refs) else ()
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        return ()

    def dispatch(self, event: FileSystemEvent) -> None:
        """Observer thread: turn one raw event into a client event for each subscriber."""
        source = os.fsdecode(event.src_path)
        target = os.fsdecode(event.dest_path) if event.dest_path else None
        repository = _changed_repository(source, target)
        if repository is not None:
            self._dispatch_repository(repository)
            return
        deny = self.security.deny
        if deny.check(source, write=False) is not None and (
            target is None or deny.check(target, write=False) is not None
        ):
            return
        if event.event_type != "modified" or not event.is_directory:
            for listener in list(self.listeners):
                listener(event.event_type, source)
        with self._lock:
            subscribers = list(self._subscribers.values())
        covering = [
            s for s in subscribers if s.covers(source) or (target is not None and s.covers(target))
        ]
        if not covering:
            return
        # The observer names paths by where a folder was when it was watched: a folder moved
        # out of the workspace (or swapped for a link) would go on reporting what happens
        # outside under its old name. Only names that are there now, below the subscribed
        # folder with no link on the way, are sent (a deleted name: its folder is there).
        kind = event.event_type
        source_here = self._here(source, kind in ("created", "modified"), covering)
        if target is not None:
            target_here = self._here(target, True, covering)
            if not target_here:
                kind, target = "deleted", None
            elif not source_here:
                kind, source, target, source_here = "created", target, None, True
        if not source_here:
            return
        display = self.security.paths.display
        payload: dict[str, Any] = {
            "kind": kind,
            "path": display(source),
            "directory": event.is_directory,
        }
        if target is not None:
            payload["dest"] = display(target)
        for subscriber in covering:
            if subscriber.covers(source) or (target is not None and subscriber.covers(target)):
                subscriber.push(payload)

    @staticmethod
    def _here(path: str, must_exist: bool, subscribers: list[_Subscriber]) -> bool:
        """Whether ``path`` is a name below a subscribed folder now (see ``dispatch``)."""
        tops = [s.top for s in subscribers if s.top is not None and is_within(path, s.top.path)]
        if not tops:
            return False
        top = max(tops, key=lambda t: len(t.path))
        if os.path.normcase(path) == os.path.normcase(top.path):
            return True
        try:
            with fileio.ListedFiles(top, max_open=1) as listed:
                info = listed.lstat(os.path.relpath(path, top.path))
        except (TeraxError, OSError):
            return False
        return info is not None or not must_exist

    def _dispatch_repository(self, root: str) -> None:
        payload = {
            "kind": "repository",
            "path": self.security.paths.display(root),
            "directory": True,
        }
        with self._lock:
            subscribers = list(self._subscribers.values())
        for subscriber in subscribers:
            if subscriber.covers(root) or is_within(subscriber.subscription.folder, root):
                subscriber.push(payload)

    def stop(self) -> None:
        with self._watch_lock, self._lock:
            observer, self._observer = self._observer, None
            self._watches.clear()
            self._subscribers.clear()
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)

    def _ensure_observer(self) -> Any:
        if self._observer is None:
            from watchdog.observers import Observer

            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        return self._observer


def _changed_repository(source: str, target: str | None) -> str | None:
    """The work tree whose git state a raw event shows changed (lock files aside), or None."""
    for path in (target, source):
        if path is not None and not path.endswith(".lock"):
            match = _GIT_STATE.match(path)
            if match is not None:
                return match["root"] or "/"
    return None
