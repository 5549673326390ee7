"""What both wire adapters share: the client, key, retries and redaction, the stream entry
point, and reading a model list."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

from terax_jupyter.services.ai.providers.base import Provider
from terax_jupyter.services.ai.providers.errors import ProviderCall, bad_response, redactor_for
from terax_jupyter.services.ai.providers.retry import RetryPolicy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import httpx

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
    def _attempt(self, payload: dict[str, Any], model: str) -> AsyncIterator[StreamEvent]:
        """One try at streaming ``payload``; the retry policy decides about the next."""

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
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
