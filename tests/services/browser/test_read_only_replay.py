"""Saved workflows on a read-only server: a replay that acts (mutating, destructive) is refused
with ``read_only`` before a browser starts, whatever side effect the caller pins; deleting one
is refused; the workflows stay as they were."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.base import SETTINGS_KEY
from terax_jupyter.pytest_plugin import error_of

from .replay_fixtures import (
    FakePage,
    delete_policy,
    login_policy,
    record_delete,
    record_login,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    Api = Callable[..., Awaitable[Any]]


@pytest.fixture
def terax_config() -> dict[str, Any]:
    return {"TeraxApp": {"read_only": True}}


async def refused(call: Awaitable[Any]) -> tuple[int, str, str]:
    with pytest.raises(HTTPClientError) as caught:
        await call
    body = error_of(caught.value)
    return caught.value.code, body["reason"], body["message"]


async def test_only_looking_workflows_may_replay_read_only(
    terax_api: Api, jp_serverapp: Any
) -> None:
    # Saved straight into the server's store: a read-only server records none itself.
    browser = jp_serverapp.web_app.settings[SETTINGS_KEY].browser
    browser.workflows.save(
        "sign-in", await record_login(FakePage()), login_policy(), inputs=["username", "password"]
    )
    browser.workflows.save("wipe", await record_delete(FakePage()), delete_policy(), inputs=[])
    before = await terax_api("browser/workflows")
    for name, side_effect in (("sign-in", "mutating"), ("wipe", "destructive")):
        for pinned in (None, "read_only", side_effect):
            body: dict[str, Any] = (
                {"inputs": {"username": "a", "password": "b"}} if name == "sign-in" else {}
            )
            if pinned:
                body["side_effect"] = pinned
            code, reason, message = await refused(
                terax_api(f"browser/workflows/{name}/run", method="POST", body=body)
            )
            if pinned == "read_only":
                # Pinned to looking only: the run refuses the mismatch before it starts.
                assert (code, reason) == (409, "side_effect_mismatch"), (name, message)
            else:
                assert (code, reason) == (403, "read_only"), (name, pinned)
                assert message.startswith("The server is read-only")
        code, reason, _ = await refused(terax_api(f"browser/workflows/{name}", method="DELETE"))
        assert (code, reason) == (403, "read_only")
    assert await terax_api("browser/workflows") == before
    assert not browser.tabs()  # refused before any browser started
