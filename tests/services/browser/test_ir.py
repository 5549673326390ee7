"""The action IR: validation, JSON round trips, the command digest, and the recorder."""

from __future__ import annotations

import json

import pytest

from terax_jupyter.exceptions import InvalidRequest, ReplayRefused
from terax_jupyter.services.browser.ir import (
    IR_VERSION,
    Click,
    Navigate,
    RecordedStep,
    Recorder,
    Recording,
    Type,
    action_from_json,
    command_digest,
    declared_inputs,
    placeholder_name,
)

from .replay_fixtures import ORIGIN, FakePage, record_dupes, record_login


@pytest.mark.parametrize(
    "url", [f"{ORIGIN}/", "http://localhost:8888/lab", "https://example.test/a/b-c_d/e.html"]
)
def test_navigate_accepts_plain_http_urls(url: str) -> None:
    assert Navigate(url).to_json() == {"kind": "navigate", "url": url}


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.test/", "http or https"),
        ("javascript:alert(1)", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("https://user:pw@example.test/", "user name or password"),
        ("https://user@example.test/", "user name or password"),
        ("https://example.test/search?q=x", "query string"),
        ("https://example.test/search?", "query string"),
        ("https://example.test/page#top", "fragment"),
        ("https:///nohost", "needs a host"),
        ("https://example.test:99999/", "invalid port"),
        ("https://example.test/a b", "spaces"),
        ("https://example.test\\@evil.test/", "backslashes"),
        ("", "needs a url"),
    ],
)
def test_navigate_refuses_what_replay_must_not_load(url: str, says: str) -> None:
    with pytest.raises(InvalidRequest, match=says) as caught:
        Navigate(url)
    assert caught.value.reason == "invalid_url"
    if url:
        assert url not in caught.value.message  # a refused url may carry a token


def test_type_takes_only_a_placeholder() -> None:
    assert Type("textbox", "Username", "{{username}}").placeholder == "username"
    for literal in ("alice", "{{ username }}", "{{user-name}}", "{{1st}}", "x{{a}}", "{{a}}{{b}}"):
        with pytest.raises(InvalidRequest, match="placeholder") as caught:
            Type("textbox", "Username", literal)
        assert caught.value.reason == "invalid_action"
    assert placeholder_name("{{a_1}}") == "a_1"
    assert placeholder_name("{{a}} ") is None


@pytest.mark.parametrize(("role", "name"), [("Button", "OK"), ("", "OK"), ("button", "  ")])
def test_targets_need_a_role_and_a_name(role: str, name: str) -> None:
    with pytest.raises(InvalidRequest):
        Click(role, name)


def test_actions_round_trip_through_json() -> None:
    actions = [
        Navigate(f"{ORIGIN}/login"),
        Type("textbox", "Username", "{{username}}"),
        Click("button", "Sign in"),
    ]
    for action in actions:
        assert action_from_json(json.loads(json.dumps(action.to_json()))) == action
    with pytest.raises(InvalidRequest):
        action_from_json({"kind": "evaluate", "script": "1"})
    with pytest.raises(InvalidRequest):
        action_from_json({"kind": "click", "role": "button", "name": "x", "x": 3})


def test_command_digest_is_canonical_and_order_sensitive() -> None:
    a = [Navigate(f"{ORIGIN}/"), Click("button", "Save")]
    assert command_digest(a) == command_digest(list(a))
    assert len(command_digest(a)) == 64
    assert command_digest(a) != command_digest(list(reversed(a)))
    assert command_digest(a) != command_digest([Navigate(f"{ORIGIN}/"), Click("button", "Save ")])


async def test_a_recording_round_trips_with_its_version() -> None:
    recording = await record_login(FakePage())
    data = json.loads(json.dumps(recording.to_json()))
    assert data["version"] == IR_VERSION
    again = Recording.from_json(data)
    assert again == recording
    assert again.command_digest() == recording.command_digest()
    assert again.typed_values == frozenset()  # typed texts never leave memory
    assert recording.typed_values >= {"alice-recorder"}
    with pytest.raises(InvalidRequest, match="version"):
        Recording.from_json({**data, "version": 99})


async def test_steps_keep_the_structure_before_the_action() -> None:
    recording = await record_login(FakePage())
    assert [type(a).__name__ for a in recording.actions] == [
        "Navigate",
        "Type",
        "Type",
        "Click",
        "Click",
    ]
    assert recording.steps[0].structure == ()
    assert "1:textbox:Username" in recording.steps[1].structure
    assert "1:heading:Welcome, alice-recorder" in recording.steps[4].structure
    assert recording.inputs == ("username", "password")
    assert recording.cacheable


def test_placeholders_must_be_declared() -> None:
    step = RecordedStep(Type("textbox", "Query", "{{query}}"), ("1:textbox:Query",))
    with pytest.raises(InvalidRequest, match="does not declare: query") as caught:
        Recording((step,))
    assert caught.value.reason == "undeclared_input"
    assert Recording((step,), ("query",)).placeholders() == {"query"}


def test_declared_inputs_must_match_the_placeholders() -> None:
    step = RecordedStep(Type("textbox", "Query", "{{query}}"), ("1:textbox:Query",))
    recording = Recording((step,), ("query",))
    assert declared_inputs(recording, ["query"]) == ("query",)
    for wrong in ([], ["query", "other"], ["query", "query"]):
        with pytest.raises(InvalidRequest) as caught:
            declared_inputs(recording, wrong)
        assert caught.value.reason == "input_mismatch"


async def test_what_replay_cannot_reproduce_makes_a_recording_non_cacheable() -> None:
    page = FakePage(f"{ORIGIN}/login")
    cases = {
        "raw input": lambda r: r.raw_input("key events"),
        "coordinates": lambda r: r.coordinate_click(10, 20),
        "script": lambda r: r.evaluate("document.cookie"),
        "marked": lambda r: r.mark_non_cacheable("a custom reason"),
        "query url": lambda r: r.navigate(f"{ORIGIN}/search?q=secret"),
    }
    for label, act in cases.items():
        recorder = Recorder()
        recorder.navigate(f"{ORIGIN}/login")
        act(recorder)
        recording = recorder.finish()
        assert not recording.cacheable, label
        with pytest.raises(ReplayRefused) as caught:
            recording.require_cacheable()
        assert caught.value.reason == "non_cacheable"

    recorder = Recorder()
    snapshot = await page.snapshot()
    (field,) = snapshot.find("textbox", "Username")
    assert recorder.type(field, "alice literally", before=snapshot) is None
    recording = recorder.finish()
    assert not recording.cacheable
    assert recording.steps == ()  # the literal is not kept as a step...
    assert "alice literally" not in json.dumps(recording.to_json())  # ...nor anywhere
    assert "alice literally" in recording.typed_values  # only in memory, for scrubbing


async def test_script_text_never_enters_a_recording() -> None:
    recorder = Recorder()
    recorder.evaluate("fetch('/steal?c=' + document.cookie)")
    text = json.dumps(recorder.finish().to_json())
    assert "document.cookie" not in text
    assert "sha256" in text


async def test_ambiguous_or_absent_targets_are_not_recorded() -> None:
    page = FakePage(f"{ORIGIN}/dupes")
    snapshot = await page.snapshot()
    first = snapshot.find("button", "Save")[0]
    recorder = Recorder()
    assert recorder.click(first, before=snapshot) is None
    assert "one of 2 alike" in recorder.finish().non_cacheable[0]

    recording = await record_dupes(FakePage())
    assert recording.cacheable  # one Save button while it was recorded
