"""Replay policies: validation, JSON round trips, and a fingerprint every field changes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy

from .replay_fixtures import delete_policy, login_policy


def test_policy_round_trips_and_fingerprints_stably() -> None:
    policy = login_policy()
    again = ReplayPolicy.from_json(json.loads(json.dumps(policy.to_json())))
    assert again == policy
    assert again.fingerprint() == policy.fingerprint()
    assert len(policy.fingerprint()) == 64
    assert not policy.destructive
    assert delete_policy().destructive


@pytest.mark.parametrize(
    "change",
    [
        {"scope_id": "https://other.test|account"},
        {"workflow_version": 2},
        {"side_effect": "destructive"},
        {"ttl_seconds": 3601},
        {"preconditions": ()},
        {"preconditions": (Condition("url_contains", "app.example.test/"),)},
        {"postconditions": (Condition("title_contains", "Welcome"),)},
        {
            "postconditions": (
                Condition("text_contains", "Welcome"),
                Condition("selector_exists", "nav"),
            )
        },
    ],
)
def test_every_field_changes_the_fingerprint(change: dict) -> None:
    policy = login_policy()
    assert dataclasses.replace(policy, **change).fingerprint() != policy.fingerprint()


def test_condition_order_is_part_of_the_policy() -> None:
    a, b = Condition("text_contains", "A"), Condition("selector_exists", "nav")
    assert (
        login_policy(postconditions=(a, b)).fingerprint()
        != login_policy(postconditions=(b, a)).fingerprint()
    )


def test_lists_of_conditions_are_accepted_as_tuples() -> None:
    policy = login_policy(preconditions=[Condition("url_contains", "x")])
    assert policy.preconditions == (Condition("url_contains", "x"),)


@pytest.mark.parametrize(
    "change",
    [
        {"scope_id": ""},
        {"scope_id": "a\nb"},
        {"workflow_version": 0},
        {"workflow_version": True},
        {"workflow_version": "1"},
        {"side_effect": "harmless"},
        {"ttl_seconds": 0},
        {"ttl_seconds": 1.5},
        {"ttl_seconds": 10**9},
        {"preconditions": ("url_contains",)},
    ],
)
def test_invalid_policies_are_refused(change: dict) -> None:
    with pytest.raises(InvalidRequest) as caught:
        login_policy(**change)
    assert caught.value.reason == "invalid_policy"


@pytest.mark.parametrize(
    ("kind", "value"), [("xpath", "//a"), ("text_contains", ""), ("url_contains", "a\x00")]
)
def test_invalid_conditions_are_refused(kind: str, value: str) -> None:
    with pytest.raises(InvalidRequest):
        Condition(kind, value)


def test_from_json_refuses_unknown_versions_and_fields() -> None:
    data = login_policy().to_json()
    with pytest.raises(InvalidRequest, match="version"):
        ReplayPolicy.from_json({**data, "version": 2})
    with pytest.raises(InvalidRequest, match="exactly the fields"):
        ReplayPolicy.from_json({**data, "extra": 1})
    with pytest.raises(InvalidRequest):
        ReplayPolicy.from_json({**data, "preconditions": [{"kind": "url_contains"}]})
