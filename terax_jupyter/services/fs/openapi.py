"""OpenAPI fragment of the file-system API."""

from __future__ import annotations

from terax_jupyter.apispec import errors, json_body, json_response, query, ref, websocket_responses

_PATH = query(
    "path",
    {"type": "string"},
    "Relative to the server root, or absolute inside a root.",
    required=True,
)
_FOLDER = query("path", {"type": "string"}, "Folder to work in (default: the server root).")

SCHEMAS = {
    "FileInfo": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "name": {"type": "string"},
            "type": {"type": "string", "enum": ["file", "directory", "symlink", "other"]},
            "size": {"type": "integer"},
            "mtime_ms": {"type": "integer"},
            "mode": {"type": "string", "description": "Permission bits in octal."},
            "root": {"type": "string", "description": "The workspace root holding the path."},
        },
    },
    "FileContent": {
        "allOf": [
            ref("FileInfo"),
            {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "encoding": {"type": "string", "description": "A codec name, or 'base64'."},
                    "binary": {"type": "boolean"},
                    "etag": {"type": "string", "description": "Send back when writing."},
                },
            },
        ]
    },
    "WriteRequest": {
        "type": "object",
        "required": ["path", "content"],
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "encoding": {"type": "string", "default": "utf-8"},
            "etag": {
                "type": "string",
                "nullable": True,
                "description": "The etag you read; 409 if stale.",
            },
            "overwrite": {
                "type": "boolean",
                "default": False,
                "description": "Replace without an etag.",
            },
        },
    },
    "CreateRequest": {
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {"type": "string"},
            "type": {"type": "string", "enum": ["file", "directory"], "default": "file"},
            "content": {"type": "string", "default": ""},
            "parents": {"type": "boolean", "default": False},
        },
    },
    "MoveRequest": {
        "type": "object",
        "required": ["path", "new_path"],
        "properties": {
            "path": {"type": "string"},
            "new_path": {"type": "string"},
            "overwrite": {"type": "boolean", "default": False},
        },
    },
    "Listing": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "path": {"type": "string"},
                        "type": {"type": "string"},
                        "target_type": {"type": "string", "nullable": True},
                        "size": {"type": "integer"},
                        "mtime_ms": {"type": "integer"},
                        "mode": {"type": "string"},
                        "hidden": {"type": "boolean"},
                        "ignored": {"type": "boolean", "description": "Matched by a .gitignore."},
                        "denied": {
                            "type": "boolean",
                            "description": "Protected: Terax will not open it.",
                        },
                    },
                },
            },
        },
    },
    "IndexFacts": {
        "type": "object",
        "properties": {
            "total_files": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "engine": {"type": "string", "enum": ["ripgrep", "python"]},
            "index_age_s": {"type": "number"},
            "index_build_ms": {"type": "number"},
            "refreshing": {"type": "boolean"},
        },
    },
    "SearchResults": {
        "allOf": [
            ref("IndexFacts"),
            {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "elapsed_ms": {"type": "number"},
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "path": {"type": "string"},
                                "score": {"type": "number"},
                                "positions": {"type": "array", "items": {"type": "integer"}},
                            },
                        },
                    },
                },
            },
        ]
    },
    "GlobResults": {
        "allOf": [
            ref("IndexFacts"),
            {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "paths": {"type": "array", "items": {"type": "string"}},
                },
            },
        ]
    },
}

PATHS = {
    "/terax/api/fs/file": {
        "get": {
            "summary": "Read a file (text decoded, binary as base64) with its etag.",
            "parameters": [
                _PATH,
                query(
                    "format",
                    {"type": "string", "enum": ["auto", "text", "base64"]},
                    "How to return it.",
                ),
            ],
            "responses": {
                "200": json_response("The file.", ref("FileContent")),
                **errors(
                    "BadRequest", "Forbidden", "NotFound", "Conflict", "TooLarge", "Unsupported"
                ),
            },
        },
        "put": {
            "summary": "Write a file atomically; an existing file needs its etag or overwrite.",
            "requestBody": json_body("WriteRequest"),
            "responses": {
                "200": json_response("Written.", ref("FileInfo")),
                **errors(
                    "BadRequest", "Forbidden", "NotFound", "Conflict", "TooLarge", "Unsupported"
                ),
            },
        },
        "delete": {
            "summary": "Delete a file or folder (never a workspace root).",
            "parameters": [
                _PATH,
                query("recursive", {"type": "boolean"}, "Needed for a folder that is not empty."),
            ],
            "responses": {
                "204": {"description": "Deleted."},
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        },
    },
    "/terax/api/fs/stat": {
        "get": {
            "summary": "Metadata of a path (a symlink is described, not followed).",
            "parameters": [_PATH],
            "responses": {
                "200": json_response("Metadata.", ref("FileInfo")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/list": {
        "get": {
            "summary": "List a folder with hidden, gitignored and protected flags.",
            "parameters": [
                _FOLDER,
                query("hidden", {"type": "boolean"}, "Include dot files (default true)."),
            ],
            "responses": {
                "200": json_response("Entries, folders first.", ref("Listing")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/create": {
        "post": {
            "summary": "Create a file or a folder; 409 if the name is taken.",
            "requestBody": json_body("CreateRequest"),
            "responses": {
                "201": json_response("Created.", ref("FileInfo")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/rename": {
        "post": {
            "summary": "Rename or move a file or folder.",
            "requestBody": json_body("MoveRequest"),
            "responses": {
                "200": json_response("Moved.", ref("FileInfo")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/copy": {
        "post": {
            "summary": "Copy a file or folder (protected files inside a folder are left out).",
            "requestBody": json_body("MoveRequest"),
            "responses": {
                "201": json_response("Copied.", ref("FileInfo")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/search": {
        "get": {
            "summary": "Fuzzy file-name search (quick open); .gitignore respected.",
            "parameters": [
                query("q", {"type": "string"}, "The query; empty lists the shortest paths."),
                _FOLDER,
                query("limit", {"type": "integer", "minimum": 1, "maximum": 1000}, "Most results."),
            ],
            "responses": {
                "200": json_response("Best first.", ref("SearchResults")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/glob": {
        "get": {
            "summary": "Files matching a glob (** for any depth, {a,b} braces).",
            "parameters": [
                query("pattern", {"type": "string"}, "For example src/**/*.py.", required=True),
                _FOLDER,
                query("limit", {"type": "integer", "minimum": 1, "maximum": 100000}, "Most paths."),
            ],
            "responses": {
                "200": json_response("Sorted paths.", ref("GlobResults")),
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/grep": {
        "get": {
            "summary": "Search file contents; NDJSON, one line per file, then a summary.",
            "parameters": [
                query(
                    "pattern",
                    {"type": "string"},
                    "Text, or a regex with regex=true.",
                    required=True,
                ),
                _FOLDER,
                query("regex", {"type": "boolean"}, "Treat the pattern as a regular expression."),
                query(
                    "case",
                    {"type": "string", "enum": ["smart", "sensitive", "insensitive"]},
                    "Case rule.",
                ),
                query("word", {"type": "boolean"}, "Whole words only."),
                query("include", {"type": "string"}, "Comma-separated globs to search."),
                query("exclude", {"type": "string"}, "Comma-separated globs to skip."),
                query(
                    "max_results",
                    {"type": "integer", "minimum": 1, "maximum": 100000},
                    "Most matches.",
                ),
                query(
                    "max_per_file",
                    {"type": "integer", "minimum": 1, "maximum": 100000},
                    "Most per file.",
                ),
            ],
            "responses": {
                "200": {
                    "description": (
                        'Lines of {"type": "file", "path", "matches": [{"line", "text", "ranges", '
                        '"offset"}], "truncated"} and a final {"type": "summary", "files", '
                        '"matches", "truncated", "engine", "elapsed_ms"}.'
                    ),
                    "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
                },
                **errors("BadRequest", "Forbidden", "NotFound", "Conflict"),
            },
        }
    },
    "/terax/api/fs/watch": {
        "get": {
            "summary": "WebSocket: subscribe to folders, receive batched change events.",
            "description": (
                'Send {"op": "subscribe", "id", "path", "recursive"} or '
                '{"op": "unsubscribe", "id"}; receive {"type": "changes", "id", "events": '
                '[{"kind", "path", "dest", "directory"}]}, '
                '{"type": "overflow", "id"} when events were dropped, and errors.'
            ),
            "x-websocket": True,
            "responses": websocket_responses("BadRequest", "Forbidden"),
        }
    },
}
