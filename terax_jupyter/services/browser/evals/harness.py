"""What the eval cases share: the replay engine on a temporary folder and the scripted agent of
the cold path."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.sanitize import Sanitizer
from terax_jupyter.services.browser.store import AuditWriter, ReplayStore
from terax_jupyter.services.browser.tab import RecordingTab
from terax_jupyter.services.browser.verifier import ReplayVerifier
from terax_jupyter.services.browser.workflows import WorkflowManager

if TYPE_CHECKING:
    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.page import BrowserPage
    from terax_jupyter.services.browser.types import Snapshot

WAIT_INTERVAL = 0.01  # the cold path's polling; the page's default 0.1 s would pad every step


class EvalFailure(Exception):
    """The cold path could not do what the case scripted (the site is not as expected)."""


@dataclass
class Engine:
    """Store, audit, verifier, replayer and workflows on one folder; no model anywhere."""

    directory: str
    sanitizer: Sanitizer
    store: ReplayStore
    audit: AuditWriter
    verifier: ReplayVerifier
    replayer: Replayer
    workflows: WorkflowManager

    @classmethod
    def open(cls, directory: str, *, verifier: ReplayVerifier | None = None) -> Engine:
        sanitizer = Sanitizer()
        store = ReplayStore(os.path.join(directory, "browser.db"), sanitizer=sanitizer)
        audit = AuditWriter(os.path.join(directory, "audit"), sanitizer=sanitizer)
        verifier = verifier if verifier is not None else ReplayVerifier()
        replayer = Replayer(verifier=verifier, audit=audit, sanitizer=sanitizer)
        workflows = WorkflowManager(store, replayer)
        return cls(directory, sanitizer, store, audit, verifier, replayer, workflows)

    def close(self) -> None:
        self.store.close()

    def persisted(self) -> bytes:
        """Every byte the engine wrote: the database (with its WAL) and the audit files."""
        data = []
        for root, _dirs, files in os.walk(self.directory):
            for name in files:
                with open(os.path.join(root, name), "rb") as handle:
                    data.append(handle.read())
        return b"".join(data)


class Agent:
    """The cold path as the agent's tools drive it: snapshot, find a node by role and name in
    the snapshot, act by its ref. Scripted, so no model is asked (and none waited for)."""

    def __init__(self, page: BrowserPage) -> None:
        self.tab = RecordingTab(page)
        self.snap: Snapshot | None = None

    @property
    def recording(self) -> Recording:
        return self.tab.recording

    def ref(self, role: str, name: str, *, first: bool = False) -> str:
        """The ref of the node; exactly one unless ``first`` (an agent picking one of many)."""
        if self.snap is None:
            raise EvalFailure("no snapshot yet")
        found = self.snap.find(role, name)
        if not found or (len(found) > 1 and not first):
            raise EvalFailure(
                f"{len(found)} {role} named {name!r} on {self.snap.url} ({self.snap.title!r})"
            )
        return found[0].ref

    async def open(self, url: str) -> None:
        self.snap = await self.tab.open(url)

    async def type(self, role: str, name: str, text: str, *, input_name: str) -> None:
        self.snap = await self.tab.type(self.ref(role, name), text, input_name=input_name)

    async def click(self, role: str, name: str, *, first: bool = False, **until: Any) -> None:
        """Click, then (given ``title_contains=...`` or the like) wait for the page it opens."""
        self.snap = await self.tab.click(self.ref(role, name, first=first))
        if until:
            self.snap = await self.tab.wait(**until, interval=WAIT_INTERVAL)

    async def sign_in(self, url: str, user: str, password: str) -> None:
        await self.open(url)
        await self.type("textbox", "Username", user, input_name="username")
        await self.type("textbox", "Password", password, input_name="password")
        await self.click("button", "Sign in", title_contains="Dashboard")
