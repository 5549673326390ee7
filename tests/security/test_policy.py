"""The administrator's policy file: parsed strictly, merged most-restrictive, failing closed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import AccessDenied, TooLarge
from terax_jupyter.security.policy import (
    FEATURES,
    POLICY_FILE,
    Policy,
    PolicyError,
    load_policy,
    parse,
    policy_dirs,
)

if TYPE_CHECKING:
    from pathlib import Path


def write(folder: Path, data: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / POLICY_FILE
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_no_file_is_no_policy_and_everything_allowed(tmp_path: Path) -> None:
    policy = load_policy([str(tmp_path)])
    assert policy == Policy()
    assert all(policy.allows(name) for name in FEATURES)
    assert policy.locked == frozenset()
    assert policy.describe()["read_only"] == {"value": False, "locked": False}


def test_a_feature_turned_off_is_refused_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, {"features": {"terminals": False, "git_push": False}})
    policy = load_policy([str(tmp_path)])
    assert (policy.allows("terminals"), policy.allows("git_push")) == (False, False)
    assert policy.allows("agent")
    with pytest.raises(AccessDenied) as refused:
        policy.require("git_push")
    assert refused.value.reason == "disabled_by_policy"
    assert "administrator" in refused.value.message
    assert policy.locked == {"features.terminals", "features.git_push"}
    described = policy.describe()["features"]
    assert described["terminals"] == {"enabled": False, "locked": True}
    assert described["agent"] == {"enabled": True, "locked": False}


def test_read_only_turns_terminals_off(tmp_path: Path) -> None:
    write(tmp_path, {"read_only": True})
    policy = load_policy([str(tmp_path)])
    with pytest.raises(AccessDenied, match="read-only"):
        policy.require("terminals")
    assert policy.describe()["features"]["terminals"] == {"enabled": False, "locked": True}


def test_the_servers_own_switch_is_said_as_such() -> None:
    policy = Policy().with_server_off("terminals", "ServerApp.terminals_enabled is False")
    with pytest.raises(AccessDenied, match="terminals_enabled"):
        policy.require("terminals")
    assert "features.terminals" in policy.locked


def test_a_limit_refuses_once_reached() -> None:
    policy = Policy(limits={"terminals": 2.0})
    policy.check_limit("terminals", 1)
    with pytest.raises(TooLarge) as refused:
        policy.check_limit("terminals", 2)
    assert refused.value.reason == "policy_limit"
    assert "at most 2 terminals" in refused.value.message
    Policy().check_limit("terminals", 10_000)  # no limit set: never refused


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ("{not json", "not valid JSON"),
        ([], "JSON object"),
        ({"read_only": "yes"}, "read_only must be true or false"),
        ({"features": {"terminal": False}}, "unknown setting features.terminal"),
        ({"features": {"agent": 0}}, "features.agent must be true or false"),
        ({"limits": {"terminals": -1}}, "limits.terminals must be a number"),
        ({"limits": {"terminals": True}}, "limits.terminals must be a number"),
        ({"ai": {"providers": "openai"}}, "ai.providers must be a list"),
        ({"ai": {"approvals": "never"}}, "ai.approvals must be one of"),
        ({"audit_log": "relative.jsonl"}, "absolute path"),
        ({"colour": "blue"}, "unknown setting colour"),
    ],
)
def test_a_bad_file_names_the_setting(data: object, complaint: str) -> None:
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(PolicyError, match=complaint):
        parse(text, "/etc/jupyter/terax_policy.json")


def test_a_bad_file_fails_closed(tmp_path: Path) -> None:
    write(tmp_path / "a", {"features": {"agent": True}})
    write(tmp_path / "b", {"features": {"terminals": "off"}})
    policy = load_policy([str(tmp_path / "a"), str(tmp_path / "b")])
    assert "features.terminals" in str(policy.error)
    assert not any(policy.allows(name) for name in FEATURES)
    with pytest.raises(AccessDenied, match="could not be read"):
        policy.require("agent")
    assert policy.describe()["read_only"] == {"value": True, "locked": True}


def test_an_unreadable_file_fails_closed(tmp_path: Path) -> None:
    (tmp_path / POLICY_FILE).mkdir(parents=True)  # a folder where the file should be
    policy = load_policy([str(tmp_path)])
    assert policy.error is not None
    assert not policy.allows("terminals")


def test_two_files_merge_to_the_more_restrictive(tmp_path: Path) -> None:
    write(
        tmp_path / "etc",
        {
            "features": {"terminals": False, "agent": True},
            "limits": {"terminals": 5, "tokens_per_day": 1000},
            "ai": {"providers": ["openai", "ollama"], "approvals": "admin_rules"},
        },
    )
    write(
        tmp_path / "env",
        {
            "read_only": False,
            "features": {"terminals": True, "agent": False},
            "limits": {"terminals": 8, "concurrent_runs": 2},
            "ai": {"providers": ["ollama", "anthropic"], "approvals": "user"},
        },
    )
    policy = load_policy([str(tmp_path / "etc"), str(tmp_path / "env")])
    assert policy.error is None
    assert not policy.allows("terminals")  # off in one file: off
    assert not policy.allows("agent")
    assert policy.limits == {"terminals": 5, "tokens_per_day": 1000, "concurrent_runs": 2}
    assert policy.providers == ("ollama",)
    assert policy.approvals == "admin_rules"
    assert policy.read_only is False
    assert len(policy.sources) == 2


def test_the_spawner_names_the_folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TERAX_POLICY_DIRS", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert policy_dirs() == [str(tmp_path / "a"), str(tmp_path / "b")]
    monkeypatch.delenv("TERAX_POLICY_DIRS")
    assert "/etc/jupyter" in policy_dirs()
