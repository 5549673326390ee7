"""Shared fixtures of the replay engine's tests: an in-memory site behind ``ReplayPage``, flows
recorded on it the way the agent's tools would, and an engine wired over ``tmp_path``.

The fake is a unit-test double of the layer below replay (the CDP driver has its own tests):
it models a small site (sign-in form, search, an item with a confirmed Delete, a page with
two same-named buttons) and records every call, so a test can prove what did not run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from terax_jupyter.exceptions import BrowserError
from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.browser.ir import Recorder
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy
from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.sanitize import Sanitizer
from terax_jupyter.services.browser.store import AuditWriter, ReplayStore
from terax_jupyter.services.browser.types import AXNode, Snapshot
from terax_jupyter.services.browser.verifier import ReplayVerifier
from terax_jupyter.services.browser.workflows import WorkflowManager

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from terax_jupyter.services.browser.ir import Recording

ORIGIN = "https://app.example.test"
SCOPE = f"{ORIGIN}|account"
ACCOUNTS = {"alice-recorder": "pw-alice-Recorded-1", "bob-replayer": "pw-bob-Replayed-22"}
KNOWN_SECRET = "known-secret-value-7f3a"


class FakePage:
    """A small site in memory; implements ``ReplayPage`` and logs every call in ``calls``."""

    def __init__(self, url: str = f"{ORIGIN}/") -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.url = url
        self.user: str | None = None
        self.fields: dict[str, str] = {}
        self.message = ""
        self.query: str | None = None
        self.items = ["alpha", "beta"]
        self.confirming = False
        self.duplicate_save = True  # /dupes shows two "Save" buttons
        self.extra: list[tuple[str, str]] = []  # nodes a test added (mutations)
        self.hidden: set[tuple[str, str]] = set()  # nodes a test removed
        self.last: Snapshot | None = None

    # -- what tests change -----------------------------------------------------------------

    def mutate(self, count: int = 12) -> None:
        """Add ``count`` unrelated nodes (a redesign, an injected banner...)."""
        self.extra += [("generic", f"Promotion {i}") for i in range(count)]

    def hide(self, role: str, name: str) -> None:
        self.hidden.add((role, name))

    def performed(self) -> list[tuple[Any, ...]]:
        """The calls that act on the page (navigate, click, type), without reads."""
        return [c for c in self.calls if c[0] in ("navigate", "click", "type")]

    # -- ReplayPage ------------------------------------------------------------------------

    async def navigate(self, url: str) -> None:
        self.calls.append(("navigate", url))
        self.url = url
        self.fields = {}
        self.confirming = False
        self.message = ""
        if self._path() != "/search":
            self.query = None

    async def snapshot(self) -> Snapshot:
        self.calls.append(("snapshot",))
        nodes = tuple(
            AXNode(ref=f"e{i}", role=role, name=name, depth=depth, value=self.fields.get(name))
            for i, (depth, role, name) in enumerate(self._tree(), start=1)
        )
        self.last = Snapshot(self.url, self._title(), nodes)
        return self.last

    async def click(self, node: AXNode) -> None:
        self.calls.append(("click", node.role, node.name))
        if self.last is None or self.last.by_ref(node.ref) != node:
            raise BrowserError("The node is not in the latest snapshot.")
        await self._activate(node.role, node.name)

    async def type_text(self, node: AXNode, text: str) -> None:
        self.calls.append(("type", node.role, node.name, text))
        if self.last is None or self.last.by_ref(node.ref) != node or node.role != "textbox":
            raise BrowserError("Not a text field of the latest snapshot.")
        self.fields[node.name] = text

    async def text_contains(self, text: str) -> bool:
        self.calls.append(("text_contains", text))
        visible = [name for _, _, name in self._tree()] + [self.message]
        return any(text in piece for piece in visible)

    async def selector_exists(self, selector: str) -> bool:
        self.calls.append(("selector_exists", selector))
        present = {"body", "nav"}
        path = self._path()
        if path == "/login":
            present.add("#login-form")
        if path.startswith("/items/"):
            present.add("#item-view")
        if self.confirming:
            present.add("#confirm-dialog")
        return selector in present

    # -- the site --------------------------------------------------------------------------

    def _path(self) -> str:
        return urlsplit(self.url).path or "/"

    def _title(self) -> str:
        return {"/login": "Sign in", "/home": "Home", "/search": "Search"}.get(
            self._path(), "Example"
        )

    def _tree(self) -> list[tuple[int, str, str]]:
        tree = [
            (0, "banner", "Example App"),
            (1, "link", "Home"),
            (1, "link", "Search"),
            (1, "link", "Items"),
            (0, "main", ""),
        ]
        path = self._path()
        if path == "/login":
            tree += [
                (1, "heading", "Sign in"),
                (1, "textbox", "Username"),
                (1, "textbox", "Password"),
                (1, "button", "Sign in"),
            ]
            if self.message:
                tree.append((1, "alert", self.message))
        elif path == "/home":
            greeting = f"Welcome, {self.user}" if self.user else "Welcome, guest"
            tree += [(1, "heading", greeting), (1, "link", "Sign out")]
        elif path == "/search":
            tree += [(1, "textbox", "Query"), (1, "button", "Search")]
            if self.query is not None:
                tree.append((1, "heading", f"Results for {self.query}"))
                tree += [(2, "listitem", f"{self.query} result {i}") for i in (1, 2)]
        elif path == "/items":
            tree += [(1, "link", item) for item in self.items]
            if self.message:
                tree.append((1, "status", self.message))
        elif path.startswith("/items/"):
            item = path.removeprefix("/items/")
            if item in self.items:
                tree += [(1, "heading", item), (1, "button", "Delete")]
                if self.confirming:
                    tree += [
                        (1, "alertdialog", "Confirm deletion"),
                        (2, "button", "Confirm"),
                        (2, "button", "Cancel"),
                    ]
            else:
                tree.append((1, "heading", "Not found"))
        elif path == "/dupes":
            tree += [(1, "textbox", "Note"), (1, "button", "Save")]
            if self.duplicate_save:
                tree.append((1, "button", "Save"))
        tree += [(1, role, name) for role, name in self.extra]
        return [node for node in tree if (node[1], node[2]) not in self.hidden]

    async def _activate(self, role: str, name: str) -> None:
        path = self._path()
        if role == "link" and name in ("Home", "Search", "Items"):
            await self._go({"Home": "/home", "Search": "/search", "Items": "/items"}[name])
        elif role == "link" and name in self.items:
            await self._go(f"/items/{name}")
        elif (role, name) == ("button", "Sign in") and path == "/login":
            user, password = self.fields.get("Username"), self.fields.get("Password")
            if user in ACCOUNTS and ACCOUNTS[user] == password:
                self.user = user
                await self._go("/home")
            else:
                self.message = "Invalid credentials"
        elif (role, name) == ("button", "Search") and path == "/search":
            self.query = self.fields.get("Query", "")
        elif (role, name) == ("button", "Delete"):
            self.confirming = True
        elif (role, name) == ("button", "Confirm") and self.confirming:
            item = path.removeprefix("/items/")
            self.items.remove(item)
            await self._go("/items")
            self.message = f"Deleted {item}"
        elif (role, name) == ("button", "Cancel"):
            self.confirming = False

    async def _go(self, path: str) -> None:
        # An in-page navigation: not a ReplayPage.navigate call.
        self.url = f"{ORIGIN}{path}"
        self.fields = {}
        self.confirming = False
        self.message = ""


# -- recording the way the agent's tools do -------------------------------------------------


async def _node(page: FakePage, role: str, name: str) -> tuple[AXNode, Snapshot]:
    snapshot = await page.snapshot()
    (node,) = snapshot.find(role, name)
    return node, snapshot


async def agent_click(page: FakePage, recorder: Recorder, role: str, name: str) -> None:
    node, before = await _node(page, role, name)
    await page.click(node)
    recorder.click(node, before=before)


async def agent_type(
    page: FakePage, recorder: Recorder, role: str, name: str, value: str, text: str
) -> None:
    """Type ``text`` for the ``value`` template (or a literal when ``value`` is literal)."""
    node, before = await _node(page, role, name)
    await page.type_text(node, text)
    recorder.type(node, value, before=before, typed=text)


async def agent_navigate(page: FakePage, recorder: Recorder, path: str) -> None:
    await page.navigate(f"{ORIGIN}{path}")
    recorder.navigate(f"{ORIGIN}{path}")


async def record_login(page: FakePage, user: str = "alice-recorder") -> Recording:
    """Sign in, then reload Home by its link (the greeting before that shows the user name)."""
    recorder = Recorder(inputs=("username", "password"))
    await agent_navigate(page, recorder, "/login")
    await agent_type(page, recorder, "textbox", "Username", "{{username}}", user)
    await agent_type(page, recorder, "textbox", "Password", "{{password}}", ACCOUNTS[user])
    await agent_click(page, recorder, "button", "Sign in")
    await agent_click(page, recorder, "link", "Home")
    return recorder.finish()


async def record_search(page: FakePage, query: str) -> Recording:
    """Search, then go Home (the results heading echoes the query before that click)."""
    recorder = Recorder(inputs=("query",))
    await agent_navigate(page, recorder, "/search")
    await agent_type(page, recorder, "textbox", "Query", "{{query}}", query)
    await agent_click(page, recorder, "button", "Search")
    await agent_click(page, recorder, "link", "Home")
    return recorder.finish()


async def record_delete(page: FakePage, item: str = "alpha") -> Recording:
    recorder = Recorder()
    await agent_navigate(page, recorder, f"/items/{item}")
    await agent_click(page, recorder, "button", "Delete")
    await agent_click(page, recorder, "button", "Confirm")
    return recorder.finish()


async def record_dupes(page: FakePage) -> Recording:
    """Recorded while /dupes had one Save button (``duplicate_save`` off)."""
    page.duplicate_save = False
    recorder = Recorder(inputs=("note",))
    await agent_navigate(page, recorder, "/dupes")
    await agent_type(page, recorder, "textbox", "Note", "{{note}}", "a note")
    await agent_click(page, recorder, "button", "Save")
    return recorder.finish()


def login_policy(**changes: Any) -> ReplayPolicy:
    fields: dict[str, Any] = {
        "scope_id": SCOPE,
        "workflow_version": 1,
        "side_effect": "mutating",
        "ttl_seconds": 3600,
        "preconditions": (Condition("url_contains", "app.example.test"),),
        "postconditions": (Condition("text_contains", "Welcome"),),
    }
    fields.update(changes)
    return ReplayPolicy(**fields)


def search_policy(**changes: Any) -> ReplayPolicy:
    fields: dict[str, Any] = {
        "scope_id": SCOPE,
        "workflow_version": 1,
        "side_effect": "read_only",
        "ttl_seconds": 3600,
        "postconditions": (Condition("title_contains", "Home"),),
    }
    fields.update(changes)
    return ReplayPolicy(**fields)


def delete_policy(**changes: Any) -> ReplayPolicy:
    fields: dict[str, Any] = {
        "scope_id": SCOPE,
        "workflow_version": 1,
        "side_effect": "destructive",
        "ttl_seconds": 600,
        "preconditions": (Condition("selector_exists", "nav"),),
        "postconditions": (Condition("text_contains", "Deleted alpha"),),
    }
    fields.update(changes)
    return ReplayPolicy(**fields)


# -- the engine ------------------------------------------------------------------------------


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of one audit file."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Engine:
    tmp: Path
    redactor: Redactor
    sanitizer: Sanitizer
    store: ReplayStore
    audit: AuditWriter
    token_clock: FakeClock
    verifier: ReplayVerifier
    replayer: Replayer
    workflows: WorkflowManager

    @property
    def db_path(self) -> Path:
        return self.tmp / "state" / "browser.db"

    @property
    def audit_dir(self) -> Path:
        return self.tmp / "audit"

    def audit_files(self) -> list[Path]:
        return sorted(self.audit_dir.glob("*.jsonl")) if self.audit_dir.exists() else []

    def audit_records(self) -> list[dict[str, Any]]:
        return [record for path in self.audit_files() for record in read_records(path)]

    def raw_bytes(self) -> bytes:
        """Every byte the engine persisted: the database with its WAL, and all audit files."""
        paths = [p for p in self.db_path.parent.iterdir() if p.is_file()]
        return b"".join(p.read_bytes() for p in [*paths, *self.audit_files()])

    def issue(self, entry: Any, start: Snapshot, *, task: str = "task-1", **changes: Any) -> str:
        fields: dict[str, Any] = {
            "task": task,
            "scope_id": entry.policy.scope_id,
            "workflow_version": entry.policy.workflow_version,
            "policy_fingerprint": entry.policy_fingerprint,
            "structural_hash": start.structural_hash(),
            "command_digest": entry.command_digest,
        }
        fields.update(changes)
        return self.verifier.issue(**fields)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    redactor = Redactor()
    redactor.add_secret(KNOWN_SECRET)
    sanitizer = Sanitizer(redactor)
    store = ReplayStore(str(tmp_path / "state" / "browser.db"), sanitizer=sanitizer)
    audit = AuditWriter(str(tmp_path / "audit"), sanitizer=sanitizer)
    token_clock = FakeClock()
    verifier = ReplayVerifier(ttl_seconds=60, clock=token_clock)
    # No settling: the fake page is settled at once, and refusals come without waiting.
    replayer = Replayer(verifier=verifier, audit=audit, sanitizer=sanitizer, settle_timeout=0)
    workflows = WorkflowManager(store, replayer)
    yield Engine(
        tmp_path, redactor, sanitizer, store, audit, token_clock, verifier, replayer, workflows
    )
    store.close()
