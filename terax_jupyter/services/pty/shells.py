"""Which shell to start, and how to start it with Terax's shell integration loaded."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from dataclasses import dataclass, field

from terax_jupyter.exceptions import InvalidRequest, Unavailable
from terax_jupyter.security.storage import write_private_file

INTEGRATION = os.path.join(os.path.dirname(__file__), "integration")
POSIX_FALLBACKS = ("bash", "sh")
WINDOWS_FALLBACKS = ("pwsh", "powershell", "cmd")
KNOWN_SHELLS = ("bash", "zsh", "fish", "sh", "dash", "ksh", "pwsh", "powershell", "cmd")


@dataclass
class ShellLaunch:
    """argv and environment additions for one shell."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    kind: str = "unknown"
    integrated: bool = False


def available_shells() -> dict[str, str]:
    """Known shells installed here, by name, with their paths."""
    found = {}
    for name in KNOWN_SHELLS:
        path = shutil.which(name)
        if path:
            found[name] = path
    return found


def default_shell(configured: list[str]) -> list[str]:
    """The configured command, else ``$SHELL``, else the platform's fallbacks."""
    if configured:
        return list(configured)
    if sys.platform != "win32":
        shell = os.environ.get("SHELL")
        if shell and os.access(shell, os.X_OK):
            return [shell]
    for name in WINDOWS_FALLBACKS if sys.platform == "win32" else POSIX_FALLBACKS:
        path = shutil.which(name)
        if path:
            return [path]
    raise Unavailable("No shell was found to start (set PtyManager.shell_command).")


def choose_shell(requested: str | None, configured: list[str]) -> list[str]:
    """A shell a client asked for by name (only among installed known shells), or the default."""
    if not requested:
        return default_shell(configured)
    shells = available_shells()
    if requested not in shells:
        names = ", ".join(sorted(shells)) or "none"
        raise InvalidRequest(
            f"'{requested}' is not an available shell (available: {names}).", reason="unknown_shell"
        )
    return [shells[requested]]


def shell_kind(argv: list[str]) -> str:
    name = os.path.basename(argv[0]).lower()
    for suffix in (".exe",):
        name = name.removesuffix(suffix)
    if name in ("powershell", "pwsh"):
        return "pwsh"
    return name.split("-")[0] if name else "unknown"


def launch(
    argv: list[str], *, login: bool, zdotdir: str | None, integrate: bool = True
) -> ShellLaunch:
    """The command line that starts ``argv`` with integration hooks loaded, when we know how.

    The user's own startup files are always read first; only shells started plainly (no
    extra arguments) get integration, so a configured command line is never rewritten.
    """
    kind = shell_kind(argv)
    plain = len(argv) == 1
    if not integrate or not plain:
        return ShellLaunch(
            argv + (["-l"] if login and plain and kind in ("bash", "zsh", "fish", "sh") else []),
            kind=kind,
        )
    shell = argv[0]
    if kind == "bash":
        env = {"TERAX_LOGIN_SHELL": "1"} if login else {}
        rcfile = os.path.join(INTEGRATION, "bash.sh")
        return ShellLaunch([shell, "--rcfile", rcfile], env, kind, True)
    if kind == "zsh" and zdotdir:
        env = {"ZDOTDIR": zdotdir}
        user_zdotdir = os.environ.get("ZDOTDIR")
        if user_zdotdir:
            env["TERAX_USER_ZDOTDIR"] = user_zdotdir
        return ShellLaunch([shell, *(["-l"] if login else []), "-i"], env, kind, True)
    if kind == "fish":
        script = os.path.join(INTEGRATION, "fish.fish")
        argv = [
            shell,
            *(["-l"] if login else []),
            "--init-command",
            f"source {_fish_quote(script)}",
        ]
        return ShellLaunch(argv, {}, kind, True)
    if kind == "pwsh":
        script = os.path.join(INTEGRATION, "pwsh.ps1").replace("'", "''")
        return ShellLaunch(
            [shell, "-NoLogo", "-NoExit", "-Command", f". '{script}'"], {}, kind, True
        )
    return ShellLaunch(
        argv + (["-l"] if login and kind in ("sh", "dash", "ksh") else []), kind=kind
    )


def prepare_zdotdir(folder: str) -> str:
    """A private folder whose zsh startup files source Terax's integration steps."""
    for name, step in (
        (".zshenv", "zshenv.zsh"),
        (".zprofile", "zprofile.zsh"),
        (".zshrc", "zshrc.zsh"),
    ):
        write_private_file(
            os.path.join(folder, name), f"source {_zsh_quote(os.path.join(INTEGRATION, step))}\n"
        )
    return folder


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


# fish keeps a line it cannot run in its editor, and an unclosed quote or block just adds a
# line there: neither shows a mark. Its own parser says so first, without running anything.
SYNTAX_CHECK_TIMEOUT = 5.0


async def syntax_error(kind: str, shell_path: str, command: str) -> str | None:
    """fish's message when it could not run ``command`` (None: it can, or this is not fish)."""
    if kind != "fish" or not shell_path:
        return None
    try:
        process = await asyncio.create_subprocess_exec(
            shell_path,
            "--no-config",
            "--no-execute",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError:
        return None  # the session runs it; the check is a courtesy
    try:
        _, errors = await asyncio.wait_for(
            process.communicate(command.encode("utf-8")), SYNTAX_CHECK_TIMEOUT
        )
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        return None
    if process.returncode == 0:
        return None
    lines = errors.decode("utf-8", "replace").splitlines()
    return lines[0].removeprefix("fish: ").strip() if lines else "fish cannot parse this line."
