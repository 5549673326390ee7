"""What both wire adapters share: the client, key, retries and redaction, the stream entry
point, and reading a model list."""

from __future__ import annotations

import abc
import asyncio
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import httpx

from terax_jupyter.services.ai.providers.base import Provider
from terax_jupyter.services.ai.providers.errors import ProviderCall, bad_response, redactor_for
from terax_jupyter.services.ai.providers.retry import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from httpx_sse import ServerSentEvent

    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.ai.providers.base import ChatRequest, ProviderConfig, StreamEvent


class HttpProvider(Provider):
    """A provider over a guarded httpx client. ``owns_client`` says whether ``aclose``
    closes it (the factory shares one client between providers)."""

    def __init__(
        self,
        config: ProviderConfig,
        client: httpx.AsyncClient,
        api_key: str | None = None,
        retry: RetryPolicy | None = None,
        *,
        redactor: Redactor | None = None,
        owns_client: bool = True,
    ) -> None:
        self.config = config
        self._client = client
        self._key = api_key
        self._retry = retry if retry is not None else RetryPolicy()
        self._redact = redactor_for(api_key, redactor)
        self._owns_client = owns_client
        self._base = config.base_url.rstrip("/")

    @abc.abstractmethod
    def headers(self) -> dict[str, str]:
        """The request headers, the key among them."""

    @abc.abstractmethod
    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The wire body of one streamed request."""

    @abc.abstractmethod
    def _attempt(self, payload: dict[str, Any], model: str) -> AsyncGenerator[StreamEvent, None]:
        """One try at streaming ``payload``; the retry policy decides about the next."""

    # Events that say only "still here" (Anthropic's ping): like SSE comments, which never
    # reach us, they do not count as progress of the answer.
    KEEPALIVE_EVENTS: frozenset[str] = frozenset()

    async def _paced(
        self, events: AsyncIterator[ServerSentEvent]
    ) -> AsyncGenerator[ServerSentEvent, None]:
        """``events``, failing as a read timeout when no event with data arrived for the
        client's read timeout. httpx times single socket reads only, so a server sending
        keep-alive comments (``: OPENROUTER PROCESSING``) or pings would hold a stalled
        answer open for ever."""
        limit = self._client.timeout.read
        loop = asyncio.get_running_loop()
        deadline = None if limit is None else loop.time() + limit
        # Closing this closes the reader too (rather than leaving it to the garbage collector).
        async with aclosing(events):  # type: ignore[type-var]
            while True:
                try:
                    # wait_for rather than asyncio.timeout_at: Python 3.10 is supported.
                    remaining = None if deadline is None else max(0.0, deadline - loop.time())
                    sse = await asyncio.wait_for(anext(events), remaining)
                except StopAsyncIteration:
                    return
                except (TimeoutError, asyncio.TimeoutError):  # distinct types before 3.11
                    # ProviderCall makes it the stall error ("the next part of the answer").
                    raise httpx.ReadTimeout("no data event within the read timeout") from None
                if limit is not None and sse.data and sse.event not in self.KEEPALIVE_EVENTS:
                    deadline = loop.time() + limit
                yield sse

    def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        payload = self.payload(request)
        return self._retry.stream(lambda: self._attempt(payload, request.model))

    async def _model_items(self, params: dict[str, Any] | None = None) -> list[Any]:
        """The entries of ``GET {base}/models`` (``{"data": [...]}`` or a bare list)."""

        async def attempt() -> httpx.Response:
            call = ProviderCall(self.config, redact=self._redact)
            with call:
                response = await self._client.get(
                    f"{self._base}/models", params=params, headers=self.headers()
                )
                await call.check(response, stream=False)
                await response.aread()
                return response

        response = await self._retry.call(attempt)
        try:
            data = response.json()
        except ValueError:
            raise bad_response(self.config, "a model list that is not JSON") from None
        items = data.get("data") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise bad_response(self.config, "a model list without data")
        return items

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
