"""One cell run in a live kernel: its execute request, and its outputs as nbformat outputs.

The kernel is the one Jupyter's session of the notebook uses (the one Lab shows), reached with
a kernel client of its own: messages are matched to the request by their parent id, so what
Lab runs at the same time never mixes in. Outputs are kept as a notebook stores them
(consecutive stream text joined, ``clear_output`` honoured, ``update_display_data`` applied),
within a size cap per cell.
"""

from __future__ import annotations

import asyncio
import json
import queue
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbformat.v4 import output_from_msg

if TYPE_CHECKING:
    from collections.abc import Callable

    from jupyter_client.asynchronous import AsyncKernelClient

POLL_S = 0.5
REPLY_TIMEOUT_S = 30.0
OUTPUT_TYPES = {"stream", "display_data", "execute_result", "error"}


@dataclass
class CellRun:
    """A cell's run: what ran, how it is going, and what it printed so far."""

    id: str
    source: str
    status: str = "queued"  # queued, running, ok, error, interrupted, not_run
    outputs: list[dict[str, Any]] = field(default_factory=list)
    execution_count: int | None = None
    output_bytes: int = 0
    outputs_dropped: int = 0
    started: float | None = None
    ended: float | None = None
    # Counts replacements in place (update_display_data, clear_output); a stream that goes
    # on is not one: its text only grows (stream_length).
    revision: int = 0
    # The kernel announced it (execute_input): from then on an interrupt reaches this cell,
    # where before it would be lost (or reach whatever the kernel runs ahead of it).
    executing: bool = False

    @property
    def finished(self) -> bool:
        return self.status in ("ok", "error", "interrupted", "not_run")

    def stream_length(self, count: int) -> int:
        """The text length of the ``count``-th output if it is a stream (which grows), else 0."""
        if not 0 < count <= len(self.outputs):
            return 0
        output = self.outputs[count - 1]
        return len(output.get("text", "")) if output.get("output_type") == "stream" else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "execution_count": self.execution_count,
            "outputs": len(self.outputs),
            "outputs_dropped": self.outputs_dropped,
        }


class OutputSink:
    """Adds a kernel's output messages to a cell run as a notebook would store them."""

    def __init__(self, cell: CellRun, max_bytes: int, on_output: Callable[[], None]) -> None:
        self.cell = cell
        self.max_bytes = max_bytes
        self.on_output = on_output
        self._clear_pending = False
        self._displays: dict[str, list[int]] = {}  # display_id -> output positions

    def take(self, msg: dict[str, Any]) -> None:
        kind = msg["header"]["msg_type"]
        content = msg.get("content", {})
        if kind == "clear_output":
            if content.get("wait"):
                self._clear_pending = True
            else:
                self._clear()
            return
        if kind == "update_display_data":
            self._update(content)
            return
        if kind not in OUTPUT_TYPES:
            return
        if self._clear_pending:
            self._clear()
        output = dict(output_from_msg(msg))
        last = self.cell.outputs[-1] if self.cell.outputs else None
        if (
            kind == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == output.get("name")
        ):
            if self._fits(len(output["text"])):
                last["text"] += output["text"]  # appended: not a change of what was shown
                self.on_output()
            return
        size = len(json.dumps(output))
        if not self._fits(size):
            return
        display_id = (content.get("transient") or {}).get("display_id")
        if display_id:
            self._displays.setdefault(display_id, []).append(len(self.cell.outputs))
        self.cell.outputs.append(output)
        self.on_output()

    def _fits(self, size: int) -> bool:
        if self.cell.output_bytes + size > self.max_bytes:
            self.cell.outputs_dropped += 1
            return False
        self.cell.output_bytes += size
        return True

    def _clear(self) -> None:
        self._clear_pending = False
        self.cell.outputs.clear()
        self.cell.output_bytes = 0
        self._displays.clear()
        self.cell.revision += 1
        self.on_output()

    def _update(self, content: dict[str, Any]) -> None:
        display_id = (content.get("transient") or {}).get("display_id")
        for position in self._displays.get(display_id or "", []):
            if position < len(self.cell.outputs):
                output = self.cell.outputs[position]
                output["data"] = content.get("data", {})
                output["metadata"] = content.get("metadata", {})
        if display_id in self._displays:
            self.cell.revision += 1
            self.on_output()


async def run_cell(
    client: AsyncKernelClient,
    cell: CellRun,
    *,
    max_output_bytes: int,
    on_output: Callable[[], None],
) -> None:
    """Execute ``cell`` and follow it to its end; its status says how it ended."""
    cell.status, cell.started = "running", time.time()
    on_output()
    msg_id = client.execute(cell.source, store_history=True, allow_stdin=False, stop_on_error=True)
    sink = OutputSink(cell, max_output_bytes, on_output)
    idle = False
    while not idle:
        try:
            msg = await client.get_iopub_msg(timeout=POLL_S)
        except (queue.Empty, asyncio.TimeoutError):
            if not await client.is_alive():
                cell.status = "interrupted"
                break
            continue
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = msg["header"]["msg_type"]
        if kind == "status" and msg["content"].get("execution_state") == "idle":
            idle = True
        elif kind == "execute_input":
            cell.executing = True
            cell.execution_count = msg["content"].get("execution_count", cell.execution_count)
        else:
            sink.take(msg)
    reply = await shell_reply(client, msg_id, REPLY_TIMEOUT_S)
    content = reply.get("content", {}) if reply else {}
    if isinstance(content.get("execution_count"), int):
        cell.execution_count = content["execution_count"]
    if cell.status == "running":
        if content.get("status") == "ok":
            cell.status = "ok"
        elif content.get("ename") == "KeyboardInterrupt":
            cell.status = "interrupted"
        else:
            cell.status = "error"
    cell.ended = time.time()
    on_output()


async def shell_reply(
    client: AsyncKernelClient, msg_id: str, timeout: float
) -> dict[str, Any] | None:
    """The kernel's reply to request ``msg_id``, or None after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = await client.get_shell_msg(timeout=POLL_S)
        except (queue.Empty, asyncio.TimeoutError):
            continue
        if msg.get("parent_header", {}).get("msg_id") == msg_id:
            return dict(msg)
    return None
