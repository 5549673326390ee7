"""The warm path: replays that finish, and one test for every refusal, each proving that
nothing after the refusal ran and that the refusal was audited."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import BrowserError, InvalidRequest, ReplayRefused, Timeout
from terax_jupyter.services.browser import replay as replay_module
from terax_jupyter.services.browser.ir import Recorder
from terax_jupyter.services.browser.policy import Condition
from terax_jupyter.services.browser.replay import (
    REFUSAL_REASONS,
    Replayer,
    ReplayResult,
    structural_drift,
)
from terax_jupyter.services.browser.store import CacheEntry

from . import replay_fixtures
from .replay_fixtures import (
    ACCOUNTS,
    ORIGIN,
    FakePage,
    delete_policy,
    login_policy,
    read_records,
    record_delete,
    record_dupes,
    record_login,
)

if TYPE_CHECKING:
    from terax_jupyter.services.browser.types import ReplayPage

    from .replay_fixtures import Engine

engine = replay_fixtures.engine  # the shared fixture

ALICE = {"username": "alice-recorder", "password": ACCOUNTS["alice-recorder"]}
BOB = {"username": "bob-replayer", "password": ACCOUNTS["bob-replayer"]}
NOW = 10_000.0


async def login_entry(engine: Engine, **policy: Any) -> CacheEntry:
    recording = await record_login(FakePage())
    return engine.store.put_entry("login", recording, login_policy(**policy), now=NOW)


async def delete_entry(engine: Engine) -> CacheEntry:
    return engine.store.put_entry(
        "delete", await record_delete(FakePage()), delete_policy(), now=NOW
    )


async def refusal(
    engine: Engine,
    target: Any,
    page: ReplayPage,
    inputs: dict[str, str],
    *,
    policy: Any,
    task: str = "task-1",
    **options: Any,
) -> str:
    """The reason of the refusal; also proves it is the last thing this run's audit says."""
    before = set(engine.audit_files())
    with pytest.raises(ReplayRefused) as caught:
        await engine.replayer.replay(
            target, page, inputs, task=task, policy=policy, now=options.pop("now", NOW), **options
        )
    (audit,) = set(engine.audit_files()) - before
    records = read_records(audit)
    assert records[0]["event"] == "replay_started"
    assert records[-1]["event"] == "replay_refused"
    assert records[-1]["reason"] == caught.value.reason
    assert caught.value.reason in REFUSAL_REASONS
    return caught.value.reason


# -- replays that finish ---------------------------------------------------------------------


async def test_a_mutating_login_replays_with_different_inputs(engine: Engine) -> None:
    entry = await login_entry(engine)
    for inputs in (BOB, ALICE, BOB):
        page = FakePage()
        result = await engine.replayer.replay(
            entry, page, inputs, task="task-1", policy=login_policy(), now=NOW + 60
        )
        assert page.user == inputs["username"]
        assert page.performed() == [
            ("navigate", f"{ORIGIN}/login"),
            ("type", "textbox", "Username", inputs["username"]),
            ("type", "textbox", "Password", inputs["password"]),
            ("click", "button", "Sign in"),
            ("click", "link", "Home"),
        ]
        assert isinstance(result, ReplayResult)
        assert result.hit
        assert result.steps_replayed == 5
        assert result.model_calls == 0
        assert len(result.timings_ms["steps"]) == 5
        assert result.timings_ms["total"] >= result.timings_ms["checks"] >= 0
        assert result.to_json()["model_calls"] == 0
        events = [r["event"] for r in read_records(result.audit_path)]
        assert events == ["replay_started", "checks_passed", *["step_done"] * 5, "replay_finished"]


async def test_a_replay_waits_for_a_page_that_is_still_rendering(engine: Engine) -> None:
    """A target that appears a moment later (a script rendering) is waited for, within the
    settle time; past it, the replay refuses."""
    entry = await login_entry(engine)

    class SlowPage(FakePage):
        def __init__(self, late: int) -> None:
            super().__init__()
            self.late = late  # how many snapshots the Sign in button is still missing

        async def snapshot(self) -> Any:
            if self.late > 0 and self.url.endswith("/login"):
                self.late -= 1
                self.hidden.add(("button", "Sign in"))
            else:
                self.hidden.discard(("button", "Sign in"))
            return await super().snapshot()

    patient = Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        settle_timeout=2.0,
    )
    page = SlowPage(late=5)
    result = await patient.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert page.user == BOB["username"]
    assert result.steps_replayed == 5

    hasty = Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        settle_timeout=0.15,
    )
    page = SlowPage(late=1000)
    with pytest.raises(ReplayRefused) as caught:
        await hasty.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert caught.value.reason == "target_missing"
    assert ("click", "button", "Sign in") not in page.performed()


async def test_an_approved_destructive_replay_runs_once(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    token = engine.issue(entry, await page.snapshot())
    result = await engine.replayer.replay(
        entry, page, {}, task="task-1", policy=delete_policy(), verifier_token=token, now=NOW
    )
    assert result.steps_replayed == 3
    assert page.items == ["beta"]
    assert page.message == "Deleted alpha"

    again = FakePage()  # the same site state, so the same start structure
    assert (
        await refusal(engine, entry, again, {}, policy=delete_policy(), verifier_token=token)
        == "token_reused"
    )
    assert again.performed() == []
    assert again.items == ["alpha", "beta"]


async def test_drift_within_the_threshold_is_tolerated(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    page.mutate(1)
    await engine.replayer.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert page.user == "bob-replayer"


# -- refusals before anything runs -----------------------------------------------------------


async def test_scope_mismatch(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    other = login_policy(scope_id="https://other.test|account")
    assert await refusal(engine, entry, page, BOB, policy=other) == "scope_mismatch"
    assert page.calls == []


async def test_version_mismatch(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    newer = login_policy(workflow_version=2)
    assert await refusal(engine, entry, page, BOB, policy=newer) == "version_mismatch"
    assert page.calls == []


async def test_policy_mismatch(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    for changed in (
        login_policy(ttl_seconds=7200),
        login_policy(side_effect="read_only"),
        login_policy(postconditions=()),
    ):
        assert await refusal(engine, entry, page, BOB, policy=changed) == "policy_mismatch"
    tampered = dataclasses.replace(entry, policy_fingerprint="0" * 64)
    assert await refusal(engine, tampered, page, BOB, policy=login_policy()) == "policy_mismatch"
    assert page.calls == []


async def test_digest_mismatch(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    tampered = dataclasses.replace(entry, command_digest="0" * 64)
    assert await refusal(engine, tampered, page, BOB, policy=login_policy()) == "digest_mismatch"
    assert page.calls == []


async def test_ttl_expired(engine: Engine) -> None:
    entry = await login_entry(engine, ttl_seconds=60)
    policy = login_policy(ttl_seconds=60)
    page = FakePage()
    assert await refusal(engine, entry, page, BOB, policy=policy, now=NOW + 61) == "ttl_expired"
    assert page.calls == []
    await engine.replayer.replay(entry, page, BOB, task="t", policy=policy, now=NOW + 60)


async def test_non_cacheable_entry(engine: Engine) -> None:
    recorder = Recorder()
    recorder.navigate(f"{ORIGIN}/login")
    recorder.raw_input()
    recording = recorder.finish()
    policy = login_policy()
    entry = CacheEntry(
        "raw", recording, policy, policy.fingerprint(), recording.command_digest(), NOW
    )
    page = FakePage()
    assert await refusal(engine, entry, page, {}, policy=policy) == "non_cacheable"
    assert page.calls == []


async def test_missing_input(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    only_user = {"username": "bob-replayer"}
    assert await refusal(engine, entry, page, only_user, policy=login_policy()) == "input_missing"
    assert page.calls == []  # checked before the first step, not halfway through a login


async def test_unknown_input(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    extra = {**BOB, "otp": "123456"}
    assert await refusal(engine, entry, page, extra, policy=login_policy()) == "input_unknown"
    assert page.calls == []


async def test_non_text_input_is_invalid(engine: Engine) -> None:
    entry = await login_entry(engine)
    with pytest.raises(InvalidRequest):
        await engine.replayer.replay(
            entry, FakePage(), {**BOB, "password": 42}, task="t", policy=login_policy(), now=NOW
        )


async def test_failed_precondition(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage("https://other.test/")
    assert await refusal(engine, entry, page, BOB, policy=login_policy()) == "precondition_failed"
    assert page.performed() == []


async def test_failed_precondition_of_each_kind(engine: Engine) -> None:
    recording = await record_login(FakePage())
    for condition in (
        Condition("title_contains", "Nowhere"),
        Condition("text_contains", "Not on the page"),
        Condition("selector_exists", "#login-form"),
    ):
        policy = login_policy(preconditions=(condition,))
        entry = engine.store.put_entry("login", recording, policy, now=NOW)
        page = FakePage()
        assert await refusal(engine, entry, page, BOB, policy=policy) == "precondition_failed"
        assert page.performed() == []


# -- destructive replays and their approval tokens ---------------------------------------------


async def test_destructive_without_a_token(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    assert await refusal(engine, entry, page, {}, policy=delete_policy()) == "approval_required"
    assert page.performed() == []
    assert page.items == ["alpha", "beta"]


async def test_destructive_never_approved(engine: Engine) -> None:
    """A denied approval issues no token; whatever is presented instead is unknown."""
    entry = await delete_entry(engine)
    page = FakePage()
    reason = await refusal(
        engine, entry, page, {}, policy=delete_policy(), verifier_token="approved-honestly"
    )
    assert reason == "token_unknown"
    assert page.performed() == []


async def test_token_bound_to_another_page_structure(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    token = engine.issue(entry, await page.snapshot())
    page.mutate(1)  # the page changed after the person approved
    reason = await refusal(engine, entry, page, {}, policy=delete_policy(), verifier_token=token)
    assert reason == "token_mismatch"
    assert page.performed() == []
    assert page.items == ["alpha", "beta"]


async def test_token_bound_to_another_command_digest(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    token = engine.issue(entry, await page.snapshot(), command_digest="a" * 64)
    reason = await refusal(engine, entry, page, {}, policy=delete_policy(), verifier_token=token)
    assert reason == "token_mismatch"
    assert page.performed() == []


async def test_token_bound_to_another_task(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    token = engine.issue(entry, await page.snapshot(), task="task-1")
    reason = await refusal(
        engine, entry, page, {}, policy=delete_policy(), verifier_token=token, task="task-2"
    )
    assert reason == "token_mismatch"
    assert page.performed() == []


async def test_token_expired(engine: Engine) -> None:
    entry = await delete_entry(engine)
    page = FakePage()
    token = engine.issue(entry, await page.snapshot())
    engine.token_clock.advance(61)
    reason = await refusal(engine, entry, page, {}, policy=delete_policy(), verifier_token=token)
    assert reason == "token_expired"
    assert page.performed() == []


# -- refusals during the steps ---------------------------------------------------------------


async def test_missing_target(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    page.hide("textbox", "Password")
    assert await refusal(engine, entry, page, BOB, policy=login_policy()) == "target_missing"
    assert page.performed() == [
        ("navigate", f"{ORIGIN}/login"),
        ("type", "textbox", "Username", "bob-replayer"),
    ]


async def test_ambiguous_target(engine: Engine) -> None:
    recording = await record_dupes(FakePage())
    policy = login_policy(postconditions=())
    entry = engine.store.put_entry("note", recording, policy, now=NOW)
    page = FakePage()  # two "Save" buttons now
    reason = await refusal(engine, entry, page, {"note": "hello"}, policy=policy)
    assert reason == "target_ambiguous"
    assert page.performed() == [
        ("navigate", f"{ORIGIN}/dupes"),
        ("type", "textbox", "Note", "hello"),
    ]


async def test_mutation_drift(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = FakePage()
    page.mutate(12)
    assert await refusal(engine, entry, page, BOB, policy=login_policy()) == "mutation_drift"
    assert page.performed() == [("navigate", f"{ORIGIN}/login")]
    assert page.user is None


async def test_the_drift_threshold_is_configurable(engine: Engine) -> None:
    entry = await login_entry(engine)
    lenient = Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        drift_threshold=0.9,
        settle_timeout=0,
    )
    page = FakePage()
    page.mutate(12)
    await lenient.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert page.user == "bob-replayer"
    with pytest.raises(InvalidRequest):
        Replayer(
            verifier=engine.verifier,
            audit=engine.audit,
            sanitizer=engine.sanitizer,
            drift_threshold=1.0,
            settle_timeout=0,
        )


def test_structural_drift_is_the_share_of_changed_structure() -> None:
    lines = [f"1:link:{i}" for i in range(10)]
    assert structural_drift(lines, lines) == 0.0
    assert structural_drift([], []) == 0.0
    assert structural_drift(lines, []) == 1.0
    assert 0.0 < structural_drift(lines, [*lines, "1:button:new"]) < 0.1
    assert structural_drift(lines, [f"1:button:{i}" for i in range(10)]) == 1.0


async def test_failed_postcondition(engine: Engine) -> None:
    postcondition = (Condition("text_contains", "Welcome, administrator"),)
    entry = await login_entry(engine, postconditions=postcondition)
    page = FakePage()
    policy = login_policy(postconditions=postcondition)
    assert await refusal(engine, entry, page, BOB, policy=policy) == "postcondition_failed"
    assert len(page.performed()) == 5  # the postconditions are the last check


async def test_a_browser_error_stops_the_replay_and_is_audited(engine: Engine) -> None:
    entry = await login_entry(engine)

    class BrokenPage(FakePage):
        async def type_text(self, node: Any, text: str) -> None:
            self.calls.append(("type", node.role, node.name, text))
            raise BrowserError("The renderer crashed.")

    page = BrokenPage()
    with pytest.raises(BrowserError):
        await engine.replayer.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert page.performed() == [
        ("navigate", f"{ORIGIN}/login"),
        ("type", "textbox", "Username", "bob-replayer"),
    ]
    last = engine.audit_records()[-1]
    assert (last["event"], last["reason"], last["step"]) == ("replay_failed", "browser_error", 1)


async def test_a_hanging_page_times_out(engine: Engine) -> None:
    entry = await login_entry(engine)

    class HangingPage(FakePage):
        async def navigate(self, url: str) -> None:
            self.calls.append(("navigate", url))
            await asyncio.sleep(30)

    impatient = Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        step_timeout=0.05,
        settle_timeout=0,
    )
    page = HangingPage()
    with pytest.raises(Timeout):
        await impatient.replay(entry, page, BOB, task="t", policy=login_policy(), now=NOW)
    assert page.performed() == [("navigate", f"{ORIGIN}/login")]


# -- no model, structurally -------------------------------------------------------------------


def test_the_replayer_cannot_reach_a_model() -> None:
    source = Path(replay_module.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not any(m.startswith("terax_jupyter.services.ai") for m in imported)
    assert not any(m.split(".")[0] in ("httpx", "httpx_sse", "websockets") for m in imported)
    parameters = set(inspect.signature(Replayer.__init__).parameters)
    expected = {
        "verifier",
        "audit",
        "sanitizer",
        "drift_threshold",
        "step_timeout",
        "settle_timeout",
        "quiet_window",
        "clock",
    }
    assert parameters == {"self", *expected}
    with pytest.raises(TypeError):
        ReplayResult("r", "w", 1, True, {}, "p", model_calls=1)  # type: ignore[call-arg]


class QuietPage(FakePage):
    """A page that can tell its network state (``BrowserPage.network_idle_for``)."""

    def __init__(self, *, idle_for: float, ticking: bool = False) -> None:
        super().__init__()
        self.idle_for = idle_for
        self.ticking = ticking
        self.snapshots = 0

    def network_idle_for(self) -> float:
        return self.idle_for

    async def snapshot(self) -> Any:
        self.snapshots += 1
        if self.ticking:  # a clock on the page: it never stops changing
            self.extra = [("status", f"tick {self.snapshots}")]
        return await super().snapshot()


def settling(engine: Engine, settle_timeout: float) -> Replayer:
    return Replayer(
        verifier=engine.verifier,
        audit=engine.audit,
        sanitizer=engine.sanitizer,
        settle_timeout=settle_timeout,
        quiet_window=0.2,
    )


async def test_a_settle_ends_when_the_page_is_idle_or_at_its_timeout(engine: Engine) -> None:
    async def sign_in_present(snapshot: Any) -> bool:
        return bool(snapshot.find("button", "Sign in"))

    async def never(snapshot: Any) -> bool:
        return False

    # Ready at once; idle long before a settle time no test would wait for.
    page = QuietPage(idle_for=10.0)
    page.url = f"{ORIGIN}/login"
    assert (await settling(engine, 60).settle(page, sign_in_present))[1] == "ready"
    assert (await settling(engine, 60).settle(page, never))[1] == "idle"
    assert page.snapshots > 2  # it looked for the whole quiet window first
    # A request in flight, a page that keeps changing, a page that cannot tell: the timeout.
    busy = QuietPage(idle_for=0.0)
    assert (await settling(engine, 0.6).settle(busy, never))[1] == "timeout"
    ticking = QuietPage(idle_for=10.0, ticking=True)
    assert (await settling(engine, 0.6).settle(ticking, never))[1] == "timeout"
    assert (await settling(engine, 0.6).settle(FakePage(), never))[1] == "timeout"


async def test_a_refusal_on_an_idle_page_says_so_and_names_its_frames(engine: Engine) -> None:
    entry = await login_entry(engine)
    page = QuietPage(idle_for=10.0)
    page.hide("button", "Sign in")
    page.extra = [("iframe", "Payment form"), ("iframe", "")]
    with pytest.raises(ReplayRefused) as caught:
        await settling(engine, 60).replay(
            entry, page, BOB, task="t", policy=login_policy(), now=NOW
        )
    assert caught.value.reason == "target_missing"
    assert ("click", "button", "Sign in") not in page.performed()
    record = [r for r in engine.audit_records() if r["event"] == "replay_refused"][-1]
    assert record["settle"] == "idle"
    assert "the page was idle" in record["message"]
    assert (
        "2 frame(s) whose content replay does not see: 'Payment form', unnamed"
        in (record["message"])
    )
