"""The keys API on a real server: list, set, delete; and the test key never leaves it."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import BASE_URLS, error_of

from .helpers import KEY, MemoryKeyring, assert_key_not_in_file, assert_no_key

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    Fetch = Callable[..., Awaitable[Any]]


@pytest.fixture
def terax_config() -> dict[str, Any]:
    return {"SecretsManager": {"backend": "file"}}


@pytest.fixture
def log_text(caplog: pytest.LogCaptureFixture) -> Callable[[], str]:
    """Everything the server logged during the test, at every level."""
    caplog.set_level(logging.DEBUG)
    return lambda: caplog.text


class Client:
    """Calls the keys API and keeps every response body it saw."""

    def __init__(self, fetch: Fetch) -> None:
        self.fetch = fetch
        self.bodies: list[bytes] = []

    async def call(self, method: str, name: str | None = None, body: Any = None) -> Any:
        parts = ["terax", "api", "secrets", *([name] if name is not None else [])]
        kwargs: dict[str, Any] = {"method": method, "allow_nonstandard_methods": True}
        if body is not None:
            kwargs["body"] = body if isinstance(body, (str, bytes)) else json.dumps(body)
        response = await self.fetch(*parts, **kwargs)
        self.bodies.append(response.body)
        return json.loads(response.body) if response.body else None

    async def fail(self, method: str, name: str | None = None, body: Any = None) -> tuple[int, str]:
        with pytest.raises(HTTPClientError) as caught:
            await self.call(method, name, body)
        self.bodies.append(caught.value.response.body)
        error = error_of(caught.value)
        assert set(error) == {"message", "reason"}
        return caught.value.code, error["reason"]

    def assert_no_key(self) -> None:
        assert_no_key(*self.bodies)


@pytest.fixture
def client(jp_fetch: Fetch) -> Client:
    return Client(jp_fetch)


def state(jp_serverapp: Any) -> Any:
    return jp_serverapp.web_app.settings["terax"]


@pytest.mark.parametrize("jp_base_url", BASE_URLS)
async def test_set_list_delete(
    client: Client, jp_serverapp: Any, log_text: Callable[[], str]
) -> None:
    listing = await client.call("GET")
    assert listing["store"]["kind"] == "file"
    assert listing["store"]["problem"] is None
    assert not any(entry["set"] for entry in listing["keys"])

    entry = await client.call("PUT", "OPENAI_API_KEY", {"value": KEY})
    assert entry == {
        "name": "OPENAI_API_KEY",
        "set": True,
        "source": "file",
        "read_only": False,
        "provider": "openai",
        "overrides": [],
    }
    listing = await client.call("GET")
    assert [e["name"] for e in listing["keys"] if e["set"]] == ["OPENAI_API_KEY"]
    secrets = state(jp_serverapp).secrets
    assert secrets.get("OPENAI_API_KEY") == KEY, "the AI layer reads it on the server"
    if sys.platform != "win32":
        assert os.stat(secrets.file_path).st_mode & 0o777 == 0o600

    entry = await client.call("DELETE", "OPENAI_API_KEY")
    assert (entry["set"], entry["source"]) == (False, None)
    assert await client.fail("DELETE", "OPENAI_API_KEY") == (404, "key_not_found")

    audit = state(jp_serverapp).security.audit
    assert [(e["action"], e["name"]) for e in audit.entries()] == [
        ("secrets.key_set", "OPENAI_API_KEY"),
        ("secrets.key_deleted", "OPENAI_API_KEY"),
    ]
    assert all(e["user"] for e in audit.entries())
    assert_key_not_in_file(audit.path)
    client.assert_no_key()
    assert "PUT" in log_text(), "the log capture sees the server's requests"
    assert_no_key(log_text())


async def test_environment_and_config_keys_are_read_only(
    client: Client, jp_serverapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    state(jp_serverapp).secrets.keys = {"MISTRAL_API_KEY": "admin-mistral-value"}
    listing = {e["name"]: e for e in (await client.call("GET"))["keys"]}
    assert (listing["ANTHROPIC_API_KEY"]["source"], listing["ANTHROPIC_API_KEY"]["read_only"]) == (
        "environment",
        True,
    )
    assert listing["MISTRAL_API_KEY"]["source"] == "config"
    assert await client.fail("DELETE", "ANTHROPIC_API_KEY") == (409, "read_only_key")
    assert await client.fail("DELETE", "MISTRAL_API_KEY") == (409, "read_only_key")
    # The user's own key takes precedence, and deleting it brings the read-only one back.
    entry = await client.call("PUT", "ANTHROPIC_API_KEY", {"value": "user-anthropic-value"})
    assert (entry["source"], entry["overrides"]) == ("file", ["environment"])
    assert state(jp_serverapp).secrets.get("ANTHROPIC_API_KEY") == "user-anthropic-value"
    entry = await client.call("DELETE", "ANTHROPIC_API_KEY")
    assert entry["source"] == "environment"
    client.assert_no_key()


async def test_bad_requests_never_echo_the_key(
    client: Client, jp_serverapp: Any, log_text: Callable[[], str]
) -> None:
    cases = [
        ("PUT", "bad name", {"value": KEY}, (400, "invalid_key_name")),
        ("PUT", "x" * 65, {"value": KEY}, (400, "invalid_key_name")),
        ("PUT", "..", {"value": KEY}, (400, "invalid_key_name")),
        ("PUT", "OPENAI_API_KEY", {"value": ""}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", {"value": KEY + "\n"}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", {"value": KEY + "\r\nX: 1"}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", {"value": " " + KEY}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", {"value": [KEY]}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", {"value": KEY * 300}, (413, "key_too_large")),
        ("PUT", "OPENAI_API_KEY", {"key": KEY}, (400, "invalid_key_value")),
        ("PUT", "OPENAI_API_KEY", f'{{"value": "{KEY}"', (400, "invalid_json")),
        ("PUT", "OPENAI_API_KEY", f'["{KEY}"]', (400, "invalid_json")),
        ("PUT", "OPENAI_API_KEY", "", (400, "missing_body")),
        ("DELETE", "bad name", None, (400, "invalid_key_name")),
    ]
    for method, name, body, expected in cases:
        assert await client.fail(method, name, body) == expected, (method, name, body)
    assert not any(e["set"] for e in (await client.call("GET"))["keys"])
    assert state(jp_serverapp).security.audit.entries() == []
    client.assert_no_key()
    assert_no_key(log_text())


async def test_a_failing_store_is_503_without_the_key(
    client: Client, jp_serverapp: Any, log_text: Callable[[], str], memory_keyring: MemoryKeyring
) -> None:
    secrets = state(jp_serverapp).secrets
    secrets.backend = "auto"
    secrets._store = None  # choose again: the fake keychain is the OS's now
    entry = await client.call("PUT", "OPENAI_API_KEY", {"value": KEY})
    assert entry["source"] == "keyring"
    assert memory_keyring.entries[("terax-jupyter", "OPENAI_API_KEY")] == KEY
    memory_keyring.fail_with = RuntimeError(f"keychain locked while storing {KEY}")
    assert await client.fail("PUT", "OPENAI_API_KEY", {"value": KEY}) == (
        503,
        "secrets_store_failed",
    )
    assert await client.fail("DELETE", "OPENAI_API_KEY") == (503, "secrets_store_failed")
    listing = await client.call("GET")
    assert "failed" in listing["store"]["problem"]
    client.assert_no_key()
    assert "keychain locked while storing [REDACTED]" in log_text()
    assert_no_key(log_text())


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
async def test_a_file_others_may_read_is_refused(
    client: Client, jp_serverapp: Any, log_text: Callable[[], str]
) -> None:
    await client.call("PUT", "OPENAI_API_KEY", {"value": KEY})
    path = state(jp_serverapp).secrets.file_path
    os.chmod(path, 0o644)
    listing = await client.call("GET")
    assert "mode 0644" in listing["store"]["problem"]
    assert "chmod 600" in listing["store"]["problem"]
    assert not any(e["set"] for e in listing["keys"])
    assert await client.fail("PUT", "GROQ_API_KEY", {"value": KEY}) == (503, "insecure_file")
    assert await client.fail("DELETE", "OPENAI_API_KEY") == (503, "insecure_file")
    assert os.stat(path).st_mode & 0o777 == 0o644
    client.assert_no_key()
    assert_no_key(log_text())
