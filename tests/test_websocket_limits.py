"""The per-user cap on Terax's WebSockets (base.py): refused in the handshake, with a reason."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_core.utils import ensure_async
from jupyter_server.auth.identity import IdentityProvider, User
from tornado.httpclient import HTTPClientError

from terax_jupyter.base import CONNECTIONS_KEY, ConnectionSlots
from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

CAP = 3


@pytest.fixture
def terax_config() -> dict[str, Any]:
    return {"TeraxApp": {"max_websockets_per_user": CAP}}


@pytest.fixture
def slots(jp_serverapp: Any) -> ConnectionSlots:
    return jp_serverapp.web_app.settings[CONNECTIONS_KEY]  # type: ignore[no-any-return]


async def _wait_for(predicate: Callable[[], bool], what: str) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def _refusal(connect: Callable[[], Awaitable[Any]]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as caught:
        await connect()
    return caught.value.code, error_of(caught.value)


def test_slots_count_per_user_and_zero_means_no_limit() -> None:
    slots = ConnectionSlots(2)
    assert slots.take("ada")
    assert slots.take("ada")
    assert not slots.take("ada")
    assert slots.take("grace")  # another user has slots of her own
    slots.release("ada")
    assert slots.count("ada") == 1
    assert slots.take("ada")
    unlimited = ConnectionSlots(0)
    assert all(unlimited.take("ada") for _ in range(1000))


async def test_the_sockets_past_the_cap_are_refused_with_a_reason(
    jp_ws_fetch: Any, jp_fetch: Any, terax_api: Any, slots: ConnectionSlots
) -> None:
    session = await terax_api("pty/sessions", method="POST")
    stream = ("terax", "api", "pty", session["id"], "stream")
    watch = ("terax", "api", "fs", "watch")
    # Every kind of Terax socket takes one of the user's slots.
    opened = [
        await jp_ws_fetch(*stream),
        await jp_ws_fetch(*watch),
        await jp_ws_fetch(*stream),
    ]
    user = next(iter(slots._open))
    assert slots.count(user) == CAP
    for address in (watch, stream):
        status, body = await _refusal(lambda a=address: jp_ws_fetch(*a))
        assert status == 503
        assert body["reason"] == "too_many_connections"
        assert f"{CAP} Terax connections" in body["message"]
        assert "TeraxApp.max_websockets_per_user" in body["message"]
    # A plain GET of a socket's address says the same: how a browser learns why.
    status, body = await _refusal(lambda: jp_fetch(*watch))
    assert (status, body["reason"]) == (503, "too_many_connections")
    # The refused handshakes took nothing; a closed socket gives its slot back.
    assert slots.count(user) == CAP
    assert (await terax_api(f"pty/sessions/{session['id']}"))["clients"] == 2
    opened.pop().close()
    await _wait_for(lambda: slots.count(user) == CAP - 1, "the slot to come back")
    opened.append(await jp_ws_fetch(*watch))
    assert slots.count(user) == CAP
    for socket in opened:
        socket.close()
    await _wait_for(lambda: slots.count(user) == 0, "every slot to come back")


async def test_failed_handshakes_give_their_slot_back(
    jp_ws_fetch: Any, jp_fetch: Any, slots: ConnectionSlots
) -> None:
    for _ in range(CAP * 3):
        status, _body = await _refusal(
            lambda: jp_ws_fetch("terax", "api", "pty", "no-such-session", "stream")
        )
        assert status == 404
        # Without the upgrade headers: tornado's 400, after the slot was taken.
        with pytest.raises(HTTPClientError) as caught:
            await jp_fetch("terax", "api", "fs", "watch")
        assert caught.value.code == 400
    assert sum(slots._open.values()) == 0
    sockets = [await jp_ws_fetch("terax", "api", "fs", "watch") for _ in range(CAP)]
    for socket in sockets:
        socket.close()


class NamedUsers(IdentityProvider):
    """Token login, with the user named by a header: a server whose users have names of
    their own (as JupyterHub's do), for the per-user count."""

    async def get_user(self, handler: Any) -> User | None:
        user = await ensure_async(super().get_user(handler))
        name = handler.request.headers.get("X-Test-User")
        if user is None or not name:
            return user
        return User(username=name, name=name, display_name=name)


@pytest.mark.parametrize(
    "terax_config",
    [
        {
            "TeraxApp": {"max_websockets_per_user": 2},
            "ServerApp": {"identity_provider_class": f"{__name__}.NamedUsers"},
        }
    ],
)
async def test_users_with_names_each_have_their_own_allowance(
    jp_ws_fetch: Any, slots: ConnectionSlots
) -> None:
    watch = ("terax", "api", "fs", "watch")

    def as_user(name: str) -> Awaitable[Any]:
        return jp_ws_fetch(*watch, headers={"X-Test-User": name})

    sockets = [await as_user("ada"), await as_user("ada")]
    status, body = await _refusal(lambda: as_user("ada"))
    assert (status, body["reason"]) == (503, "too_many_connections")
    sockets += [await as_user("grace"), await as_user("grace")]
    assert (slots.count("ada"), slots.count("grace")) == (2, 2)
    for socket in sockets:
        socket.close()
    await _wait_for(lambda: not slots._open, "every slot to come back")
