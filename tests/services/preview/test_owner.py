"""The preview opens only servers of the server's own account: tested with a real second uid.

The other account's server is a plain Python listener that records whether a single byte
reached it: the connection may be made (that is how its owner is learnt), nothing is sent.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.preview import owner

from .conftest import free_port

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    from tests.second_user import OtherUser

    from .conftest import Upstream

# Accepts connections; prints how many bytes each sent within a second, then "done".
LISTENER = r"""
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
server = socket.socket(family)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], int(sys.argv[2])))
server.listen()
print("ready", flush=True)
server.settimeout(float(sys.argv[3]))
try:
    while True:
        connection, _ = server.accept()
        connection.settimeout(1.0)
        try:
            data = connection.recv(65536)
        except OSError:
            data = b""
        print("bytes", len(data), flush=True)
        connection.close()
except OSError:
    pass
print("done", flush=True)
"""


class ForeignServer:
    def __init__(
        self, user: OtherUser, host: str, port: int, seconds: float = 20.0, script: str = ""
    ) -> None:
        self.port = port
        self.process = user.popen(
            ["/usr/bin/python3", "-c", script or LISTENER, host, str(port), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    def received(self) -> list[int]:
        """Bytes received per connection (ends the listener)."""
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return [int(line.split()[1]) for line in out.splitlines() if line.startswith("bytes")]


@pytest.fixture
def foreign(second_user: OtherUser) -> Iterator[ForeignServer]:
    server = ForeignServer(second_user, "127.0.0.1", free_port())
    yield server
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait(timeout=10)


def test_the_kernel_names_the_owner_of_the_other_end(second_user: OtherUser) -> None:
    server = ForeignServer(second_user, "127.0.0.1", free_port())
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            assert owner.peer_uid(connection) == second_user.uid
            local, remote = connection.getsockname(), connection.getpeername()
            # The /proc fallback agrees with netlink.
            assert owner._proc_uid(remote, local) == second_user.uid
    finally:
        server.received()
    mine = socket.create_server(("127.0.0.1", 0))
    with mine, socket.create_connection(mine.getsockname()) as connection:
        assert owner.peer_uid(connection) == owner.own_uid()


def test_psutil_names_our_own_listener_when_the_system_wide_list_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where ``psutil.net_connections`` is refused to a user (macOS), the owner is found in
    each own process's list, whose entries carry no pid: the process's own is used."""

    def refused(kind: str = "inet") -> list[Any]:
        raise owner.psutil.AccessDenied()

    mine = socket.create_server(("127.0.0.1", 0))
    with mine, socket.create_connection(mine.getsockname()) as connection:
        accepted, _ = mine.accept()  # a socket a process holds (psutil sees owned ones)
        local, remote = connection.getsockname(), connection.getpeername()
        system_wide = owner._psutil_uid(remote, local)
        monkeypatch.setattr(owner.psutil, "net_connections", refused)
        assert owner._psutil_uid(remote, local) == system_wide == owner.own_uid()
        accepted.close()


def test_a_dual_stack_listener_is_found_through_its_mapped_address(
    second_user: OtherUser,
) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    server = ForeignServer(second_user, "::", free_port("::1"))
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            assert owner.peer_uid(connection) == second_user.uid
    finally:
        server.received()


async def test_another_accounts_port_is_never_proxied(
    foreign: ForeignServer,
    proxy_fetch: Callable[..., Awaitable[Any]],
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Callable[..., Awaitable[Any]],
    jp_ws_fetch: Any,
) -> None:
    for method in ("GET", "POST"):
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(
                foreign.port, "login", method=method, body="pw=1" if method == "POST" else None
            )
        assert caught.value.code == 403
        body = error_of(caught.value)
        assert body["reason"] == "not_own_port"
        assert "another account" in body["message"]
    prefix = await capability(foreign.port)
    with pytest.raises(HTTPClientError) as caught:
        await capability_fetch(prefix, "index.html")
    assert error_of(caught.value)["reason"] == "not_own_port"
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "proxy", str(foreign.port), "hmr")
    assert caught.value.code == 403
    received = await asyncio.to_thread(foreign.received)
    assert received, "the proxy never even connected: the test proves nothing"
    assert set(received) == {0}, received  # not one byte of any request reached it


async def test_our_server_beside_another_accounts_is_the_one_reached(
    second_user: OtherUser, proxy_fetch: Callable[..., Awaitable[Any]], upstream_v6: Upstream
) -> None:
    """The other account takes 127.0.0.1 of the port our dev server has on ::1 (as Node binds
    localhost): the proxy goes on to ours instead of refusing or leaking."""
    try:
        server = ForeignServer(second_user, "127.0.0.1", upstream_v6.port)
    except AssertionError:
        pytest.skip("this kernel does not let two sockets share the port across families")
    try:
        response = await proxy_fetch(upstream_v6.port, "mine")
        assert json.loads(response.body)["uri"] == "/mine"
    finally:
        received = await asyncio.to_thread(server.received)
    assert set(received) <= {0}


async def test_a_port_whose_listener_is_gone_is_not_listening(
    proxy_fetch: Callable[..., Awaitable[Any]], second_user: OtherUser
) -> None:
    server = ForeignServer(second_user, "127.0.0.1", free_port(), seconds=0.2)
    await asyncio.to_thread(server.process.wait, 10)
    with pytest.raises(HTTPClientError) as caught:
        await proxy_fetch(server.port, "")
    assert (caught.value.code, error_of(caught.value)["reason"]) == (502, "nothing_listening")


# A listener that defers accepting until data arrives (TCP_DEFER_ACCEPT): the connection is a
# request socket until then, which the kernel's socket diagnostics report as root's.
DEFERRING = LISTENER.replace(
    "server.listen()",
    "server.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 30)\nserver.listen()",
)


async def test_a_deferring_listener_of_another_account_is_still_its(
    second_user: OtherUser, proxy_fetch: Callable[..., Awaitable[Any]]
) -> None:
    server = ForeignServer(second_user, "127.0.0.1", free_port(), script=DEFERRING)
    try:
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            assert owner.peer_uid(connection) == second_user.uid
        with pytest.raises(HTTPClientError) as caught:
            await proxy_fetch(server.port, "")
        assert error_of(caught.value)["reason"] == "not_own_port"
    finally:
        received = await asyncio.to_thread(server.received)
    assert set(received) <= {0}
