"""Finding the server (order, tokens, errors) and the REST client, without a server: fake
runtime entries and environments, and httpx's mock transport."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from terax_jupyter.client.api import TeraxAPIError, TeraxClient, api_error
from terax_jupyter.client.discovery import (
    HINT,
    Candidate,
    DiscoveryError,
    ServerTarget,
    candidates,
    discover,
    split_url,
)
from terax_jupyter.mcp.connection import Connection
from terax_jupyter.mcp.server import _most_active

HUB = {
    "JUPYTERHUB_API_TOKEN": "hub-token",
    "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/",
    "JUPYTERHUB_SERVICE_URL": "http://0.0.0.0:8888/user/alice/",
    "JUPYTERHUB_PUBLIC_URL": "https://hub.example.org/user/alice/",
    "JUPYTERHUB_HOST": "https://alice.hub.example.org",
}


def server(pid: int, root: str, port: int, token: str | None = None) -> dict[str, Any]:
    return {
        "pid": pid,
        "root_dir": root,
        "url": f"http://127.0.0.1:{port}/",
        "base_url": "/",
        "token": token or f"token-{pid}",
        "sock": "",
    }


RUNNING = [
    server(1, "/home/me", 8001),
    server(2, "/home/me/project", 8002),
    server(3, "/srv/other", 8003),
    server(4, "/home/me/project/sub", 8004),
]
STARTED = {1: 100.0, 2: 200.0, 3: 400.0, 4: 300.0}


def started(info: Any) -> float:
    return STARTED[info["pid"]]


def urls(found: list[Candidate]) -> list[str]:
    return [c.url for c in found]


# -- the order --------------------------------------------------------------------------


def test_running_servers_deepest_root_holding_the_folder_first_then_newest() -> None:
    found = candidates(
        environ={}, folders=["/home/me/project/src"], running=RUNNING, started=started
    )
    assert urls(found) == [
        "http://127.0.0.1:8002/",  # /home/me/project holds the folder, deepest
        "http://127.0.0.1:8001/",  # /home/me holds it too
        "http://127.0.0.1:8003/",  # elsewhere: newest first
        "http://127.0.0.1:8004/",
    ]
    assert [c.token for c in found[:2]] == ["token-2", "token-1"]


def test_the_shells_spelling_of_the_folder_counts_too() -> None:
    # The kernel says /private/tmp/x (macOS), the shell $PWD says /tmp/x.
    running = [server(1, "/tmp/x", 8001), server(2, "/elsewhere", 8002)]
    found = candidates(environ={}, folders=["/private/tmp/x", "/tmp/x"], running=running)
    assert urls(found)[0] == "http://127.0.0.1:8001/"


def test_a_root_is_not_a_prefix_match() -> None:
    running = [server(1, "/home/me/proj", 8001), server(2, "/srv", 8002)]
    found = candidates(environ={}, folders=["/home/me/project"], running=running, started=started)
    assert urls(found) == ["http://127.0.0.1:8002/", "http://127.0.0.1:8001/"]  # newest


def test_jupyterhub_comes_before_runtime_files() -> None:
    found = candidates(environ=HUB, folders=["/home/me/project"], running=RUNNING[:1])
    assert urls(found) == [
        "http://127.0.0.1:8888/user/alice/",  # the bind address, wildcard made local
        "https://hub.example.org/user/alice/",
        "https://alice.hub.example.org/user/alice/",
        "http://127.0.0.1:8001/",
    ]
    assert [c.token for c in found[:3]] == ["hub-token"] * 3


def test_jupyterhub_prefix_and_host_alone() -> None:
    environ = {
        "JUPYTERHUB_API_TOKEN": "t",
        "JUPYTERHUB_SERVICE_PREFIX": "/user/bob/",
        "JUPYTERHUB_HOST": "https://bob.example.org",
    }
    assert urls(candidates(environ=environ)) == ["https://bob.example.org/user/bob/"]
    # No token, no hub candidates: the hub's variables say where, not how to get in.
    assert candidates(environ={k: v for k, v in HUB.items() if "TOKEN" not in k}) == []


def test_an_explicit_url_is_the_only_candidate() -> None:
    environ = {**HUB, "TERAX_URL": "http://env:1/", "TERAX_TOKEN": "env-token"}
    found = candidates("http://arg:2/", "arg-token", environ=environ, running=RUNNING)
    assert [(c.url, c.token, c.source) for c in found] == [("http://arg:2/", "arg-token", "--url")]
    found = candidates(environ=environ, running=RUNNING)
    assert [(c.url, c.token, c.source) for c in found] == [
        ("http://env:1/", "env-token", "TERAX_URL")
    ]


def test_a_url_alone_takes_the_token_of_the_server_there_and_no_other() -> None:
    found = candidates("http://localhost:8002/lab", environ={}, running=RUNNING)
    assert found[0].url == "http://localhost:8002/"
    assert found[0].token == "token-2"
    assert "runtime file" in found[0].source
    nowhere = candidates("http://127.0.0.1:9999/", environ={}, running=RUNNING)
    assert nowhere[0].token == ""


def test_a_url_copied_from_the_browser_gives_its_base_and_token() -> None:
    assert split_url("http://localhost:8888/lab/tree/x.py?token=abc") == (
        "http://localhost:8888/",
        "abc",
    )
    assert split_url("http://h/user/lab/lab?x=1") == ("http://h/user/lab/", None)
    found = candidates("http://h:1/user/a/lab?token=pasted", environ={})
    assert (found[0].url, found[0].token) == ("http://h:1/user/a/", "pasted")
    with pytest.raises(DiscoveryError, match="not an http"):
        split_url("ftp://h/")


def test_a_token_without_a_url_is_refused() -> None:
    with pytest.raises(DiscoveryError, match="--token needs --url"):
        candidates(token="t", environ={}, running=RUNNING)


# -- probing ----------------------------------------------------------------------------


def test_discover_returns_the_first_that_answers_as_terax() -> None:
    tried: list[str] = []

    def check(candidate: Candidate) -> dict[str, Any]:
        tried.append(candidate.url)
        if candidate.url != "http://127.0.0.1:8001/":
            raise TeraxAPIError("Not found", status=404, reason="error")
        return {"server_root": "/home/me", "version": "9"}

    target = discover(environ={}, folders=["/home/me/project"], running=RUNNING[:3], check=check)
    assert tried == ["http://127.0.0.1:8002/", "http://127.0.0.1:8001/"]
    assert (target.url, target.token, target.root, target.version) == (
        "http://127.0.0.1:8001/",
        "token-1",
        "/home/me",
        "9",
    )
    assert "token-1" not in repr(target)


def test_discover_says_what_it_tried_and_what_to_pass() -> None:
    def refuse(candidate: Candidate) -> dict[str, Any]:
        raise TeraxAPIError("Cannot reach it", status=None, reason="unreachable")

    with pytest.raises(DiscoveryError) as caught:
        discover(environ={}, folders=[], running=RUNNING[:2], check=refuse)
    message = str(caught.value)
    assert "http://127.0.0.1:8001/" in message
    assert "Cannot reach it" in message
    assert HINT in message
    assert "token-1" not in message
    with pytest.raises(DiscoveryError) as caught:
        discover(environ={}, folders=[], running=[], check=refuse)
    assert "No running Terax server found" in str(caught.value)
    assert HINT in str(caught.value)


# -- the REST client --------------------------------------------------------------------


def test_errors_carry_the_servers_message_reason_and_status() -> None:
    error = api_error(
        403, json.dumps({"message": "x is protected", "reason": "path_denied"}).encode()
    )
    assert (error.message, error.reason, error.status) == ("x is protected", "path_denied", 403)
    for body in (b'{"message": "Forbidden", "reason": "forbidden"}', b"<html>403</html>"):
        jupyter = api_error(403, body)
        assert jupyter.reason == "forbidden"
        assert "refused the token" in jupyter.message
    html = api_error(404, b"<html>404</html>")
    assert "Terax extension" in html.message


def test_the_async_client_sends_the_token_and_json_and_streams_ndjson() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/fs/grep"):
            lines = [{"type": "file", "path": "a"}, {"type": "summary", "matches": 1}]
            body = "".join(json.dumps(line) + "\n" for line in lines)
            return httpx.Response(200, text=body)
        if request.url.path.endswith("/missing"):
            return httpx.Response(404, json={"message": "no such file", "reason": "not_found"})
        return httpx.Response(200, json={"ok": True})

    async def scenario() -> None:
        async with TeraxClient(
            "http://h/user/a", "secret-token", transport=httpx.MockTransport(answer)
        ) as client:
            assert await client.post("pty/sessions", {"name": "x"}) == {"ok": True}
            assert await client.get("fs/file", path="a b", regex=True) == {"ok": True}
            items = [item async for item in client.stream_lines("fs/grep")]
            assert [i["type"] for i in items] == ["file", "summary"]
            with pytest.raises(TeraxAPIError) as caught:
                await client.get("missing")
            assert (caught.value.status, caught.value.reason) == (404, "not_found")

    anyio.run(scenario)
    assert str(seen[0].url) == "http://h/user/a/terax/api/pty/sessions"
    assert seen[0].headers["Authorization"] == "token secret-token"
    assert json.loads(seen[0].content) == {"name": "x"}
    assert seen[1].url.params["path"] == "a b"
    assert seen[1].url.params["regex"] == "true"


def test_the_connection_finds_the_server_again_when_it_moved_and_closes_its_tab() -> None:
    targets = iter(
        [
            ServerTarget("http://old/", "old-token", "first"),
            ServerTarget("http://new/", "new-token", "second"),
        ]
    )
    requests: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(f"{request.method} {request.url}")
        if request.url.host == "old":
            raise httpx.ConnectError("refused")
        return httpx.Response(200, json={"text": "new-token is here"})

    connection = Connection(
        find=lambda url, token: next(targets), tab="mcp-1", transport=httpx.MockTransport(answer)
    )

    async def scenario() -> None:
        answer_ = await connection.browser("snapshot", {})
        assert connection.redact(answer_["text"]) == "[REDACTED] is here"
        await connection.close()

    anyio.run(scenario)
    assert requests == [
        "POST http://old/terax/api/browser/tabs/mcp-1/snapshot",
        "POST http://new/terax/api/browser/tabs/mcp-1/snapshot",
        "DELETE http://new/terax/api/browser/tabs/mcp-1",
    ]


def test_the_most_active_terminal_is_the_one_with_the_latest_command() -> None:
    sessions = [
        {"id": "a", "created_at": 10.0, "blocks": 1},
        {"id": "b", "created_at": 50.0, "blocks": 0},
        {"id": "c", "created_at": 5.0, "blocks": 1, "exited": True},
    ]
    blocks = {
        "a": [{"id": 1, "started_at": 60.0, "ended_at": 61.0}],
        "c": [{"id": 1, "started_at": 90.0, "ended_at": None}],
    }

    def answer(request: httpx.Request) -> httpx.Response:
        session = request.url.path.split("/")[-2]
        return httpx.Response(200, json={"blocks": blocks[session]})

    connection = Connection(
        find=lambda url, token: ServerTarget("http://h/", "", "test"),
        transport=httpx.MockTransport(answer),
    )

    async def scenario() -> tuple[dict[str, Any], Any]:
        try:
            return await _most_active(connection, sessions)
        finally:
            await connection.close()

    chosen, chosen_blocks = anyio.run(scenario)
    assert chosen["id"] == "a"  # c ran later but has exited
    assert chosen_blocks == blocks["a"]
