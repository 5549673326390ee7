"""The warm path: replay a stored flow on a page under its policy, refusing instead of guessing.

The replayer holds no model provider and never asks one: every target is re-resolved by
exact role and name in a fresh snapshot, and every check that fails stops the replay with a
``ReplayRefused`` whose ``reason`` names the check. Nothing after a refusal runs.

Order of checks: the entry matches the caller's policy (scope, version, fingerprint, digest)
and is within its TTL; the inputs are exactly the declared ones; the preconditions hold on
the fresh page; a destructive replay consumes an approval token bound to the page it starts
from; then per step: fresh snapshot, exactly one target, structure within the drift
threshold, perform; finally the postconditions.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from terax_jupyter.exceptions import (
    BrowserError,
    InvalidRequest,
    ReplayRefused,
    TeraxError,
    Timeout,
)
from terax_jupyter.services.browser.ir import Click, Navigate, Type, is_identifier
from terax_jupyter.services.browser.policy import ReplayPolicy
from terax_jupyter.services.browser.sanitize import action_targets

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from terax_jupyter.services.browser.ir import Recording
    from terax_jupyter.services.browser.policy import Condition
    from terax_jupyter.services.browser.sanitize import Sanitizer, StructureKey
    from terax_jupyter.services.browser.store import AuditRun, AuditWriter
    from terax_jupyter.services.browser.types import ReplayPage, Snapshot
    from terax_jupyter.services.browser.verifier import ReplayVerifier

DEFAULT_DRIFT_THRESHOLD = 0.25
DEFAULT_STEP_TIMEOUT = 30.0
# How long a step waits for its target, and the end for its postconditions, before refusing:
# a page that is still rendering (a script that fetches) settles within it.
DEFAULT_SETTLE_TIMEOUT = 3.0
SETTLE_INTERVAL = 0.1
# A page is idle, and a refusal need not wait out the settle time, when no request of it has
# been in flight and its tree has not changed for this long (pages that can tell their
# network state only: ``ReplayPage.network_idle_for``).
DEFAULT_QUIET_WINDOW = 0.5
SETTLE_REASONS = ("ready", "idle", "timeout")
FRAMES_NAMED = 5
MAX_INPUT_LENGTH = 10_000

REFUSAL_REASONS = (
    "non_cacheable",
    "scope_mismatch",
    "version_mismatch",
    "policy_mismatch",
    "digest_mismatch",
    "ttl_expired",
    "input_missing",
    "input_unknown",
    "precondition_failed",
    "approval_required",
    "token_unknown",
    "token_reused",
    "token_expired",
    "token_mismatch",
    "target_missing",
    "target_ambiguous",
    "target_covered",
    "mutation_drift",
    "postcondition_failed",
)


class ReplayTarget(Protocol):
    """What can be replayed: a cache entry or a saved workflow, as stored."""

    @property
    def name(self) -> str: ...
    @property
    def recording(self) -> Recording: ...
    @property
    def policy(self) -> ReplayPolicy: ...
    @property
    def policy_fingerprint(self) -> str: ...
    @property
    def command_digest(self) -> str: ...
    @property
    def created_at(self) -> float: ...


@dataclass(frozen=True)
class ReplayResult:
    """A finished replay. ``model_calls`` is always 0: the replayer has no provider."""

    run_id: str
    workflow: str
    steps_replayed: int
    hit: bool
    timings_ms: dict[str, Any]
    audit_path: str
    model_calls: int = field(default=0, init=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "workflow": self.workflow,
            "steps_replayed": self.steps_replayed,
            "hit": self.hit,
            "timings_ms": self.timings_ms,
            "model_calls": self.model_calls,
        }


def structural_drift(recorded: Sequence[str], fresh: Sequence[str]) -> float:
    """The share of the structure that changed: 0.0 same, 1.0 nothing in common."""
    if not recorded and not fresh:
        return 0.0
    matcher = difflib.SequenceMatcher(None, list(recorded), list(fresh), autojunk=False)
    return 1.0 - matcher.ratio()


def recorded_structure(
    target: ReplayTarget, structure: Sequence[str], sanitizer: Sanitizer
) -> tuple[str, ...]:
    """A step's stored structure as compared: keyed hashes as stored (they went through the
    sanitizer before hashing), a structure in clear through the sanitizer."""
    if getattr(target, "structure_key", None) is not None:
        return tuple(structure)
    return sanitizer.structure(structure)


def fresh_structure(
    target: ReplayTarget, snapshot: Snapshot, sanitizer: Sanitizer
) -> tuple[str, ...]:
    """A fresh snapshot's structure the way the target's steps were stored: sanitized, then
    hashed under the store's key (the lines of the recording's targets kept in clear)."""
    lines = sanitizer.structure(snapshot.structure())
    key: StructureKey | None = getattr(target, "structure_key", None)
    if key is None:
        return lines
    return key.lines(lines, action_targets(target.recording))


class Replayer:
    """Replays stored flows on a ``ReplayPage``; one per server, safe for concurrent replays
    on different pages.

    It is given a verifier (approval tokens), an audit writer and the sanitizer, and nothing
    else: no provider, no way to ask a model.
    """

    def __init__(
        self,
        *,
        verifier: ReplayVerifier,
        audit: AuditWriter,
        sanitizer: Sanitizer,
        drift_threshold: float = DEFAULT_DRIFT_THRESHOLD,
        step_timeout: float = DEFAULT_STEP_TIMEOUT,
        settle_timeout: float = DEFAULT_SETTLE_TIMEOUT,
        quiet_window: float = DEFAULT_QUIET_WINDOW,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not 0.0 <= drift_threshold < 1.0:
            raise InvalidRequest(
                "drift_threshold is a share of changed structure from 0 to below 1.",
                reason="invalid_threshold",
            )
        if step_timeout <= 0 or settle_timeout < 0 or quiet_window < 0:
            raise InvalidRequest(
                "step_timeout must be positive, settle_timeout and quiet_window not negative.",
                reason="invalid_timeout",
            )
        self.settle_timeout = settle_timeout
        self.quiet_window = quiet_window
        self._verifier = verifier
        self._audit = audit
        self._sanitizer = sanitizer
        self.drift_threshold = drift_threshold
        self.step_timeout = step_timeout
        self._clock = clock

    async def replay(
        self,
        target: ReplayTarget,
        page: ReplayPage,
        inputs: Mapping[str, str],
        *,
        task: str,
        policy: ReplayPolicy,
        verifier_token: str | None = None,
        now: float | None = None,
    ) -> ReplayResult:
        """Replay ``target`` on ``page`` with ``inputs``, if ``policy`` (what the caller
        requires now) is the one it was stored under; raises ``ReplayRefused`` otherwise."""
        started = time.perf_counter()
        moment = self._clock() if now is None else now
        values = [v for v in inputs.values() if isinstance(v, str)]
        run = await asyncio.to_thread(self._audit.open_run, "replay", typed=values)
        run_state = _Run(run, len(target.recording.steps))
        try:
            await run_state.log(
                "replay_started",
                workflow=target.name,
                task=task,
                scope_id=policy.scope_id,
                workflow_version=policy.workflow_version,
                side_effect=policy.side_effect,
                policy_fingerprint=target.policy_fingerprint,
                command_digest=target.command_digest,
                inputs=sorted(map(str, inputs)),
            )
            result = await self._replay(
                target, page, inputs, task, policy, verifier_token, moment, run_state, started
            )
        except ReplayRefused as error:
            settled = {"settle": run_state.settled} if run_state.settled else {}
            await run_state.log(
                "replay_refused",
                reason=error.reason,
                message=error.message,
                step=run_state.step,
                **settled,
            )
            raise
        except TeraxError as error:
            await run_state.log(
                "replay_failed", reason=error.reason, message=error.message, step=run_state.step
            )
            raise
        except Exception as error:
            # The text may hold page content; only the type is audited.
            await run_state.log(
                "replay_failed",
                reason="internal_error",
                message=type(error).__name__,
                step=run_state.step,
            )
            raise
        finally:
            await asyncio.to_thread(run.close)
        return result

    async def _replay(
        self,
        target: ReplayTarget,
        page: ReplayPage,
        inputs: Mapping[str, str],
        task: str,
        policy: ReplayPolicy,
        token: str | None,
        now: float,
        run: _Run,
        started: float,
    ) -> ReplayResult:
        recording = target.recording
        recording.require_cacheable()
        self._check_entry(target, policy, now)
        _check_inputs(recording, inputs)
        sanitizer = self._sanitizer.with_typed(inputs.values())

        start = await self._call(page.snapshot())
        await self._check_conditions(policy.preconditions, page, start, "precondition_failed")

        if policy.destructive:
            if token is None:
                raise ReplayRefused(
                    "This replay is destructive and needs an approval token; ask for approval.",
                    reason="approval_required",
                )
            self._verifier.consume(
                token,
                task=task,
                scope_id=target.policy.scope_id,
                workflow_version=target.policy.workflow_version,
                policy_fingerprint=target.policy_fingerprint,
                structural_hash=start.structural_hash(),
                command_digest=target.command_digest,
            )
        checks_ms = _ms(started)
        await run.log("checks_passed", start=start, checks_ms=checks_ms)

        step_ms: list[float] = []
        for index, step in enumerate(recording.steps):
            run.step = index
            begun = time.perf_counter()
            action = step.action
            if isinstance(action, Navigate):
                # The first page was just loaded for this replay and checked (preconditions,
                # the token's page structure): act on that very page rather than load it a
                # second time, which would also cut what was checked from what is acted on.
                if not (index == 0 and start.url == action.url):
                    await self._call(page.navigate(action.url))
            else:
                snapshot, matches, run.settled = await self._resolve(page, action.role, action.name)
                if not matches:
                    raise ReplayRefused(
                        f"Step {index + 1}: no {action.role} named {action.name!r} on the page"
                        f" ({self._settled_text(run.settled)})."
                        + await self._frames_note(page, snapshot),
                        reason="target_missing",
                    )
                if len(matches) > 1:
                    raise ReplayRefused(
                        f"Step {index + 1}: {len(matches)} {action.role} elements are named "
                        f"{action.name!r}; replay does not guess which."
                        + await self._frames_note(page, snapshot),
                        reason="target_ambiguous",
                    )
                drift = structural_drift(
                    recorded_structure(target, step.structure, sanitizer),
                    fresh_structure(target, snapshot, sanitizer),
                )
                if drift > self.drift_threshold:
                    raise ReplayRefused(
                        f"Step {index + 1}: the page changed too much since it was recorded "
                        f"({drift:.0%} of its structure, more than "
                        f"{self.drift_threshold:.0%})." + await self._frames_note(page, snapshot),
                        reason="mutation_drift",
                    )
                if isinstance(action, Click):
                    try:
                        await self._call(page.click(matches[0]))
                    except BrowserError as error:
                        if error.reason != "target_covered":
                            raise
                        # The node is there, but a click at its place would hit another
                        # element (an overlay): that is not the click that was recorded.
                        raise ReplayRefused(
                            f"Step {index + 1}: {error.message}.", reason="target_covered"
                        ) from None
                elif isinstance(action, Type):
                    text = inputs.get(action.placeholder)
                    if text is None:  # _check_inputs ran; kept so no path types nothing
                        raise ReplayRefused(
                            f"Step {index + 1}: no value for input {action.placeholder!r}.",
                            reason="input_missing",
                        )
                    await self._call(page.type_text(matches[0], text))
            step_ms.append(_ms(begun))
            await run.log("step_done", step=index, action=action, ms=step_ms[-1])
        run.step = None

        final, run.settled = await self._settle_conditions(policy.postconditions, page)
        await self._check_conditions(policy.postconditions, page, final, "postcondition_failed")
        run.settled = None
        timings = {"checks": checks_ms, "steps": step_ms, "total": _ms(started)}
        await run.log("replay_finished", steps=len(step_ms), timings_ms=timings, end=final)
        return ReplayResult(
            run_id=run.run.run_id,
            workflow=target.name,
            steps_replayed=len(step_ms),
            hit=True,
            timings_ms=timings,
            audit_path=run.run.path,
        )

    async def _resolve(
        self, page: ReplayPage, role: str, name: str
    ) -> tuple[Snapshot, list[Any], str]:
        """A fresh snapshot, the exact matches of role and name in it, and how the settle
        ended; while there is not exactly one, look again (see ``settle``)."""

        async def one(snapshot: Snapshot) -> bool:
            return len(snapshot.find(role, name)) == 1

        snapshot, how = await self.settle(page, one)
        return snapshot, snapshot.find(role, name), how

    async def _settle_conditions(
        self, conditions: Sequence[Condition], page: ReplayPage
    ) -> tuple[Snapshot, str]:
        """A snapshot once all ``conditions`` hold, or the last one when the settle ended."""

        async def holding(snapshot: Snapshot) -> bool:
            return all([await self._holds(c, page, snapshot) for c in conditions])

        return await self.settle(page, holding)

    async def settle(
        self, page: ReplayPage, ready: Callable[[Snapshot], Awaitable[bool]]
    ) -> tuple[Snapshot, str]:
        """Fresh snapshots until ``ready`` holds (``"ready"``), the page is idle (``"idle"``:
        no request in flight and the same tree for ``quiet_window``; only a page that has
        ``network_idle_for``), or ``settle_timeout`` is over (``"timeout"``). A page that is
        still rendering gets the whole settle time; a refusal on an idle page comes at once."""
        deadline = time.monotonic() + self.settle_timeout
        network_idle_for: Callable[[], float] | None = getattr(page, "network_idle_for", None)
        shape: tuple[Any, ...] | None = None
        stable_since = time.monotonic()
        while True:
            snapshot = await self._call(page.snapshot())
            if await ready(snapshot):
                return snapshot, "ready"
            moment = time.monotonic()
            if moment >= deadline:
                return snapshot, "timeout"
            current = _shape(snapshot)
            if current != shape:
                shape, stable_since = current, moment
            elif (
                network_idle_for is not None
                and moment - stable_since >= self.quiet_window
                and network_idle_for() >= self.quiet_window
            ):
                return snapshot, "idle"
            await asyncio.sleep(SETTLE_INTERVAL)

    def _settled_text(self, how: str | None) -> str:
        if how == "idle":
            return "the page was idle: no requests and no changes"
        return f"looked for {self.settle_timeout:g} s"

    async def _frames_note(self, page: ReplayPage, snapshot: Snapshot) -> str:
        """What a refusal says about the page's frames: replay reads the main frame only, so
        a target inside a frame is never found; the frames are named with their origin."""
        frames = [node for node in snapshot.nodes if node.role == "iframe"]
        if not frames:
            return ""
        origin_of = getattr(page, "frame_origin", None)
        named = []
        for node in frames[:FRAMES_NAMED]:
            origin = ""
            if origin_of is not None:
                with contextlib.suppress(TeraxError):
                    origin = str(await self._call(origin_of(node)) or "")
            label = repr(node.name) if node.name else "unnamed"
            named.append(f"{label} ({origin})" if origin else label)
        more = f" and {len(frames) - FRAMES_NAMED} more" if len(frames) > FRAMES_NAMED else ""
        return (
            f" The page has {len(frames)} frame(s) whose content replay does not see: "
            + ", ".join(named)
            + more
            + "; a target inside a frame cannot be replayed."
        )

    def _check_entry(self, target: ReplayTarget, policy: ReplayPolicy, now: float) -> None:
        stored = target.policy
        # The caller's policy as the store keeps it (the stored one went through the sanitizer).
        expected = ReplayPolicy.from_json(self._sanitizer.policy(policy))
        if stored.scope_id != expected.scope_id:
            raise ReplayRefused(
                "This flow was recorded for another scope.", reason="scope_mismatch"
            )
        if stored.workflow_version != expected.workflow_version:
            raise ReplayRefused(
                f"This flow is version {stored.workflow_version}; version "
                f"{expected.workflow_version} is required.",
                reason="version_mismatch",
            )
        fingerprint = stored.fingerprint()
        if fingerprint != target.policy_fingerprint or fingerprint != expected.fingerprint():
            raise ReplayRefused(
                "This flow was stored under another policy (conditions, side effect or TTL "
                "changed); record it again.",
                reason="policy_mismatch",
            )
        if target.recording.command_digest() != target.command_digest:
            raise ReplayRefused(
                "The stored actions do not match their digest.", reason="digest_mismatch"
            )
        if now - target.created_at > stored.ttl_seconds:
            raise ReplayRefused(
                f"This flow was recorded more than {stored.ttl_seconds} s ago (its TTL); "
                "record it again.",
                reason="ttl_expired",
            )

    async def _check_conditions(
        self, conditions: Sequence[Condition], page: ReplayPage, snapshot: Snapshot, reason: str
    ) -> None:
        what = "precondition" if reason == "precondition_failed" else "postcondition"
        for index, condition in enumerate(conditions):
            if not await self._holds(condition, page, snapshot):
                raise ReplayRefused(
                    f"The {what} {index + 1} ({condition.kind}) does not hold on the page.",
                    reason=reason,
                )

    async def _holds(self, condition: Condition, page: ReplayPage, snapshot: Snapshot) -> bool:
        if condition.kind == "url_contains":
            return condition.value in snapshot.url
        if condition.kind == "title_contains":
            return condition.value in snapshot.title
        if condition.kind == "text_contains":
            return bool(await self._call(page.text_contains(condition.value)))
        return bool(await self._call(page.selector_exists(condition.value)))

    async def _call(self, operation: Awaitable[Any]) -> Any:
        try:
            return await asyncio.wait_for(operation, self.step_timeout)
        except asyncio.TimeoutError:
            raise Timeout(
                f"A page operation took longer than {self.step_timeout:g} s; replay stopped.",
                reason="replay_timeout",
            ) from None


class _Run:
    """The audit of one replay and where it is (``step`` is None outside the steps)."""

    def __init__(self, run: AuditRun, steps: int) -> None:
        self.run = run
        self.steps = steps
        self.step: int | None = None
        self.settled: str | None = None  # how the last settle ended, while it matters

    async def log(self, event: str, **fields: Any) -> None:
        await asyncio.to_thread(lambda: self.run.record(event, **fields))


def _check_inputs(recording: Recording, inputs: Mapping[str, str]) -> None:
    """Before anything runs: every declared input has a text value, and nothing else is given."""
    declared = set(recording.inputs) | recording.placeholders()
    missing = sorted(n for n in recording.placeholders() if n not in inputs)
    if missing:
        raise ReplayRefused(f"Missing inputs: {', '.join(missing)}.", reason="input_missing")
    unknown = [n for n in inputs if n not in declared]
    if unknown:
        # Only well-formed names are repeated: a malformed key may be a value put there.
        named = sorted(n for n in unknown if is_identifier(n))
        raise ReplayRefused(
            f"{len(unknown)} input(s) this flow does not declare"
            + (f": {', '.join(named)}" if named else "")
            + ".",
            reason="input_unknown",
        )
    for name, value in inputs.items():
        if not isinstance(value, str) or len(value) > MAX_INPUT_LENGTH:
            raise InvalidRequest(
                f"Input {name!r} must be text of at most {MAX_INPUT_LENGTH} characters.",
                reason="invalid_input",
            )
        if value == "{{" + name + "}}":
            # What a store keeps instead of the value (the agent's ai.sqlite3 does): the real
            # one is gone (a restart since the approval); typing the placeholder is no replay.
            raise ReplayRefused(
                f"Input {name!r} has only its placeholder, not a value (it was not kept, "
                "e.g. across a restart); run the workflow again with its values.",
                reason="input_missing",
            )


def _shape(snapshot: Snapshot) -> tuple[Any, ...]:
    """What changes when the page changes (refs do not count: they are per snapshot)."""
    nodes = tuple((n.depth, n.role, n.name, n.value, n.properties) for n in snapshot.nodes)
    return (snapshot.url, snapshot.title, nodes)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
