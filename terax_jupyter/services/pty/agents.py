"""Notice when a coding agent (claude, codex, gemini, opencode, aider) runs in a terminal.

States: ``started`` (its command began), ``working`` (it is printing), ``attention`` (it
asked for the user, by an OSC 9/777 notification), ``finished`` (quiet again after
working: its turn is over), ``exited`` (its command ended).
"""

from __future__ import annotations

import asyncio
import shlex
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.pty.wire import AgentDetails, AgentState

# Output this soon after a notification belongs to it (the bytes that carried it, a redraw
# around it); only later output means the agent is working again.
NOTIFY_ECHO = 0.25
AGENT_COMMANDS = frozenset({"claude", "codex", "gemini", "opencode", "aider"})
# Package names that install an agent's command (``npx @anthropic-ai/claude-code``).
_PACKAGES = {"claude-code": "claude", "gemini-cli": "gemini", "aider-chat": "aider"}
_WRAPPERS = frozenset({"sudo", "env", "command", "exec", "time", "nice", "npx", "bunx", "uvx"})


def agent_of(command: str) -> str | None:
    """The agent a command line starts, if any (``npx claude``, ``env X=1 codex`` count)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        name = word.rsplit("/", 1)[-1]
        if "=" in word and not word.startswith("-"):
            continue
        if name in _WRAPPERS or word.startswith("-"):
            continue
        name = name.split("@", 1)[0]
        if name.startswith("@"):
            continue
        name = _PACKAGES.get(name, name)
        return name if name in AGENT_COMMANDS else None
    return None


class AgentDetector:
    """Turns a session's command and output events into agent states, reported once each."""

    def __init__(
        self, emit: Callable[[str, AgentState, AgentDetails], None], idle_after: float = 3.0
    ) -> None:
        self._emit = emit
        self._idle_after = idle_after
        self.agent: str | None = None
        self.state: AgentState | None = None
        self._last_output = 0.0
        self._notified_at = float("-inf")
        self._idle_check: asyncio.TimerHandle | None = None

    def command_started(self, command: str) -> None:
        agent = agent_of(command)
        if agent is None:
            return
        self.agent = agent
        self._set("started")

    def output(self) -> None:
        if self.agent is None:
            return
        now = time.monotonic()
        if self.state == "attention" and now - self._notified_at < NOTIFY_ECHO:
            return
        self._last_output = now
        if self.state != "working":
            self._set("working")
            self._schedule_idle_check(self._idle_after)

    def notified(self, message: str) -> None:
        if self.agent is not None:
            self._notified_at = time.monotonic()
            self._set("attention", {"message": message})

    def command_ended(self, exit_code: int | None) -> None:
        if self.agent is None:
            return
        self._set("exited", {"exit_code": exit_code})
        self._cancel()
        self.agent = None
        self.state = None

    def _schedule_idle_check(self, delay: float) -> None:
        self._cancel()
        try:
            self._idle_check = asyncio.get_running_loop().call_later(delay, self._check_idle)
        except RuntimeError:
            self._idle_check = None

    def _check_idle(self) -> None:
        self._idle_check = None
        if self.state != "working":
            return
        quiet = time.monotonic() - self._last_output
        if quiet >= self._idle_after:
            self._set("finished")
        else:
            self._schedule_idle_check(self._idle_after - quiet)

    def _set(self, state: AgentState, details: AgentDetails | None = None) -> None:
        self.state = state
        assert self.agent is not None
        self._emit(self.agent, state, details or {})

    def _cancel(self) -> None:
        if self._idle_check is not None:
            self._idle_check.cancel()
            self._idle_check = None
