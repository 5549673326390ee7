"""get_terminal_output against real bash sessions on real PTYs."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import InvalidRequest, NotFound, Unavailable
from terax_jupyter.services.ai.tools.terminal import GetTerminalOutput
from terax_jupyter.services.pty.manager import PtyManager

from .tool_context import make_context

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.tools.base import ToolContext
    from terax_jupyter.services.pty.session import PtySession

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
# Startup settings of the developer's own shell that would change what the tests see.
SHELL_ENVIRONMENT = (
    "ENV",
    "BASH_ENV",
    "PROMPT_COMMAND",
    "HISTFILE",
    "TERAX_TERMINAL",
    "TERAX_NONCE",
    "TERAX_SESSION_ID",
    "TERAX_LOGIN_SHELL",
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def manager(
    terax_security: Callable[..., SecurityLayer],
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    jp_asyncio_loop: asyncio.AbstractEventLoop,
) -> Iterator[PtyManager]:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("PS1='PROMPT$ '\n")
    monkeypatch.setenv("HOME", str(home))
    for name in SHELL_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    manager = PtyManager(
        terax_security(root), str(tmp_path / "terax-state"), login_shell="never", close_grace=0.5
    )
    yield manager
    jp_asyncio_loop.run_until_complete(manager.close_all())


@pytest.fixture
def context(manager: PtyManager) -> ToolContext:
    context = make_context(manager.security)
    context.pty = manager
    return context


async def started(manager: PtyManager) -> PtySession:
    session = await manager.create(shell="bash")
    deadline = time.monotonic() + 15
    while not (session.integrated and session.phase in ("prompt", "input")):
        assert time.monotonic() < deadline, "bash never showed its prompt"
        await asyncio.sleep(0.01)
    return session


async def prompt_shown(session: PtySession) -> None:
    """Wait for the prompt after a command (a block ends just before the prompt is drawn)."""
    deadline = time.monotonic() + 15
    while (await session.last_lines(1, rendered=True)).strip() != "PROMPT$":
        assert time.monotonic() < deadline, "bash never showed its prompt"
        await asyncio.sleep(0.01)


async def test_blocks_by_index_from_either_end(context: ToolContext, manager: PtyManager) -> None:
    session = await started(manager)
    await manager.run(session.id, "echo first-output", timeout=10)
    await manager.run(session.id, "printf 'a\\nb\\n'; (exit 3)", timeout=10)
    tool = GetTerminalOutput()
    last = await tool.run({"block": -1}, context)
    header, *body = last.content.splitlines()
    assert header.startswith(f"Terminal 'Terminal 1' ({session.id}), block -1 `printf")
    assert "(exit 3, " in header
    assert body == ["a", "b"]
    assert last.data["exit_code"] == 3
    assert last.data["running"] is False
    first = await tool.run({"block": 0, "session": session.id}, context)
    assert first.content.splitlines()[1:] == ["first-output"]
    assert first.data["command"] == "echo first-output"
    assert (await tool.run({"block": -2}, context)).content == first.content.replace(
        "block 0", "block -2"
    )
    for index in (2, -3):
        with pytest.raises(NotFound) as raised:
            await tool.run({"block": index}, context)
        assert raised.value.reason == "no_block"
        assert "from -2 to 1" in raised.value.message


async def test_last_lines_and_default(context: ToolContext, manager: PtyManager) -> None:
    session = await started(manager)
    await manager.run(session.id, "seq 1 300", timeout=10)
    await prompt_shown(session)
    tool = GetTerminalOutput()
    result = await tool.run({"lines": 3}, context)
    header, *body = result.content.splitlines()
    assert header == f"Terminal 'Terminal 1' ({session.id}), last 3 lines:"
    assert body == ["299", "300", "PROMPT$"]
    default = await tool.run({}, context)
    assert default.data["lines"] == 100
    assert default.content.splitlines()[1:-1] == [str(n) for n in range(202, 301)]
    with pytest.raises(InvalidRequest, match="not both"):
        await tool.run({"lines": 3, "block": -1}, context)
    with pytest.raises(InvalidRequest):
        await tool.run({"lines": 0}, context)


async def test_defaults_to_the_most_recently_active_session(
    context: ToolContext, manager: PtyManager
) -> None:
    one = await started(manager)
    two = await started(manager)
    await manager.run(one.id, "echo from-one", timeout=10)
    result = await GetTerminalOutput().run({"block": -1}, context)
    assert result.data["session"] == one.id
    assert "from-one" in result.content
    await manager.run(two.id, "echo from-two", timeout=10)
    result = await GetTerminalOutput().run({"block": -1}, context)
    assert result.data["session"] == two.id
    assert "from-two" in result.content


async def test_output_is_redacted(context: ToolContext, manager: PtyManager) -> None:
    context.security.redactor.add_secret("hunter2-but-longer")
    session = await started(manager)
    await manager.run(session.id, f"echo {SECRET} hunter2-but-longer", timeout=10)
    result = await GetTerminalOutput().run({"block": -1}, context)
    assert SECRET not in result.content
    assert "hunter2-but-longer" not in result.content
    assert "[REDACTED]" in result.content
    lines = await GetTerminalOutput().run({"lines": 5}, context)
    assert SECRET not in lines.content


async def test_clear_errors_without_terminals(
    context: ToolContext, manager: PtyManager, terax_security: Callable[..., SecurityLayer]
) -> None:
    with pytest.raises(NotFound) as raised:
        await GetTerminalOutput().run({}, context)
    assert raised.value.reason == "no_terminal"
    with pytest.raises(NotFound, match="No terminal session 'nope'"):
        await GetTerminalOutput().run({"session": "nope"}, context)
    context.pty = None
    with pytest.raises(Unavailable) as raised:
        await GetTerminalOutput().run({}, context)
    assert raised.value.reason == "no_terminals"


async def test_a_session_without_blocks_says_to_read_lines(
    context: ToolContext, manager: PtyManager
) -> None:
    manager.shell_integration = False
    session = await manager.create(shell="bash")
    await prompt_shown(session)
    with pytest.raises(NotFound) as raised:
        await GetTerminalOutput().run({"block": -1}, context)
    assert raised.value.reason == "no_blocks"
    result = await GetTerminalOutput().run({"lines": 1}, context)
    assert result.content.splitlines()[1:] == ["PROMPT$"]
