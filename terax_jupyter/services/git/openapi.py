"""OpenAPI fragment of the git API (status, diffs, staging, commits, remotes, branches)."""

from __future__ import annotations

from typing import Any

from terax_jupyter.apispec import errors, json_body, json_response, query, ref

STRING = {"type": "string"}
NULLABLE_STRING = {"type": "string", "nullable": True}
# How a file changed, in a status entry, a diff or a commit.
CHANGE_STATUSES = ["added", "modified", "deleted", "renamed", "copied", "typechange", "unmerged"]
_PATH = query(
    "path",
    {"type": "string"},
    "A file or folder in the repository (server-root-relative or absolute); default the root.",
)
_UNAVAILABLE = {
    "description": "git is missing, or the remote cannot be reached (remote_unavailable).",
    "content": {"application/json": {"schema": ref("Error")}},
}
_ERRORS = {
    **errors("BadRequest", "Forbidden", "NotFound", "Conflict", "TooLarge", "Timeout"),
    "503": _UNAVAILABLE,
}
_PATH_PROPERTY = {
    "type": "string",
    "description": "A file or folder in the repository; default the server root.",
}
_BOOLEAN = {"type": "boolean"}

_SELECTION = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["hunk"],
        "properties": {
            "hunk": {"type": "integer", "minimum": 0},
            "lines": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0},
                "description": "Indices into the hunk's lines (added or deleted ones); "
                "omitted: the whole hunk.",
            },
        },
    },
}

SCHEMAS: dict[str, Any] = {
    "GitEntry": {
        "type": "object",
        "properties": {
            "path": STRING,
            "old_path": NULLABLE_STRING,
            "status": {
                "type": "string",
                "enum": [*CHANGE_STATUSES, "untracked"],
            },
            "submodule": _BOOLEAN,
            "denied": {"type": "boolean", "description": "Protected: listed, never shown."},
        },
    },
    "GitStatus": {
        "type": "object",
        "properties": {
            "root": STRING,
            "branch": {
                "type": "object",
                "properties": {
                    "head": NULLABLE_STRING,
                    "oid": NULLABLE_STRING,
                    "detached": _BOOLEAN,
                    "unborn": _BOOLEAN,
                    "upstream": NULLABLE_STRING,
                    "ahead": {"type": "integer"},
                    "behind": {"type": "integer"},
                },
            },
            "staged": {"type": "array", "items": ref("GitEntry")},
            "unstaged": {"type": "array", "items": ref("GitEntry")},
            "untracked": {"type": "array", "items": ref("GitEntry")},
            "conflicted": {"type": "array", "items": ref("GitEntry")},
            "index_locked": _BOOLEAN,
            "operation": {
                "type": "string",
                "nullable": True,
                "enum": ["merge", "rebase", "cherry-pick", "revert", "bisect"],
                "description": "A multi-step operation in progress in the worktree.",
            },
            "hidden_untracked": {
                "type": "integer",
                "description": "Untracked files not listed because they lie in a folder "
                "GitManager.hidden_untracked names (.ipynb_checkpoints by default).",
            },
        },
    },
    "GitRepository": {
        "type": "object",
        "properties": {
            "root": STRING,
            "relative_root": STRING,
            "head": {
                "type": "object",
                "properties": {
                    "branch": NULLABLE_STRING,
                    "oid": NULLABLE_STRING,
                    "detached": _BOOLEAN,
                    "unborn": _BOOLEAN,
                },
            },
            "remotes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": STRING, "url": STRING, "web_url": NULLABLE_STRING},
                },
            },
            "trust": ref("GitTrust"),
        },
    },
    "GitTrust": {
        "type": "object",
        "description": "Whether git runs the programs this repository names (its hooks, its "
        "filter drivers, fsmonitor, signing and ssh programs in its own configuration). "
        "Untrusted, none of them runs; reads never run hooks either way.",
        "properties": {
            "trusted": _BOOLEAN,
            "source": {"type": "string", "enum": ["user", "admin"], "nullable": True},
            "trusted_by": NULLABLE_STRING,
            "trusted_at": NULLABLE_STRING,
            "can_change": {
                "type": "boolean",
                "description": "Whether this server lets the user change it (not read-only, "
                "not trusted by the administrator, user trust allowed).",
            },
            "programs": {
                "type": "array",
                "description": "Program settings of the repository's own configuration.",
                "items": {
                    "type": "object",
                    "properties": {"key": STRING, "value": STRING},
                },
            },
            "hooks": {
                "type": "array",
                "items": STRING,
                "description": "Hooks present (executable) in the repository's hooks folder.",
            },
        },
    },
    "GitTrustRequest": {
        "type": "object",
        "required": ["trusted"],
        "properties": {"path": _PATH_PROPERTY, "trusted": _BOOLEAN},
    },
    "GitFileDiff": {
        "type": "object",
        "properties": {
            "file": STRING,
            "old_file": NULLABLE_STRING,
            "source": {"type": "string", "enum": ["worktree", "index", "commit"]},
            "status": STRING,
            "binary": _BOOLEAN,
            "too_large": _BOOLEAN,
            "size": {"type": "integer"},
            "fingerprint": STRING,
            "conflict": {
                "type": "object",
                "nullable": True,
                "description": "A conflicted file (status 'conflicted'): the hunks compare "
                "HEAD with the work-tree file, conflict markers and all; here are the sides "
                "as the index holds them (base: stage 1, ours: 2, theirs: 3).",
                "properties": {
                    "sides": {
                        "type": "object",
                        "properties": {
                            name: ref("GitConflictSide") for name in ("base", "ours", "theirs")
                        },
                    },
                    "regions": {
                        "type": "integer",
                        "description": "Conflict regions (<<<<<<< lines) left in the file.",
                    },
                    "operation": {
                        "type": "string",
                        "nullable": True,
                        "enum": ["merge", "rebase", "cherry-pick", "revert", "bisect"],
                    },
                },
            },
            "hunks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "index": {"type": "integer"},
                        "header": STRING,
                        "old_start": {"type": "integer"},
                        "old_lines": {"type": "integer"},
                        "new_start": {"type": "integer"},
                        "new_lines": {"type": "integer"},
                        "lines": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "kind": {
                                        "type": "string",
                                        "enum": ["context", "add", "delete"],
                                    },
                                    "old": {"type": "integer", "nullable": True},
                                    "new": {"type": "integer", "nullable": True},
                                    "text": STRING,
                                    "no_newline": _BOOLEAN,
                                },
                            },
                        },
                    },
                },
            },
        },
    },
    "GitConflictSide": {
        "type": "object",
        "properties": {
            "present": {"type": "boolean", "description": "False: this side deleted the file."},
            "binary": _BOOLEAN,
            "too_large": _BOOLEAN,
            "size": {"type": "integer"},
            "text": NULLABLE_STRING,
        },
    },
    "GitResolveRequest": {
        "type": "object",
        "required": ["files", "side"],
        "properties": {
            "path": _PATH_PROPERTY,
            "files": {"type": "array", "items": STRING, "minItems": 1},
            "side": {
                "type": "string",
                "enum": ["ours", "theirs"],
                "description": "git's sense: during a rebase, ours is the branch rebased onto.",
            },
        },
    },
    "GitOperationRequest": {
        "type": "object",
        "required": ["operation", "action"],
        "properties": {
            "path": _PATH_PROPERTY,
            "operation": {
                "type": "string",
                "enum": ["merge", "rebase", "cherry-pick", "revert", "bisect"],
                "description": "The operation the client saw in progress (status.operation).",
            },
            "action": {
                "type": "string",
                "enum": ["continue", "abort", "skip", "reset"],
                "description": "merge: continue, abort; rebase, cherry-pick, revert: "
                "continue, abort, skip; bisect: reset.",
            },
        },
    },
    "GitOperationResult": {
        "type": "object",
        "properties": {
            "operation": STRING,
            "action": STRING,
            "output": STRING,
            "stopped": {
                "type": "boolean",
                "description": "git stopped again on conflicts (the next commit of a rebase).",
            },
            "trusted": _BOOLEAN,
            "hooks_skipped": {"type": "array", "items": STRING},
            "status": ref("GitStatus"),
        },
    },
    "GitIdentity": {
        "type": "object",
        "properties": {
            "name": NULLABLE_STRING,
            "email": NULLABLE_STRING,
            "name_scope": NULLABLE_STRING,
            "email_scope": NULLABLE_STRING,
            "configured": {"type": "boolean", "description": "Both are set."},
        },
    },
    "GitIdentityRequest": {
        "type": "object",
        "required": ["name", "email"],
        "properties": {
            "path": _PATH_PROPERTY,
            "name": STRING,
            "email": STRING,
            "scope": {
                "type": "string",
                "enum": ["local", "global"],
                "default": "local",
                "description": "local: this repository's .git/config; global: the user's.",
            },
        },
    },
    "GitChange": {
        "type": "object",
        "description": "Whole files ('files'), or a selection of one file's diff "
        "('file', 'fingerprint', 'selection'; 'context' as the diff was read).",
        "properties": {
            "path": _PATH_PROPERTY,
            "files": {"type": "array", "items": STRING, "minItems": 1},
            "file": STRING,
            "fingerprint": STRING,
            "selection": _SELECTION,
            "context": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 3},
            "confirm": {"type": "string", "description": "Discard only: the token a 409 gave."},
        },
    },
    "GitCommitRequest": {
        "type": "object",
        "required": ["message"],
        "properties": {
            "path": _PATH_PROPERTY,
            "message": STRING,
            "amend": _BOOLEAN,
            "signoff": _BOOLEAN,
        },
    },
    "GitCommitResult": {
        "type": "object",
        "properties": {
            "oid": STRING,
            "summary": STRING,
            "output": {"type": "string", "description": "What the hooks printed."},
            "trusted": _BOOLEAN,
            "hooks_skipped": {
                "type": "array",
                "items": STRING,
                "description": "Hooks the repository has that did not run: it is not trusted.",
            },
            "status": ref("GitStatus"),
        },
    },
    "GitRemoteRequest": {
        "type": "object",
        "properties": {"path": _PATH_PROPERTY, "remote": STRING, "branch": STRING},
    },
    "GitRemoteResult": {
        "type": "object",
        "properties": {
            "output": STRING,
            "trusted": _BOOLEAN,
            "hooks_skipped": {"type": "array", "items": STRING},
            "status": ref("GitStatus"),
        },
    },
    "GitBranches": {
        "type": "object",
        "properties": {
            "current": NULLABLE_STRING,
            "detached": _BOOLEAN,
            "local": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": STRING,
                        "oid": STRING,
                        "upstream": NULLABLE_STRING,
                        "ahead": {"type": "integer"},
                        "behind": {"type": "integer"},
                        "subject": STRING,
                    },
                },
            },
            "remote": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": STRING, "remote": STRING, "oid": STRING},
                },
            },
        },
    },
    "GitCreateBranch": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "path": _PATH_PROPERTY,
            "name": STRING,
            "start_point": STRING,
            "checkout": _BOOLEAN,
        },
    },
    "GitCheckout": {
        "type": "object",
        "required": ["branch"],
        "properties": {
            "path": _PATH_PROPERTY,
            "branch": {
                "type": "string",
                "description": "A local branch, or a remote one "
                "(a tracking local branch is created).",
            },
        },
    },
}


def _change(summary: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": json_body("GitChange"),
            "responses": {"200": json_response("The new status.", ref("GitStatus")), **_ERRORS},
        }
    }


def _remote(summary: str) -> dict[str, Any]:
    return {
        "post": {
            "summary": summary,
            "requestBody": json_body("GitRemoteRequest"),
            "responses": {
                "200": json_response("git's output and the new status.", ref("GitRemoteResult")),
                **_ERRORS,
            },
        }
    }


PATHS: dict[str, Any] = {
    "/terax/api/git/repository": {
        "get": {
            "summary": "The repository holding a path: root, HEAD, remotes.",
            "parameters": [_PATH],
            "responses": {"200": json_response("The repository.", ref("GitRepository")), **_ERRORS},
        }
    },
    "/terax/api/git/trust": {
        "get": {
            "summary": "Whether the repository's own programs (hooks, filters) may run.",
            "parameters": [_PATH],
            "responses": {"200": json_response("Its trust.", ref("GitTrust")), **_ERRORS},
        },
        "put": {
            "summary": "Trust the repository (its hooks and own programs run) or stop; audited.",
            "requestBody": json_body("GitTrustRequest"),
            "responses": {"200": json_response("Its trust now.", ref("GitTrust")), **_ERRORS},
        },
    },
    "/terax/api/git/status": {
        "get": {
            "summary": "Branch, upstream, and the staged, unstaged, untracked, conflicted files.",
            "parameters": [_PATH],
            "responses": {"200": json_response("The status.", ref("GitStatus")), **_ERRORS},
        }
    },
    "/terax/api/git/diff": {
        "get": {
            "summary": "One file's diff as hunks with line numbers.",
            "parameters": [
                _PATH,
                query("file", {"type": "string"}, "Repository-relative file.", required=True),
                query(
                    "source",
                    {"type": "string", "enum": ["worktree", "index", "commit"]},
                    "worktree: index to work tree; index: HEAD to index; commit: parent to commit.",
                ),
                query("commit", {"type": "string"}, "The commit, for source=commit."),
                query("context", {"type": "integer", "minimum": 0, "maximum": 1000}, "Lines."),
                query("old_file", {"type": "string"}, "The old name, to show a rename."),
            ],
            "responses": {"200": json_response("The diff.", ref("GitFileDiff")), **_ERRORS},
        }
    },
    "/terax/api/git/stage": _change("Stage whole files, or hunks and lines of one file."),
    "/terax/api/git/unstage": _change("Unstage whole files, or hunks and lines of one file."),
    "/terax/api/git/discard": _change(
        "Discard work-tree changes; first answers 409 confirmation_required with a token."
    ),
    "/terax/api/git/commit": {
        "post": {
            "summary": "Commit the staged changes (hooks run in a trusted repository; their "
            "output comes back; hooks_skipped names those an untrusted one did not run).",
            "requestBody": json_body("GitCommitRequest"),
            "responses": {
                "200": json_response("The commit.", ref("GitCommitResult")),
                **_ERRORS,
            },
        }
    },
    "/terax/api/git/fetch": _remote("Fetch from a remote (never prompts for credentials)."),
    "/terax/api/git/pull": _remote("Pull, fast-forward only."),
    "/terax/api/git/push": _remote("Push the current branch; sets its upstream when missing."),
    "/terax/api/git/branches": {
        "get": {
            "summary": "Local and remote branches.",
            "parameters": [_PATH],
            "responses": {"200": json_response("The branches.", ref("GitBranches")), **_ERRORS},
        },
        "post": {
            "summary": "Create a branch (and check it out).",
            "requestBody": json_body("GitCreateBranch"),
            "responses": {"200": json_response("The branches.", ref("GitBranches")), **_ERRORS},
        },
    },
    "/terax/api/git/checkout": {
        "post": {
            "summary": "Check out a branch; 409 would_overwrite if changes would be lost.",
            "requestBody": json_body("GitCheckout"),
            "responses": {"200": json_response("The new status.", ref("GitStatus")), **_ERRORS},
        }
    },
    "/terax/api/git/resolve": {
        "post": {
            "summary": "Resolve conflicted files with our or their version, and stage them; "
            "409 not_conflicted if a file is not conflicted (nothing changes).",
            "requestBody": json_body("GitResolveRequest"),
            "responses": {"200": json_response("The new status.", ref("GitStatus")), **_ERRORS},
        }
    },
    "/terax/api/git/operation": {
        "post": {
            "summary": "Continue, abort or skip the merge, rebase, cherry-pick or revert in "
            "progress, or end a bisect (never opens an editor). 409 no_operation when it is "
            "not in progress, unmerged_files when continuing with conflicts left.",
            "requestBody": json_body("GitOperationRequest"),
            "responses": {
                "200": json_response("git's output and the new status.", ref("GitOperationResult")),
                **_ERRORS,
            },
        }
    },
    "/terax/api/git/identity": {
        "get": {
            "summary": "The user.name and user.email git commits with here.",
            "parameters": [_PATH],
            "responses": {"200": json_response("The identity.", ref("GitIdentity")), **_ERRORS},
        },
        "put": {
            "summary": "Set user.name and user.email, for this repository or globally.",
            "requestBody": json_body("GitIdentityRequest"),
            "responses": {"200": json_response("The identity.", ref("GitIdentity")), **_ERRORS},
        },
    },
}
