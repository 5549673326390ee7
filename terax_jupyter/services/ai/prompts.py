"""The system prompt: the agent's own prompt, where it works, and the project's TERAX.md."""

from __future__ import annotations

import platform
import time
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import NotFound, TeraxError

if TYPE_CHECKING:
    from terax_jupyter.services.ai.agents import AgentDefinition
    from terax_jupyter.services.fs.manager import FileManager

MEMORY_FILE = "TERAX.md"
MEMORY_CAP_BYTES = 32 * 1024


async def load_memory(files: FileManager, *, cap: int = MEMORY_CAP_BYTES) -> str | None:
    """TERAX.md at the workspace root, cut to ``cap`` bytes (on a character boundary), or
    None when there is none or it cannot be read (a denied or binary file is not memory)."""
    try:
        document = await files.read(MEMORY_FILE, format="text")
    except (NotFound, TeraxError):
        return None
    text: str = document["content"]
    data = text.encode("utf-8")
    if len(data) <= cap:
        return text
    cut = data[:cap].decode("utf-8", errors="ignore")
    return f"{cut}\n\n[TERAX.md continues; only its first {cap // 1024} KiB are shown.]"


def system_prompt(
    agent: AgentDefinition, *, workspace: str, memory: str | None, plan_mode: bool = False
) -> str:
    parts = [
        agent.prompt,
        "",
        f"Workspace root: {workspace} (paths are relative to it).",
        f"Platform: {platform.system()} {platform.machine()}; date: {time.strftime('%Y-%m-%d')}.",
    ]
    if plan_mode:
        parts += [
            "",
            "Plan mode is on: changes and commands you request are queued, not run. Queue the "
            "whole plan, then stop; the user reviews and applies it as a batch.",
        ]
    if memory:
        parts += ["", f"Project memory ({MEMORY_FILE}, written by the user):", "", memory]
    return "\n".join(parts)
