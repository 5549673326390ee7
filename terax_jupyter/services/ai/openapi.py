"""OpenAPI fragment of the agent API: sessions, runs, approvals, plans, providers, models."""

from __future__ import annotations

from typing import Any

from terax_jupyter.apispec import (
    errors,
    json_response,
    query,
    ref,
    tagged_union,
    typed_object,
    websocket_responses,
)
from terax_jupyter.services.ai import wire
from terax_jupyter.services.ai.tool_requests import EXTERNAL_TOOLS

_OBJECT = {"type": "object"}


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": description,
    }


def _body(schema: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


_SESSION_ID = _path("session_id", "The AI session's id.")
_PROVIDER_ID = _path("provider_id", "A provider's id: openai, anthropic, ollama, ...")
_UPSTREAM = {
    "502": {
        "description": "The provider failed (bad key, unreachable, ...); see 'reason'.",
        "content": {"application/json": {"schema": ref("Error")}},
    },
    "504": {
        "description": "The provider did not answer in time.",
        "content": {"application/json": {"schema": ref("Error")}},
    },
}
_NO_CONTENT = {"204": {"description": "Done."}}

_SESSION_FIELDS = {
    "title": {"type": "string", "maxLength": 200},
    "agent": {"type": "string", "description": "coder, ask, or a custom agent's name."},
    "provider": {"type": "string", "nullable": True},
    "model": {"type": "string", "nullable": True},
    "plan_mode": {"type": "boolean", "description": "Queue every change for a batch review."},
}

SCHEMAS: dict[str, Any] = {
    "AiSessionFields": {
        "type": "object",
        "properties": _SESSION_FIELDS,
        "additionalProperties": False,
    },
    "AiSessionSummary": {
        "type": "object",
        "required": ["id", "title", "agent", "created_at", "updated_at", "running"],
        "properties": {
            "id": {"type": "string"},
            **_SESSION_FIELDS,
            "rules": {"type": "array", "items": ref("AiRule")},
            "todos": {"type": "array", "items": _OBJECT},
            "created_at": {"type": "number"},
            "updated_at": {"type": "number"},
            "user": {"type": "string", "nullable": True},
            "running": {"type": "boolean"},
        },
    },
    "AiSession": {
        "allOf": [ref("AiSessionSummary")],
        "type": "object",
        "required": ["pending_approvals", "plan", "usage", "last_seq"],
        "properties": {
            "run": {"allOf": [ref("AiRun")], "nullable": True},
            "pending_approvals": {"type": "array", "items": ref("AiApproval")},
            "plan": {
                "type": "array",
                "items": ref("AiApproval"),
                "description": "Queued plan items (plan mode).",
            },
            "usage": {
                "type": "object",
                "properties": {
                    "input_tokens": {"type": "integer"},
                    "output_tokens": {"type": "integer"},
                    "cached_tokens": {"type": "integer"},
                    "cost": {
                        "type": "number",
                        "nullable": True,
                        "description": "US dollars at the model's prices, when it has them.",
                    },
                },
            },
            "last_seq": {
                "type": "integer",
                "description": "Number of the session's last event (for ?after=).",
            },
            "approvals": {
                "type": "object",
                "description": "The administrator's approval mode: 'user' (the session's "
                "rules apply), 'admin_rules' (only admin_rules apply), 'always' (no rule).",
                "properties": {
                    "mode": {"type": "string", "enum": ["user", "admin_rules", "always"]},
                    "admin_rules": {"type": "array", "items": ref("AiRule")},
                },
            },
        },
    },
    "AiRule": {
        "type": "object",
        "required": ["tool"],
        "additionalProperties": False,
        "description": "Auto-approve calls of 'tool' (or '*'), optionally only for paths "
        "matching a glob or commands starting with given words (no shell operators).",
        "properties": {
            "tool": {"type": "string"},
            "path": {"type": "string"},
            "command_prefix": {"type": "string"},
        },
    },
    "AiRun": {
        "type": "object",
        "required": ["id", "agent", "provider", "model", "steps"],
        "properties": {
            "id": {"type": "string"},
            "agent": {"type": "string"},
            "provider": {"type": "string"},
            "model": {"type": "string"},
            "plan_mode": {"type": "boolean"},
            "max_output_tokens": {
                "type": "integer",
                "description": "Output tokens per step of this run.",
            },
            "steps": {"type": "integer"},
            "started_at": {"type": "number"},
            "tool_call_id": {
                "type": "string",
                "description": "A 'tool' run's call, in the session's tool calls.",
            },
        },
    },
    "AiRunRequest": {
        "type": "object",
        "description": "A 'prompt' for the model, a 'replay' of a saved browser workflow "
        "(no model call; a destructive workflow asks the user first, as the agent's tool does), "
        "or one notebook 'tool' call an external agent asks for (no model call; approved like "
        "the agent's own).",
        "additionalProperties": False,
        "properties": {
            "prompt": {"type": "string", "minLength": 1},
            "tool": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "enum": list(EXTERNAL_TOOLS)},
                    "arguments": {"type": "object"},
                    "caller": {
                        "type": "string",
                        "description": "Who asks (the MCP client's name), shown as the prompt.",
                    },
                },
            },
            "replay": {
                "type": "object",
                "required": ["workflow"],
                "additionalProperties": False,
                "properties": {
                    "workflow": {"type": "string", "minLength": 1},
                    "inputs": {
                        "type": "object",
                        "additionalProperties": {"type": "string", "maxLength": 10000},
                    },
                },
            },
            "max_output_tokens": {
                "type": "integer",
                "minimum": 1,
                "description": "Output tokens per step for this run only (default: the "
                "server's max_output_tokens, capped by the model's). At most "
                "max_output_tokens_ceiling, and a known model's own maximum. The finish event "
                "of a run the output limit cut offers continue_max_output_tokens.",
            },
            **_SESSION_FIELDS,
        },
    },
    "AiMessage": {
        "type": "object",
        "required": ["id", "role", "content", "status"],
        "properties": {
            "id": {"type": "integer"},
            "run_id": {"type": "string", "nullable": True},
            "role": {"type": "string", "enum": ["system", "user", "assistant", "tool"]},
            "content": {"type": "string"},
            "reasoning": {"type": "string"},
            "tool_calls": {"type": "array", "items": _OBJECT},
            "tool_call_id": {"type": "string", "nullable": True},
            "name": {"type": "string", "nullable": True},
            "is_error": {"type": "boolean"},
            "status": {"type": "string", "enum": ["streaming", "complete", "cut"]},
            "created_at": {"type": "number"},
        },
    },
    "AiApproval": typed_object(wire.ApprovalRecord),
    "AiDecision": {
        "type": "object",
        "required": ["decision"],
        "properties": {
            "decision": {"type": "string", "enum": ["approve", "deny"]},
            "hunks": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "description": "Approve only these hunks of an edit (by index).",
            },
            "message": {
                "type": "string",
                "maxLength": 2000,
                "description": "Passed on to the agent.",
            },
        },
    },
    "AiPlanAction": {
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": ["apply", "discard"]},
            "decisions": {
                "type": "object",
                "additionalProperties": ref("AiDecision"),
                "description": "Per plan item (approval id); default approve.",
            },
        },
    },
    "AiProvider": {
        "type": "object",
        "required": ["id", "kind", "base_url", "local"],
        "properties": {
            "id": {"type": "string"},
            "label": {"type": "string"},
            "kind": {"type": "string", "enum": ["openai", "anthropic"]},
            "base_url": {"type": "string"},
            "key_name": {"type": "string", "nullable": True},
            "local": {"type": "boolean"},
            "product": {"type": "string", "nullable": True},
            "source": {"type": "string"},
            "key_set": {"type": "boolean"},
            "allowed_models": {
                "type": "array",
                "items": {"type": "string"},
                "nullable": True,
                "description": "The models the administrator's policy allows (null: any).",
            },
            "locked": {
                "type": "boolean",
                "description": "The administrator chose the providers: none can be changed.",
            },
        },
    },
    "AiProviderFields": {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "kind": {"type": "string", "enum": ["openai", "anthropic"]},
            "base_url": {"type": "string"},
            "key_name": {"type": "string", "nullable": True},
            "local": {"type": "boolean"},
            "product": {"type": "string", "nullable": True},
        },
    },
    "AiModel": {
        "type": "object",
        "required": ["provider", "id"],
        "properties": {
            "provider": {"type": "string"},
            "id": {"type": "string"},
            "label": {"type": "string"},
            "context_window": {"type": "integer"},
            "max_output_tokens": {"type": "integer"},
            "tools": {"type": "boolean"},
            "reasoning": {"type": "boolean"},
            "vision": {
                "type": "boolean",
                "description": "Reads images: tool results (notebook plots) show them to it.",
            },
            "source": {"type": "string"},
            "input_price": {
                "type": "number",
                "nullable": True,
                "description": "US dollars per million input tokens (for cost per turn).",
            },
            "output_price": {
                "type": "number",
                "nullable": True,
                "description": "US dollars per million output tokens.",
            },
        },
    },
    "AiAgent": {
        "type": "object",
        "required": ["name", "prompt", "tools"],
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "prompt": {"type": "string"},
            "tools": {"type": "array", "items": {"type": "string"}},
            "subagent": {"type": "boolean"},
            "builtin": {"type": "boolean"},
            "max_steps": {"type": "integer", "nullable": True},
        },
    },
    "AiConnectionTest": {
        "type": "object",
        "required": ["ok"],
        "properties": {
            "ok": {"type": "boolean"},
            "latency_ms": {"type": "number", "nullable": True},
            "models": {"type": "array", "items": {"type": "string"}},
            "message": {"type": "string", "nullable": True},
            "reason": {"type": "string", "nullable": True},
        },
    },
    "AiCompletionRequest": {
        "type": "object",
        "required": ["prefix"],
        "additionalProperties": False,
        "description": "The text around the cursor. Only the last 6000 characters of prefix "
        "and the first 2000 of suffix are sent to the model.",
        "properties": {
            "prefix": {"type": "string", "maxLength": 1000000},
            "suffix": {"type": "string", "maxLength": 1000000},
            "path": {"type": "string", "maxLength": 4096},
            "language": {"type": "string", "maxLength": 100},
            "provider": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "Default: AiManager.completion_provider, else the chat's provider, "
                "else default_provider.",
            },
            "model": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "Default: AiManager.completion_model, else the chat's model, "
                "else default_model.",
            },
            "chat_provider": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "The provider the page's chat uses now; used when neither the "
                "request nor AiManager.completion_* name one. Without it: the newest session's.",
            },
            "chat_model": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "The model the page's chat uses now (with chat_provider).",
            },
        },
    },
    "AiCompletion": {
        "type": "object",
        "required": ["text", "provider", "model", "mode", "latency_ms"],
        "properties": {
            "text": {"type": "string", "description": "What to insert (at most 20 lines)."},
            "provider": {"type": "string"},
            "model": {"type": "string"},
            "mode": {"type": "string", "enum": ["fim", "chat"]},
            "latency_ms": {"type": "number"},
        },
    },
}
# The events WebSocket's frames, from their declarations (wire.py).
SCHEMAS.update(
    tagged_union("AiEvent", wire.RUN_EVENTS, frame=wire.Numbered, unframed=wire.HUB_EVENTS)
)
SCHEMAS["AiEvent"]["description"] = "A frame of a session's events WebSocket (JSON text)."


def _list(key: str, item: str, description: str) -> dict[str, Any]:
    return json_response(
        description,
        {
            "type": "object",
            "required": [key],
            "properties": {key: {"type": "array", "items": ref(item)}},
        },
    )


PATHS: dict[str, Any] = {
    "/terax/api/ai/sessions": {
        "get": {
            "summary": "AI sessions, most recent first; q searches titles and messages.",
            "parameters": [
                query("q", {"type": "string"}, "Text to look for."),
                query("limit", {"type": "integer", "minimum": 1, "maximum": 500}, "At most."),
                query("offset", {"type": "integer", "minimum": 0}, "Skip this many."),
            ],
            "responses": {
                "200": _list("sessions", "AiSessionSummary", "The sessions."),
                **errors("BadRequest"),
            },
        },
        "post": {
            "summary": "Start a session.",
            "requestBody": _body(ref("AiSessionFields"), required=False),
            "responses": {
                "201": json_response("The session.", ref("AiSession")),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "A session with its run, approvals, plan and usage.",
            "responses": {
                "200": json_response("The session.", ref("AiSession")),
                **errors("NotFound"),
            },
        },
        "patch": {
            "summary": "Rename, switch agent or model, toggle plan mode.",
            "requestBody": _body(ref("AiSessionFields")),
            "responses": {
                "200": json_response("The session.", ref("AiSession")),
                **errors("BadRequest", "NotFound", "Conflict"),
            },
        },
        "delete": {
            "summary": "Delete a session (cancels its run, ends its processes).",
            "responses": {**_NO_CONTENT, **errors("NotFound")},
        },
    },
    "/terax/api/ai/sessions/{session_id}/messages": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "The conversation as stored (streamed text included as it came).",
            "responses": {
                "200": _list("messages", "AiMessage", "The messages."),
                **errors("NotFound"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/events": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "WebSocket: the session's events (AiEvent) as JSON text frames.",
            "description": "Query after=<seq> replays the events after that number (use the "
            "session's last_seq after loading it through REST). One-way: actions go through "
            "REST.",
            "parameters": [query("after", {"type": "integer", "minimum": 0}, "Replay after.")],
            "x-websocket": True,
            "responses": websocket_responses("BadRequest", "Forbidden", "NotFound"),
        },
    },
    "/terax/api/ai/sessions/{session_id}/tool-calls": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "Every tool call of the session with its status and result.",
            "responses": {
                "200": json_response("The calls.", {"type": "object"}),
                **errors("NotFound"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/runs": {
        "parameters": [_SESSION_ID],
        "post": {
            "summary": "Send a prompt: starts a run; follow it on the events WebSocket.",
            "requestBody": _body(ref("AiRunRequest")),
            "responses": {
                "202": json_response("The run.", ref("AiRun")),
                **errors("BadRequest", "NotFound", "Conflict"),
                "503": {
                    "description": "A replay on a server without the headless browser "
                    "(reason no_browser).",
                    "content": {"application/json": {"schema": ref("Error")}},
                },
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/cancel": {
        "parameters": [_SESSION_ID],
        "post": {
            "summary": "Cancel the session's run.",
            "responses": {
                "200": json_response("Cancelled.", {"type": "object"}),
                **errors("NotFound", "Conflict"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/rules": {
        "parameters": [_SESSION_ID],
        "put": {
            "summary": "Replace the session's auto-approve rules (audited).",
            "requestBody": _body(
                {
                    "type": "object",
                    "required": ["rules"],
                    "properties": {"rules": {"type": "array", "items": ref("AiRule")}},
                }
            ),
            "responses": {
                "200": json_response("The session.", ref("AiSession")),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/approvals": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "The session's approvals (pending ones survive a reload).",
            "parameters": [query("status", {"type": "string"}, "Only this status.")],
            "responses": {
                "200": _list("approvals", "AiApproval", "The approvals."),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/ai/sessions/{session_id}/plan": {
        "parameters": [_SESSION_ID],
        "get": {
            "summary": "The queued plan (plan mode).",
            "responses": {
                "200": _list("items", "AiApproval", "Queued items."),
                **errors("NotFound"),
            },
        },
        "post": {
            "summary": "Apply the plan (all, or per-item decisions) or discard it.",
            "requestBody": _body(ref("AiPlanAction")),
            "responses": {
                "200": json_response("What happened.", {"type": "object"}),
                **errors("BadRequest", "NotFound", "Conflict"),
            },
        },
    },
    "/terax/api/ai/approvals/{approval_id}": {
        "parameters": [_path("approval_id", "The approval's id.")],
        "get": {
            "summary": "One approval.",
            "responses": {
                "200": json_response("The approval.", ref("AiApproval")),
                **errors("NotFound"),
            },
        },
        "post": {
            "summary": "Approve, deny, or approve some hunks; the run goes on.",
            "requestBody": _body(ref("AiDecision")),
            "responses": {
                "200": json_response("The decided approval.", ref("AiApproval")),
                **errors("BadRequest", "NotFound", "Conflict"),
            },
        },
    },
    "/terax/api/ai/providers": {
        "get": {
            "summary": "Providers (built-in, admin, user) and whether each has a key; the "
            "provider and model new sessions get (AiManager.default_provider/default_model, "
            "null when unset).",
            "responses": {
                "200": json_response(
                    "The providers and the defaults.",
                    {
                        "type": "object",
                        "required": ["providers"],
                        "properties": {
                            "providers": {"type": "array", "items": ref("AiProvider")},
                            "default_provider": {"type": "string", "nullable": True},
                            "default_model": {"type": "string", "nullable": True},
                            "policy": {
                                "type": "object",
                                "description": "The administrator's policy for the agent: "
                                "providers, models, defaults (null: not set), approvals, "
                                "admin_rules, limits. Providers it does not allow are left "
                                "out of 'providers'.",
                            },
                        },
                    },
                )
            },
        },
    },
    "/terax/api/ai/providers/{provider_id}": {
        "parameters": [_PROVIDER_ID],
        "put": {
            "summary": "Add a provider or change a built-in's base URL (audited).",
            "requestBody": _body(ref("AiProviderFields")),
            "responses": {
                "200": json_response("The provider.", ref("AiProvider")),
                **errors("BadRequest", "Forbidden", "NotFound"),
            },
        },
        "delete": {
            "summary": "Remove a user's provider (a built-in returns to its defaults).",
            "responses": {**_NO_CONTENT, **errors("BadRequest", "Forbidden", "NotFound")},
        },
    },
    "/terax/api/ai/providers/{provider_id}/models": {
        "parameters": [_PROVIDER_ID],
        "get": {
            "summary": "The models the provider serves (asks it; local servers included).",
            "responses": {
                "200": _list("models", "AiModel", "The models."),
                **errors("BadRequest", "Forbidden", "NotFound"),
                **_UPSTREAM,
            },
        },
    },
    "/terax/api/ai/providers/{provider_id}/test": {
        "parameters": [_PROVIDER_ID],
        "post": {
            "summary": "Test the connection (and a model); failures are in the answer.",
            "requestBody": _body(
                {"type": "object", "properties": {"model": {"type": "string"}}}, required=False
            ),
            "responses": {
                "200": json_response("The result.", ref("AiConnectionTest")),
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/ai/complete": {
        "post": {
            "summary": "Inline completion at a cursor (fill-in-the-middle for local models "
            "that support it, else chat). 400 no_model when no model is configured.",
            "requestBody": _body(ref("AiCompletionRequest")),
            "responses": {
                "200": json_response("The completion.", ref("AiCompletion")),
                **errors("BadRequest", "NotFound"),
                **_UPSTREAM,
            },
        },
    },
    "/terax/api/ai/models": {
        "get": {
            "summary": "Known models (built-in and user-added) with their limits.",
            "parameters": [query("provider", {"type": "string"}, "Only this provider's.")],
            "responses": {"200": _list("models", "AiModel", "The models.")},
        },
        "post": {
            "summary": "Add a model (context window, tools, reasoning).",
            "requestBody": _body(ref("AiModel")),
            "responses": {
                "201": json_response("The model.", ref("AiModel")),
                **errors("BadRequest", "NotFound", "Forbidden"),
            },
        },
        "delete": {
            "summary": "Remove a user-added model.",
            "parameters": [
                query("provider", {"type": "string"}, "Provider.", required=True),
                query("model", {"type": "string"}, "Model.", required=True),
            ],
            "responses": {**_NO_CONTENT, **errors("BadRequest", "NotFound", "Forbidden")},
        },
    },
    "/terax/api/ai/agents": {
        "get": {
            "summary": "Agents: built-in and custom (prompt and enforced tool subset).",
            "responses": {"200": _list("agents", "AiAgent", "The agents.")},
        },
    },
    "/terax/api/ai/agents/{name}": {
        "parameters": [_path("name", "The agent's name.")],
        "put": {
            "summary": "Create or replace a custom agent (audited).",
            "requestBody": _body(
                {
                    "type": "object",
                    "required": ["prompt", "tools"],
                    "properties": {
                        "prompt": {"type": "string"},
                        "description": {"type": "string"},
                        "tools": {"type": "array", "items": {"type": "string"}},
                    },
                }
            ),
            "responses": {
                "200": json_response("The agent.", ref("AiAgent")),
                **errors("BadRequest", "Forbidden"),
            },
        },
        "delete": {
            "summary": "Delete a custom agent.",
            "responses": {**_NO_CONTENT, **errors("NotFound")},
        },
    },
}
