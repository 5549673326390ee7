"""The MCP server's link to the running Terax server: found on first use, found again when it
restarted elsewhere, its browser tab closed at the end, every text redacted on the way out."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from terax_jupyter.client.api import TeraxAPIError, TeraxClient, segment
from terax_jupyter.client.discovery import discover
from terax_jupyter.security.redact import Redactor

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    import httpx

    from terax_jupyter.client.discovery import ServerTarget

log = logging.getLogger(__name__)


class Connection:
    """One Terax server for one MCP server process, and that process's browser tab."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        find: Callable[..., ServerTarget] = discover,
        tab: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._url = url
        self._token = token
        self._find = find
        self._transport = transport
        self.tab = tab or f"mcp-{os.getpid()}"
        self.target: ServerTarget | None = None
        self._client: TeraxClient | None = None
        self._tab_used = False
        self._lock: anyio.Lock | None = None
        # Shapes of keys and tokens, and this server's own token: never in a tool's answer.
        self.redactor = Redactor()

    def use(self, target: ServerTarget) -> None:
        """Talk to ``target`` (found already, e.g. at start-up)."""
        log.info("Using the Terax server at %s (%s)", target.url, target.source)
        self.target = target
        if target.token:
            self.redactor.add_secret(target.token)
        self._client = TeraxClient(
            target.url,
            target.token,
            socket=target.socket,
            transport=self._transport,
            client_name="mcp",
        )

    async def client(self) -> TeraxClient:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # concurrent tool calls share one discovery
            if self._client is None:
                target = await anyio.to_thread.run_sync(lambda: self._find(self._url, self._token))
                self.use(target)
        assert self._client is not None
        return self._client

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: Any = None,
        read_timeout: float | None = None,
    ) -> Any:
        """One REST call. When nothing listens any more or Jupyter refuses the token (the
        server restarted, maybe on another port with another token), find the server again
        and retry once: the request did not reach a handler."""
        client = await self.client()
        try:
            return await client.request(
                method, path, params=params, body=body, timeout=read_timeout
            )
        except TeraxAPIError as error:
            if error.reason not in ("unreachable", "forbidden"):
                raise
        await self.forget()
        client = await self.client()
        return await client.request(method, path, params=params, body=body, timeout=read_timeout)

    async def get(self, route: str, /, **params: Any) -> Any:
        return await self.request("GET", route, params=params)

    async def post(self, path: str, body: Any = None, *, read_timeout: float = 60.0) -> Any:
        return await self.request(
            "POST", path, body={} if body is None else body, read_timeout=read_timeout
        )

    async def stream(self, path: str, params: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        client = await self.client()
        async for item in client.stream_lines(path, params=params):
            yield item

    async def browser(self, action: str, body: dict[str, Any]) -> Any:
        """``POST browser/tabs/<this process's tab>/<action>`` (a wait lasts up to 60 s)."""
        path = f"browser/tabs/{segment(self.tab)}/{action}"
        try:
            return await self.post(path, body, read_timeout=120.0)
        finally:
            # Even a refused action may have opened the tab (on the server found last).
            self._tab_used = True

    def redact(self, text: str) -> str:
        return self.redactor.redact(text, keep_lines=True)

    async def forget(self) -> None:
        client, self._client = self._client, None
        self._tab_used = False  # a tab dies with its server
        if client is not None:
            await client.aclose()

    async def close(self) -> None:
        """Close this process's browser tab (if it opened one) and the HTTP client."""
        if self._client is not None and self._tab_used:
            try:
                await self._client.delete(f"browser/tabs/{segment(self.tab)}")
            except TeraxAPIError as error:
                log.debug("The browser tab %s was not closed: %s", self.tab, error.message)
        await self.forget()
