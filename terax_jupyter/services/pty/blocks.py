"""Command blocks: what ran, where, when, with which exit code, and where its output lies."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from terax_jupyter.services.pty.wire import BlockRecord

MAX_COMMAND_CHARS = 4096


@dataclass
class Block:
    """One command and its output range in the session's stream (absolute offsets)."""

    id: int
    command: str
    cwd: str | None
    output_start: int
    started_at: float
    output_end: int | None = None
    exit_code: int | None = None
    ended_at: float | None = None

    @property
    def running(self) -> bool:
        return self.ended_at is None

    def to_dict(self) -> BlockRecord:
        return {
            "id": self.id,
            "command": self.command,
            "cwd": self.cwd,
            "output_start": self.output_start,
            "output_end": self.output_end,
            "exit_code": self.exit_code,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": round((self.ended_at - self.started_at) * 1000)
            if self.ended_at is not None
            else None,
            "running": self.running,
        }


class BlockIndex:
    """Blocks in order, with a bound on how many are remembered."""

    def __init__(self, limit: int = 5000) -> None:
        self._blocks: list[Block] = []
        self._next_id = 1
        self._limit = limit

    def start(self, command: str, cwd: str | None, offset: int) -> Block:
        current = self.current()
        if current is not None:
            # A new command without an end mark for the last one (the shell lost it).
            self.end(None, offset)
        block = Block(self._next_id, command[:MAX_COMMAND_CHARS], cwd, offset, time.time())
        self._next_id += 1
        self._blocks.append(block)
        del self._blocks[: max(0, len(self._blocks) - self._limit)]
        return block

    def end(self, exit_code: int | None, offset: int) -> Block | None:
        current = self.current()
        if current is None:
            return None
        current.output_end = offset
        current.exit_code = exit_code
        current.ended_at = time.time()
        return current

    def current(self) -> Block | None:
        if self._blocks and self._blocks[-1].running:
            return self._blocks[-1]
        return None

    def get(self, block_id: int) -> Block | None:
        for block in reversed(self._blocks):
            if block.id == block_id:
                return block
        return None

    def all(self) -> list[Block]:
        return list(self._blocks)

    def commands(self) -> list[str]:
        return [b.command for b in self._blocks if b.command]
