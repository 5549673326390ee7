"""REST handlers of the agent's settings: providers, models, agents (``/terax/api/ai/...``)."""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.ai.handlers import AUTH_RESOURCE, AiHandler

_PROVIDER = r"(?P<provider_id>[^/]+)"
__all__ = ["AUTH_RESOURCE", "default_handlers"]


class ProvidersHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        ai = self.terax.ai
        default_provider, default_model = ai.defaults()
        self.finish_json(
            {
                "providers": await ai.provider_list(),
                # What a new session gets, so the panel can show it before any session.
                "default_provider": default_provider or None,
                "default_model": default_model or None,
                # What the administrator's policy allows (governance.py); None fields: unset.
                "policy": ai.governance.describe(),
            }
        )


class ProviderHandler(AiHandler):
    @web.authenticated
    @authorized
    async def put(self, provider_id: str) -> None:
        self.terax.security.paths.refuse_writes("AI providers cannot change")
        entry = await asyncio.to_thread(
            self.terax.ai.put_provider, provider_id, self.json_body(), user=self.user_name
        )
        self.finish_json(entry)

    @web.authenticated
    @authorized
    async def delete(self, provider_id: str) -> None:
        self.terax.security.paths.refuse_writes("AI providers cannot change")
        await asyncio.to_thread(self.terax.ai.catalog.delete, provider_id, user=self.user_name)
        self.set_status(204)
        self.finish()


class ProviderModelsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, provider_id: str) -> None:
        self.finish_json({"models": await self.terax.ai.provider_models(provider_id)})


class ProviderTestHandler(AiHandler):
    @web.authenticated
    @authorized
    async def post(self, provider_id: str) -> None:
        body = self.json_body() if self.request.body else {}
        model = body.get("model")
        if model is not None and not isinstance(model, str):
            raise InvalidRequest("'model' is a model's name.", reason="invalid_parameter")
        self.finish_json(await self.terax.ai.test_connection(provider_id, model))


class CompleteHandler(AiHandler):
    """One inline completion. A client that hangs up (a newer keystroke) cancels the call."""

    _task: asyncio.Task[dict] | None = None
    _gone = False

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self._task = asyncio.ensure_future(self.terax.ai.complete(self.json_body()))
        try:
            result = await self._task
        except asyncio.CancelledError:
            if self._gone:
                return  # nobody to answer
            raise
        self.finish_json(result)

    def on_connection_close(self) -> None:
        self._gone = True
        if self._task is not None:
            self._task.cancel()
        super().on_connection_close()


class ModelsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        provider = self.string_argument("provider", "") or None
        self.finish_json({"models": self.terax.ai.model_list(provider)})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.terax.security.paths.refuse_writes("models cannot be added")
        model = await asyncio.to_thread(
            self.terax.ai.add_model, self.json_body(), user=self.user_name
        )
        self.finish_json(model, 201)

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        self.terax.security.paths.refuse_writes("models cannot be removed")
        provider, model = self.string_argument("provider"), self.string_argument("model")
        await asyncio.to_thread(self.terax.ai.remove_model, provider, model, user=self.user_name)
        self.set_status(204)
        self.finish()


class AgentsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json({"agents": self.terax.ai.agents.list()})


class AgentHandler(AiHandler):
    @web.authenticated
    @authorized
    async def put(self, name: str) -> None:
        self.terax.security.paths.refuse_writes("custom agents cannot change")
        agent = await asyncio.to_thread(
            self.terax.ai.agents.put, name, self.json_body(), user=self.user_name
        )
        self.finish_json(agent)

    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        self.terax.security.paths.refuse_writes("custom agents cannot change")
        await asyncio.to_thread(self.terax.ai.agents.delete, name, user=self.user_name)
        self.set_status(204)
        self.finish()


default_handlers = [
    (r"/terax/api/ai/providers", ProvidersHandler),
    (rf"/terax/api/ai/providers/{_PROVIDER}", ProviderHandler),
    (rf"/terax/api/ai/providers/{_PROVIDER}/models", ProviderModelsHandler),
    (rf"/terax/api/ai/providers/{_PROVIDER}/test", ProviderTestHandler),
    (r"/terax/api/ai/complete", CompleteHandler),
    (r"/terax/api/ai/models", ModelsHandler),
    (r"/terax/api/ai/agents", AgentsHandler),
    (r"/terax/api/ai/agents/(?P<name>[^/]+)", AgentHandler),
]
