"""The run API on real bash, zsh and fish: what a line becomes, told at once, and a clean editor.

A syntax error, an unclosed quote and a half-typed line used to leave ``run`` waiting out its
whole timeout, and the next run glued to what was left in the line editor.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest

from .helpers import SHELLS, at_prompt

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.pty.session import PtySession

pytestmark = pytest.mark.usefixtures("server_shell_home")

# Long enough that old behaviour (waiting out the timeout) fails the test with Timeout.
TIMEOUT = 20.0
# Each shell's wording of "this line does not parse".
COMPLAINTS = {"bash": "syntax error", "zsh": "parse error", "fish": "Unexpected ')'"}


async def started(manager: PtyManager, shell: str) -> PtySession:
    session = await manager.create(shell=shell)
    await at_prompt(session)
    return session


async def runs_cleanly(manager: PtyManager, session: PtySession, word: str) -> None:
    result = await manager.run(session.id, f"echo {word}", timeout=TIMEOUT)
    assert result["block"]["command"] == f"echo {word}"
    assert result["block"]["exit_code"] == 0
    assert result["text"].strip() == word


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_syntax_error_is_reported_at_once(manager: PtyManager, shell: str) -> None:
    session = await started(manager, shell)
    blocks = len(session.blocks.all())
    with pytest.raises(InvalidRequest) as caught:
        await manager.run(session.id, "echo )", timeout=TIMEOUT)
    assert caught.value.reason == "syntax_error"
    assert COMPLAINTS[shell] in str(caught.value)
    assert len(session.blocks.all()) == blocks  # nothing ran
    # Nothing of it is left in the line editor (fish keeps such a line there: never typed).
    await runs_cleanly(manager, session, "after-error")


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("line", ["echo 'unclosed", "if true; then echo x", 'echo "a'])
async def test_an_incomplete_line_is_reported_and_cleared(
    manager: PtyManager, shell: str, line: str
) -> None:
    if shell == "fish" and line.startswith("if"):
        line = "if true; echo x"  # fish's block syntax
    session = await started(manager, shell)
    with pytest.raises(InvalidRequest) as caught:
        await manager.run(session.id, line, timeout=TIMEOUT)
    assert caught.value.reason in ("incomplete", "syntax_error")
    assert "nothing" in str(caught.value)
    await runs_cleanly(manager, session, "after-incomplete")


@pytest.mark.parametrize("shell", SHELLS)
async def test_text_typed_at_the_prompt_is_cleared_before_a_run(
    manager: PtyManager, shell: str
) -> None:
    session = await started(manager, shell)
    session.write(b"echo half-typed")  # the user's unfinished line, no Enter
    await asyncio.sleep(0.3)
    await runs_cleanly(manager, session, "clean")
    # What the user left with Enter and an unclosed quote is cleared too.
    session.write(b"echo 'open\r")
    await asyncio.sleep(0.3)
    await runs_cleanly(manager, session, "clean-again")


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_line_fish_or_bash_refused_when_typed_by_hand(
    manager: PtyManager, shell: str
) -> None:
    # Typed in the terminal (not through run): fish keeps the line in its editor, bash and
    # zsh drop it. The next run types onto an empty line either way.
    session = await started(manager, shell)
    session.write(b"echo )\r")
    await asyncio.sleep(0.5)
    await runs_cleanly(manager, session, "after-hand-typed")


@pytest.mark.parametrize("shell", SHELLS)
async def test_runs_back_to_back_never_mistake_the_last_prompt(
    manager: PtyManager, shell: str
) -> None:
    # A run returns at its command's end (D); the prompt (A) after it may come later and must
    # not be read as the next line's "nothing ran".
    session = await started(manager, shell)
    for number in range(15):
        await runs_cleanly(manager, session, f"n{number}")


VI_MODE = {"bash": "set -o vi", "zsh": "bindkey -v", "fish": "fish_vi_key_bindings"}


@pytest.mark.parametrize("shell", SHELLS)
async def test_a_line_typed_in_vi_mode_is_cleared_before_a_run(
    manager: PtyManager, shell: str
) -> None:
    session = await started(manager, shell)
    await manager.run(session.id, VI_MODE[shell], timeout=TIMEOUT)
    session.write(b"echo half-typed")
    await asyncio.sleep(0.3)
    await runs_cleanly(manager, session, "in-insert-mode")
    session.write(b"echo half-typed\x1b")  # and in vi's command mode
    await asyncio.sleep(0.3)
    await runs_cleanly(manager, session, "in-command-mode")


async def test_fish_parses_a_line_without_running_it(manager: PtyManager, root: Path) -> None:
    session = await started(manager, "fish")
    # A line that cannot run is never typed: nothing of it runs, not even its first part.
    with pytest.raises(InvalidRequest):
        await manager.run(session.id, "touch refused-marker; echo )", timeout=TIMEOUT)
    assert not (root / "refused-marker").exists()
    # A line that can run runs once: the check parsed it and ran nothing.
    result = await manager.run(session.id, "echo once >> counted", timeout=TIMEOUT)
    assert result["block"]["exit_code"] == 0
    assert (root / "counted").read_text() == "once\n"


async def test_two_runs_at_once_get_busy_not_an_error(manager: PtyManager) -> None:
    session = await started(manager, "bash")
    first = asyncio.ensure_future(manager.run(session.id, "sleep 0.5; echo first", timeout=TIMEOUT))
    await asyncio.sleep(0)  # the first has typed its line; its command may not have started
    with pytest.raises(Conflict) as caught:
        await manager.run(session.id, "echo second", timeout=TIMEOUT)
    assert caught.value.reason == "busy"
    assert (await first)["text"].strip() == "first"
    await runs_cleanly(manager, session, "after-both")
