"""Coding agents in a terminal: which commands start one, and the states a session reports."""

from __future__ import annotations

import asyncio
import shutil
import time
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.services.pty.agents import NOTIFY_ECHO, AgentDetector, agent_of

from .helpers import Recorder, at_prompt, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager


@pytest.mark.parametrize(
    ("command", "agent"),
    [
        ("claude", "claude"),
        ("claude --resume", "claude"),
        ("/usr/local/bin/codex exec 'fix it'", "codex"),
        ("npx @anthropic-ai/claude-code", "claude"),
        ("npx @openai/codex@latest", "codex"),
        ("npx @google/gemini-cli", "gemini"),
        ("env FOO=1 BAR=2 gemini", "gemini"),
        ("sudo -E aider --model x", "aider"),
        ("uvx --from aider-chat aider", "aider"),
        ("time opencode", "opencode"),
        ("echo claude", None),
        ("git commit -m claude", None),
        ("claudex", None),
        ("cat 'unbalanced", None),
        ("", None),
        ("FOO=1", None),
    ],
)
def test_agent_of(command: str, agent: str | None) -> None:
    assert agent_of(command) == agent


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, object]]] = []

    def __call__(self, agent: str, state: str, details: dict[str, object]) -> None:
        self.seen.append((agent, state, details))

    @property
    def states(self) -> list[str]:
        return [state for _, state, _ in self.seen]


async def test_detector_states_with_a_short_idle() -> None:
    events = Events()
    detector = AgentDetector(events, idle_after=0.4)
    detector.command_started("ls -la")
    detector.output()
    assert events.seen == []
    detector.command_started("claude")
    detector.output()
    detector.output()  # reported once
    assert events.states == ["started", "working"]
    for _ in range(3):
        await asyncio.sleep(0.15)
        detector.output()  # still busy: the quiet period starts again
    assert events.states == ["started", "working"]
    quiet_from = time.monotonic()
    await wait_for(lambda: events.states[-1] == "finished", 5, "finished")
    assert time.monotonic() - quiet_from >= 0.4
    detector.output()
    detector.notified("Claude: needs input")
    detector.output()  # the bytes that carried the notification
    assert events.states[-2:] == ["working", "attention"]
    assert events.seen[-1][2] == {"message": "Claude: needs input"}
    await asyncio.sleep(max(NOTIFY_ECHO, 0.4) + 0.1)
    assert events.states[-1] == "attention"  # it waits for the user: no "finished"
    detector.output()
    assert events.states[-1] == "working"
    detector.command_ended(0)
    assert events.seen[-1] == ("claude", "exited", {"exit_code": 0})
    assert detector.agent is None
    await asyncio.sleep(0.5)
    assert events.states[-1] == "exited"  # no idle check outlives the agent
    detector.notified("ignored")
    assert events.states[-1] == "exited"


# Its output and its notification in one write: the session still sees it working first.
FAKE_CLAUDE = """#!/bin/sh
printf 'thinking about it\\n\\033]777;notify;Claude;needs input\\007'
sleep 0.6
echo "done"
sleep 0.8
exit 2
"""


async def test_a_fake_claude_in_a_real_session(
    make_manager: Callable[..., PtyManager], bin_dir: Path
) -> None:
    script = bin_dir / "claude"
    script.write_text(FAKE_CLAUDE)
    script.chmod(0o755)
    manager = make_manager(agent_idle_after=0.3)
    session = await manager.create(shell="bash")
    await at_prompt(session)
    client = Recorder()
    session.attach(client)
    seen_during: list[object] = []

    async def watch() -> None:
        await wait_for(lambda: session.phase == "running", 10, "running")
        seen_during.append(session.describe()["agent"])

    watcher = asyncio.ensure_future(watch())
    result = await manager.run(session.id, "claude", timeout=15)
    await watcher
    assert result["block"]["exit_code"] == 2
    agent_events = client.events("agent")
    assert [(m["agent"], m["state"]) for m in agent_events] == [
        ("claude", "started"),
        ("claude", "working"),
        ("claude", "attention"),
        ("claude", "working"),
        ("claude", "finished"),
        ("claude", "exited"),
    ]
    assert agent_events[2]["message"] == "Claude: needs input"
    assert agent_events[-1]["exit_code"] == 2
    assert client.events("notify") == [{"type": "notify", "message": "Claude: needs input"}]
    # While it ran, the session's description named it.
    assert seen_during
    assert seen_during[0]["name"] == "claude"
    assert session.describe()["agent"] is None
    # A command that is not an agent reports nothing.
    await manager.run(session.id, "echo claude", timeout=10)
    assert len(client.events("agent")) == len(agent_events)


async def test_output_and_a_notification_in_one_read(
    make_manager: Callable[..., PtyManager], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A plain shell prints nothing of its own; the marks come from printf, in a single write.
    bash = shutil.which("bash")
    assert bash
    # Its prompt is bash's default: an activated virtual environment exports its own PS1.
    monkeypatch.delenv("PS1", raising=False)
    manager = make_manager(shell_command=[bash, "--norc", "--noprofile", "-i"])
    session = await manager.create()
    client = Recorder()
    session.attach(client)
    await wait_for(lambda: b"bash-" in session.scrollback.read()[0], 10, "prompt")
    session.write(
        b"printf '\\033]133;C;nonce=%s;cmdline_url=claude\\007thinking\\n"
        b"\\033]777;notify;Claude;needs input\\007' " + session.nonce.encode() + b"\r"
    )
    await wait_for(lambda: len(client.events("agent")) >= 3, 10, "agent states")
    await asyncio.sleep(0.1)
    assert [m["state"] for m in client.events("agent")] == ["started", "working", "attention"]
