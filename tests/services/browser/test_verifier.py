"""Approval tokens: single use, short-lived, bound to every field, safe under contention."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from terax_jupyter.exceptions import InvalidRequest, ReplayRefused
from terax_jupyter.services.browser.verifier import ReplayVerifier

from .replay_fixtures import FakeClock

BINDING: dict[str, Any] = {
    "task": "task-1",
    "scope_id": "https://app.example.test|account",
    "workflow_version": 3,
    "policy_fingerprint": "f" * 64,
    "structural_hash": "s" * 64,
    "command_digest": "c" * 64,
}


def reason(verifier: ReplayVerifier, token: str, **changes: Any) -> str:
    with pytest.raises(ReplayRefused) as caught:
        verifier.consume(token, **{**BINDING, **changes})
    return caught.value.reason


def test_a_token_is_accepted_once() -> None:
    verifier = ReplayVerifier(clock=FakeClock())
    token = verifier.issue(**BINDING)
    verifier.consume(token, **BINDING)
    assert reason(verifier, token) == "token_reused"


def test_tokens_are_random_and_only_their_hash_is_kept() -> None:
    verifier = ReplayVerifier(clock=FakeClock())
    tokens = {verifier.issue(**BINDING) for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) >= 40 for t in tokens)
    kept = repr(verifier.__dict__)
    assert not any(t in kept for t in tokens)


def test_an_expired_token_is_refused() -> None:
    clock = FakeClock()
    verifier = ReplayVerifier(ttl_seconds=30, clock=clock)
    token = verifier.issue(**BINDING)
    clock.advance(30)
    assert reason(verifier, token) == "token_expired"


def test_an_unknown_token_is_refused() -> None:
    verifier = ReplayVerifier(clock=FakeClock())
    verifier.issue(**BINDING)
    assert reason(verifier, "never-issued-token") == "token_unknown"
    assert reason(verifier, "") == "token_unknown"
    assert reason(verifier, "x" * 1000) == "token_unknown"
    other = ReplayVerifier(clock=FakeClock())
    assert reason(other, verifier.issue(**BINDING)) == "token_unknown"  # per-server key


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("task", "task-2"),
        ("scope_id", "https://evil.test|account"),
        ("workflow_version", 4),
        ("policy_fingerprint", "e" * 64),
        ("structural_hash", "t" * 64),
        ("command_digest", "d" * 64),
    ],
)
def test_any_mismatch_is_refused_and_spends_the_token(field: str, value: Any) -> None:
    verifier = ReplayVerifier(clock=FakeClock())
    token = verifier.issue(**BINDING)
    assert reason(verifier, token, **{field: value}) == "token_mismatch"
    assert reason(verifier, token) == "token_reused"  # no second try after a mismatch


def test_spent_tokens_are_forgotten_after_another_ttl() -> None:
    clock = FakeClock()
    verifier = ReplayVerifier(ttl_seconds=10, clock=clock)
    token = verifier.issue(**BINDING)
    verifier.consume(token, **BINDING)
    clock.advance(25)
    verifier.issue(**BINDING)  # prunes
    assert reason(verifier, token) == "token_unknown"
    assert len(verifier._grants) == 1


def test_bindings_and_ttls_are_validated() -> None:
    verifier = ReplayVerifier(clock=FakeClock())
    with pytest.raises(InvalidRequest):
        verifier.issue(**{**BINDING, "structural_hash": ""})
    with pytest.raises(InvalidRequest):
        verifier.issue(**{**BINDING, "workflow_version": "3"})
    with pytest.raises(InvalidRequest):
        ReplayVerifier(ttl_seconds=3600)


def test_only_one_of_many_concurrent_consumers_wins() -> None:
    verifier = ReplayVerifier()
    token = verifier.issue(**BINDING)
    barrier = threading.Barrier(16)
    outcomes: list[str] = []
    lock = threading.Lock()

    def attempt() -> None:
        barrier.wait()
        try:
            verifier.consume(token, **BINDING)
            result = "ok"
        except ReplayRefused as error:
            result = error.reason
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=attempt) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["ok"] + ["token_reused"] * 15


def test_a_proposal_token_may_live_longer_but_never_past_the_cap() -> None:
    # Issued when the approval card opens, it must outlive the default TTL while the person
    # reads the card, and still expire.
    clock = FakeClock()
    verifier = ReplayVerifier(ttl_seconds=30, clock=clock)
    token = verifier.issue(**BINDING, ttl_seconds=600)
    clock.advance(599)
    verifier.consume(token, **BINDING)
    late = verifier.issue(**BINDING, ttl_seconds=600)
    clock.advance(600)
    assert reason(verifier, late) == "token_expired"
    for bad in (0, -1, 901, True, "60"):
        with pytest.raises(InvalidRequest) as caught:
            verifier.issue(**BINDING, ttl_seconds=bad)
        assert caught.value.reason == "invalid_ttl"
