"""Ready-to-call providers: the catalog's settings, the key, and a guarded HTTP client."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import httpx

from terax_jupyter.exceptions import NotFound, ProviderAuthFailed, ProviderTimeout, TeraxError
from terax_jupyter.security.network import DEFAULT_PORTS, guarded_client
from terax_jupyter.services.ai.providers.anthropic import AnthropicProvider
from terax_jupyter.services.ai.providers.catalog import key_names, origin_of
from terax_jupyter.services.ai.providers.openai import OpenAIProvider
from terax_jupyter.services.ai.providers.retry import RetryPolicy

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.providers.base import Provider, ProviderConfig
    from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
    from terax_jupyter.services.secrets.manager import FoundKey, SecretsManager

# A stream may pause long while a model thinks; connecting should not.
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
MAX_LISTED = 500  # model ids a connection test returns
# A person waits on a connection test or a model list: it answers soon, or says why not.
PROBE_TIMEOUT = 6.0


class ProviderFactory:
    """Builds providers from the catalog. Providers share one guarded client per network
    policy (public, or one local origin), so connections are reused between calls; the
    factory closes them in ``aclose``."""

    def __init__(
        self,
        security: SecurityLayer,
        secrets: SecretsManager,
        catalog: ProviderCatalog,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        probe_timeout: float = PROBE_TIMEOUT,
    ) -> None:
        self._security = security
        self._secrets = secrets
        self.catalog = catalog
        self.retry = retry if retry is not None else RetryPolicy()
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self._clients: dict[str | None, httpx.AsyncClient] = {}

    async def provider(self, provider_id: str) -> Provider:
        """The provider ``provider_id``, with its key (``ProviderAuthFailed`` reason
        ``missing_key`` when a hosted provider has none)."""
        config = self.catalog.get(provider_id)
        # The key store may block (a keychain over D-Bus): not on the event loop.
        key = await asyncio.to_thread(self._key, config)
        return self.build(config, key)

    def build(self, config: ProviderConfig, api_key: str | None) -> Provider:
        """A provider for ``config`` and ``api_key`` on the shared client of its policy."""
        adapter = AnthropicProvider if config.kind == "anthropic" else OpenAIProvider
        return adapter(
            config,
            self._client(config),
            api_key,
            self.retry,
            redactor=self._security.redactor,
            owns_client=False,
        )

    async def probe(self, provider_id: str) -> Provider:
        """The provider for a question a person waits on (its models, a connection test):
        its own client with the short ``probe_timeout`` and no retries, closed by the
        provider's ``aclose``."""
        config = self.catalog.get(provider_id)
        key = await asyncio.to_thread(self._key, config)
        policy = self._security.network
        if config.local:
            policy = policy.allowing_local(origin_of(config.base_url))
        adapter = AnthropicProvider if config.kind == "anthropic" else OpenAIProvider
        return adapter(
            config,
            guarded_client(policy, timeout=self.probe_timeout),
            key,
            RetryPolicy(max_retries=0),
            redactor=self._security.redactor,
            owns_client=True,
        )

    async def list_models(self, provider_id: str) -> list[dict[str, Any]]:
        """The provider's own model list, within ``probe_timeout``."""
        config = self.catalog.get(provider_id)
        provider = await self.probe(provider_id)
        try:
            return await provider.list_models()
        except ProviderTimeout as error:
            raise self._slow(config, error) from None
        finally:
            await provider.aclose()

    async def test_connection(self, provider_id: str, model: str | None = None) -> dict[str, Any]:
        """Whether the provider answers with this key: ``{ok, latency_ms, models, message,
        reason}``, within ``probe_timeout``. A failure is an answer (``ok`` false), not an
        exception; only an unknown provider id raises."""
        config = self.catalog.get(provider_id)
        started = time.perf_counter()
        try:
            listed = await self.list_models(provider_id)
        except NotFound:
            raise
        except TeraxError as error:  # ProviderError, and the network guard's refusals
            return {
                "ok": False,
                "latency_ms": _millis(started),
                "models": [],
                "message": self._security.redactor.redact(error.message),
                "reason": error.reason,
            }
        latency = _millis(started)
        ids = [m["id"] for m in listed][:MAX_LISTED]
        if model is not None and ids and model not in ids:
            return {
                "ok": False,
                "latency_ms": latency,
                "models": ids,
                "message": f"{config.label} answers, but offers no model '{model}'.",
                "reason": "model_not_found",
            }
        return {
            "ok": True,
            "latency_ms": latency,
            "models": ids,
            "message": f"{config.label} answered in {latency:.0f} ms with {len(listed)} models.",
            "reason": None,
        }

    def _slow(self, config: ProviderConfig, error: ProviderTimeout) -> ProviderTimeout:
        return ProviderTimeout(
            f"{config.label} did not answer within {self.probe_timeout:g} s at "
            f"{_shown(origin_of(config.base_url))}: check the network connection, that the "
            "server is running, and the base URL.",
            reason=error.reason,
            provider=config.id,
        )

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def usable_key(self, config: ProviderConfig) -> FoundKey | None:
        """The key that may be sent to ``config``'s address, or None.

        The user's own key of a name always may. A key of the configuration or the
        environment is the administrator's: it goes only to the origin of the built-in or
        administrator's provider it was configured for (``ProviderCatalog.key_origins``),
        never to a base URL a user moved a built-in to or a provider a user defined.
        Blocking (a keychain): call it in a worker thread.
        """
        return self._lookup(config)[0]

    def _lookup(self, config: ProviderConfig) -> tuple[FoundKey | None, FoundKey | None]:
        """(the usable key, the first server key that was not for this address)."""
        origin = origin_of(config.base_url)
        refused = None
        for name in key_names(config):
            found = self._secrets.find(name)
            if found is None:
                continue
            if found.user or origin in self.catalog.key_origins(name):
                return found, None
            refused = refused or found
        return None, refused

    def _key(self, config: ProviderConfig) -> str | None:
        found, refused = self._lookup(config)
        if found is not None:
            return found.value
        if not config.key_name or config.local:
            # A local server may need no key; the server's own key stays where it belongs.
            return None
        if refused is not None:
            raise ProviderAuthFailed(
                _not_for_url(config, refused, self.catalog),
                reason="key_not_for_url",
                provider=config.id,
            )
        raise ProviderAuthFailed(
            f"No key is set for {config.label}: set {config.key_name} in Terax settings "
            "(or in the server's environment), then try again.",
            reason="missing_key",
            provider=config.id,
        )

    def _client(self, config: ProviderConfig) -> httpx.AsyncClient:
        origin = origin_of(config.base_url) if config.local else None
        client = self._clients.get(origin)
        if client is None or client.is_closed:
            policy = self._security.network
            if origin is not None:
                # Loopback and private addresses only for this provider's origin.
                policy = policy.allowing_local(origin)
            client = guarded_client(policy, timeout=self.timeout)
            self._clients[origin] = client
        return client


def _not_for_url(config: ProviderConfig, key: FoundKey, catalog: ProviderCatalog) -> str:
    where = "administrator's" if key.source == "config" else "server's"
    bound = sorted(_shown(origin) for origin in catalog.key_origins(key.name))
    sent = f"is only sent to {' or '.join(bound)}" if bound else "is not sent to addresses set here"
    return (
        f"The {where} key {key.name} {sent}; store your own {key.name} in Terax settings to "
        f"use {config.label} at {_shown(origin_of(config.base_url))}."
    )


def _shown(origin: str) -> str:
    """An origin as people write it: without the scheme's default port."""
    for scheme, port in DEFAULT_PORTS.items():
        suffix = f":{port}"
        if origin.startswith(f"{scheme}://") and origin.endswith(suffix):
            return origin[: -len(suffix)]
    return origin


def _millis(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
