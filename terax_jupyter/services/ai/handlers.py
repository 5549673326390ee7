"""REST handlers of the agent (``/terax/api/ai/sessions/...``, ``/terax/api/ai/approvals/...``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler
from terax_jupyter.exceptions import InvalidRequest, ProviderError
from terax_jupyter.services.ai.statuses import APPROVAL_STATUSES
from terax_jupyter.services.ai.stream import AiEventsWebSocket

if TYPE_CHECKING:
    from collections.abc import Callable

prometheus_log_method: Callable[[web.RequestHandler], None] | None
try:  # Jupyter's request metrics, kept for the requests logged here
    from jupyter_server.prometheus.log_functions import prometheus_log_method
except ImportError:  # pragma: no cover - an older jupyter_server
    prometheus_log_method = None

AUTH_RESOURCE = "terax.ai"
_SESSION = r"(?P<session_id>[^/]+)"


class AiHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE
    _provider_failure: ProviderError | None = None

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        # A provider that is down or refuses (Ollama not started, a bad key) is the user's
        # situation, not a server bug: no traceback; the request's log line says why.
        if isinstance(value, ProviderError):
            self._provider_failure = value
            return
        super().log_exception(typ, value, tb)

    def _log(self) -> None:
        failure = self._provider_failure
        if failure is None:
            super()._log()
            return
        # One line instead of Jupyter's access line (and its header dump) plus a traceback.
        self.log.warning(
            "%s %s %.2fms: %s (%s)",
            self.get_status(),
            self._request_summary(),
            1000.0 * self.request.request_time(),
            failure.message,
            failure.reason,
        )
        if prometheus_log_method is not None:
            prometheus_log_method(self)


class SessionsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        query = self.string_argument("q", "") or None
        limit = self.int_argument("limit", 50, minimum=1, maximum=500)
        offset = self.int_argument("offset", 0, minimum=0, maximum=1_000_000)
        sessions = await self.terax.ai.list_sessions(query=query, limit=limit, offset=offset)
        self.finish_json({"sessions": sessions})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body() if self.request.body else {}
        self.finish_json(await self.terax.ai.create_session(body, user=self.user_name), 201)


class SessionHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        self.finish_json(await self.terax.ai.get_session(session_id))

    @web.authenticated
    @authorized
    async def patch(self, session_id: str) -> None:
        body = self.json_body()
        self.finish_json(await self.terax.ai.update_session(session_id, body, user=self.user_name))

    @web.authenticated
    @authorized
    async def delete(self, session_id: str) -> None:
        await self.terax.ai.delete_session(session_id, user=self.user_name)
        self.set_status(204)
        self.finish()


class MessagesHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        self.finish_json({"messages": await self.terax.ai.messages(session_id)})


class ToolCallsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        self.finish_json({"tool_calls": await self.terax.ai.tool_calls(session_id)})


class RunsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        run = await self.terax.ai.start_run(session_id, self.json_body(), user=self.user_name)
        self.finish_json(run, 202)


class CancelHandler(AiHandler):
    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        await self.terax.ai.cancel_run(session_id)
        self.finish_json({"cancelled": True})


class RulesHandler(AiHandler):
    @web.authenticated
    @authorized
    async def put(self, session_id: str) -> None:
        self.terax.security.paths.refuse_writes("auto-approve rules cannot change")
        rules = self.json_body().get("rules")
        self.finish_json(await self.terax.ai.set_rules(session_id, rules, user=self.user_name))


class ApprovalsHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        status = self.string_argument("status", "") or None
        if status is not None and status not in APPROVAL_STATUSES:
            raise InvalidRequest(
                f"'status' is one of {', '.join(APPROVAL_STATUSES)}.", reason="invalid_parameter"
            )
        approvals = await self.terax.ai.approvals_of(session_id, status=status)
        self.finish_json({"approvals": approvals})


class ApprovalHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, approval_id: str) -> None:
        self.finish_json(await self.terax.ai.approval(approval_id))

    @web.authenticated
    @authorized
    async def post(self, approval_id: str) -> None:
        decided = await self.terax.ai.decide(approval_id, self.json_body(), user=self.user_name)
        self.finish_json(decided)


class PlanHandler(AiHandler):
    @web.authenticated
    @authorized
    async def get(self, session_id: str) -> None:
        self.finish_json({"items": await self.terax.ai.plan_of(session_id)})

    @web.authenticated
    @authorized
    async def post(self, session_id: str) -> None:
        self.terax.security.paths.refuse_writes("a plan's changes cannot be applied")
        body = self.json_body()
        action = body.pop("action", None)
        if action == "apply":
            result = await self.terax.ai.apply_plan(session_id, body, user=self.user_name)
        elif action == "discard":
            if body:
                raise InvalidRequest("'discard' takes no other fields.", reason="invalid_parameter")
            result = await self.terax.ai.discard_plan(session_id, user=self.user_name)
        else:
            raise InvalidRequest("'action' is 'apply' or 'discard'.", reason="invalid_parameter")
        self.finish_json(result)


default_handlers = [
    (r"/terax/api/ai/sessions", SessionsHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}", SessionHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/messages", MessagesHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/tool-calls", ToolCallsHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/runs", RunsHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/cancel", CancelHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/rules", RulesHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/approvals", ApprovalsHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/plan", PlanHandler),
    (rf"/terax/api/ai/sessions/{_SESSION}/events", AiEventsWebSocket),
    (r"/terax/api/ai/approvals/(?P<approval_id>[^/]+)", ApprovalHandler),
]
