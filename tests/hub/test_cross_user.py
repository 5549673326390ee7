"""On a real hub, one user reaches nothing of another's Terax: no API route, no terminal
WebSocket, no preview, and no port the other user listens on."""

from __future__ import annotations

import pwd
import re
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from tests.hub.client import Answer, UserClient
from tests.hub.hub import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.hub.hub import Hub

METHODS = ("get", "post", "put", "patch", "delete")
# Plausible values for the path parameters of the OpenAPI document.
PARAMETERS = {"port": "8000", "session_id": "0123456789ab", "path": "index.html"}
SECRET_PAGE = "alice-preview-secret-7c1e"


def _routes(alice: UserClient) -> list[tuple[str, str]]:
    answer = alice.get("terax/api/openapi.json")
    assert answer.status == 200, answer
    routes = []
    for template, item in answer.json()["paths"].items():
        path = re.sub(
            r"\{([^}]+)\}", lambda match: PARAMETERS.get(match.group(1), "probe"), template
        )
        routes.extend((method.upper(), path) for method in METHODS if method in item)
    return routes


def _not_served(answer: Answer) -> bool:
    """Refused (403/401/404) or sent to the hub's login: nothing of the server's own."""
    if answer.status in (401, 403, 404):
        return True
    location = answer.headers.get("Location", "")
    return answer.status in (301, 302, 303, 307, 308) and "/hub/" in location


def test_every_terax_route_of_another_user_is_refused(
    alice: UserClient, bob_at_alice: UserClient
) -> None:
    routes = _routes(alice)
    assert len(routes) > 50  # the whole API, not a stub document
    served = []
    for method, path in routes:
        answer = bob_at_alice.request(method, path, {} if method != "GET" else None)
        if not _not_served(answer):
            served.append((method, path, answer.status, answer.text[:200]))
    assert served == [], f"bob was served by alice's server: {served}"
    # The same credentials are good on bob's own server: the refusals are about the owner.
    own = UserClient(
        bob_at_alice.base.replace("/user/hub-alice/", "/user/hub-bob/"), bob_at_alice.token
    )
    assert own.get("terax/api/policy").status == 200


def test_another_users_terminal_websocket_is_refused(
    bob: UserClient, alice_at_bob: UserClient, bob_at_alice: UserClient
) -> None:
    created = bob.post("terax/api/pty/sessions", {"name": "bob's shell"})
    assert created.status == 201, created
    session = created.json()["id"]
    try:
        path = f"terax/api/pty/{session}/stream"
        assert bob.websocket_refusal(path) is None  # bob's own terminal opens for him
        assert alice_at_bob.websocket_refusal(path) in (401, 403, 404)
        # And a guessed id on alice's server (hers are off by policy; the auth comes first).
        assert bob_at_alice.websocket_refusal("terax/api/pty/0123456789ab/stream") in (
            401,
            403,
            404,
        )
        # Lab's own terminal WebSocket is as closed to her.
        assert alice_at_bob.websocket_refusal("terminals/websocket/1") in (401, 403, 404)
    finally:
        bob.request("DELETE", f"terax/api/pty/sessions/{session}")


def _serve_as(user: str, port: int, folder: str) -> subprocess.Popen[bytes]:
    """A dev server on 127.0.0.1:port run by ``user`` (Debian's stdlib Python)."""
    entry = pwd.getpwnam(user)
    python = "/usr/bin/python3" if entry.pw_uid != 0 else sys.executable
    process = subprocess.Popen(
        [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--init-groups",
            "--reset-env",
            "--",
            python,
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            "--directory",
            folder,
            str(port),
        ],
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.1)
    process.kill()
    pytest.fail(f"{user}'s dev server did not listen on {port}")


def _dev_server(hub: Hub, user: str) -> Iterator[int]:
    """A page only ``user``'s account serves, on a port of 127.0.0.1 (its number)."""
    if not hub.real_users:
        pytest.skip("needs real Unix users (run as root)")
    entry = pwd.getpwnam(user)
    site = f"{entry.pw_dir}/site"
    subprocess.run(
        [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--init-groups",
            "--",
            "sh",
            "-c",
            f"mkdir -p {site} && echo {SECRET_PAGE}-{user} > {site}/index.html",
        ],
        check=True,
    )
    port = free_port()
    process = _serve_as(user, port, site)
    yield port
    process.kill()
    process.wait()


@pytest.fixture
def alice_dev_server(hub: Hub) -> Iterator[int]:
    yield from _dev_server(hub, "hub-alice")


@pytest.fixture
def bob_dev_server(hub: Hub) -> Iterator[int]:
    yield from _dev_server(hub, "hub-bob")


def _load_capability(client: UserClient, prefix: str) -> Answer:
    """A capability address loaded as a sandboxed preview page does: no credentials."""
    origin = client.base.split("/user/", 1)[0]
    return UserClient(origin + "/", "").get(prefix.lstrip("/") + "index.html")


def _assert_foreign_port_refused(client: UserClient, port: int) -> None:
    """``client``'s own server neither proxies ``port`` nor serves it through a capability."""
    answer = client.get(f"terax/proxy/{port}/index.html")
    assert answer.status in (403, 404), answer
    assert SECRET_PAGE not in answer.text
    issued = client.post("terax/api/preview/capabilities", {"target": str(port)})
    # Issuing an address may succeed (who listens is checked at each connection, as a port
    # changes hands); loading it must not reach the other account's server.
    if issued.status == 200:
        page = _load_capability(client, issued.json()["prefix"])
        assert page.status in (403, 404, 502), page
        assert SECRET_PAGE not in page.text
    else:
        assert issued.status in (403, 404), issued


def test_another_users_preview_is_refused(alice_dev_server: int, bob_at_alice: UserClient) -> None:
    port = alice_dev_server
    # Bob through alice's preview: the hub's auth refuses him before any proxying.
    for path in (f"terax/proxy/{port}/", f"terax/proxy/{port}/index.html"):
        answer = bob_at_alice.get(path)
        assert _not_served(answer), answer
        assert SECRET_PAGE not in answer.text
    refused = bob_at_alice.post("terax/api/preview/capabilities", {"target": str(port)})
    assert _not_served(refused), refused


def test_a_preview_of_another_users_port_is_refused(
    alice_dev_server: int, bob_dev_server: int, alice: UserClient, bob: UserClient
) -> None:
    _assert_foreign_port_refused(alice, bob_dev_server)
    _assert_foreign_port_refused(bob, alice_dev_server)
    # The control: each one's own port is served by their own preview.
    for client, port, user in (
        (bob, bob_dev_server, "hub-bob"),
        (alice, alice_dev_server, "hub-alice"),
    ):
        own = client.get(f"terax/proxy/{port}/index.html")
        assert own.status in (200, 302, 303, 307), own
        if own.status == 200:
            assert f"{SECRET_PAGE}-{user}" in own.text
        issued = client.post("terax/api/preview/capabilities", {"target": str(port)})
        assert issued.status == 200, issued
        page = _load_capability(client, issued.json()["prefix"])
        assert page.status == 200, page
        assert f"{SECRET_PAGE}-{user}" in page.text
