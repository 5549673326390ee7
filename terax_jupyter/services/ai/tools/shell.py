"""The agent's shell tools: bash_run, bash_background, bash_logs, bash_list and bash_kill."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import InvalidRequest, ReadOnlyMode, Unavailable
from terax_jupyter.security import check_command
from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolResult
from terax_jupyter.services.ai.tools.processes import (
    agent_environment,
    check_cwd,
    decode_output,
    run_command,
)

if TYPE_CHECKING:
    from terax_jupyter.security import CheckedPath
    from terax_jupyter.services.ai.tools.base import ToolContext
    from terax_jupyter.services.ai.tools.processes import CommandOutcome, ProcessRegistry

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
# What the model reads of a command's output: its start and (more of) its end, 30 KiB in all.
HEAD_BYTES = 12 * 1024
TAIL_BYTES = 18 * 1024
LOG_BYTES = 30 * 1024
DEFAULT_TAIL_LINES = 200
MAX_TAIL_LINES = 10_000

_COMMAND = {"type": "string", "description": "The bash command line to run."}
_CWD = {
    "type": "string",
    "description": "The folder to run it in (relative to the workspace root, or absolute); "
    "default: the workspace root.",
}
_ID = {"type": "string", "description": "The background process id bash_background returned."}


class BashRun(Tool):
    name = "bash_run"
    description = (
        "Run a bash command (bash -c) and wait for it to end; returns its output (stdout and "
        "stderr together) and exit code. No terminal and no input: the command must not wait "
        "for a key or a password. Output over 30 KiB keeps its start and end. For servers, "
        "watchers and anything that does not end on its own, use bash_background instead."
    )
    parameters = {
        "type": "object",
        "properties": {
            "command": _COMMAND,
            "cwd": _CWD,
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT,
                "description": f"Seconds before the command is stopped (default "
                f"{DEFAULT_TIMEOUT}, at most {MAX_TIMEOUT}).",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    mutating = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        _only(arguments, {"command", "cwd", "timeout"})
        command = _command(arguments.get("command"), context)
        timeout = _timeout(arguments.get("timeout", DEFAULT_TIMEOUT))
        cwd = check_cwd(context.security, _optional_string(arguments, "cwd"))
        shown = _shown(context, cwd)
        return Proposal(
            tool=self.name,
            kind="command",
            summary=f"Run {_one_line(command)}{_where(shown)}",
            payload={"command": command, "cwd": cwd.path, "timeout": timeout},
            path=shown,
            command=command,
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        payload = proposal.payload
        command = _command(payload.get("command"), context)
        timeout = _timeout(payload.get("timeout", DEFAULT_TIMEOUT))
        cwd = check_cwd(context.security, _optional_string(payload, "cwd"))
        shown = _shown(context, cwd)
        context.security.audit.record(
            "ai.command.run",
            user=context.user,
            session=context.session_id,
            command=command,
            cwd=shown,
        )
        outcome = await run_command(
            context.security,
            command,
            cwd,
            timeout=timeout,
            env=_environment(context),
            head_bytes=HEAD_BYTES,
            tail_bytes=TAIL_BYTES,
        )
        content = context.security.redactor.redact(_render(outcome, timeout))
        return ToolResult(
            content=content,
            is_error=outcome.timed_out or outcome.exit_code != 0,
            data={
                "exit_code": outcome.exit_code,
                "duration_ms": round(outcome.duration_ms, 1),
                "timed_out": outcome.timed_out,
                "truncated": outcome.elided > 0,
                "cwd": shown,
                "output_bytes": outcome.total,
            },
        )


class BashBackground(Tool):
    name = "bash_background"
    description = (
        "Start a bash command in the background (a dev server, a watcher, a long build) and "
        "return its id at once. Read its output with bash_logs, see all with bash_list, stop "
        "it with bash_kill. It is stopped when the session or the server closes."
    )
    parameters = {
        "type": "object",
        "properties": {"command": _COMMAND, "cwd": _CWD},
        "required": ["command"],
        "additionalProperties": False,
    }
    mutating = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        _only(arguments, {"command", "cwd"})
        command = _command(arguments.get("command"), context)
        _registry(context)
        cwd = check_cwd(context.security, _optional_string(arguments, "cwd"))
        shown = _shown(context, cwd)
        return Proposal(
            tool=self.name,
            kind="process",
            summary=f"Start {_one_line(command)} in the background{_where(shown)}",
            payload={"command": command, "cwd": cwd.path},
            path=shown,
            command=command,
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        registry = _registry(context)
        command = _command(proposal.payload.get("command"), context)
        cwd = check_cwd(context.security, _optional_string(proposal.payload, "cwd"))
        context.security.audit.record(
            "ai.process.start",
            user=context.user,
            session=context.session_id,
            command=command,
            cwd=_shown(context, cwd),
        )
        info = await asyncio.to_thread(registry.start, context.session_id, command, cwd)
        return ToolResult(
            content=(
                f"Started background process {info['id']} (pid {info['pid']}) in "
                f"{info['cwd']}: {info['command']}\nRead its output with bash_logs "
                f"(id {info['id']}); stop it with bash_kill."
            ),
            data=info,
        )


class BashLogs(Tool):
    name = "bash_logs"
    description = (
        "Read the output of a background process: its last lines (tail_lines, default "
        f"{DEFAULT_TAIL_LINES}), or everything from a byte offset (offset; each answer gives "
        "the next offset to continue from). Says whether it still runs and its exit code."
    )
    parameters = {
        "type": "object",
        "properties": {
            "id": _ID,
            "tail_lines": {"type": "integer", "minimum": 1, "maximum": MAX_TAIL_LINES},
            "offset": {"type": "integer", "minimum": 0},
        },
        "required": ["id"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        _only(arguments, {"id", "tail_lines", "offset"})
        registry = _registry(context)
        process_id = _string(arguments, "id")
        offset = _integer(arguments, "offset", low=0)
        tail_lines = _integer(arguments, "tail_lines", low=1, high=MAX_TAIL_LINES)
        if offset is not None and tail_lines is not None:
            raise InvalidRequest("Give offset or tail_lines, not both.", reason="invalid_arguments")
        if offset is None and tail_lines is None:
            tail_lines = DEFAULT_TAIL_LINES
        logs = await asyncio.to_thread(
            registry.logs,
            process_id,
            offset=offset,
            tail_lines=tail_lines,
            max_bytes=LOG_BYTES,
            session_id=context.session_id,
        )
        state = "running" if logs["running"] else f"exited with code {logs['exit_code']}"
        notes = [f"[process {process_id}: {state}; bytes {logs['offset']}-{logs['next_offset']}"]
        if logs["dropped"]:
            notes.append(f"; {logs['dropped']} earlier bytes were dropped from the log")
        notes.append(f"; continue with offset {logs['next_offset']}]")
        text = logs["text"] or "(no output)"
        return ToolResult(content=f"{''.join(notes)}\n{text}", data=logs)


class BashList(Tool):
    name = "bash_list"
    description = "List this session's background processes: id, state, pid, folder, command."
    parameters = {"type": "object", "properties": {}, "additionalProperties": False}

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        _only(arguments, set())
        processes = _registry(context).list(context.session_id)
        if not processes:
            return ToolResult("No background processes in this session.", data={"processes": []})
        lines = [
            f"{p['id']}  {_state(p)}  pid {p['pid']}  in {p['cwd']}  {_one_line(p['command'], 200)}"
            for p in processes
        ]
        return ToolResult("\n".join(lines), data={"processes": processes})


class BashKill(Tool):
    name = "bash_kill"
    description = "Stop a background process and everything it started (SIGTERM, then SIGKILL)."
    parameters = {
        "type": "object",
        "properties": {"id": _ID},
        "required": ["id"],
        "additionalProperties": False,
    }
    mutating = True

    async def propose(self, arguments: dict[str, Any], context: ToolContext) -> Proposal:
        _only(arguments, {"id"})
        process_id = _string(arguments, "id")
        info = _registry(context).get(process_id, session_id=context.session_id)
        return Proposal(
            tool=self.name,
            kind="kill",
            summary=f"Stop background process {process_id} ({_one_line(info['command'])})",
            payload={"id": process_id},
            command=info["command"],
        )

    async def apply(
        self, proposal: Proposal, context: ToolContext, *, hunks: list[int] | None = None
    ) -> ToolResult:
        registry = _registry(context)
        process_id = _string(proposal.payload, "id")
        context.security.audit.record(
            "ai.process.kill", user=context.user, session=context.session_id, id=process_id
        )
        info = await asyncio.to_thread(registry.kill, process_id, session_id=context.session_id)
        if info["was_running"]:
            content = f"Stopped {process_id} (exit code {info['exit_code']})."
        else:
            content = (
                f"{process_id} had already ended (exit code {info['exit_code']}); anything it "
                "left running was stopped."
            )
        return ToolResult(content, data=info)


SHELL_TOOLS: tuple[type[Tool], ...] = (BashRun, BashBackground, BashLogs, BashList, BashKill)


# -- helpers ----------------------------------------------------------------------------------


def _render(outcome: CommandOutcome, timeout: float) -> str:
    head = decode_output(outcome.head, cut_end=outcome.elided > 0)
    parts = [head]
    if outcome.elided > 0:
        parts.append(f"\n[... {outcome.elided} bytes elided ...]\n")
    if outcome.tail:
        parts.append(decode_output(outcome.tail, cut_start=outcome.elided > 0))
    output = "".join(parts)
    if not output:
        output = "(no output)"
    elif not output.endswith("\n"):
        output += "\n"
    seconds = outcome.duration_ms / 1000
    if outcome.timed_out:
        status = (
            f"[timed out after {timeout:g} s: the command and everything it started were "
            f"stopped (exit code {outcome.exit_code})]"
        )
    else:
        status = f"[exit code {outcome.exit_code} after {seconds:.1f} s]"
    if outcome.leftovers_stopped:
        status += (
            "\n[processes the command left running in the background were stopped; use "
            "bash_background for servers and watchers]"
        )
    return f"{output}{status}"


def _state(process: dict[str, Any]) -> str:
    return "running" if process["running"] else f"exit {process['exit_code']}"


def _environment(context: ToolContext) -> dict[str, str]:
    if context.processes is not None:
        return context.processes.environment()
    return agent_environment(context.security.redactor)


def _registry(context: ToolContext) -> ProcessRegistry:
    if context.processes is None:
        raise Unavailable(
            "Background processes are not available here.", reason="processes_unavailable"
        )
    return context.processes


def _command(value: Any, context: ToolContext) -> str:
    """A command the guard lets through, on a server that allows commands (else refused
    before anyone is asked to approve it)."""
    if not isinstance(value, str):
        raise InvalidRequest("'command' must be a string.", reason="invalid_arguments")
    if context.security.paths.read_only:
        raise ReadOnlyMode("The server is read-only: the agent cannot run commands.")
    context.security.policy.require("terminals")  # the agent's shell is a terminal too
    if context.processes is not None:  # with the guard for the key store
        return context.processes.check_command(value)
    return check_command(value)


def _shown(context: ToolContext, cwd: CheckedPath) -> str:
    return context.security.paths.display(cwd.path) or "."


def _where(shown: str) -> str:
    """Where a command runs, for a summary: nothing for the workspace root."""
    return "" if shown in ("", ".") else f" in {shown}"


def _one_line(command: str, limit: int = 120) -> str:
    line = command.strip().splitlines()[0] if command.strip() else ""
    if len(line) > limit or "\n" in command.strip():
        return f"`{line[:limit]}…`"
    return f"`{line}`"


def _only(arguments: dict[str, Any], allowed: set[str]) -> None:
    if not isinstance(arguments, dict):
        raise InvalidRequest("The arguments must be an object.", reason="invalid_arguments")
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise InvalidRequest(
            f"Unknown argument {', '.join(repr(name) for name in unknown)}; this tool takes "
            f"{', '.join(sorted(allowed)) or 'none'}.",
            reason="invalid_arguments",
        )


def _string(arguments: dict[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str) or not value:
        raise InvalidRequest(f"'{name}' must be a non-empty string.", reason="invalid_arguments")
    return value


def _optional_string(arguments: dict[str, Any], name: str) -> str | None:
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"'{name}' must be a string.", reason="invalid_arguments")
    return value


def _integer(
    arguments: dict[str, Any], name: str, *, low: int, high: int | None = None
) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if (
        not isinstance(value, int)
        or isinstance(value, bool)
        or value < low
        or (high is not None and value > high)
    ):
        bounds = f"{low} to {high}" if high is not None else f"{low} or more"
        raise InvalidRequest(f"'{name}' must be an integer, {bounds}.", reason="invalid_arguments")
    return value


def _timeout(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (1 <= value <= MAX_TIMEOUT)
    ):
        raise InvalidRequest(
            f"'timeout' must be 1 to {MAX_TIMEOUT} seconds.", reason="invalid_arguments"
        )
    return float(value)
