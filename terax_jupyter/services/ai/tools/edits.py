"""The agent's file-changing tools: write_file, edit, multi_edit and create_directory.

Each ``propose`` validates everything and describes the change as a diff; ``apply`` trusts
only the payload's path, base etag and arguments: it re-reads the file, refuses if it
changed since the proposal, recomputes the new content, keeps the approved hunks and
writes atomically with the etag (a write that races another one is a conflict too).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from terax_jupyter.exceptions import (
    AlreadyExists,
    Conflict,
    InvalidRequest,
    NotFound,
    Unsupported,
)
from terax_jupyter.security import Access
from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolResult, object_schema
from terax_jupyter.services.ai.tools.files import bool_arg, shown, string_arg
from terax_jupyter.services.ai.tools.hunks import apply_hunks, diff_hunks, split_lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.tools.base import Hunk, ProposalKind, ToolContext

MAX_EDITS = 100
_PATH = {"type": "string", "description": "Relative to the workspace root, or absolute."}


@dataclass
class _Current:
    """A file as it is now: display path, text, etag, encoding (None: it does not exist)."""

    path: str
    text: str = ""
    etag: str | None = None
    encoding: str = "utf-8"

    @property
    def exists(self) -> bool:
        return self.etag is not None


# -- shared steps ----------------------------------------------------------------------------


def _write_target(context: ToolContext, path: str) -> str:
    """The display path of ``path`` if it may be written (refused before any approval)."""
    checked = context.security.paths.check(path, Access.WRITE)
    # The server root shows as "": name it so that it is still a path.
    return context.security.paths.display(checked.path) or "."


async def current_file(context: ToolContext, path: str, *, missing_ok: bool = False) -> _Current:
    """The file as it is now (read through the security layer); with ``missing_ok``, a
    missing one that may be written is returned as not existing."""
    try:
        result = await context.files.read(path, format="auto")
    except NotFound:
        if not missing_ok:
            raise
        return _Current(_write_target(context, path))
    if result["binary"]:
        raise Unsupported(
            f"{result['path']} is a binary file; only text files can be edited.",
            reason="binary_file",
        )
    return _Current(result["path"], result["content"], result["etag"], result["encoding"])


def _require_read(context: ToolContext, current: _Current) -> None:
    """Read-before-edit: the model must have seen the version it changes."""
    seen = context.reads.etag(current.path)
    if seen is None:
        raise Conflict(f"Read {current.path} with read_file before editing it.", reason="not_read")
    if seen != current.etag:
        raise Conflict(
            f"{current.path} changed on disk since you read it; read it again.",
            reason="changed_since_read",
        )


def _line_ending(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _with_line_ending(text: str, ending: str) -> str:
    """The model writes ``\\n``; a CRLF file keeps its CRLF."""
    text = text.replace("\r\n", "\n")
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def _replace(text: str, old: str, new: str, *, replace_all: bool, path: str) -> str:
    if not old:
        raise InvalidRequest(
            "old_string is empty; to write a whole file use write_file.", reason="invalid_argument"
        )
    if old == new:
        raise InvalidRequest("old_string and new_string are the same.", reason="no_change")
    ending = _line_ending(text)
    # The model saw the file through read_file, which shows lines without their CR.
    for candidate in dict.fromkeys((_with_line_ending(old, ending), old)):
        count = text.count(candidate)
        if count == 0:
            continue
        if count > 1 and not replace_all:
            raise InvalidRequest(
                f"old_string occurs {count} times in {path}; include more surrounding lines "
                "to make it unique, or set replace_all.",
                reason="ambiguous_match",
            )
        return text.replace(candidate, _with_line_ending(new, ending))
    raise InvalidRequest(
        f"old_string was not found in {path}; read the file again and copy the text exactly "
        "(without the line numbers).",
        reason="no_match",
    )


def edit_proposal(
    tool: str,
    kind: ProposalKind,
    current: _Current,
    new_text: str,
    payload: dict[str, Any],
) -> Proposal:
    diff, hunks = diff_hunks(current.text, new_text, path=current.path)
    if not hunks and current.exists:
        raise InvalidRequest(f"This would not change {current.path}.", reason="no_change")
    added, removed = _counts(hunks)
    if current.exists:
        summary = f"Edit {current.path} (+{added} -{removed})"
    else:
        summary = f"Create {current.path} ({len(split_lines(new_text))} lines)"
    return Proposal(
        tool=tool,
        kind=kind,
        summary=summary,
        payload={**payload, "path": current.path, "base_etag": current.etag},
        path=current.path,
        diff=diff,
        hunks=hunks,
    )


def _counts(hunks: list[Hunk]) -> tuple[int, int]:
    lines = [line for hunk in hunks for line in hunk.lines]
    return sum(line[:1] == "+" for line in lines), sum(line[:1] == "-" for line in lines)


async def apply_edit(
    proposal: Proposal,
    context: ToolContext,
    hunks: list[int] | None,
    compute: Callable[[_Current], str],
) -> ToolResult:
    """Re-read, check the base etag, recompute with ``compute(current)``, write the hunks."""
    payload = proposal.payload
    path = string_arg(payload, "path")
    base = payload.get("base_etag")
    current = await current_file(context, path, missing_ok=True)
    if current.etag != base:
        what = "was created" if base is None else "changed"
        raise Conflict(
            f"{current.path} {what} since this change was proposed; nothing was written.",
            reason="changed_since_proposed",
        )
    new_text = compute(current)
    total = len(diff_hunks(current.text, new_text)[1])
    if hunks is not None and not all(type(i) is int for i in hunks):
        raise InvalidRequest("Hunks are given by their numbers.", reason="invalid_hunk")
    selected = set(range(total)) if hunks is None else set(hunks)
    result = apply_hunks(current.text, new_text, selected)
    data = {"path": current.path, "hunks_applied": len(selected), "hunks_total": total}
    if hunks is not None and not selected:
        return ToolResult(f"No hunks were approved; {current.path} was not changed.", data=data)
    written = await _write(context, current, result)
    context.reads.record(written["path"], written["etag"])
    if not current.exists:
        lines = len(split_lines(result))
        return ToolResult(f"Created {current.path} ({lines} lines).", data=data)
    message = f"Applied {len(selected)} of {total} hunks to {current.path}."
    rejected = sorted(set(range(total)) - selected)
    if rejected:
        message += (
            f" Hunks {', '.join(map(str, rejected))} were rejected, so the file differs "
            "from your proposal; read it again before editing it further."
        )
    return ToolResult(message, data=data)


async def _write(context: ToolContext, current: _Current, text: str) -> dict[str, Any]:
    if current.exists:
        return await context.files.write(
            current.path, text, encoding=current.encoding, etag=current.etag
        )
    try:
        return await context.files.write(current.path, text)
    except NotFound:
        # A new file in a folder that does not exist yet: make the folders, then write.
        parent = os.path.dirname(current.path)
        with contextlib.suppress(AlreadyExists):
            await context.files.create(parent, kind="directory", parents=True)
        return await context.files.write(current.path, text)


# -- write_file ------------------------------------------------------------------------------


class WriteFile(Tool):
    name: ClassVar[str] = "write_file"
    description: ClassVar[str] = (
        "Create a file, or replace a whole file's content. Missing folders are created. "
        "To overwrite an existing file you must have read it with read_file first (and it "
        "must be unchanged since); prefer edit for changes to part of a file. The user "
        "approves the change before it is written."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": _PATH,
            "content": {"type": "string", "description": "The whole new content of the file."},
        },
        ["path", "content"],
    )
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = string_arg(arguments, "path")
        content = string_arg(arguments, "content", empty=True)
        _write_target(context, path)
        current = await current_file(context, path, missing_ok=True)
        if current.exists:
            _require_read(context, current)
        return edit_proposal(
            self.name, "write", current, self._content(current, content), {"content": content}
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        content = string_arg(proposal.payload, "content", empty=True)
        return await apply_edit(proposal, context, hunks, lambda c: self._content(c, content))

    @staticmethod
    def _content(current: _Current, content: str) -> str:
        return _with_line_ending(content, _line_ending(current.text)) if current.exists else content


# -- edit ------------------------------------------------------------------------------------


class Edit(Tool):
    name: ClassVar[str] = "edit"
    description: ClassVar[str] = (
        "Replace old_string with new_string in a file you have read with read_file. "
        "old_string must match the file exactly (without read_file's line numbers) and "
        "occur exactly once, unless replace_all is true; include enough surrounding lines "
        "to make it unique. The file's line endings are kept. The user approves the change "
        "(possibly only some of its hunks) before it is written."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": _PATH,
            "old_string": {"type": "string", "description": "The exact text to replace."},
            "new_string": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence (default false).",
            },
        },
        ["path", "old_string", "new_string"],
    )
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = string_arg(arguments, "path")
        edit = _edit_arguments(arguments)
        _write_target(context, path)
        current = await current_file(context, path)
        _require_read(context, current)
        new_text = _apply_edits(current, [edit])
        return edit_proposal(self.name, "edit", current, new_text, edit)

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        edit = _edit_arguments(proposal.payload)
        return await apply_edit(proposal, context, hunks, lambda c: _apply_edits(c, [edit]))


def _edit_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "old_string": string_arg(arguments, "old_string", empty=True),
        "new_string": string_arg(arguments, "new_string", empty=True),
        "replace_all": bool_arg(arguments, "replace_all", default=False),
    }


def _apply_edits(current: _Current, edits: list[dict[str, Any]]) -> str:
    if not current.exists:
        raise NotFound(f"{current.path} does not exist; create it with write_file.")
    text = current.text
    for number, edit in enumerate(edits, start=1):
        try:
            text = _replace(
                text,
                edit["old_string"],
                edit["new_string"],
                replace_all=edit["replace_all"],
                path=current.path,
            )
        except InvalidRequest as error:
            if len(edits) == 1:
                raise
            raise InvalidRequest(
                f"Edit {number} of {len(edits)}: {error.message} No edit was made.",
                reason=error.reason,
            ) from None
    return text


# -- multi_edit ------------------------------------------------------------------------------


class MultiEdit(Tool):
    name: ClassVar[str] = "multi_edit"
    description: ClassVar[str] = (
        "Make several edits to one file you have read, in order, all or nothing: each edit "
        "works on the result of the ones before it. The rules of edit apply to each."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema(
        {
            "path": _PATH,
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_EDITS,
                "items": object_schema(
                    {
                        "old_string": {"type": "string"},
                        "new_string": {"type": "string"},
                        "replace_all": {"type": "boolean"},
                    },
                    ["old_string", "new_string"],
                ),
            },
        },
        ["path", "edits"],
    )
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = string_arg(arguments, "path")
        edits = _edit_list(arguments)
        _write_target(context, path)
        current = await current_file(context, path)
        _require_read(context, current)
        new_text = _apply_edits(current, edits)
        return edit_proposal(self.name, "edit", current, new_text, {"edits": edits})

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        edits = _edit_list(proposal.payload)
        return await apply_edit(proposal, context, hunks, lambda c: _apply_edits(c, edits))


def _edit_list(arguments: dict[str, Any]) -> list[dict[str, Any]]:
    edits = arguments.get("edits")
    if not isinstance(edits, list) or not edits:
        raise InvalidRequest("'edits' must be a non-empty list.", reason="invalid_argument")
    if len(edits) > MAX_EDITS:
        raise InvalidRequest(f"At most {MAX_EDITS} edits at once.", reason="invalid_argument")
    if not all(isinstance(edit, dict) for edit in edits):
        raise InvalidRequest(
            "Each edit is an object with old_string and new_string.", reason="invalid_argument"
        )
    return [_edit_arguments(edit) for edit in edits]


# -- create_directory ------------------------------------------------------------------------


class CreateDirectory(Tool):
    name: ClassVar[str] = "create_directory"
    description: ClassVar[str] = (
        "Create a folder (and any missing parent folders). The user approves it first."
    )
    parameters: ClassVar[dict[str, Any]] = object_schema({"path": _PATH}, ["path"])
    mutating: ClassVar[bool] = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        path = _write_target(context, string_arg(arguments, "path"))
        await _refuse_existing(context, path)
        return Proposal(
            tool=self.name,
            kind="directory",
            summary=f"Create folder {shown(path)}",
            payload={"path": path},
            path=path,
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        path = string_arg(proposal.payload, "path")
        await _refuse_existing(context, path)
        created = await context.files.create(path, kind="directory", parents=True)
        return ToolResult(f"Created folder {created['path']}.", data={"path": created["path"]})


async def _refuse_existing(context: ToolContext, path: str) -> None:
    try:
        info = await context.files.stat(path)
    except NotFound:
        return
    what = "folder" if info["type"] == "directory" else info["type"]
    raise AlreadyExists(f"{shown(info['path'])} already exists (a {what}).")
