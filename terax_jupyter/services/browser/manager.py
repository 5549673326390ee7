"""BrowserManager: the server's headless browser, its recording tabs, and saved workflows.

One Chromium serves the tabs of the agent (one tab per AI session) and of the REST API; it
starts on first use and stops with the server or after every tab has been idle for
``idle_timeout``. A workflow run starts its own Chromium (a clean profile: no cookies of the
tab that recorded it) and ends it afterwards. Destructive workflows run only after an
approval: the caller says so (``approved=True``, which only the agent's approval flow passes),
and the manager then issues a verifier token bound to the page the replay starts from, which
the replay consumes once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from traitlets import Bool, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import (
    BrowserError,
    Conflict,
    InvalidRequest,
    NotFound,
    ReplayRefused,
    TooLarge,
    Unavailable,
)
from terax_jupyter.services.browser.ir import Navigate
from terax_jupyter.services.browser.launcher import ChromiumLauncher
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy
from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.sanitize import Sanitizer
from terax_jupyter.services.browser.session import BrowserSession
from terax_jupyter.services.browser.store import AuditWriter, ReplayStore
from terax_jupyter.services.browser.tab import RecordingTab
from terax_jupyter.services.browser.verifier import ReplayVerifier
from terax_jupyter.services.browser.workflows import WorkflowManager

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.browser.replay import ReplayResult
    from terax_jupyter.services.browser.store import SavedWorkflow

DEFAULT_TTL = 30 * 24 * 3600
SCREENSHOTS_KEPT = 20
_TAB_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


@dataclass
class _Tab:
    tab: RecordingTab
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)


class BrowserManager(LoggingConfigurable):
    enabled = Bool(True, help="Whether the agent and the API may use a headless browser.").tag(
        config=True
    )
    chromium_path = Unicode(
        "", help="The Chromium (or Chrome) binary; empty to look for chromium on PATH."
    ).tag(config=True)
    chromium_sandbox = Bool(
        True,
        help=(
            "Run Chromium with its sandbox (it needs unprivileged user namespaces or the setuid"
            " chrome-sandbox helper). Turn off only where the sandbox cannot start; a server"
            " running as root runs Chromium without it in any case, as Chromium requires."
        ),
    ).tag(config=True)
    max_tabs = Integer(4, help="How many browser tabs may be open at once.").tag(config=True)
    idle_timeout = Float(
        900.0, help="Seconds after which an unused tab is closed (the browser with the last)."
    ).tag(config=True)
    drift_threshold = Float(
        0.25,
        help="The share of a page's structure that may change before a replay refuses.",
    ).tag(config=True)

    def __init__(self, state_dir: str, *, redactor: Redactor, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        folder = os.path.join(state_dir, "browser")
        sanitizer = Sanitizer(redactor)
        self._store_path = os.path.join(folder, "replay.sqlite")
        self._sanitizer = sanitizer
        self._store: ReplayStore | None = None
        self.audit = AuditWriter(os.path.join(folder, "audit"), sanitizer=sanitizer)
        self.verifier = ReplayVerifier()
        self.replayer = Replayer(
            verifier=self.verifier,
            audit=self.audit,
            sanitizer=sanitizer,
            drift_threshold=self.drift_threshold,
        )
        self._workflows: WorkflowManager | None = None
        self._browser: BrowserSession | None = None
        self._start_lock = asyncio.Lock()
        self._tabs: dict[str, _Tab] = {}
        self._shots: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._reaper: asyncio.Task[None] | None = None

    # -- workflows ------------------------------------------------------------------------

    @property
    def workflows(self) -> WorkflowManager:
        """The saved workflows (opened on first use: blocking, call from a worker thread)."""
        if self._workflows is None:
            self._store = ReplayStore(self._store_path, sanitizer=self._sanitizer)
            self._workflows = WorkflowManager(self._store, self.replayer)
        return self._workflows

    async def list_workflows(self) -> list[dict[str, Any]]:
        return [w.to_json() for w in await asyncio.to_thread(lambda: self.workflows.list())]

    async def get_workflow(self, name: str) -> SavedWorkflow:
        return await asyncio.to_thread(lambda: self.workflows.get(name))

    async def delete_workflow(self, name: str) -> None:
        await asyncio.to_thread(lambda: self.workflows.delete(name))

    async def save_workflow(
        self,
        owner: str,
        name: str,
        *,
        side_effect: str,
        description: str = "",
        ttl_seconds: int = DEFAULT_TTL,
        preconditions: list[Any] | None = None,
        postconditions: list[Any] | None = None,
        overwrite: bool = False,
    ) -> SavedWorkflow:
        """Save what ``owner``'s tab recorded since its last ``open`` as workflow ``name``."""
        entry = self._tab_entry(owner)
        recording = entry.tab.recording
        first = recording.steps[0].action if recording.steps else None
        if not isinstance(first, Navigate):
            raise InvalidRequest(
                "A workflow starts by opening a page: open its first page with the browser, "
                "then do the steps, then save.",
                reason="no_start_page",
            )
        parts = urlsplit(first.url)
        try:
            previous = await self.get_workflow(name) if overwrite else None
        except NotFound:
            previous = None
        policy = ReplayPolicy(
            scope_id=f"{parts.scheme}://{parts.netloc}",
            workflow_version=(previous.policy.workflow_version + 1) if previous else 1,
            side_effect=side_effect,
            ttl_seconds=ttl_seconds,
            preconditions=_conditions(preconditions, "preconditions"),
            postconditions=_conditions(postconditions, "postconditions"),
        )
        return await asyncio.to_thread(
            lambda: self.workflows.save(
                name,
                recording,
                policy,
                inputs=list(recording.inputs),
                description=description,
                overwrite=overwrite,
            )
        )

    async def start_page(self, name: str) -> dict[str, Any]:
        """Open workflow ``name``'s first page in a browser of its own and describe it: what
        an approval of a destructive run is for (its ``structural_hash`` binds the token)."""
        self._check_enabled()
        workflow = await self.get_workflow(name)
        launcher = self._launcher()
        async with BrowserSession(launcher, owns_launcher=True) as browser:
            page = await browser.new_page()
            await self._open_start(page, workflow)
            start = await page.snapshot()
        return {"url": start.url, "title": start.title, "structural_hash": start.structural_hash()}

    async def run_workflow(
        self,
        name: str,
        inputs: Mapping[str, str],
        *,
        task: str,
        scope_id: str | None = None,
        approved_structure: str | None = None,
    ) -> ReplayResult:
        """Replay workflow ``name`` in a browser of its own, with no model: refused (409, with
        the check that refused) rather than guessed.

        A destructive workflow runs only with ``approved_structure``: the structural hash of
        its first page as the person saw it when they approved (``start_page``; only the
        agent's approval flow passes it). The verifier token is bound to that page, so a
        page that changed since the approval refuses (``token_mismatch``)."""
        self._check_enabled()
        workflow = await self.get_workflow(name)
        policy = workflow.policy
        if policy.destructive and approved_structure is None:
            raise ReplayRefused(
                f"Workflow {name!r} is destructive: it runs only after an approval.",
                reason="approval_required",
            )
        launcher = self._launcher()
        async with BrowserSession(launcher, owns_launcher=True) as browser:
            page = await browser.new_page()
            await self._open_start(page, workflow)
            token = None
            if policy.destructive and approved_structure is not None:
                token = self.verifier.issue(
                    task=task,
                    scope_id=policy.scope_id,
                    workflow_version=policy.workflow_version,
                    policy_fingerprint=workflow.policy_fingerprint,
                    structural_hash=approved_structure,
                    command_digest=workflow.command_digest,
                )
            return await self.workflows.run(
                name,
                page,
                inputs,
                task=task,
                scope_id=scope_id or policy.scope_id,
                verifier_token=token,
            )

    @staticmethod
    async def _open_start(page: Any, workflow: SavedWorkflow) -> None:
        """The replay starts (and an approval binds) on the workflow's first page."""
        first = workflow.recording.steps[0].action if workflow.recording.steps else None
        if isinstance(first, Navigate):
            await page.navigate(first.url)

    # -- tabs -----------------------------------------------------------------------------

    async def tab(self, owner: str) -> RecordingTab:
        """``owner``'s tab (an AI session id, or an id the REST API gave), opened on first use."""
        self._check_enabled()
        check_tab_id(owner)
        entry = self._tabs.get(owner)
        if entry is not None and not entry.tab.page.closed:
            entry.last_used = time.monotonic()
            return entry.tab
        if len(self._tabs) >= self.max_tabs and owner not in self._tabs:
            raise Conflict(
                f"{self.max_tabs} browser tabs are open; close one first.", reason="too_many_tabs"
            )
        browser = await self._browser_session()
        page = await browser.new_page()
        self._tabs[owner] = _Tab(RecordingTab(page))
        self._ensure_reaper()
        return self._tabs[owner].tab

    @contextlib.asynccontextmanager
    async def using(self, owner: str) -> AsyncIterator[RecordingTab]:
        """Use ``owner``'s tab alone (one action at a time on a tab)."""
        tab = await self.tab(owner)
        entry = self._tabs[owner]
        async with entry.lock:
            entry.last_used = time.monotonic()
            yield tab

    def has_tab(self, owner: str) -> bool:
        return owner in self._tabs

    def tabs(self) -> list[dict[str, Any]]:
        now = time.monotonic()
        return [
            {
                "id": owner,
                "idle_seconds": round(now - entry.last_used, 1),
                "steps": len(entry.tab.recording.steps),
                "cacheable": entry.tab.recording.cacheable,
            }
            for owner, entry in self._tabs.items()
        ]

    async def close_tab(self, owner: str, *, missing_ok: bool = False) -> None:
        entry = self._tabs.pop(owner, None)
        if entry is None:
            if missing_ok:
                return
            raise NotFound(f"No browser tab {owner!r}.", reason="tab_not_found")
        with contextlib.suppress(BrowserError):
            await entry.tab.page.close()
        if not self._tabs:
            await self._stop_browser()

    async def capture(self, owner: str) -> dict[str, Any]:
        """Screenshot ``owner``'s tab and keep it (the last ``SCREENSHOTS_KEPT``) under an id
        the chat can show; the id, url, title and size."""
        async with self.using(owner) as tab:
            image = await tab.page.screenshot(max_bytes=4 * 1024 * 1024)
            url, title = await tab.page.url(), await tab.page.title()
        shot_id = secrets.token_hex(12)
        self._shots[shot_id] = image
        while len(self._shots) > SCREENSHOTS_KEPT:
            self._shots.popitem(last=False)
        return {"id": shot_id, "url": url, "title": title, "bytes": len(image)}

    def saved_screenshot(self, shot_id: str) -> bytes:
        image = self._shots.get(shot_id) if isinstance(shot_id, str) else None
        if image is None:
            raise NotFound(
                "No such screenshot (only the latest ones are kept).", reason="screenshot_gone"
            )
        return image

    async def screenshot(self, owner: str, *, max_bytes: int = 4 * 1024 * 1024) -> bytes:
        async with self.using(owner) as tab:
            try:
                return await tab.page.screenshot(max_bytes=max_bytes)
            except TooLarge:
                raise
            except BrowserError as error:
                raise BrowserError(f"No screenshot: {error.message}") from None

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            self._reaper = None
        for owner in list(self._tabs):
            await self.close_tab(owner, missing_ok=True)
        await self._stop_browser()
        if self._store is not None:
            await asyncio.to_thread(self._store.close)

    # -- the browser ----------------------------------------------------------------------

    def _launcher(self) -> ChromiumLauncher:
        return ChromiumLauncher(self.chromium_path or None, sandbox=self.chromium_sandbox)

    def _check_enabled(self) -> None:
        if not self.enabled:
            raise Unavailable(
                "The headless browser is turned off on this server (BrowserManager.enabled).",
                reason="browser_disabled",
            )

    def _tab_entry(self, owner: str) -> _Tab:
        entry = self._tabs.get(owner)
        if entry is None:
            raise NotFound(
                "Nothing was recorded: open a page with the browser first.", reason="tab_not_found"
            )
        return entry

    async def _browser_session(self) -> BrowserSession:
        async with self._start_lock:
            if self._browser is not None and not self._browser.alive:
                # It crashed: drop its tabs, start again.
                self._tabs.clear()
                await self._stop_browser()
            if self._browser is None:
                launcher = self._launcher()
                self._browser = await BrowserSession(launcher, owns_launcher=True).start()
            return self._browser

    async def _stop_browser(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None:
            await browser.close()

    def _ensure_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap())

    async def _reap(self) -> None:
        interval = max(1.0, min(60.0, self.idle_timeout / 4))
        while self._tabs:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for owner, entry in list(self._tabs.items()):
                if now - entry.last_used > self.idle_timeout and not entry.lock.locked():
                    self.log.info("Closing the idle browser tab %s", owner)
                    await self.close_tab(owner, missing_ok=True)


def check_tab_id(tab: str) -> str:
    """A tab id: 1 to 200 letters, digits, '_', '-', '.' or ':'."""
    if not isinstance(tab, str) or _TAB_ID.fullmatch(tab) is None:
        raise InvalidRequest(
            "A tab id is 1 to 200 letters, digits, '_', '-', '.' or ':'.", reason="invalid_tab"
        )
    return tab


def _conditions(items: list[Any] | None, what: str) -> tuple[Condition, ...]:
    if items is None:
        return ()
    if not isinstance(items, list) or len(items) > 20:
        raise InvalidRequest(
            f"{what} is a list of at most 20 {{kind, value}} objects.", reason="invalid_policy"
        )
    return tuple(Condition.from_json(item) for item in items)
