"""The notebook's connection to its Terax server: found once, used from any thread.

Requests run on the background loop (``background.py``) through one ``TeraxClient``; sync
callers get ``call()``, coroutines on that loop ``request()``. When the server stops
answering (Jupyter restarted, maybe on another port with another token) a server that was
found, not named, is found again and the request retried once: nothing had been sent.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from terax_jupyter.client.api import API_PREFIX, TeraxAPIError, TeraxClient
from terax_jupyter.notebook import background
from terax_jupyter.notebook.discovery import DiscoveryError, find_server

if TYPE_CHECKING:
    from collections.abc import Mapping

    from websockets.asyncio.client import ClientConnection

    from terax_jupyter.client.discovery import ServerTarget

WS_OPEN_TIMEOUT = 10.0


class Connection:
    """A Terax server and a client of it on the background loop."""

    def __init__(
        self, target: ServerTarget, *, url: str | None = None, token: str | None = None
    ) -> None:
        self.target = target
        self._named = (url, token)
        self._client: TeraxClient | None = None
        self._tools: set[str] | None = None

    def __repr__(self) -> str:
        return f"<terax connection {self.target.url} ({self.target.source})>"

    @property
    def url(self) -> str:
        return self.target.url

    @property
    def server_root(self) -> str:
        return self.target.root

    # -- requests -------------------------------------------------------------------------

    def _http(self) -> TeraxClient:
        if self._client is None:
            target = self.target
            self._client = TeraxClient(target.url, target.token, socket=target.socket)
        return self._client

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """One request (on the background loop); a lost server is found again once."""
        try:
            return await self._http().request(
                method, path, body=body, params=params, timeout=timeout
            )
        except TeraxAPIError as error:
            if error.reason != "unreachable" or not await self._rediscover():
                raise
        return await self._http().request(method, path, body=body, params=params, timeout=timeout)

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """``request`` from a thread that is not the background loop's (a cell)."""
        return background.run(self.request(method, path, body=body, params=params, timeout=timeout))

    async def _rediscover(self) -> bool:
        if any(self._named) or os.environ.get("TERAX_URL"):
            return False  # a named server is that server; a restarted one keeps its address
        try:
            target = await asyncio.to_thread(find_server)
        except DiscoveryError:
            return False
        old, self._client = self._client, None
        self.target = target
        if old is not None:
            await old.aclose()
        return True

    # -- WebSockets -----------------------------------------------------------------------

    def websocket_url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        parts = urlsplit(self.target.url + API_PREFIX + path.lstrip("/"))
        scheme = "wss" if parts.scheme == "https" else "ws"
        query = urlencode({k: v for k, v in (params or {}).items() if v is not None})
        return urlunsplit((scheme, parts.netloc, parts.path, query, ""))

    async def websocket(
        self, path: str, params: Mapping[str, Any] | None = None
    ) -> ClientConnection:
        """A WebSocket under ``/terax/api/`` (on the background loop), authenticated with the
        token header (never in the URL, so never in an access log)."""
        from websockets.asyncio.client import connect, unix_connect

        headers = {"Authorization": f"token {self.target.token}"} if self.target.token else {}
        url = self.websocket_url(path, params)
        if self.target.socket:
            return await unix_connect(
                self.target.socket,
                url,
                additional_headers=headers,
                open_timeout=WS_OPEN_TIMEOUT,
                max_size=None,
            )
        return await connect(
            url, additional_headers=headers, open_timeout=WS_OPEN_TIMEOUT, max_size=None, proxy=None
        )

    # -- what the server knows ------------------------------------------------------------

    async def tool_names(self) -> set[str]:
        """The names of the agent's tools (from the agents the server lists)."""
        if self._tools is None:
            answer = await self.request("GET", "ai/agents")
            self._tools = {tool for agent in answer.get("agents", []) for tool in agent["tools"]}
        return self._tools

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None and not background.in_background():
            background.run(client.aclose())


_default_lock = threading.Lock()
_default: Connection | None = None


def connect(url: str | None = None, token: str | None = None) -> Connection:
    """The connection terax.agent() and terax.terminal() use. With ``url`` (and ``token``),
    that server from now on; without, the one found (once) for this kernel."""
    global _default
    if token and not url and not os.environ.get("TERAX_URL"):
        raise DiscoveryError("token= needs url= too: which server is the token for?")
    with _default_lock:
        if url is None and token is None and _default is not None:
            return _default
        connection = Connection(find_server(url, token), url=url, token=token)
        previous, _default = _default, connection
    if previous is not None:
        previous.close()
    return connection


def connection_for(url: str | None, token: str | None) -> Connection:
    """The default connection, or one to the server named by ``url``/``token`` (which does not
    replace the default)."""
    if url is None and token is None:
        return connect()
    if token and not url and not os.environ.get("TERAX_URL"):
        raise DiscoveryError("token= needs url= too: which server is the token for?")
    return Connection(find_server(url, token), url=url, token=token)
