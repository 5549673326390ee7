"""BrowserManager: the server's headless browser, its recording tabs, and saved workflows.

One Chromium serves the tabs of the agent (one tab per AI session) and of the REST API; it
starts on first use and stops with the server or after every tab has been idle for
``idle_timeout``. A workflow run (and the start page an approval shows) gets a clean profile,
no cookies of the tab that recorded it nor of any earlier run: a fresh browser context in a
warm replay browser, one per user, started by its first replay and closed after
``replay_browser_idle`` seconds without one (0: a Chromium of its own per run, ended
afterwards, which costs a browser launch every time). Destructive workflows run only after an
approval: ``propose_run`` opens the start page and issues the verifier token bound to it and
to the workflow as stored then, for the approval card; only the agent's approval flow hands
that back to ``run_workflow``, which refuses if the workflow, its scope or its start page
changed since. Replacing a destructive workflow or lowering a side effect is proposed the
same way (``propose_save``). Recording and saving are audited.
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

from traitlets import Bool, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import (
    BrowserError,
    Conflict,
    InvalidRequest,
    NotFound,
    ReplayRefused,
    Timeout,
    TooLarge,
    Unavailable,
)
from terax_jupyter.security.policy import Policy
from terax_jupyter.services.browser.ir import Navigate
from terax_jupyter.services.browser.launcher import ChromiumLauncher
from terax_jupyter.services.browser.policy import DEFAULT_TTL, Condition, ReplayPolicy
from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.sanitize import Sanitizer
from terax_jupyter.services.browser.session import BrowserSession
from terax_jupyter.services.browser.store import AuditWriter, ReplayStore
from terax_jupyter.services.browser.tab import RecordingTab
from terax_jupyter.services.browser.verifier import MAX_TOKEN_TTL, ReplayVerifier
from terax_jupyter.services.browser.workflows import (
    WorkflowManager,
    approval_facts,
    approval_steps,
    check_approved,
    check_pins,
    origin_of,
    save_needs_approval,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.page import BrowserPage
    from terax_jupyter.services.browser.replay import ReplayResult
    from terax_jupyter.services.browser.store import AuditRun, SavedWorkflow

# An approval card may stay open a while; its token lives as long as the verifier allows.
APPROVAL_TOKEN_TTL = MAX_TOKEN_TTL
SCREENSHOTS_KEPT = 20
SPARE_TABS = 2  # clean tabs kept ready in a warm replay browser (see _WarmBrowser)
SPARE_DELAY = 0.3  # seconds without a replay before they are made
_TAB_ID = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


@dataclass
class _Tab:
    tab: RecordingTab
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    # The recording audit: the recorder it follows, its file, what was written so far.
    audited: Any = None
    audit: AuditRun | None = None
    audited_steps: int = 0
    audited_cacheable: bool = True


@dataclass
class _WarmBrowser:
    """A replay browser kept running between one user's replays.

    Opening a tab in a fresh browser context costs Chromium a new renderer process (a few
    hundred ms here), and disposing of one tens of ms: neither needs to be on a replay's
    path. After each replay the used context is disposed of in the background and the next
    clean tabs (each a new context on about:blank, nothing loaded in it) are made ready:
    ``SPARE_TABS`` of them, as an approved destructive run takes two in a row (the start page
    for the approval card, then the replay)."""

    session: BrowserSession
    busy: int = 0  # replays running on it now
    last_used: float = field(default_factory=time.monotonic)
    spares: list[asyncio.Task[tuple[str, BrowserPage]]] = field(default_factory=list)
    chores: set[asyncio.Task[None]] = field(default_factory=set)
    pending: asyncio.TimerHandle | None = None  # prepare_when_idle's call

    async def take(self) -> tuple[str, BrowserPage]:
        """A clean tab for one replay, and its context: a spare if one is sound (a ready one
        first), else a new one."""
        while self.spares:
            ready = [task for task in self.spares if task.done()]
            spare = (ready or self.spares)[0]
            self.spares.remove(spare)
            try:
                context, page = await spare
            except (BrowserError, Timeout):
                pass  # it could not be made: try the next, or make one now
            else:
                if not page.closed:
                    return context, page
                self.discard(context, page)  # its tab died meanwhile
            if not ready:
                break  # waited for one being made: do not wait for the next in turn
        context = await self.session.new_context()
        try:
            page = await self.session.new_page(context=context)
        except BaseException:
            await self.session.dispose_context(context)
            raise
        return context, page

    def prepare_when_idle(self) -> None:
        """Make the next clean tabs ready once no replay has run on this browser for
        ``SPARE_DELAY`` s: made at once, they would take the CPU from a replay that follows
        right away (an approved run's replay follows the start page of its approval)."""
        if self.pending is not None:
            self.pending.cancel()
        self.pending = asyncio.get_running_loop().call_later(SPARE_DELAY, self._prepare_if_idle)

    def _prepare_if_idle(self) -> None:
        self.pending = None
        if not self.busy:  # else the replay running now asks again when it ends
            self.prepare()

    def prepare(self) -> None:
        """Make the next clean tabs ready in the background."""
        while len(self.spares) < SPARE_TABS and self.session.alive:
            self.spares.append(asyncio.ensure_future(self._fresh()))

    async def _fresh(self) -> tuple[str, BrowserPage]:
        context = await self.session.new_context()
        try:
            return context, await self.session.new_page(context=context)
        except BaseException:
            await self.session.dispose_context(context)
            raise

    def discard(self, context: str, page: BrowserPage) -> None:
        """Close the tab (its listeners on the long-lived connection go too) and dispose of
        its context with its cookies, in the background."""
        task = asyncio.ensure_future(self._discard(context, page))
        self.chores.add(task)
        task.add_done_callback(self.chores.discard)

    async def _discard(self, context: str, page: BrowserPage) -> None:
        await page.close()
        await self.session.dispose_context(context)

    async def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        spares, self.spares = self.spares, []
        for spare in spares:
            spare.cancel()
            with contextlib.suppress(asyncio.CancelledError, BrowserError, Timeout):
                await spare
        for chore in list(self.chores):
            with contextlib.suppress(asyncio.CancelledError, BrowserError, Timeout):
                await chore
        await self.session.close()


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
    replay_browser_idle = Float(
        300.0,
        help=(
            "Seconds a user's replay browser stays running after its last workflow run, so"
            " that the next run skips the browser launch (each run still gets a clean"
            " profile: a fresh browser context). 0 starts a Chromium for every run."
        ),
    ).tag(config=True)
    max_replay_browsers = Integer(
        2,
        help=(
            "How many users' replay browsers may be kept running at once; past that the least"
            " recently used idle one is closed (or, with all of them busy, the run gets a"
            " Chromium of its own)."
        ),
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
        self.policy = Policy()  # the administrator's (app.py sets it)
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
        self._warm: dict[str, _WarmBrowser] = {}
        self._warm_lock = asyncio.Lock()
        self._warm_reaper: asyncio.Task[None] | None = None

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
        approved: Mapping[str, Any] | None = None,
    ) -> SavedWorkflow:
        """Save what ``owner``'s tab recorded since its last ``open`` as workflow ``name``.

        Replacing a destructive workflow or lowering a side effect is refused
        (``approval_required``) unless ``approved`` is what ``propose_save`` returned for it
        and the person approved (only the agent's approval flow passes it); it must still
        match the stored workflow and the tab's recording."""
        recording, policy, previous = await self._to_save(
            owner, name, side_effect, ttl_seconds, preconditions, postconditions, overwrite
        )
        needs = save_needs_approval(previous, side_effect)
        if needs is not None and approved is None:
            raise Conflict(
                f"{needs} needs the user's approval: ask the Terax agent to save it (the AI "
                "panel shows the change for approval), or delete the workflow first.",
                reason="approval_required",
            )
        if approved is not None:
            _check_save_approved(approved, name, previous, policy, recording)
        saved = await asyncio.to_thread(
            lambda: self.workflows.save(
                name,
                recording,
                policy,
                inputs=list(recording.inputs),
                description=description,
                overwrite=overwrite,
            )
        )
        await asyncio.to_thread(
            self._audit_once,
            "save",
            "workflow_saved",
            workflow=saved.name,
            owner=owner,
            scope_id=saved.policy.scope_id,
            workflow_version=saved.policy.workflow_version,
            side_effect=saved.policy.side_effect,
            previous_side_effect=previous.policy.side_effect if previous else None,
            ttl_seconds=saved.policy.ttl_seconds,
            command_digest=saved.command_digest,
            steps=len(saved.recording.steps),
            inputs=list(saved.inputs),
            approved=approved is not None,
        )
        return saved

    async def propose_save(
        self,
        owner: str,
        name: str,
        *,
        side_effect: str,
        ttl_seconds: int = DEFAULT_TTL,
        preconditions: list[Any] | None = None,
        postconditions: list[Any] | None = None,
        overwrite: bool = False,
    ) -> dict[str, Any] | None:
        """None when this save needs no approval; else what the person approves: the stored
        workflow's version and side effect, the new ones, the scope and the exact steps."""
        recording, policy, previous = await self._to_save(
            owner, name, side_effect, ttl_seconds, preconditions, postconditions, overwrite
        )
        needs = save_needs_approval(previous, side_effect)
        if needs is None or previous is None:
            return None
        # What could never be saved is refused now, not after the user approved it.
        recording.require_cacheable()
        return {
            "name": name,
            "why": needs,
            "scope_id": policy.scope_id,
            "previous_version": previous.policy.workflow_version,
            "previous_side_effect": previous.policy.side_effect,
            "workflow_version": policy.workflow_version,
            "side_effect": policy.side_effect,
            "policy_fingerprint": policy.fingerprint(),
            "command_digest": recording.command_digest(),
            "steps": approval_steps(recording),
        }

    async def _to_save(
        self,
        owner: str,
        name: str,
        side_effect: str,
        ttl_seconds: int,
        preconditions: list[Any] | None,
        postconditions: list[Any] | None,
        overwrite: bool,
    ) -> tuple[Recording, ReplayPolicy, SavedWorkflow | None]:
        entry = self._tab_entry(owner)
        recording = entry.tab.recording
        if recording.non_cacheable:
            # Why it cannot be saved comes first: a start url replay refuses (a query string)
            # is not recorded as a step, and "no start page" would be the wrong reason.
            recording.require_cacheable()
        first = recording.steps[0].action if recording.steps else None
        if not isinstance(first, Navigate):
            raise InvalidRequest(
                "A workflow starts by opening a page: open its first page with the browser, "
                "then do the steps, then save.",
                reason="no_start_page",
            )
        try:
            previous = await self.get_workflow(name) if overwrite else None
        except NotFound:
            previous = None
        policy = ReplayPolicy(
            scope_id=origin_of(first.url),
            workflow_version=(previous.policy.workflow_version + 1) if previous else 1,
            side_effect=side_effect,
            ttl_seconds=ttl_seconds,
            preconditions=_conditions(preconditions, "preconditions"),
            postconditions=_conditions(postconditions, "postconditions"),
        )
        return recording, policy, previous

    async def start_page(self, name: str, *, user: str | None = None) -> dict[str, Any]:
        """Open workflow ``name``'s first page in a clean profile (``user``'s replay browser)
        and describe it: what an approval of a destructive run is for (its
        ``structural_hash`` binds the token)."""
        self._check_enabled()
        workflow = await self.get_workflow(name)
        async with self._replay_page(user) as page:
            await self._open_start(page, workflow)
            start = await page.snapshot()
        return {"url": start.url, "title": start.title, "structural_hash": start.structural_hash()}

    async def propose_run(self, name: str, *, task: str, user: str | None = None) -> dict[str, Any]:
        """What an approval of running destructive workflow ``name`` for ``task`` is for: the
        workflow as stored now (scope, version, side effect, policy fingerprint, command
        digest, steps), the origin, url and title of its first page as it loads now, and the
        single-use verifier token bound to all of it (handed to the replay only on approval)."""
        self._check_enabled()
        workflow = await self.get_workflow(name)
        if not workflow.policy.destructive:
            raise InvalidRequest(
                f"Workflow {name!r} is {workflow.policy.side_effect}: run it with "
                "browser_run_workflow.",
                reason="side_effect_mismatch",
            )
        facts = approval_facts(workflow)
        start = await self.start_page(name, user=user)
        token = self.verifier.issue(
            task=task,
            scope_id=facts["scope_id"],
            workflow_version=facts["workflow_version"],
            policy_fingerprint=facts["policy_fingerprint"],
            structural_hash=start["structural_hash"],
            command_digest=facts["command_digest"],
            ttl_seconds=APPROVAL_TOKEN_TTL,
        )
        return {
            **facts,
            "origin": origin_of(start["url"]),
            "url": start["url"],
            "title": start["title"],
            "structural_hash": start["structural_hash"],
            "token": token,
        }

    async def run_workflow(
        self,
        name: str,
        inputs: Mapping[str, str],
        *,
        task: str,
        scope_id: str | None = None,
        workflow_version: int | None = None,
        side_effect: str | None = None,
        approval: Mapping[str, Any] | None = None,
        user: str | None = None,
    ) -> ReplayResult:
        """Replay workflow ``name`` in a clean profile (``user``'s replay browser), with no
        model: refused (409, with the check that refused) rather than guessed.

        ``workflow_version`` and ``side_effect`` pin what the caller expects
        (``version_mismatch``, ``side_effect_mismatch``). A destructive workflow runs only
        with ``approval``: what ``propose_run`` returned and the person approved (only the
        agent's approval flow passes it). Before anything runs the stored workflow must still
        be what was approved (``scope_mismatch``, ``version_mismatch``, ...) and its first
        page must load on the approved origin; the token binds the page itself, so a page
        that changed since the approval refuses (``token_mismatch``)."""
        self._check_enabled()
        workflow = await self.get_workflow(name)
        check_pins(workflow, workflow_version=workflow_version, side_effect=side_effect)
        policy = workflow.policy
        if approval is not None:
            check_approved(approval, workflow)
        elif policy.destructive:
            raise ReplayRefused(
                f"Workflow {name!r} is destructive: it runs only after an approval.",
                reason="approval_required",
            )
        async with self._replay_page(user) as page:
            await self._open_start(page, workflow)
            token = None
            if approval is not None:
                token = await _approved_token(page, approval)
            return await self.workflows.run(
                name,
                page,
                inputs,
                task=task,
                scope_id=scope_id or policy.scope_id,
                workflow_version=policy.workflow_version,
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
        if owner not in self._tabs:
            self.policy.check_limit("browser_tabs", len(self._tabs))
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
            try:
                yield tab
            finally:
                if self._recording_changed(entry):
                    await asyncio.to_thread(self._audit_recording, owner, entry)

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
        if entry.audit is not None:
            await asyncio.to_thread(entry.audit.close)
            entry.audit = None
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
        await self._close_replay_browsers()
        if self._store is not None:
            await asyncio.to_thread(self._store.close)

    # -- the browser ----------------------------------------------------------------------

    @staticmethod
    def _recording_changed(entry: _Tab) -> bool:
        if entry.audited is not entry.tab.recorder:
            return True
        recording = entry.tab.recording
        return len(recording.steps) > entry.audited_steps or (
            entry.audited_cacheable and not recording.cacheable
        )

    def _audit_recording(self, owner: str, entry: _Tab) -> None:
        """Write what was recorded since the last look into the tab's recording audit (one
        file per recorded flow): targets by role and name, typed text only as its
        placeholder, urls without query or fragment (the sanitizer's rules)."""
        recorder = entry.tab.recorder
        if entry.audited is not recorder:
            if entry.audit is not None:
                entry.audit.close()
            entry.audited, entry.audit = recorder, None
            entry.audited_steps, entry.audited_cacheable = 0, True
        recording = entry.tab.recording
        steps = recording.steps
        became_uncacheable = entry.audited_cacheable and not recording.cacheable
        if len(steps) <= entry.audited_steps and not became_uncacheable:
            return
        if entry.audit is None:
            entry.audit = self.audit.open_run("record")
            entry.audit.record("recording_started", owner=owner)
        for index in range(entry.audited_steps, len(steps)):
            entry.audit.record("step_recorded", step=index, action=steps[index].action.to_json())
        entry.audited_steps = len(steps)
        if became_uncacheable:
            entry.audit.record("recording_not_cacheable", reasons=list(recording.non_cacheable))
            entry.audited_cacheable = False

    def _audit_once(self, kind: str, event: str, **fields: Any) -> None:
        run = self.audit.open_run(kind)
        try:
            run.record(event, **fields)
        finally:
            run.close()

    def _launcher(self) -> ChromiumLauncher:
        return ChromiumLauncher(self.chromium_path or None, sandbox=self.chromium_sandbox)

    # -- replay browsers -----------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _replay_page(self, user: str | None) -> AsyncIterator[BrowserPage]:
        """A tab with a clean profile for one replay: a fresh browser context in ``user``'s
        warm replay browser (started if needed), disposed afterwards with its cookies."""
        warm = await self._warm_browser(user or "") if self.replay_browser_idle > 0 else None
        if warm is None:
            async with BrowserSession(self._launcher(), owns_launcher=True) as browser:
                yield await browser.new_page()
            return
        warm.busy += 1
        taken: tuple[str, BrowserPage] | None = None
        try:
            taken = await warm.take()
            yield taken[1]
        finally:
            if taken is not None:
                warm.discard(*taken)
            warm.busy -= 1
            warm.last_used = time.monotonic()
            warm.prepare_when_idle()
            self._ensure_warm_reaper()

    def replay_browsers(self) -> list[dict[str, Any]]:
        """The replay browsers kept running: whose (the user; "" for none given), the
        browser's pid, how many replays run on it now, and how long it has been idle."""
        now = time.monotonic()
        return [
            {
                "user": key,
                "pid": warm.session.launcher.pid,
                "busy": warm.busy,
                "idle_seconds": round(now - warm.last_used, 1),
                "spares_ready": sum(task.done() for task in warm.spares),
            }
            for key, warm in self._warm.items()
        ]

    async def _warm_browser(self, key: str) -> _WarmBrowser | None:
        """``key``'s running replay browser, started if there is none (or it died); None
        when every allowed one is busy with other users' replays."""
        async with self._warm_lock:
            warm = self._warm.get(key)
            if warm is not None and not warm.session.alive:
                self.log.info("The replay browser died; starting a new one")
                del self._warm[key]
                await warm.close()
                warm = None
            if warm is None:
                while len(self._warm) >= max(1, self.max_replay_browsers):
                    idle = [(w.last_used, k) for k, w in self._warm.items() if not w.busy]
                    if not idle:
                        return None
                    await self._warm.pop(min(idle)[1]).close()
                session = BrowserSession(self._launcher(), owns_launcher=True)
                warm = _WarmBrowser(await session.start())
                self._warm[key] = warm
            warm.last_used = time.monotonic()
            return warm

    def _ensure_warm_reaper(self) -> None:
        if self._warm_reaper is None or self._warm_reaper.done():
            self._warm_reaper = asyncio.ensure_future(self._reap_replay_browsers())

    async def _reap_replay_browsers(self) -> None:
        interval = max(0.2, min(60.0, self.replay_browser_idle / 4))
        while self._warm:
            await asyncio.sleep(interval)
            now = time.monotonic()
            async with self._warm_lock:
                for key, warm in list(self._warm.items()):
                    if not warm.busy and now - warm.last_used > self.replay_browser_idle:
                        self.log.info("Closing an idle replay browser")
                        await warm.close()
                        del self._warm[key]

    async def _close_replay_browsers(self) -> None:
        if self._warm_reaper is not None:
            self._warm_reaper.cancel()
            self._warm_reaper = None
        async with self._warm_lock:
            warm, self._warm = self._warm, {}
        for browser in warm.values():
            await browser.close()

    def _check_enabled(self) -> None:
        self.policy.require("browser")
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
                # It crashed: drop its tabs (closing their recording audits), start again.
                dropped, self._tabs = list(self._tabs.values()), {}
                for entry in dropped:
                    if entry.audit is not None:
                        await asyncio.to_thread(entry.audit.close)
                        entry.audit = None
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


async def _approved_token(page: Any, approval: Mapping[str, Any]) -> str:
    """The approval's token, once the start page is on the approved origin."""
    landed = origin_of(await page.url())
    if landed != approval.get("origin"):
        raise ReplayRefused(
            f"The workflow's first page opened on {landed}, not on the approved "
            f"{approval.get('origin')}; nothing was run.",
            reason="scope_mismatch",
        )
    token = approval.get("token")
    if not isinstance(token, str):
        raise ReplayRefused(
            "The approval carries no token; ask for approval again.", reason="token_unknown"
        )
    return token


def _check_save_approved(
    approved: Mapping[str, Any],
    name: str,
    previous: SavedWorkflow | None,
    policy: ReplayPolicy,
    recording: Recording,
) -> None:
    """The save the person approved is still the one that would happen now."""
    current = previous.policy.workflow_version if previous else None
    if approved.get("name") != name or approved.get("previous_version") != current:
        raise Conflict(
            f"Workflow {name!r} changed after the approval was asked for (version "
            f"{approved.get('previous_version')!r} then, {current!r} now); nothing was saved.",
            reason="version_mismatch",
        )
    if approved.get("scope_id") != policy.scope_id:
        raise Conflict(
            "The recorded flow now starts on another origin than the one approved; nothing "
            "was saved.",
            reason="scope_mismatch",
        )
    if approved.get("policy_fingerprint") != policy.fingerprint():
        raise Conflict(
            "The side effect or conditions differ from the ones approved; nothing was saved.",
            reason="policy_mismatch",
        )
    if approved.get("command_digest") != recording.command_digest():
        raise Conflict(
            "The recorded steps changed after the approval was asked for; nothing was saved.",
            reason="digest_mismatch",
        )


def _conditions(items: list[Any] | None, what: str) -> tuple[Condition, ...]:
    if items is None:
        return ()
    if not isinstance(items, list) or len(items) > 20:
        raise InvalidRequest(
            f"{what} is a list of at most 20 {{kind, value}} objects.", reason="invalid_policy"
        )
    return tuple(Condition.from_json(item) for item in items)
