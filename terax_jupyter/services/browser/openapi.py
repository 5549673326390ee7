"""OpenAPI fragment of the browser API (saved workflows and open tabs)."""

from __future__ import annotations

from terax_jupyter.apispec import errors, json_body, json_response, ref

_NAME = {
    "name": "workflow",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_.-]{0,63}$"},
    "description": "The workflow's name.",
}
_TAB = {
    "name": "tab",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": "A tab's id (the AI session that owns it).",
}
_CONDITION = {
    "type": "object",
    "required": ["kind", "value"],
    "properties": {
        "kind": {
            "type": "string",
            "enum": ["url_contains", "title_contains", "text_contains", "selector_exists"],
        },
        "value": {"type": "string"},
    },
}
_BROWSER_FAILED = {
    "502": {
        "description": "The headless browser failed (not installed, crashed, a page error).",
        "content": {"application/json": {"schema": ref("Error")}},
    },
    "503": {
        "description": "No browser on this server, or it is turned off.",
        "content": {"application/json": {"schema": ref("Error")}},
    },
}

SCHEMAS = {
    "Workflow": {
        "type": "object",
        "description": "A saved browser flow: semantic steps (no typed values), inputs, policy.",
        "required": ["name", "description", "inputs", "steps", "policy", "created_at"],
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "inputs": {"type": "array", "items": {"type": "string"}},
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "description": "navigate {url}, click {role, name}, type {role, name, "
                    "value: '{{input}}'}.",
                    "properties": {
                        "kind": {"type": "string", "enum": ["navigate", "click", "type"]},
                        "url": {"type": "string"},
                        "role": {"type": "string"},
                        "name": {"type": "string"},
                        "value": {"type": "string"},
                    },
                },
            },
            "policy": {
                "type": "object",
                "properties": {
                    "scope_id": {"type": "string"},
                    "workflow_version": {"type": "integer"},
                    "side_effect": {
                        "type": "string",
                        "enum": ["read_only", "mutating", "destructive"],
                    },
                    "ttl_seconds": {"type": "integer"},
                    "preconditions": {"type": "array", "items": _CONDITION},
                    "postconditions": {"type": "array", "items": _CONDITION},
                },
            },
            "policy_fingerprint": {"type": "string"},
            "command_digest": {"type": "string"},
            "created_at": {"type": "number"},
        },
    },
    "Workflows": {
        "type": "object",
        "required": ["workflows"],
        "properties": {"workflows": {"type": "array", "items": ref("Workflow")}},
    },
    "WorkflowRun": {
        "type": "object",
        "properties": {
            "inputs": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "A value for each declared input.",
            },
            "scope_id": {
                "type": "string",
                "description": "The scope the caller is in (default: the workflow's own).",
            },
            "workflow_version": {
                "type": "integer",
                "minimum": 1,
                "description": "Run only if the workflow is at this version (else 409 "
                "version_mismatch).",
            },
            "side_effect": {
                "type": "string",
                "enum": ["read_only", "mutating", "destructive"],
                "description": "Run only if the workflow has this side effect (else 409 "
                "side_effect_mismatch).",
            },
        },
        "additionalProperties": False,
    },
    "ReplayResult": {
        "type": "object",
        "required": ["run_id", "workflow", "steps_replayed", "hit", "model_calls"],
        "properties": {
            "run_id": {"type": "string"},
            "workflow": {"type": "string"},
            "steps_replayed": {"type": "integer"},
            "hit": {"type": "boolean"},
            "timings_ms": {"type": "object"},
            "model_calls": {"type": "integer", "enum": [0]},
        },
    },
    "TabAction": {
        "type": "object",
        "description": "open: url; click: ref, or role and name; type: ref (or role and "
        "name), text, input? (the name that makes "
        "the text a {{placeholder}}); wait: one of url_contains, title_contains, "
        "text_contains, selector, and timeout (s); snapshot: nothing; save: name, "
        "side_effect, description?, preconditions?, postconditions?, overwrite?, "
        "ttl_seconds? (1 to 7776000, default 30 days). Replacing a destructive workflow or "
        "lowering a side effect answers 409 approval_required (the agent asks the user).",
        "properties": {
            "url": {"type": "string"},
            "ref": {"type": "string"},
            "role": {"type": "string"},
            "text": {"type": "string"},
            "input": {"type": "string"},
            "url_contains": {"type": "string"},
            "title_contains": {"type": "string"},
            "text_contains": {"type": "string"},
            "selector": {"type": "string"},
            "timeout": {"type": "number"},
            "name": {"type": "string", "description": "An element's name, or the workflow's."},
            "side_effect": {"type": "string", "enum": ["read_only", "mutating", "destructive"]},
            "description": {"type": "string"},
            "preconditions": {"type": "array", "items": _CONDITION},
            "postconditions": {"type": "array", "items": _CONDITION},
            "overwrite": {"type": "boolean"},
            "ttl_seconds": {"type": "integer", "minimum": 1, "maximum": 7776000},
        },
    },
    "TabPage": {
        "type": "object",
        "required": ["url", "title", "text", "steps", "cacheable"],
        "properties": {
            "url": {"type": "string"},
            "title": {"type": "string"},
            "text": {"type": "string", "description": "The accessibility snapshot, with refs."},
            "blocked": {"type": "array", "items": {"type": "string"}},
            "steps": {"type": "integer", "description": "Steps recorded since the last open."},
            "cacheable": {"type": "boolean", "description": "Whether it can be saved."},
        },
    },
    "BrowserTabs": {
        "type": "object",
        "required": ["tabs"],
        "properties": {
            "tabs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "idle_seconds": {"type": "number"},
                        "steps": {"type": "integer"},
                        "cacheable": {"type": "boolean"},
                    },
                },
            }
        },
    },
}

PATHS = {
    "/terax/api/browser/workflows": {
        "get": {
            "summary": "The saved workflows.",
            "responses": {"200": json_response("The workflows.", ref("Workflows"))},
        },
    },
    "/terax/api/browser/workflows/{workflow}": {
        "parameters": [_NAME],
        "get": {
            "summary": "One saved workflow.",
            "responses": {
                "200": json_response("The workflow.", ref("Workflow")),
                **errors("BadRequest", "NotFound"),
            },
        },
        "delete": {
            "summary": "Delete a saved workflow.",
            "responses": {
                "204": {"description": "Deleted."},
                **errors("BadRequest", "NotFound"),
            },
        },
    },
    "/terax/api/browser/workflows/{workflow}/run": {
        "parameters": [_NAME],
        "post": {
            "summary": "Replay a read-only or mutating workflow in a fresh browser, with no "
            "model calls. Refusals are 409 with the check's reason (scope_mismatch, "
            "ttl_expired, target_missing, target_ambiguous, mutation_drift, "
            "postcondition_failed, approval_required for destructive workflows, ...).",
            "requestBody": json_body("WorkflowRun"),
            "responses": {
                "200": json_response("Replayed.", ref("ReplayResult")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict", "Timeout"),
                **_BROWSER_FAILED,
            },
        },
    },
    "/terax/api/browser/tabs": {
        "get": {
            "summary": "The open browser tabs (one per AI session that used the browser).",
            "responses": {"200": json_response("The tabs.", ref("BrowserTabs"))},
        },
    },
    "/terax/api/browser/tabs/{tab}": {
        "parameters": [_TAB],
        "delete": {
            "summary": "Close a tab (and the browser with the last one).",
            "responses": {"204": {"description": "Closed."}, **errors("NotFound")},
        },
    },
    "/terax/api/browser/tabs/{tab}/{action}": {
        "parameters": [
            _TAB,
            {
                "name": "action",
                "in": "path",
                "required": True,
                "schema": {
                    "type": "string",
                    "enum": ["open", "snapshot", "click", "type", "wait", "save"],
                },
            },
        ],
        "post": {
            "summary": "Drive a tab (opened on first use) as the agent's tools do; the page's "
            "snapshot comes back (save: the saved workflow, 201). Only local servers.",
            "requestBody": json_body("TabAction"),
            "responses": {
                "200": json_response("The page now.", ref("TabPage")),
                "201": json_response("Saved (action save).", ref("Workflow")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict", "Timeout"),
                **_BROWSER_FAILED,
            },
        },
    },
    "/terax/api/browser/screenshots/{shot}": {
        "parameters": [
            {
                "name": "shot",
                "in": "path",
                "required": True,
                "schema": {"type": "string"},
                "description": "The id a browser_screenshot tool call returned.",
            }
        ],
        "get": {
            "summary": "A screenshot the agent took (the latest 20 are kept).",
            "responses": {
                "200": {
                    "description": "The screenshot.",
                    "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
                },
                **errors("NotFound"),
            },
        },
    },
    "/terax/api/browser/tabs/{tab}/screenshot": {
        "parameters": [_TAB],
        "get": {
            "summary": "A PNG screenshot of a tab.",
            "responses": {
                "200": {
                    "description": "The screenshot.",
                    "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
                },
                **errors("NotFound", "TooLarge"),
                **_BROWSER_FAILED,
            },
        },
    },
}
