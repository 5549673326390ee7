"""The administrator's policy on a real server: each switch refused by the server itself, the
user's configuration unable to lift it, and the API saying what is locked."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security.policy import POLICY_FILE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

POLICY_OFF = {
    "features": {name: False for name in ("terminals", "agent", "git_push", "preview", "browser")},
    "limits": {"browser_tabs": 1},
}


@pytest.fixture
def policy() -> dict[str, Any]:
    """The policy file's content for a test (override with parametrize)."""
    return POLICY_OFF


@pytest.fixture
def policy_dir(
    tmp_path: Path, policy: dict[str, Any] | str, monkeypatch: pytest.MonkeyPatch
) -> Path:
    folder = tmp_path / "etc-jupyter"
    folder.mkdir()
    text = policy if isinstance(policy, str) else json.dumps(policy)
    (folder / POLICY_FILE).write_text(text)
    monkeypatch.setenv("TERAX_POLICY_DIRS", str(folder))
    return folder


@pytest.fixture
def jp_server_config(terax_server_config: dict[str, Any], policy_dir: Path) -> dict[str, Any]:
    # The policy folder is named before the server starts: it reads the policy once.
    return terax_server_config


async def refused(call: Awaitable[Any]) -> tuple[int, str, str]:
    with pytest.raises(HTTPClientError) as caught:
        await call
    body = error_of(caught.value)
    return caught.value.code, body["reason"], body["message"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


async def test_every_switch_is_refused_by_the_server(
    terax_api: Api, jp_root_dir: Path, tmp_path: Path
) -> None:
    assert await refused(terax_api("pty/sessions", method="POST", body={})) == (
        403,
        "disabled_by_policy",
        "The administrator has turned off terminals.",
    )
    code, reason, _ = await refused(terax_api("ai/sessions", method="POST", body={}))
    assert (code, reason) == (403, "disabled_by_policy")
    code, reason, _ = await refused(terax_api("ai/complete", method="POST", body={"prefix": "x"}))
    assert (code, reason) == (403, "disabled_by_policy")
    code, reason, message = await refused(
        terax_api("browser/tabs/t1/open", method="POST", body={"url": "http://127.0.0.1:9/"})
    )
    assert (code, reason) == (403, "disabled_by_policy")
    assert "browser" in message
    code, reason, _ = await refused(
        terax_api("preview/capabilities", method="POST", body={"target": "8000"})
    )
    assert (code, reason) == (403, "disabled_by_policy")
    # git push: refused before git runs, so the remote does not move.
    repo, bare = jp_root_dir / "repo", tmp_path / "remote.git"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "a")
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    code, reason, message = await refused(
        terax_api("git/push", method="POST", body={"path": "repo"})
    )
    assert (code, reason) == (403, "disabled_by_policy")
    assert "push" in message
    assert git(bare, "for-each-ref") == ""
    # What is not switched off still works: reading files, fetching.
    assert (await terax_api("git/fetch", method="POST", body={"path": "repo"})) is not None


async def test_the_api_says_what_is_locked(terax_api: Api, policy_dir: Path) -> None:
    policy = await terax_api("policy")
    assert policy["sources"] == [str(policy_dir / POLICY_FILE)]
    assert policy["error"] is None
    assert policy["features"]["terminals"] == {"enabled": False, "locked": True}
    assert policy["features"]["mcp"] == {"enabled": True, "locked": False}
    assert policy["limits"] == {"browser_tabs": 1}
    assert {"features.git_push", "limits.browser_tabs"} <= set(policy["locked"])
    assert "read_only" not in policy["locked"]


@pytest.mark.parametrize("policy", [{"features": {"mcp": False}}])
async def test_the_mcp_bridge_is_refused_and_nothing_else(terax_api: Api) -> None:
    code, reason, message = await refused(terax_api("info", headers={"X-Terax-Client": "mcp"}))
    assert (code, reason) == (403, "disabled_by_policy")
    assert "MCP" in message
    assert (await terax_api("info"))["version"]


@pytest.mark.parametrize("policy", [{"read_only": True}])
@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"read_only": False}}])
async def test_the_users_configuration_cannot_lift_read_only(
    terax_api: Api, jp_root_dir: Path
) -> None:
    assert (await terax_api("info"))["read_only"] is True
    code, reason, _ = await refused(
        terax_api("fs/file", method="PUT", body={"path": "new.txt", "content": "x"})
    )
    assert (code, reason) == (403, "read_only")
    assert not (jp_root_dir / "new.txt").exists()
    code, reason, message = await refused(terax_api("pty/sessions", method="POST", body={}))
    assert (code, reason) == (403, "disabled_by_policy")
    assert "read-only" in message
    assert (await terax_api("policy"))["read_only"] == {"value": True, "locked": True}


@pytest.mark.parametrize("policy", ['{"features": {"terminals": "no"}}'])
async def test_a_broken_policy_turns_everything_off(terax_api: Api, jp_root_dir: Path) -> None:
    policy = await terax_api("policy")
    assert "features.terminals must be true or false" in policy["error"]
    assert not any(feature["enabled"] for feature in policy["features"].values())
    assert (await terax_api("info"))["read_only"] is True
    code, reason, message = await refused(terax_api("ai/sessions", method="POST", body={}))
    assert (code, reason) == (403, "disabled_by_policy")
    assert "could not be read" in message


@pytest.mark.parametrize("policy", [{"limits": {"terminals": 1}}])
async def test_a_terminal_limit_refuses_the_next_one(terax_api: Api) -> None:
    first = await terax_api("pty/sessions", method="POST", body={})
    code, reason, message = await refused(terax_api("pty/sessions", method="POST", body={}))
    assert (code, reason) == (413, "policy_limit")
    assert "at most 1 terminals" in message
    await terax_api(f"pty/sessions/{first['id']}", method="DELETE")


@pytest.mark.parametrize("policy", [{}])
@pytest.mark.parametrize("terax_config", [{"ServerApp": {"terminals_enabled": False}}])
async def test_terminals_enabled_false_stops_terax_terminals(terax_api: Api) -> None:
    code, reason, message = await refused(terax_api("pty/sessions", method="POST", body={}))
    assert (code, reason) == (403, "disabled_by_policy")
    assert "ServerApp.terminals_enabled" in message
    assert (await terax_api("policy"))["features"]["terminals"] == {
        "enabled": False,
        "locked": True,
    }


@pytest.mark.parametrize("policy", [{}])
@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"read_only": True}}])
async def test_read_only_by_the_servers_setting_is_shown_and_stops_terminals(
    terax_api: Api,
) -> None:
    assert (await terax_api("policy"))["read_only"] == {"value": True, "locked": True}
    code, reason, message = await refused(terax_api("pty/sessions", method="POST", body={}))
    assert (code, reason) == (403, "disabled_by_policy")
    assert "read_only" in message


@pytest.mark.parametrize("policy", [{"read_only": True, "features": {"browser": False}}])
async def test_a_workflow_run_is_refused_by_the_switch_before_anything_else(
    terax_api: Api,
) -> None:
    # Read-only looks the workflow up to check its side effect: the switch comes first, so a
    # refused run is neither looked up (a 404) nor audited.
    code, reason, _ = await refused(
        terax_api("browser/workflows/no-such-flow/run", method="POST", body={"inputs": {}})
    )
    assert (code, reason) == (403, "disabled_by_policy")
