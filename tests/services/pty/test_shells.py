"""Which shell starts and how: launch arguments, and real shells that keep the user's own setup."""

from __future__ import annotations

import os
import shutil
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest
from terax_jupyter.services.pty import shells

from .helpers import SHELLS, at_prompt, scrollback_text, wait_for, write_rc_files

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.services.pty.manager import PtyManager

INTEGRATION = shells.INTEGRATION


# -- launch arguments -----------------------------------------------------------------------------


def test_bash_reads_the_integration_as_its_rcfile() -> None:
    launch = shells.launch(["/bin/bash"], login=False, zdotdir=None)
    assert launch.argv == ["/bin/bash", "--rcfile", os.path.join(INTEGRATION, "bash.sh")]
    assert (launch.kind, launch.integrated, launch.env) == ("bash", True, {})
    login = shells.launch(["/bin/bash"], login=True, zdotdir=None)
    assert login.argv == launch.argv
    assert login.env == {"TERAX_LOGIN_SHELL": "1"}


def test_zsh_gets_a_zdotdir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZDOTDIR", raising=False)
    launch = shells.launch(["/usr/bin/zsh"], login=False, zdotdir="/state/zsh")
    assert (launch.argv, launch.env, launch.integrated) == (
        ["/usr/bin/zsh", "-i"],
        {"ZDOTDIR": "/state/zsh"},
        True,
    )
    monkeypatch.setenv("ZDOTDIR", "/home/me/.config/zsh")
    login = shells.launch(["/usr/bin/zsh"], login=True, zdotdir="/state/zsh")
    assert login.argv == ["/usr/bin/zsh", "-l", "-i"]
    assert login.env == {"ZDOTDIR": "/state/zsh", "TERAX_USER_ZDOTDIR": "/home/me/.config/zsh"}
    # Without a folder to point at, zsh starts plainly.
    assert not shells.launch(["/usr/bin/zsh"], login=False, zdotdir=None).integrated


def test_fish_sources_the_integration_after_its_config() -> None:
    launch = shells.launch(["/usr/bin/fish"], login=True, zdotdir=None)
    script = os.path.join(INTEGRATION, "fish.fish")
    assert launch.argv == ["/usr/bin/fish", "-l", "--init-command", f"source '{script}'"]
    assert launch.integrated


def test_pwsh_dot_sources_the_integration() -> None:
    pwsh = os.path.join("opt", "PowerShell", "pwsh.exe")
    launch = shells.launch([pwsh], login=True, zdotdir=None)
    assert launch.kind == "pwsh"
    assert launch.argv[1:4] == ["-NoLogo", "-NoExit", "-Command"]
    assert launch.argv[4] == f". '{os.path.join(INTEGRATION, 'pwsh.ps1')}'"


@pytest.mark.parametrize(
    ("argv", "login", "expected"),
    [
        (["/bin/bash", "--norc"], True, ["/bin/bash", "--norc"]),  # never rewritten
        (["/usr/bin/zsh", "-f"], False, ["/usr/bin/zsh", "-f"]),
        (["/bin/sh"], True, ["/bin/sh", "-l"]),
        (["/bin/dash"], False, ["/bin/dash"]),
        (["/usr/bin/tcsh"], True, ["/usr/bin/tcsh"]),
    ],
)
def test_commands_that_stay_plain(argv: list[str], login: bool, expected: list[str]) -> None:
    launch = shells.launch(argv, login=login, zdotdir="/state/zsh")
    assert launch.argv == expected
    assert not launch.integrated
    assert launch.env == {}


def test_integration_switched_off() -> None:
    launch = shells.launch(["/bin/bash"], login=True, zdotdir=None, integrate=False)
    assert (launch.argv, launch.integrated) == (["/bin/bash", "-l"], False)


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["/usr/bin/bash"], "bash"),
        (["zsh-5.9"], "zsh"),
        (["C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"], "pwsh"),
        (["PWSH.EXE"], "pwsh"),
        (["/opt/homebrew/bin/fish"], "fish"),
    ],
)
def test_shell_kind(argv: list[str], kind: str) -> None:
    if "\\" in argv[0] and os.sep == "/":
        argv = [argv[0].replace("\\", "/")]
    assert shells.shell_kind(argv) == kind


def test_choose_shell_among_installed_ones_only() -> None:
    available = shells.available_shells()
    assert set(SHELLS) <= set(available)
    assert shells.choose_shell("zsh", []) == [available["zsh"]]
    for name in ("tcsh-not-here", "/bin/bash", "bash; rm -rf /", "python3"):
        with pytest.raises(InvalidRequest) as caught:
            shells.choose_shell(name, [])
        assert caught.value.reason == "unknown_shell"
        assert "bash, " in caught.value.message
        assert "fish" in caught.value.message


def test_default_shell_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert shells.default_shell(["/usr/bin/zsh", "-f"]) == ["/usr/bin/zsh", "-f"]
    monkeypatch.setenv("SHELL", shutil.which("fish") or "")
    assert shells.default_shell([]) == [shutil.which("fish")]
    not_executable = tmp_path / "shell"
    not_executable.write_text("")
    monkeypatch.setenv("SHELL", str(not_executable))
    assert os.path.basename(shells.default_shell([])[0]) == "bash"
    monkeypatch.delenv("SHELL")
    assert os.path.basename(shells.default_shell([])[0]) == "bash"


def test_zdotdir_files_are_private_and_source_the_steps(tmp_path: Path) -> None:
    folder = tmp_path / "it's a folder"
    shells.prepare_zdotdir(str(folder))
    for name, step in ((".zshenv", "zshenv"), (".zprofile", "zprofile"), (".zshrc", "zshrc")):
        path = folder / name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text() == f"source '{os.path.join(INTEGRATION, step)}.zsh'\n"


# -- real shells ----------------------------------------------------------------------------------

MARKER = {"bash": "bashrc", "zsh": "zshrc", "fish": "fishrc"}
LOGIN_MARKER = {"bash": "profile", "zsh": "zprofile", "fish": "fish-login"}


async def output_of(manager: PtyManager, session_id: str, command: str) -> str:
    result = await manager.run(session_id, command, timeout=10)
    return str(result["text"]).strip()


@pytest.mark.parametrize("shell", SHELLS)
async def test_integration_keeps_the_users_rc_and_prompt(manager: PtyManager, shell: str) -> None:
    session = await manager.create(shell=shell)
    await at_prompt(session)
    assert session.shell == shell
    assert await output_of(manager, session.id, 'echo "marker=$TERAX_TEST_MARKER"') == (
        f"marker={MARKER[shell]}"
    )
    # Not a login shell: no login files.
    assert await output_of(manager, session.id, 'echo "login=$TERAX_TEST_LOGIN."') == "login=."
    # The per-session nonce is not left in the environment of the user's programs.
    assert await output_of(manager, session.id, "env | grep -c TERAX_NONCE") == "0"
    assert await output_of(manager, session.id, "echo $TERAX_TERMINAL") == "1"
    await manager.run(session.id, "false", timeout=10)
    # The user's prompt is shown, and it still sees the status of the last command.
    await wait_for(lambda: f"MYPROMPT-{shell}[1]" in scrollback_text(session), 5, "prompt")
    assert f"MYPROMPT-{shell}[0]" in scrollback_text(session)


@pytest.mark.parametrize("shell", SHELLS)
async def test_login_shell_reads_the_login_files(
    make_manager: Callable[..., PtyManager], shell: str
) -> None:
    manager = make_manager(login_shell="always")
    session = await manager.create(shell=shell)
    await at_prompt(session)
    text = await output_of(
        manager, session.id, 'echo "login=$TERAX_TEST_LOGIN marker=$TERAX_TEST_MARKER"'
    )
    assert text == f"login={LOGIN_MARKER[shell]} marker={MARKER[shell]}"
    assert "MYPROMPT" in scrollback_text(session)


async def test_zsh_with_the_users_own_zdotdir(
    make_manager: Callable[..., PtyManager], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_folder = home / ".config" / "zsh"
    write_rc_files(
        user_folder,
        {".zshrc": "export TERAX_TEST_MARKER=zdotdir\nPS1='MYPROMPT-zdot%# '\n"},
    )
    monkeypatch.setenv("ZDOTDIR", str(user_folder))
    manager = make_manager()
    session = await manager.create(shell="zsh")
    await at_prompt(session)
    assert await output_of(manager, session.id, 'echo "$TERAX_TEST_MARKER $ZDOTDIR"') == (
        f"zdotdir {user_folder}"
    )
    assert "MYPROMPT-zdot" in scrollback_text(session)


async def test_zsh_zshenv_that_moves_zdotdir(
    make_manager: Callable[..., PtyManager], home: Path
) -> None:
    # A common setup: ~/.zshenv points ZDOTDIR at ~/.config/zsh, where .zshrc lives.
    (home / ".zshenv").write_text('ZDOTDIR="$HOME/.config/zsh"\n')
    write_rc_files(home / ".config" / "zsh", {".zshrc": "export TERAX_TEST_MARKER=moved\n"})
    manager = make_manager()
    session = await manager.create(shell="zsh")
    await at_prompt(session)
    assert await output_of(manager, session.id, "echo $TERAX_TEST_MARKER") == "moved"


async def test_zsh_state_folder_with_quotes_and_spaces(
    make_manager: Callable[..., PtyManager], tmp_path: Path
) -> None:
    manager = make_manager(state_dir=str(tmp_path / 'it\'s a "state" dir'))
    session = await manager.create(shell="zsh")
    await at_prompt(session)
    assert await output_of(manager, session.id, "echo $TERAX_TEST_MARKER") == "zshrc"


async def test_bash_keeps_a_prompt_command_ending_in_a_separator_and_a_debug_trap(
    make_manager: Callable[..., PtyManager], home: Path
) -> None:
    write_rc_files(
        home,
        {
            ".bashrc": (
                "PS1='MYPROMPT-bash\\$ '\n"
                "PROMPT_COMMAND='__user_pc=$((__user_pc+1));'\n"
                "trap '__user_dbg=$((__user_dbg+1)); __user_seen=\"it'\\''s\"' DEBUG\n"
            )
        },
    )
    manager = make_manager()
    session = await manager.create(shell="bash")
    await at_prompt(session)
    first = await manager.run(session.id, "(exit 3)", timeout=10)
    assert (first["block"]["command"], first["block"]["exit_code"]) == ("(exit 3)", 3)
    command = 'echo "pc=$__user_pc dbg=$__user_dbg $__user_seen"'
    result = await manager.run(session.id, command, timeout=10)
    words = str(result["text"]).split()
    assert words[0].startswith("pc=")
    assert int(words[0][3:]) >= 2
    assert words[1].startswith("dbg=")
    assert int(words[1][4:]) >= 2
    assert words[2] == "it's"
    assert result["block"]["exit_code"] == 0
    assert "syntax error" not in scrollback_text(session)


async def test_bash_prompt_command_as_an_array(
    make_manager: Callable[..., PtyManager], home: Path
) -> None:
    write_rc_files(home, {".bashrc": "PROMPT_COMMAND=('__user_pc=$((__user_pc+1))')\n"})
    manager = make_manager()
    session = await manager.create(shell="bash")
    await at_prompt(session)
    result = await manager.run(session.id, "echo pc=$__user_pc", timeout=10)
    assert str(result["text"]).strip().startswith("pc=")
    assert int(str(result["text"]).strip()[3:]) >= 1


async def test_a_configured_command_with_arguments_runs_plain(
    make_manager: Callable[..., PtyManager],
) -> None:
    bash = shutil.which("bash")
    assert bash
    manager = make_manager(shell_command=[bash, "-i"], login_shell="always")
    session = await manager.create()
    await wait_for(lambda: "MYPROMPT-bash" in scrollback_text(session), 10, "prompt")
    session.write(b"echo plain-$((6 * 7))\r")
    await wait_for(lambda: "plain-42" in scrollback_text(session), 10, "output")
    assert not session.integrated
    assert session.phase == "starting"
    assert session.blocks.all() == []
    assert b"\x1b]133;" not in session.scrollback.read()[0]
    with pytest.raises(Conflict) as caught:
        await manager.run(session.id, "echo x", timeout=2)
    assert caught.value.reason == "no_integration"


async def test_integration_switched_off_by_config(
    make_manager: Callable[..., PtyManager],
) -> None:
    manager = make_manager(shell_integration=False)
    session = await manager.create(shell="zsh")
    await wait_for(lambda: "MYPROMPT-zsh" in scrollback_text(session), 10, "prompt")
    session.write(b"echo off-$((6 * 7))\r")
    await wait_for(lambda: "off-42" in scrollback_text(session), 10, "output")
    assert not session.integrated
    assert b"\x1b]133;" not in session.scrollback.read()[0]
