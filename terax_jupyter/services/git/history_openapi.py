"""OpenAPI fragment of the git history: paginated log with graph lanes, commit detail."""

from __future__ import annotations

import re
from typing import Any

from terax_jupyter.apispec import errors, json_response, query, ref
from terax_jupyter.services.git import openapi as git_openapi
from terax_jupyter.services.git.log import (
    DEFAULT_LIMIT,
    DEFAULT_REFS,
    MAX_FILTER,
    MAX_LIMIT,
    REF_SCOPES,
)

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
_ROW = re.sub(
    r"\s+",
    " ",
    """
One commit's row of the graph (null in a flat list): [column, color, first, m, ...merges(m), r,
...removed(r), ...opened], the parts after 'first' left out when empty. The lanes at the row's
top are those at the previous row's bottom (the page's 'lanes' above its first row): a colour
each, -1 for a hole. The commit's dot is in 'column'; a lane comes down into it when the top
has a lane there. 'first': the bottom column of the first parent's lane, drawn from the dot (-1
for a root commit). 'merges': the bottom columns of the other parents' lanes, a merge edge from
the dot each. 'removed': top columns that do not go on as their own lane: the commit's own
column and holes end; any other lane joins the first parent's lane at the bottom. The other top
lanes keep their order at the bottom (a lane passes from its top column to its bottom one,
never across the dot's column), then come the 'opened' lanes (their colours) at the right end.
The commit's own column, when not removed, goes on as the first parent's lane when 'first' is
its bottom column, else as a hole.
""",
).strip()

SCHEMAS: dict[str, Any] = {
    "GitRef": {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["head", "branch", "remote", "tag"]},
            "name": {"type": "string", "description": "HEAD, main, origin/main, v1.0, ..."},
        },
    },
    "GitGraphRow": {
        "type": "array",
        "items": _INTEGER,
        "minItems": 3,
        "nullable": True,
        "description": _ROW,
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
                "description": "False when a filter is on: a flat list, no lanes.",
            },
            "lanes": {
                "type": "array",
                "items": {"type": "integer", "minimum": -1, "maximum": 15},
                "description": "With the graph: the colour of each lane at the top of the "
                "page's first row (-1: a hole), so that a page can be drawn on its own; "
                "empty for the first page.",
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
            "summary": "A page of history over the branches (or all refs, or one) with lanes.",
            "description": (
                "Topological order. The lanes continue from page to page; a cursor from "
                "before the refs moved is refused with 409 history_changed. With query, "
                "author or file the list is flat (graph: false)."
            ),
            "parameters": [
                _PATH,
                query("ref", _STRING, "One branch, tag or commit (instead of 'refs')."),
                query(
                    "refs",
                    {"type": "string", "enum": list(REF_SCOPES), "default": DEFAULT_REFS},
                    "Which refs the history starts from: 'branches' (default: branches, "
                    "remote-tracking branches, tags and HEAD; the namespaces of hosts and "
                    "review tools such as refs/pull/* left out), 'all' (every ref but the "
                    "stash, notes and prefetch refs) or 'local' (local branches and HEAD). "
                    "Anything else is refused (400).",
                ),
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
