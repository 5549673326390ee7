"""A small REST client of a running Terax server: token header, JSON bodies, one error class."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from terax_jupyter._version import __version__

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

API_PREFIX = "terax/api/"
# Connecting is quick or it is not going to happen; answers may take a while (git, browsers).
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=5.0)


class TeraxAPIError(Exception):
    """A request that did not succeed: the server's ``{message, reason}`` and HTTP status.

    ``status`` is None when no answer came at all; ``reason`` is then ``unreachable`` (nothing
    listening: the request was not sent), ``timeout`` or ``connection_lost``. The message never
    holds the token.
    """

    def __init__(self, message: str, *, status: int | None, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.reason = reason

    def __str__(self) -> str:
        return self.message


def segment(value: str) -> str:
    """``value`` as one path segment of a route (a tab id, a workflow name, a session id)."""
    return quote(value, safe="")


class _Base:
    """What the sync and async clients share: where, how to authenticate, what errors mean."""

    def __init__(
        self, url: str, token: str = "", *, socket: str | None = None, client_name: str = ""
    ) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.socket = socket
        self._headers = {"Accept": "application/json", "User-Agent": f"terax-client/{__version__}"}
        if token:
            self._headers["Authorization"] = f"token {token}"
        if client_name:
            self._headers["X-Terax-Client"] = client_name  # the server's policy may refuse it

    def endpoint(self, path: str) -> str:
        """The full URL of ``path`` under ``/terax/api/`` (``fs/file``, ``info``)."""
        return self.url + API_PREFIX + path.lstrip("/")

    def _options(self, timeout: httpx.Timeout | float) -> dict[str, Any]:
        return {
            "headers": self._headers,
            "timeout": timeout,
            # A local server: no proxies from the environment, no redirects to elsewhere.
            "trust_env": False,
            "follow_redirects": False,
        }

    @staticmethod
    def _arguments(params: Mapping[str, Any] | None, body: Any) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        if params:
            arguments["params"] = {
                key: _query_value(value) for key, value in params.items() if value is not None
            }
        if body is not None:
            arguments["json"] = body
        return arguments

    def _transport_error(self, error: httpx.TransportError) -> TeraxAPIError:
        if isinstance(error, httpx.TimeoutException):
            return TeraxAPIError(
                f"The Terax server at {self.url} did not answer in time.",
                status=None,
                reason="timeout",
            )
        if isinstance(error, httpx.ConnectError):
            # Nothing was sent: safe to find the server again and retry.
            return TeraxAPIError(
                f"Cannot reach the Terax server at {self.url}; is it still running?",
                status=None,
                reason="unreachable",
            )
        return TeraxAPIError(
            f"The connection to the Terax server at {self.url} broke off ({type(error).__name__}).",
            status=None,
            reason="connection_lost",
        )

    @staticmethod
    def _result(response: httpx.Response) -> Any:
        if response.is_success:
            if response.status_code == 204 or not response.content:
                return None
            return response.json()
        raise api_error(response.status_code, response.content)


def api_error(status: int, content: bytes) -> TeraxAPIError:
    """The error an unsuccessful answer stands for; its JSON ``{message, reason}`` if it has one
    (Terax and Jupyter both answer so), else the status alone (an HTML page says nothing)."""
    message, reason = "", ""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        message = str(data.get("message") or "")
        reason = str(data.get("reason") or "")
    if status == 403 and reason in ("", "forbidden") and message in ("", "Forbidden"):
        # Jupyter's own refusal (Terax's refusals say why): the token is wrong or missing.
        message = "Forbidden: the server refused the token (check --token / TERAX_TOKEN)"
        reason = "forbidden"
    if status == 404 and not message:
        message = "Not found (is the Terax extension enabled on this server?)"
    return TeraxAPIError(message or f"HTTP {status}", status=status, reason=reason or "error")


class TeraxClient(_Base):
    """The async client (``httpx.AsyncClient``); use as ``async with`` or ``aclose()`` it."""

    def __init__(
        self,
        url: str,
        token: str = "",
        *,
        socket: str | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        client_name: str = "",
    ) -> None:
        super().__init__(url, token, socket=socket, client_name=client_name)
        if transport is None and socket:
            transport = httpx.AsyncHTTPTransport(uds=socket)
        self._client = httpx.AsyncClient(transport=transport, **self._options(timeout))

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> Any:
        """Send one request; the decoded JSON answer (None for an empty one), or raise
        ``TeraxAPIError``."""
        arguments = self._arguments(params, body)
        if timeout is not None:
            arguments["timeout"] = httpx.Timeout(timeout, connect=5.0)
        try:
            response = await self._client.request(method, self.endpoint(path), **arguments)
        except httpx.TransportError as error:
            raise self._transport_error(error) from None
        return self._result(response)

    async def get(self, route: str, /, **params: Any) -> Any:
        return await self.request("GET", route, params=params)

    async def post(self, path: str, body: Any = None, *, timeout: float | None = None) -> Any:
        return await self.request("POST", path, body={} if body is None else body, timeout=timeout)

    async def delete(self, route: str, /, **params: Any) -> Any:
        return await self.request("DELETE", route, params=params)

    async def stream_lines(
        self, path: str, *, params: Mapping[str, Any] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The objects of a newline-delimited JSON answer (grep), one at a time, as they come."""
        arguments = self._arguments(params, None)
        try:
            async with self._client.stream("GET", self.endpoint(path), **arguments) as response:
                if not response.is_success:
                    raise api_error(response.status_code, await response.aread())
                async for line in response.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TransportError as error:
            raise self._transport_error(error) from None

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> TeraxClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class SyncTeraxClient(_Base):
    """The same requests without an event loop (``httpx.Client``): discovery, scripts."""

    def __init__(
        self,
        url: str,
        token: str = "",
        *,
        socket: str | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(url, token, socket=socket)
        if transport is None and socket:
            transport = httpx.HTTPTransport(uds=socket)
        self._client = httpx.Client(transport=transport, **self._options(timeout))

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
    ) -> Any:
        try:
            response = self._client.request(
                method, self.endpoint(path), **self._arguments(params, body)
            )
        except httpx.TransportError as error:
            raise self._transport_error(error) from None
        return self._result(response)

    def get(self, route: str, /, **params: Any) -> Any:
        return self.request("GET", route, params=params)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, body={} if body is None else body)

    def delete(self, route: str, /, **params: Any) -> Any:
        return self.request("DELETE", route, params=params)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> SyncTeraxClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
