"""The agent's read-only file tools: read_file, list_directory, grep and glob."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import InvalidRequest, Unsupported
from terax_jupyter.services.ai.tools.base import Tool, ToolResult, object_schema
from terax_jupyter.services.fs.grep import GrepQuery

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import ToolContext

MAX_OUTPUT_BYTES = 64 * 1024
READ_LINES = 2000
MAX_LINE_CHARS = 2000
LIST_ENTRIES = 500
GREP_RESULTS = 200
GREP_RESULTS_MAX = 1000
GLOB_PATHS = 1000


# -- arguments and output, shared by the agent's tools ------------------------------------


def string_arg(
    arguments: dict[str, Any], name: str, *, default: str | None = None, empty: bool = False
) -> str:
    """A string argument; required when ``default`` is None."""
    value = arguments.get(name)
    if value is None:
        if default is None:
            raise InvalidRequest(f"'{name}' is required.", reason="invalid_argument")
        return default
    if not isinstance(value, str):
        raise InvalidRequest(f"'{name}' must be a string.", reason="invalid_argument")
    if not empty and not value:
        raise InvalidRequest(f"'{name}' must not be empty.", reason="invalid_argument")
    return value


def int_arg(
    arguments: dict[str, Any],
    name: str,
    *,
    default: int | None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """An integer argument within bounds (a model may send 5.0: accepted as 5)."""
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # bool is an int to Python, never to the model's schema.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"'{name}' must be an integer.", reason="invalid_argument")
    if minimum is not None and value < minimum:
        raise InvalidRequest(f"'{name}' must be at least {minimum}.", reason="invalid_argument")
    if maximum is not None and value > maximum:
        raise InvalidRequest(f"'{name}' must be at most {maximum}.", reason="invalid_argument")
    return value


def bool_arg(arguments: dict[str, Any], name: str, *, default: bool) -> bool:
    value = arguments.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidRequest(f"'{name}' must be true or false.", reason="invalid_argument")
    return value


def for_model(
    context: ToolContext, text: str, *, max_bytes: int = MAX_OUTPUT_BYTES, tail: bool = False
) -> str:
    """Redacted, then cut at a line boundary to ``max_bytes``, keeping the start (or the
    end, with ``tail``). Redaction comes first, so a cut never splits a secret into
    pieces no pattern recognizes."""
    text = context.security.redactor.redact(text)
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    note = f"[Output cut at {max_bytes // 1024} KiB.]"
    if tail:
        kept = data[-max_bytes:].decode("utf-8", "ignore")
        if "\n" in kept:
            kept = kept[kept.index("\n") + 1 :]
        return f"{note}\n{kept}"
    kept = data[:max_bytes].decode("utf-8", "ignore")
    if "\n" in kept:
        kept = kept[: kept.rindex("\n")]
    return f"{kept}\n{note}"


def shown(path: str) -> str:
    """A display path as the model reads it: the server root is '.'."""
    return path or "."


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


_PATH = {"type": "string", "description": "Relative to the workspace root, or absolute."}


# -- read_file -----------------------------------------------------------------------------


class ReadFile(Tool):
    name: ClassVar[str] = "read_file"
    description: ClassVar[str] = (
        "Read a text file. Returns numbered lines ('   12\\tcode'); the numbers are not part "
        f"of the file. At most {READ_LINES} lines or 64 KiB per call: use offset and limit to "
        "read further. A file must be read before it can be edited or overwritten."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": _PATH,
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to show, 1-based (default 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": READ_LINES,
                "description": f"How many lines to show (default and most {READ_LINES}).",
            },
        },
        ["path"],
    )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        path = string_arg(arguments, "path")
        offset = int_arg(arguments, "offset", default=1, minimum=1) or 1
        limit = int_arg(arguments, "limit", default=READ_LINES, minimum=1, maximum=READ_LINES)
        result = await context.files.read(path, format="auto")
        shown_path = result["path"]
        if result["binary"]:
            raise Unsupported(
                f"{shown_path} is a binary file; read_file shows text only.",
                reason="binary_file",
            )
        context.reads.record(shown_path, result["etag"])
        lines = result["content"].split("\n")
        if lines[-1] == "":
            lines.pop()
        total = len(lines)
        data = {"path": shown_path, "total_lines": total, "etag": result["etag"]}
        if total == 0:
            return ToolResult(f"{shown_path} is empty.", data={**data, "truncated": False})
        if offset > total:
            raise InvalidRequest(
                f"offset {offset} is past the end of {shown_path} ({total} lines).",
                reason="invalid_argument",
            )
        body, end = self._numbered(context, lines, offset, limit or READ_LINES)
        truncated = end < total
        if truncated:
            body += f"\n[Showing lines {offset}-{end} of {total}. Read more with offset={end + 1}.]"
        return ToolResult(
            body, data={**data, "start_line": offset, "end_line": end, "truncated": truncated}
        )

    @staticmethod
    def _numbered(
        context: ToolContext, lines: list[str], offset: int, limit: int
    ) -> tuple[str, int]:
        """The numbered lines from ``offset`` within the caps, and the last line shown."""
        out: list[str] = []
        size = 0
        end = offset - 1
        last = min(len(lines), offset + limit - 1)
        # One redaction over the whole range (a PEM block spans lines; per-line redaction
        # would miss its body), keeping line breaks so the numbers stay true.
        selected = "\n".join(line.removesuffix("\r") for line in lines[offset - 1 : last])
        redacted = context.security.redactor.redact(selected, keep_lines=True).split("\n")
        for number in range(offset, last + 1):
            line = redacted[number - offset]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f" [... line cut at {MAX_LINE_CHARS} characters]"
            text = f"{number:>5}\t{line}"
            size += len(text.encode("utf-8")) + 1
            if size > MAX_OUTPUT_BYTES and out:
                break
            out.append(text)
            end = number
        return "\n".join(out), end


# -- list_directory ------------------------------------------------------------------------


class ListDirectory(Tool):
    name: ClassVar[str] = "list_directory"
    description: ClassVar[str] = (
        "List a folder: sub-folders first (ending in '/'), then files with their sizes. "
        "Protected entries (secrets, keys) are marked '(protected)' and cannot be read. "
        f"At most {LIST_ENTRIES} entries."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {"path": {**_PATH, "description": "The folder (default: the workspace root)."}}, []
    )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        path = string_arg(arguments, "path", default="", empty=True)
        listing = await context.files.list(path)
        entries = listing["entries"]
        lines = [f"{shown(listing['path'])}/ ({len(entries)} entries)"]
        lines.extend(_entry_line(entry) for entry in entries[:LIST_ENTRIES])
        if len(entries) > LIST_ENTRIES:
            lines.append(f"[... and {len(entries) - LIST_ENTRIES} more entries]")
        if not entries:
            lines.append("(empty)")
        return ToolResult(
            for_model(context, "\n".join(lines)),
            data={
                "path": listing["path"],
                "entries": len(entries),
                "truncated": len(entries) > LIST_ENTRIES,
            },
        )


def _entry_line(entry: dict[str, Any]) -> str:
    name = entry["name"]
    if entry["denied"]:
        return f"{name} (protected)"
    kind = entry["type"]
    notes = " (git-ignored)" if entry.get("ignored") else ""
    if kind == "directory":
        return f"{name}/{notes}"
    if kind == "symlink":
        target = entry.get("target_type") or "missing target"
        return f"{name} -> (symlink to {target}){notes}"
    if kind == "file":
        return f"{name}  {_size(entry['size'])}{notes}"
    return f"{name} ({kind}){notes}"


# -- grep ----------------------------------------------------------------------------------


class Grep(Tool):
    name: ClassVar[str] = "grep"
    description: ClassVar[str] = (
        "Search file contents (ripgrep) under a folder, or in one file. Returns "
        "'path:line:text' lines. The pattern is a regular expression unless regex is "
        "false. Files ignored by .gitignore and protected files are skipped."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "pattern": {"type": "string", "description": "What to search for (one line)."},
            "path": {**_PATH, "description": "Folder or file to search (default: the root)."},
            "glob": {
                "type": "string",
                "description": "Only files whose path matches this glob, e.g. '*.py' or "
                "'src/**/*.ts'.",
            },
            "case_insensitive": {"type": "boolean", "description": "Ignore case (default no)."},
            "regex": {
                "type": "boolean",
                "description": "Treat pattern as a regular expression (default true).",
            },
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": GREP_RESULTS_MAX,
                "description": f"Most matching lines (default {GREP_RESULTS}).",
            },
        },
        ["pattern"],
    )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        pattern = string_arg(arguments, "pattern")
        path = string_arg(arguments, "path", default="", empty=True)
        glob = string_arg(arguments, "glob", default="", empty=True)
        limit = int_arg(
            arguments, "max_results", default=GREP_RESULTS, minimum=1, maximum=GREP_RESULTS_MAX
        )
        include = [glob] if glob else []
        if path:
            # GrepSearch searches folders; one file is its folder, with an anchored glob.
            info = await context.files.stat(path)
            if info["type"] == "file":
                include = ["/" + info["name"]]
                path = os.path.dirname(info["path"]) or ""
        insensitive = bool_arg(arguments, "case_insensitive", default=False)
        query = GrepQuery(
            pattern=pattern,
            path=path,
            regex=bool_arg(arguments, "regex", default=True),
            case="insensitive" if insensitive else "sensitive",
            include=include,
            max_results=limit or GREP_RESULTS,
        )
        lines: list[str] = []
        summary: dict[str, Any] = {}
        async for item in context.grep.search(query):
            if item["type"] == "summary":
                summary = item
                continue
            lines.extend(f"{item['path']}:{m['line']}:{m['text']}" for m in item["matches"])
        matches, files = summary.get("matches", 0), summary.get("files", 0)
        truncated = bool(summary.get("truncated"))
        if not lines:
            text = f"No matches for {pattern!r} in {shown(path)}."
        else:
            text = "\n".join(lines) + f"\n[{matches} matches in {files} files"
            text += "; more exist: narrow the search or raise max_results]" if truncated else "]"
        return ToolResult(
            for_model(context, text),
            data={"matches": matches, "files": files, "truncated": truncated},
        )


# -- glob ----------------------------------------------------------------------------------


class Glob(Tool):
    name: ClassVar[str] = "glob"
    description: ClassVar[str] = (
        "Find files by path pattern, e.g. '**/*.py' or 'src/**/test_*.{ts,tsx}'. "
        "Patterns are relative to path (default: the workspace root). Files ignored by "
        f".gitignore and protected files are not listed. At most {GLOB_PATHS} paths."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "pattern": {"type": "string", "description": "The glob pattern."},
            "path": {**_PATH, "description": "The folder to search in (default: the root)."},
        },
        ["pattern"],
    )

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        pattern = string_arg(arguments, "pattern")
        path = string_arg(arguments, "path", default="", empty=True)
        found = await context.search.glob(pattern, path=path, limit=GLOB_PATHS)
        paths = found["paths"]
        if not paths:
            text = f"No files match {pattern!r} in {shown(path)}."
        else:
            text = "\n".join(paths)
            if found["truncated"]:
                text += f"\n[More than {len(paths)} files match; narrow the pattern.]"
        return ToolResult(
            for_model(context, text),
            data={"count": len(paths), "truncated": bool(found["truncated"])},
        )
