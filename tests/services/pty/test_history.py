"""Command suggestions from bash, zsh and fish history files as those shells write them."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.services.pty.history import (
    TAIL_BYTES,
    CommandHistory,
    history_files,
    parse_bash,
    parse_fish,
    parse_zsh,
)

from .helpers import at_prompt

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.pty.manager import PtyManager

SECRET = "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
MULTI_LINE = "for i in 1 2\ndo echo $i\ndone"


def shell_writes_history(shell: str, history: Path, commands: list[str], setup: str) -> bytes:
    """Have a real interactive ``shell`` store ``commands`` in its history file."""
    if shell == "bash":
        adds = "".join(f"history -s {_sh_quote(c)}\n" for c in commands)
        # Written once, not again at exit.
        script = f"{setup}\nhistory -c\n{adds}history -w\nunset HISTFILE\n"
        argv = ["bash", "--norc", "-i"]
    else:
        adds = "".join(f"print -s -- {_sh_quote(c)}\n" for c in commands)
        script, argv = f"{setup}\n{adds}fc -W\n", ["zsh", "-f", "-i"]
    environment = {**os.environ, "HISTFILE": str(history), "HOME": str(history.parent)}
    subprocess.run(
        [*argv, "-c", script],
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=30,
    )
    return history.read_bytes()


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def test_bash_history_with_time_stamps(tmp_path: Path) -> None:
    data = shell_writes_history(
        "bash",
        tmp_path / ".bash_history",
        ["echo one", MULTI_LINE, "echo ünïcødé 'q'"],
        "HISTTIMEFORMAT='%F %T '; shopt -s lithist",
    )
    assert data.count(b"\n#") >= 2  # time stamps before the entries
    assert parse_bash(data) == ["echo one", MULTI_LINE, "echo ünïcødé 'q'"]


def test_bash_history_without_time_stamps() -> None:
    assert parse_bash(b"ls\n#not a stamp\ncd /tmp\n") == ["ls", "#not a stamp", "cd /tmp"]
    # Entries from before HISTTIMEFORMAT was set, then stamped ones.
    data = b"old one\n#1700000000\nnew\n#1700000001\nmulti\nline\n"
    assert parse_bash(data) == ["old one", "new", "multi\nline"]


def test_zsh_extended_history_metafied_and_multi_line(tmp_path: Path) -> None:
    commands = ["echo Äpfel Öl ünïcødé", MULTI_LINE, "echo tail\\", "plain"]
    data = shell_writes_history(
        "zsh",
        tmp_path / ".zsh_history",
        commands,
        "SAVEHIST=100; HISTSIZE=100; setopt extended_history",
    )
    assert data.startswith(b": ")
    assert b"\x83" in data
    parsed = parse_zsh(data)
    assert parsed[0] == commands[0]
    assert parsed[1] == MULTI_LINE
    assert parsed[2].rstrip() == "echo tail\\"
    assert parsed[3] == "plain"


def test_zsh_plain_history() -> None:
    assert parse_zsh(b"ls -la\ngit status\n\n") == ["ls -la", "git status"]


def test_fish_history_escapes() -> None:
    data = (
        b"- cmd: echo 'a\\\\nb'\n  when: 1700000000\n"
        b"- cmd: for i in 1 2\\n    echo $i\\nend\n  when: 1700000001\n  paths:\n    - x\n"
        b"- cmd: printf '\\\\\\\\'\n  when: 1700000002\n"
    )
    assert parse_fish(data) == ["echo 'a\\nb'", "for i in 1 2\n    echo $i\nend", "printf '\\\\'"]


async def test_fish_writes_history_we_can_read(manager: PtyManager, home: Path) -> None:
    session = await manager.create(shell="fish")
    await at_prompt(session)
    for command in ("echo 'a\\nb'", "echo 'ünï'", "set -l x 1"):
        await manager.run(session.id, command, timeout=10)
    ended = session.block_ended()
    session.write(b"for i in 1 2\recho $i\rend\r")
    await ended
    path = history_files()["fish"]
    assert path.startswith(str(home))
    parsed = parse_fish(await asyncio.to_thread(Path(path).read_bytes))
    assert parsed[-4:] == ["echo 'a\\nb'", "echo 'ünï'", "set -l x 1", "for i in 1 2\necho $i\nend"]


# -- suggestions ----------------------------------------------------------------------------------


@pytest.fixture
def history(
    tmp_path: Path, terax_security: Callable[..., SecurityLayer]
) -> tuple[CommandHistory, dict[str, str]]:
    security = terax_security(tmp_path)
    files = {
        "bash": str(tmp_path / ".bash_history"),
        "zsh": str(tmp_path / ".zsh_history"),
        "fish": str(tmp_path / "fish_history"),
    }

    def keep(command: str) -> bool:
        return security.redactor.redact(command) == command

    return CommandHistory(files, keep=keep), files


def test_prefix_first_newest_first_then_fuzzy(
    history: tuple[CommandHistory, dict[str, str]],
) -> None:
    commands, files = history
    with open(files["bash"], "w") as handle:
        handle.write("git status\ngit stash\ngit commit -m x\nmake test\ngit status\n")
    suggestions = commands.suggest("git st")
    assert [(s["command"], s["match"]) for s in suggestions[:2]] == [
        ("git status", "prefix"),
        ("git stash", "prefix"),
    ]
    assert {s["match"] for s in suggestions[2:]} <= {"fuzzy"}
    assert "make test" not in [s["command"] for s in suggestions]
    fuzzy = commands.suggest("comit")
    assert fuzzy[0] == {"command": "git commit -m x", "match": "fuzzy", "score": fuzzy[0]["score"]}
    assert fuzzy[0]["score"] >= 70
    assert commands.suggest("zzzzqqq") == []
    # The exact text typed is not suggested back; an empty query lists the newest.
    assert all(s["command"] != "make test" for s in commands.suggest("make test"))
    assert [s["command"] for s in commands.suggest("", limit=2)] == ["git status", "make test"]


def test_commands_run_in_terax_come_first(history: tuple[CommandHistory, dict[str, str]]) -> None:
    commands, files = history
    with open(files["zsh"], "w") as handle:
        handle.write(": 1700000000:0;npm run build\n: 1700000001:0;npm run lint\n")
    commands.add("npm run dev")
    commands.add("npm install")
    commands.add("npm run dev")  # again: now the newest
    assert [s["command"] for s in commands.suggest("npm ")] == [
        "npm run dev",
        "npm install",
        "npm run lint",
        "npm run build",
    ]


def test_secrets_are_never_suggested(history: tuple[CommandHistory, dict[str, str]]) -> None:
    commands, files = history
    with open(files["bash"], "w") as handle:
        handle.write(f"{SECRET}\nexport PATH=/usr/bin\ncurl -H 'Authorization: Bearer abc.def'\n")
    with open(files["fish"], "w") as handle:
        handle.write("- cmd: set -x ANTHROPIC_API_KEY sk-ant-api03-abcdefghijklmnopqrstuvwxyz01\n")
    commands.add("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    commands.add("  ")
    commands.add("x" * 3000)
    everything = " ".join(s["command"] for s in commands.suggest("", limit=200))
    for query in ("export", "OPENAI", "sk-", "curl", "set -x", "TOKEN"):
        everything += " ".join(s["command"] for s in commands.suggest(query, limit=200))
    assert "sk-proj" not in everything
    assert "sk-ant" not in everything
    assert "ghp_" not in everything
    assert "Bearer" not in everything
    assert "export PATH=/usr/bin" in everything
    assert "x" * 3000 not in everything


def test_files_are_reread_when_they_change_and_only_their_tail(
    history: tuple[CommandHistory, dict[str, str]],
) -> None:
    commands, files = history
    with open(files["bash"], "w") as handle:
        handle.write("first\n")
    assert commands.commands() == ["first"]
    with open(files["bash"], "a") as handle:
        handle.write("second\n")
    assert commands.commands() == ["second", "first"]
    with open(files["bash"], "w") as handle:
        handle.write("ancient\n" + ("x" * 1023 + "\n") * (TAIL_BYTES // 1024) + "recent\n")
    assert commands.commands()[:2] == ["recent", "x" * 1023]
    assert "ancient" not in commands.commands()


def test_history_files_follow_the_environment() -> None:
    files = history_files({"HOME": "/h", "ZDOTDIR": "/z", "XDG_DATA_HOME": "/d"})
    assert files == {
        "bash": "/h/.bash_history",
        "zsh": "/z/.zsh_history",
        "fish": "/d/fish/fish_history",
    }
    assert history_files({"HOME": "/h"})["fish"] == "/h/.local/share/fish/fish_history"
