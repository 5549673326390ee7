"""Saved workflows: names and inputs validated, non-cacheable flows refused, run with new inputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import (
    AlreadyExists,
    Conflict,
    InvalidRequest,
    NotFound,
    ReplayRefused,
)
from terax_jupyter.services.browser.ir import Recorder
from terax_jupyter.services.browser.policy import Condition
from terax_jupyter.services.browser.workflows import (
    approval_facts,
    check_approved,
    check_pins,
    save_needs_approval,
)

from . import replay_fixtures
from .replay_fixtures import (
    ACCOUNTS,
    ORIGIN,
    SCOPE,
    FakePage,
    agent_navigate,
    agent_type,
    delete_policy,
    login_policy,
    record_delete,
    record_login,
    record_search,
    search_policy,
)

if TYPE_CHECKING:
    from .replay_fixtures import Engine

engine = replay_fixtures.engine  # the shared fixture

NOW = 50_000.0


async def test_a_saved_workflow_runs_later_with_other_inputs(engine: Engine) -> None:
    recording = await record_search(FakePage(), "first query")
    policy = search_policy(preconditions=(Condition("url_contains", "app.example.test"),))
    engine.workflows.save("Find things", recording, policy, inputs=["query"], now=NOW)
    for query in ("second query", "third query"):
        page = FakePage()
        result = await engine.workflows.run(
            "Find things", page, {"query": query}, task="t", scope_id=SCOPE, now=NOW + 10
        )
        assert result.steps_replayed == 4
        assert result.model_calls == 0
        assert ("type", "textbox", "Query", query) in page.performed()
        assert page.url == f"{ORIGIN}/home"


async def test_a_login_workflow_runs_for_another_user(engine: Engine) -> None:
    recording = await record_login(FakePage())
    engine.workflows.save(
        "sign-in", recording, login_policy(), inputs=["username", "password"], now=NOW
    )
    page = FakePage()
    inputs = {"username": "bob-replayer", "password": ACCOUNTS["bob-replayer"]}
    await engine.workflows.run("sign-in", page, inputs, task="t", scope_id=SCOPE, now=NOW)
    assert page.user == "bob-replayer"


async def test_a_non_cacheable_recording_is_refused_at_save(engine: Engine) -> None:
    page = FakePage()
    recorder = Recorder(inputs=("query",))
    await agent_navigate(page, recorder, "/search")
    await agent_type(page, recorder, "textbox", "Query", "literal words", "literal words")
    with pytest.raises(ReplayRefused) as caught:
        engine.workflows.save("literal", recorder.finish(), search_policy(), inputs=[])
    assert caught.value.reason == "non_cacheable"
    for mark in ("raw_input", "evaluate"):
        recorder = Recorder()
        recorder.navigate(f"{ORIGIN}/")
        getattr(recorder, mark)(*(("1+1",) if mark == "evaluate" else ()))
        with pytest.raises(ReplayRefused):
            engine.workflows.save("marked", recorder.finish(), search_policy(), inputs=[])
    assert engine.workflows.list() == []


async def test_declared_inputs_must_match_the_placeholders(engine: Engine) -> None:
    recording = await record_search(FakePage(), "q")
    for inputs in ([], ["query", "extra"], ["other"], ["query", "query"], ["bad name"]):
        with pytest.raises(InvalidRequest):
            engine.workflows.save("find", recording, search_policy(), inputs=inputs)
    assert engine.workflows.list() == []


@pytest.mark.parametrize("name", ["", " lead", "trail ", "a/b", "x" * 81, "tab\tname", "..", "é"])
async def test_names_are_validated(engine: Engine, name: str) -> None:
    recording = await record_search(FakePage(), "q")
    with pytest.raises(InvalidRequest) as caught:
        engine.workflows.save(name, recording, search_policy(), inputs=["query"])
    assert caught.value.reason == "invalid_workflow_name"


async def test_list_get_delete(engine: Engine) -> None:
    recording = await record_search(FakePage(), "q")
    for name in ("b-flow", "a.flow"):
        engine.workflows.save(name, recording, search_policy(), inputs=["query"], description="d")
    assert [w.name for w in engine.workflows.list()] == ["a.flow", "b-flow"]
    assert engine.workflows.get("a.flow").description == "d"
    engine.workflows.delete("a.flow")
    with pytest.raises(NotFound):
        engine.workflows.get("a.flow")
    with pytest.raises(NotFound):
        await engine.workflows.run("a.flow", FakePage(), {"query": "x"}, task="t", scope_id=SCOPE)


async def test_replacing_needs_overwrite_and_a_newer_version(engine: Engine) -> None:
    recording = await record_search(FakePage(), "q")
    engine.workflows.save("find", recording, search_policy(), inputs=["query"])
    with pytest.raises(AlreadyExists):
        engine.workflows.save("find", recording, search_policy(), inputs=["query"])
    with pytest.raises(Conflict) as caught:
        engine.workflows.save("find", recording, search_policy(), inputs=["query"], overwrite=True)
    assert caught.value.reason == "version_not_newer"
    newer = search_policy(workflow_version=2)
    engine.workflows.save("find", recording, newer, inputs=["query"], overwrite=True)
    assert engine.workflows.get("find").policy.workflow_version == 2


async def test_runs_refuse_another_scope_or_version(engine: Engine) -> None:
    recording = await record_search(FakePage(), "q")
    engine.workflows.save("find", recording, search_policy(), inputs=["query"], now=NOW)
    page = FakePage()
    with pytest.raises(ReplayRefused) as caught:
        await engine.workflows.run(
            "find", page, {"query": "x"}, task="t", scope_id="https://evil.test|x", now=NOW
        )
    assert caught.value.reason == "scope_mismatch"
    with pytest.raises(ReplayRefused) as caught:
        await engine.workflows.run(
            "find", page, {"query": "x"}, task="t", scope_id=SCOPE, workflow_version=2, now=NOW
        )
    assert caught.value.reason == "version_mismatch"
    with pytest.raises(ReplayRefused) as caught:
        await engine.workflows.run(
            "find", page, {"query": "x"}, task="t", scope_id=SCOPE, now=NOW + 3601
        )
    assert caught.value.reason == "ttl_expired"
    assert page.calls == []


def test_descriptions_are_validated(engine: Engine) -> None:
    recorder = Recorder()
    recorder.navigate(f"{ORIGIN}/")
    recording = recorder.finish()
    for description in ("x" * 2001, "bell\x07"):
        with pytest.raises(InvalidRequest):
            engine.workflows.save(
                "ok", recording, search_policy(), inputs=[], description=description
            )
    saved = engine.workflows.save("ok", recording, search_policy(), inputs=[], description="a\nb")
    assert saved.description == "a\nb"


# -- approvals bound to the stored workflow (issue 15, items 1 and 4) -----------------------


async def test_an_approval_is_refused_when_anything_it_showed_changed(engine: Engine) -> None:
    recording = await record_delete(FakePage())
    saved = engine.workflows.save("delete", recording, delete_policy(), inputs=[], now=NOW)
    approved = approval_facts(saved)
    assert approved["steps"][0] == {"kind": "navigate", "url": f"{ORIGIN}/items/alpha"}
    check_approved(approved, saved)  # unchanged: accepted
    changes = [
        ({"scope_id": "https://other.example.test"}, "scope_mismatch"),
        ({"start_url": "https://app.example.test/items/beta"}, "scope_mismatch"),
        ({"workflow_version": 2}, "version_mismatch"),
        ({"side_effect": "mutating"}, "side_effect_mismatch"),
        ({"policy_fingerprint": "0" * 64}, "policy_mismatch"),
        ({"command_digest": "0" * 64}, "digest_mismatch"),
        ({"name": "delete-other"}, "token_mismatch"),
    ]
    for change, reason in changes:
        with pytest.raises(ReplayRefused) as caught:
            check_approved({**approved, **change}, saved)
        assert caught.value.reason == reason, change
        assert "nothing was run" in caught.value.message or reason == "token_mismatch"


async def test_pins_refuse_another_version_or_side_effect(engine: Engine) -> None:
    saved = engine.workflows.save(
        "find", await record_search(FakePage(), "q"), search_policy(), inputs=["query"], now=NOW
    )
    check_pins(saved, workflow_version=1, side_effect="read_only")
    check_pins(saved)
    for pins, reason in (
        ({"workflow_version": 2}, "version_mismatch"),
        ({"side_effect": "mutating"}, "side_effect_mismatch"),
    ):
        with pytest.raises(ReplayRefused) as caught:
            check_pins(saved, **pins)
        assert caught.value.reason == reason
    for pins in ({"workflow_version": 0}, {"workflow_version": True}, {"side_effect": "x"}):
        with pytest.raises(InvalidRequest):
            check_pins(saved, **pins)


async def test_lowering_a_side_effect_or_replacing_a_destructive_one_needs_approval(
    engine: Engine,
) -> None:
    def saved_as(name: str, side_effect: str) -> Any:
        policy = search_policy(side_effect=side_effect)
        return engine.workflows.save(name, recording, policy, inputs=["query"], now=NOW)

    recording = await record_search(FakePage(), "q")
    destructive = saved_as("d", "destructive")
    mutating = saved_as("m", "mutating")
    read_only = saved_as("r", "read_only")
    assert save_needs_approval(None, "read_only") is None
    for previous, new, asks in (
        (destructive, "destructive", True),
        (destructive, "mutating", True),
        (destructive, "read_only", True),
        (mutating, "read_only", True),
        (mutating, "mutating", False),
        (mutating, "destructive", False),
        (read_only, "read_only", False),
        (read_only, "mutating", False),
    ):
        assert (save_needs_approval(previous, new) is not None) is asks, (previous.name, new)
