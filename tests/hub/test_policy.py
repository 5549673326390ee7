"""On a real hub, the operator's policy file (TERAX_POLICY_DIRS in the spawner's environment)
is enforced by hub-alice's server, and her own ~/.jupyter config cannot lift it; and
``ServerApp.terminals_enabled=False`` in the spawner's arguments closes Terax's terminals as it
closes Lab's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.hub.client import UserClient

if TYPE_CHECKING:
    from tests.hub.hub import Hub


def _refused(answer, reason: str = "disabled_by_policy") -> None:
    assert answer.status == 403, answer
    assert answer.json().get("reason") == reason, answer


def test_policy_is_reported_locked(alice: UserClient) -> None:
    answer = alice.get("terax/api/policy")
    assert answer.status == 200, answer
    policy = answer.json()
    assert policy["read_only"] == {"value": True, "locked": True}
    assert policy["features"]["terminals"] == {"enabled": False, "locked": True}
    assert policy["features"]["agent"] == {"enabled": False, "locked": True}
    for name in ("mcp", "browser", "git_push"):
        assert policy["features"][name] == {"enabled": False, "locked": True}, name
    assert {"read_only", "features.terminals", "features.agent", "features.mcp"} <= set(
        policy["locked"]
    )
    assert any(source.endswith("terax_policy.json") for source in policy["sources"])


def test_policy_refuses_terminals_on_the_server(alice: UserClient) -> None:
    _refused(alice.post("terax/api/pty/sessions", {"name": "not allowed"}))
    assert alice.websocket_refusal("terax/api/pty/0123456789ab/stream") in (403, 404)


def test_policy_refuses_agent_sessions(alice: UserClient) -> None:
    _refused(alice.post("terax/api/ai/sessions", {}))


def test_policy_refuses_the_mcp_bridge(alice: UserClient) -> None:
    _refused(alice.request("GET", "terax/api/info", headers={"X-Terax-Client": "mcp"}))
    assert alice.get("terax/api/info").status == 200  # the same request from Lab


def test_policy_refuses_the_browser_and_git_push(alice: UserClient) -> None:
    # Pinned read_only: the read-only check lets it through to the browser's own switch (an
    # unpinned run of a missing workflow is a 404 first: see notes/17-hub.md).
    ran = alice.post("terax/api/browser/workflows/probe/run", {"side_effect": "read_only"})
    _refused(ran)
    pushed = alice.post("terax/api/git/push", {"path": ""})
    assert pushed.status == 403, pushed
    assert pushed.json().get("reason") in ("disabled_by_policy", "read_only"), pushed


def test_policy_read_only_refuses_writes_despite_the_users_config(
    hub: Hub, alice: UserClient
) -> None:
    # Her ~/.jupyter/jupyter_server_config.json says TeraxApp.read_only=false (conftest).
    answer = alice.request(
        "PUT", "terax/api/fs/file", {"path": "written-by-terax.txt", "content": "no"}
    )
    assert answer.status == 403, answer
    assert answer.json().get("reason") in ("read_only", "disabled_by_policy"), answer
    assert alice.get("terax/api/fs/stat?path=written-by-terax.txt").status == 404
    # Reading still works: the refusal is the policy, not a broken server.
    assert alice.get("terax/api/fs/list?path=").status == 200


def test_a_server_without_policy_allows_the_same(bob: UserClient) -> None:
    """The control: the same requests succeed where no policy applies."""
    policy = bob.get("terax/api/policy").json()
    assert policy["read_only"]["value"] is False
    assert policy["features"]["terminals"]["enabled"] is True
    created = bob.post("terax/api/pty/sessions", {"name": "allowed"})
    assert created.status == 201, created
    bob.request("DELETE", f"terax/api/pty/sessions/{created.json()['id']}")
    session = bob.post("terax/api/ai/sessions", {})
    assert session.status == 201, session
    bob.request("DELETE", f"terax/api/ai/sessions/{session.json()['id']}")


def test_terminals_enabled_false_closes_terax_terminals(hub: Hub) -> None:
    # bob's named server "noterm" runs with --ServerApp.terminals_enabled=False (conftest).
    hub.start("hub-bob", "noterm")
    try:
        client = UserClient(hub.server_url("hub-bob", "noterm"), hub.token_for("hub-bob"))
        _refused(client.post("terax/api/pty/sessions", {"name": "no"}))
        assert client.post("api/terminals", {}).status == 404  # as Lab's terminals
        policy = client.get("terax/api/policy").json()
        assert policy["features"]["terminals"] == {"enabled": False, "locked": True}
        assert client.websocket_refusal("terax/api/pty/0123456789ab/stream") in (403, 404)
    finally:
        hub.stop("hub-bob", "noterm")
