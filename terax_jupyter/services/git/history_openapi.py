"""OpenAPI fragment of the git history: paginated log with graph lanes, commit detail."""

from __future__ import annotations

from typing import Any

from terax_jupyter.apispec import errors, json_response, query, ref
from terax_jupyter.services.git import openapi as git_openapi
from terax_jupyter.services.git.log import DEFAULT_LIMIT, MAX_FILTER, MAX_LIMIT

_STRING = git_openapi.STRING
_NULLABLE_STRING = git_openapi.NULLABLE_STRING
_INTEGER = {"type": "integer"}
_OID = {"type": "string", "pattern": "^[0-9a-f]{40,64}$"}
_PATH = query(
    "path",
    {"type": "string"},
    "A file or folder in the repository (server-root-relative or absolute); default the root.",
)
_ERRORS = {
    **errors("BadRequest", "Forbidden", "NotFound", "Conflict", "TooLarge", "Timeout"),
    "503": {
        "description": "git is missing.",
        "content": {"application/json": {"schema": ref("Error")}},
    },
}
_FILTER = {"type": "string", "maxLength": MAX_FILTER}

SCHEMAS: dict[str, Any] = {
    "GitRef": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["head", "branch", "remote", "tag"]},
            "name": {"type": "string", "description": "HEAD, main, origin/main, v1.0, ..."},
        },
    },
    "GitGraphEdge": {
        "type": "object",
        "description": (
            "A segment drawn in one row, from column 'from' at the row's top to column 'to' at "
            "its bottom. The commit's dot is in the middle of the row's column: an edge with "
            "from = column and kind line is the commit's own lane (its upper half exists when "
            "the row above ends an edge in this column, its lower half when the commit has a "
            "parent); kind merge leaves the dot for another parent's lane; kind branch comes "
            "from another lane into the dot (the branches forked at this commit). Every other "
            "edge is a lane passing by; none passes through the dot's column."
        ),
        "properties": {
            "from": _INTEGER,
            "to": _INTEGER,
            "kind": {"type": "string", "enum": ["line", "merge", "branch"]},
            "color": {"type": "integer", "minimum": 0, "maximum": 15},
        },
    },
    "GitGraphRow": {
        "type": "object",
        "properties": {
            "column": _INTEGER,
            "color": {"type": "integer", "minimum": 0, "maximum": 15},
            "edges": {"type": "array", "items": ref("GitGraphEdge")},
        },
    },
    "GitLogCommit": {
        "type": "object",
        "properties": {
            "oid": _OID,
            "short": _STRING,
            "parents": {"type": "array", "items": _OID},
            "author": _STRING,
            "email": _STRING,
            "date": {"type": "string", "description": "Author date, ISO 8601 with offset."},
            "subject": _STRING,
            "refs": {"type": "array", "items": ref("GitRef")},
            "graph": ref("GitGraphRow"),
        },
    },
    "GitLogPage": {
        "type": "object",
        "properties": {
            "commits": {"type": "array", "items": ref("GitLogCommit")},
            "cursor": {
                "type": "string",
                "nullable": True,
                "description": "Pass it back for the next page; null after the last one.",
            },
            "total_known": {
                "type": "integer",
                "description": "Commits known to exist so far (this page's end, plus one when "
                "there are more).",
            },
            "graph": {
                "type": "boolean",
                "description": "False when a filter is on: every commit is in column 0, "
                "without edges.",
            },
        },
    },
    "GitCommitFile": {
        "type": "object",
        "properties": {
            "path": _STRING,
            "old_path": _NULLABLE_STRING,
            "status": {
                "type": "string",
                "enum": git_openapi.CHANGE_STATUSES,
            },
            "additions": _INTEGER,
            "deletions": _INTEGER,
            "binary": {"type": "boolean"},
            "denied": {
                "type": "boolean",
                "description": "Protected by the deny-list: listed, but its diff is refused.",
            },
        },
    },
    "GitCommitDetail": {
        "type": "object",
        "properties": {
            "oid": _OID,
            "short": _STRING,
            "parents": {"type": "array", "items": _OID},
            "author": _STRING,
            "email": _STRING,
            "date": _STRING,
            "committer": _STRING,
            "committer_email": _STRING,
            "committer_date": _STRING,
            "message": _STRING,
            "message_truncated": {"type": "boolean"},
            "refs": {"type": "array", "items": ref("GitRef")},
            "files": {
                "type": "array",
                "items": ref("GitCommitFile"),
                "description": "Against the first parent (a root commit: against nothing).",
            },
            "files_truncated": {"type": "boolean"},
            "stats": {
                "type": "object",
                "properties": {"files": _INTEGER, "additions": _INTEGER, "deletions": _INTEGER},
            },
            "web_url": {
                "type": "string",
                "nullable": True,
                "description": "The commit's page on the origin remote's host (GitHub, GitLab, "
                "Bitbucket, Azure DevOps or a generic https host).",
            },
        },
    },
}

PATHS: dict[str, Any] = {
    "/terax/api/git/log": {
        "get": {
            "summary": "A page of history over all refs (or one) with graph lanes.",
            "description": (
                "Topological order. The lanes continue from page to page; a cursor from "
                "before the refs moved is refused with 409 history_changed. With query, "
                "author or file the list is flat (graph: false)."
            ),
            "parameters": [
                _PATH,
                query("ref", _STRING, "One branch, tag or commit; default every ref."),
                query("cursor", _STRING, "The previous page's cursor."),
                query(
                    "limit",
                    {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                    f"Commits per page (default {DEFAULT_LIMIT}).",
                ),
                query("query", _FILTER, "Text in the message (case-insensitive, literal)."),
                query("author", _FILTER, "Text in the author's name or email."),
                query("file", _STRING, "Commits that touch this repository-relative path."),
            ],
            "responses": {"200": json_response("The page.", ref("GitLogPage")), **_ERRORS},
        }
    },
    "/terax/api/git/commit": {
        **git_openapi.PATHS.get("/terax/api/git/commit", {}),
        "get": {
            "summary": "One commit: message, changed files with line counts, web page.",
            "parameters": [
                _PATH,
                query(
                    "oid",
                    {"type": "string", "pattern": "^[0-9a-fA-F]{4,64}$"},
                    "The commit id (full or abbreviated).",
                    required=True,
                ),
            ],
            "responses": {"200": json_response("The commit.", ref("GitCommitDetail")), **_ERRORS},
        },
    },
}
