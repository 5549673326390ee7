"""The notebook tools that change or run something, for external agents over MCP.

Each call is one run of the Terax server's agent in a session of its own for this MCP
process ("External agent: <client>"), making exactly that tool call with no model: the call
takes the path of the built-in agent's own (the security layer, the session's auto-approve
rules, the approval card in the Terax AI panel, the audit). This process only waits for the
call to end and passes its result on; it decides nothing. A call the user has not answered
within ``wait`` seconds is cancelled, and nothing is done.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from terax_jupyter.client.api import TeraxAPIError, segment

if TYPE_CHECKING:
    from terax_jupyter.mcp.connection import Connection

DEFAULT_WAIT_S = 55  # within the 60 s a client such as Codex gives a tool call by default
MAX_WAIT_S = 600
POLL_S = 0.25
BUSY_RETRY_S = 5.0  # the previous call's run may still be storing its result
APPROVAL_NOTE = (
    " The user approves it in the Terax AI panel in JupyterLab (session 'External agent: "
    "...'), unless one of their auto-approve rules covers it; unanswered within wait "
    "seconds, it is cancelled and nothing is done."
)


class ExternalCalls:
    """This MCP process's session on the Terax server and the calls made in it, one at a
    time (a session runs one call at a time)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.session_id: str | None = None
        self._lock: anyio.Lock | None = None

    async def call(self, name: str, arguments: dict[str, Any], *, caller: str, wait: int) -> str:
        """The tool's result text; a refusal, a denial or an error as a ToolError."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            session_id, call_id = await self._start(name, arguments, caller)
            call = await self._outcome(session_id, call_id, name, wait)
        result = str(call.get("result") or "")
        data = call.get("data")
        shown = data.get("images") if isinstance(data, dict) else None
        if isinstance(shown, list) and shown:
            result += (
                f"\n[The {len(shown)} image(s) named above are not sent through {name} over "
                "MCP: read the cell with notebook_read to get them as images.]"
            )
        if call["status"] == "denied":
            raise ToolError(f"The user denied this {name} call in the Terax AI panel. {result}")
        if call["status"] == "error" or call.get("is_error"):
            raise ToolError(result or f"{name} failed.")
        return result

    async def _session(self, caller: str) -> str:
        if self.session_id is None:
            created = await self.connection.post(
                "ai/sessions", {"title": f"External agent: {caller}", "plan_mode": False}
            )
            self.session_id = str(created["id"])
        return self.session_id

    async def _start(self, name: str, arguments: dict[str, Any], caller: str) -> tuple[str, str]:
        body = {"tool": {"name": name, "arguments": arguments, "caller": caller}}
        deadline = time.monotonic() + BUSY_RETRY_S
        while True:
            session_id = await self._session(caller)
            try:
                run = await self.connection.post(f"ai/sessions/{segment(session_id)}/runs", body)
                return session_id, str(run["tool_call_id"])
            except TeraxAPIError as error:
                if error.reason == "session_not_found":  # the user deleted it: a new one
                    self.session_id = None
                    continue
                if error.reason != "run_active" or time.monotonic() > deadline:
                    raise
            await anyio.sleep(POLL_S)

    async def _outcome(self, session_id: str, call_id: str, name: str, wait: int) -> dict[str, Any]:
        """The call once its run has ended; cancelled (a ToolError) after ``wait`` seconds."""
        route = f"ai/sessions/{segment(session_id)}"
        deadline = time.monotonic() + wait
        while (await self.connection.get(route))["running"]:
            if time.monotonic() > deadline:
                await self.connection.post(f"{route}/cancel")
                raise ToolError(
                    f"{name} was not answered within {wait} s in the Terax AI panel, so it "
                    "was cancelled and nothing was done. Ask the user to approve it there "
                    "(or add an auto-approve rule), then call it again, with a longer wait."
                )
            await anyio.sleep(POLL_S)
        calls = (await self.connection.get(f"{route}/tool-calls"))["tool_calls"]
        found = next((call for call in calls if call.get("id") == call_id), None)
        if found is None:
            raise ToolError(f"The Terax server has no record of this {name} call.")
        return dict(found)
