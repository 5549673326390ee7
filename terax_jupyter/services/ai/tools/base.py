"""What a tool is: its schema, whether it mutates, and how it runs through the security layer.

Read-only tools ``run`` at once. Mutating tools first ``propose``: they validate everything
(paths through the guard, commands through the command guard, read-before-edit) and describe
the exact change without making it. The runtime asks for approval (or queues the proposal in
plan mode), then calls ``apply`` with the approved proposal and, for edits, the approved
hunks. A ``TeraxError`` from any of the three becomes an error result the model sees.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from terax_jupyter.services.ai.providers.base import ImagePart, ToolSpec

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.tools.processes import ProcessRegistry
    from terax_jupyter.services.ai.wire import ToolEvent
    from terax_jupyter.services.browser.manager import BrowserManager
    from terax_jupyter.services.fs.grep import GrepSearch
    from terax_jupyter.services.fs.manager import FileManager
    from terax_jupyter.services.fs.search import FileSearch
    from terax_jupyter.services.kernels.runner import KernelRunner
    from terax_jupyter.services.pty.manager import PtyManager

ProposalKind = Literal[
    "write",
    "edit",
    "notebook",
    "directory",
    "command",
    "process",
    "kill",
    "replay",
    "workflow",
    "cells",
    "risky_cells",
    "kernel_restart",
]


class ReadLedger(Protocol):
    """Which files this session has read, and at which version (read-before-edit)."""

    def record(self, path: str, etag: str) -> None:
        """Remember that ``path`` (the display path FileManager returns) was read at ``etag``."""

    def etag(self, path: str) -> str | None:
        """The etag ``path`` had when the session last read or wrote it, or None."""


@dataclass
class ToolContext:
    """What a tool may use. Everything reaches the OS through ``security`` or a manager."""

    session_id: str
    security: SecurityLayer
    files: FileManager
    search: FileSearch
    grep: GrepSearch
    reads: ReadLedger
    processes: ProcessRegistry
    emit: Callable[[ToolEvent], None]
    pty: PtyManager | None = None
    kernels: KernelRunner | None = None
    browser: BrowserManager | None = None
    user: str | None = None
    # run_subagent's way back into the runtime: (agent name, task) -> the sub-agent's answer.
    subagents: Callable[[str, str], Awaitable[ToolResult]] | None = None
    # Whether the session queues changes now (plan mode); None outside a run.
    in_plan_mode: Callable[[], Awaitable[bool]] | None = None


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool's parameters: a JSON object of ``properties``, no others allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


@dataclass
class ToolResult:
    """``content`` is what the model reads (capped and redacted); ``data`` is structured
    detail for the UI (exit code, files changed, ...), JSON-serializable; ``images`` are
    shown to a model that reads images (``content`` names each by its label)."""

    content: str
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    images: list[ImagePart] = field(default_factory=list)


@dataclass
class Hunk:
    """One hunk of a proposed edit, numbered from 0 in file order."""

    index: int
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "header": self.header,
            "old_start": self.old_start,
            "old_lines": self.old_lines,
            "new_start": self.new_start,
            "new_lines": self.new_lines,
            "lines": self.lines,
        }


@dataclass
class Proposal:
    """The exact change a mutating call would make, as shown for approval.

    ``payload`` holds everything ``apply`` needs, as JSON (it is stored so that a pending
    approval or a plan survives a reload); ``summary`` is one line for the approval card.
    """

    tool: str
    kind: ProposalKind
    summary: str
    payload: dict[str, Any]
    path: str | None = None
    command: str | None = None
    diff: str | None = None
    hunks: list[Hunk] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "summary": self.summary,
            "payload": self.payload,
            "path": self.path,
            "command": self.command,
            "diff": self.diff,
            "hunks": [hunk.to_json() for hunk in self.hunks],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Proposal:
        return cls(
            tool=data["tool"],
            kind=data["kind"],
            summary=data["summary"],
            payload=data["payload"],
            path=data.get("path"),
            command=data.get("command"),
            diff=data.get("diff"),
            hunks=[Hunk(**hunk) for hunk in data.get("hunks") or []],
        )


class Tool(abc.ABC):
    """A tool the agent may call. Subclasses set the class attributes and implement ``run``
    (read-only) or ``propose`` + ``apply`` (mutating)."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    mutating: ClassVar[bool] = False

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    async def proposes(self, arguments: dict[str, Any], context: ToolContext) -> bool:
        """For a tool that is not ``mutating``: whether this call changes something that
        needs the user (asked, or queued in plan mode), so that ``propose`` and ``apply`` are
        used instead of ``run``."""
        return False

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        raise NotImplementedError(f"{self.name} is mutating: propose, then apply")

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        raise NotImplementedError(f"{self.name} is read-only: run it")

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        """Make the approved change; ``hunks`` (edits only) is the approved subset, None = all."""
        raise NotImplementedError(f"{self.name} is read-only: run it")

    def audit_subject(self, proposal: Proposal) -> dict[str, Any]:
        """What the administrator's audit line names of an approved change: its path by
        default; a tool whose approval is bound to more (sources, a kernel) says so."""
        return {"path": proposal.path} if proposal.path else {}
