"""PtyManager: create, find, rename and close terminal sessions; cull idle ones."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
import time
from typing import TYPE_CHECKING, Any

from traitlets import Bool, Float, Int, List, Type, Unicode
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import (
    Conflict,
    InvalidRequest,
    NotFound,
    TooLarge,
    Unavailable,
)
from terax_jupyter.security import Access, fileio
from terax_jupyter.services.pty import shells
from terax_jupyter.services.pty.backend import PtyBackend
from terax_jupyter.services.pty.history import CommandHistory, history_files
from terax_jupyter.services.pty.run import run_line
from terax_jupyter.services.pty.session import FlowLimits, PtySession, new_nonce
from terax_jupyter.services.secrets.environment import without_keys
from terax_jupyter.services.secrets.manager import KNOWN_KEYS

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.pty.session import ServerWatchFactory
    from terax_jupyter.services.pty.wire import SessionRecord

MAX_NAME = 100
# How long ``run`` waits for a shell that just started to show its first prompt.
STARTUP_WAIT = 10.0


class PtyManager(LoggingConfigurable):
    """Terminal sessions of one server; each is a shell on a PTY in a workspace folder."""

    shell_command = List(
        Unicode(),
        help="The command that starts a terminal. Default: $SHELL, then bash, then sh "
        "(pwsh, powershell, cmd on Windows). A plain shell gets Terax's shell integration.",
    ).tag(config=True)
    login_shell = Unicode(
        "auto",
        help="'always', 'never', or 'auto': a login shell when the server has no terminal of "
        "its own (as under JupyterHub), so /etc/profile and ~/.profile are read.",
    ).tag(config=True)
    shell_integration = Bool(
        True, help="Load OSC 7/133 hooks into bash, zsh, fish and PowerShell (blocks, cwd)."
    ).tag(config=True)
    scrollback_bytes = Int(
        4 * 1024 * 1024, help="Output each session keeps to replay when a view reattaches."
    ).tag(config=True)
    max_sessions = Int(64, help="Most sessions at once.").tag(config=True)
    cull_idle_timeout = Float(
        0.0,
        help="Close sessions with no view attached and no output for this many seconds (0: never).",
    ).tag(config=True)
    cull_interval = Float(60.0, help="Seconds between idle checks.").tag(config=True)
    close_grace = Float(
        2.0, help="Seconds between SIGHUP and SIGKILL when a session's processes are ended."
    ).tag(config=True)
    high_water = Int(256 * 1024, help="Bytes in flight to a view before the PTY is paused.").tag(
        config=True
    )
    low_water = Int(64 * 1024, help="Bytes in flight below which reading resumes.").tag(config=True)
    client_cap = Int(
        4 * 1024 * 1024, help="Bytes a lagging view may hold before its output is skipped."
    ).tag(config=True)
    max_clients_per_session = Int(
        16,
        help="Views (stream connections) one terminal may have at once; more are refused "
        "with 503 too_many_connections (0: no limit).",
    ).tag(config=True)
    coalesce_ms = Float(4.0, help="Milliseconds output is gathered into one frame.").tag(
        config=True
    )
    lag_grace = Float(
        2.0,
        help="Seconds a view may stay behind while another keeps up before it stops pacing "
        "the program.",
    ).tag(config=True)
    agent_idle_after = Float(
        3.0, help="Seconds of quiet after which a coding agent's turn counts as finished."
    ).tag(config=True)
    backend_class = Type(
        default_value=PtyBackend, klass=PtyBackend, help="What spawns shells on PTYs."
    ).tag(config=True)

    def __init__(self, security: SecurityLayer, state_dir: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.security = security
        self.state_dir = state_dir
        self.sessions: dict[str, PtySession] = {}
        self.backend = self.backend_class()
        self.history = CommandHistory(history_files(), keep=self._not_secret)
        self._cull_task: asyncio.Task[None] | None = None
        self._reaping: set[asyncio.Future[Any]] = set()
        self._zdotdir: str | None = None
        # How a session finds the dev servers it starts: the web preview's detector, which
        # reports only the ports the preview would open (the app passes it in; without it,
        # sessions look for none).
        self.server_watch: ServerWatchFactory | None = None
        # The server's environment minus its provider keys (set by the app to the keys
        # service's, which knows the configured names; without it, the usual names go).
        self.environment_filter: Callable[[Mapping[str, str]], dict[str, str]] | None = None

    # -- sessions --------------------------------------------------------------------

    async def create(
        self,
        *,
        cwd: str = "",
        shell: str | None = None,
        name: str | None = None,
        columns: int = 80,
        rows: int = 24,
    ) -> PtySession:
        self.security.policy.require("terminals")
        self.security.policy.check_limit("terminals", len(self.sessions))
        if len(self.sessions) >= self.max_sessions:
            raise TooLarge(f"At most {self.max_sessions} terminals may be open at once.")
        folder = self.security.paths.check(cwd or self.security.roots.server_root, Access.READ)
        if not fileio.is_directory(folder):
            raise InvalidRequest(f"{cwd} is not a folder.", reason="not_a_directory")
        argv = shells.choose_shell(shell, list(self.shell_command))
        launch = shells.launch(
            argv,
            login=self._login(),
            zdotdir=self._zsh_folder() if shells.shell_kind(argv) == "zsh" else None,
            integrate=self.shell_integration,
        )
        session_id = secrets.token_hex(6)
        nonce = new_nonce()
        env = self._environment(session_id, nonce, launch.env)
        columns, rows = max(2, min(columns, 1000)), max(1, min(rows, 500))
        try:
            process = await asyncio.to_thread(
                self.backend.spawn, launch.argv, folder.path, env, columns, rows
            )
        except OSError as error:
            raise Unavailable(
                f"Could not start {launch.argv[0]}: {error.strerror or error}.",
                reason="shell_failed",
            ) from error
        session = PtySession(
            session_id,
            process,
            name=self._unique_name(name),
            cwd=folder.path,
            shell=launch.kind,
            shell_path=launch.argv[0],
            columns=columns,
            rows=rows,
            scrollback_bytes=self.scrollback_bytes,
            limits=FlowLimits(
                high_water=self.high_water,
                low_water=self.low_water,
                client_cap=self.client_cap,
                coalesce_delay=self.coalesce_ms / 1000,
                lag_grace=self.lag_grace,
            ),
            nonce=nonce,
            integration=launch.integrated,
            agent_idle_after=self.agent_idle_after,
            on_command=self.history.add,
            on_finished=self._forget,
            server_watch=self.server_watch,
        )
        self.sessions[session_id] = session
        session.start()
        self._ensure_culling()
        self.log.info(
            "Terminal %s started: %s in %s", session_id, " ".join(launch.argv), folder.path
        )
        return session

    def get(self, session_id: str) -> PtySession:
        session = self.sessions.get(session_id)
        if session is None:
            raise NotFound(f"No terminal session '{session_id}'.")
        return session

    def list(self) -> list[SessionRecord]:
        return [s.describe() for s in sorted(self.sessions.values(), key=lambda s: s.created_at)]

    def rename(self, session_id: str, name: str) -> PtySession:
        session = self.get(session_id)
        clean = "".join(ch for ch in name if ch.isprintable()).strip()
        if not clean:
            raise InvalidRequest("A terminal name cannot be empty.", reason="invalid_parameter")
        if len(clean) > MAX_NAME:
            raise InvalidRequest(
                f"A terminal name is at most {MAX_NAME} characters.", reason="invalid_parameter"
            )
        session.name = clean
        session.broadcast({"type": "renamed", "name": clean})
        return session

    async def close(self, session_id: str) -> int | None:
        """End the session's whole process group (SIGHUP, then SIGKILL) and forget it."""
        session = self.sessions.pop(session_id, None)
        if session is None:
            raise NotFound(f"No terminal session '{session_id}'.")
        session.broadcast({"type": "closed"})
        code = await asyncio.to_thread(session.process.terminate, self.close_grace)
        session.mark_exited(session.exit_code if session.exit_code is not None else code)
        self.log.info("Terminal %s closed", session_id)
        return session.exit_code

    async def close_all(self) -> None:
        if self._cull_task is not None:
            self._cull_task.cancel()
        await asyncio.gather(
            *(self.close(session_id) for session_id in list(self.sessions)), return_exceptions=True
        )

    async def run(self, session_id: str, command: str, *, timeout: float) -> dict[str, Any]:
        """Type ``command`` at the prompt and wait for its block to end (needs integration)."""
        self.security.policy.require("terminals")
        session = self.get(session_id)
        if session.exited:
            raise Conflict("This terminal's shell has exited.", reason="exited")
        if not session.integrated and session.integration:
            # A shell that just started: its first prompt shows that the hooks loaded.
            await session.wait_integrated(min(timeout, STARTUP_WAIT))
        if not session.integrated:
            raise Conflict(
                "This terminal's shell has no Terax integration, so the end of a command "
                "cannot be seen.",
                reason="no_integration",
            )
        if session.phase == "running":
            raise Conflict("A command is still running in this terminal.", reason="busy")
        if "\n" in command or "\r" in command:
            raise InvalidRequest("Give one command line (no newlines).", reason="invalid_parameter")
        return await run_line(session, command, timeout=timeout)

    # -- helpers -----------------------------------------------------------------------

    def _environment(self, session_id: str, nonce: str, extra: dict[str, str]) -> dict[str, str]:
        # Provider keys in the server's environment are the administrator's, bound to one
        # provider's address (see the keys service); a terminal would carry them anywhere.
        # The user's own credentials (JUPYTERHUB_API_TOKEN, their shell's exports) stay.
        scrub = self.environment_filter
        env = scrub(os.environ) if scrub is not None else without_keys(os.environ, KNOWN_KEYS)
        env.update(
            {
                "TERM": "xterm-256color",
                "COLORTERM": "truecolor",
                "TERAX_TERMINAL": "1",
                "TERAX_SESSION_ID": session_id,
                "TERAX_NONCE": nonce,
                "JUPYTER_SERVER_ROOT": self.security.roots.server_root,
            }
        )
        env.pop("TERAX_LOGIN_SHELL", None)
        env.update(extra)
        return env

    def _login(self) -> bool:
        if self.login_shell == "always":
            return True
        if self.login_shell == "never" or sys.platform == "win32":
            return False
        return not sys.stdout.isatty()

    def _zsh_folder(self) -> str:
        if self._zdotdir is None:
            self._zdotdir = shells.prepare_zdotdir(os.path.join(self.state_dir, "zsh"))
        return self._zdotdir

    def _unique_name(self, name: str | None) -> str:
        if name:
            clean = "".join(ch for ch in name if ch.isprintable()).strip()[:MAX_NAME]
            if clean:
                return clean
        taken = {s.name for s in self.sessions.values()}
        number = 1
        while f"Terminal {number}" in taken:
            number += 1
        return f"Terminal {number}"

    def _not_secret(self, command: str) -> bool:
        return self.security.redactor.redact(command) == command

    def _forget(self, session: PtySession) -> None:
        """An exited session nobody views any more: reap what is left of it, drop it."""
        if self.sessions.get(session.id) is session:
            self.sessions.pop(session.id, None)
            task = asyncio.ensure_future(asyncio.to_thread(session.process.terminate, 0.2))
            self._reaping.add(task)
            task.add_done_callback(self._reaping.discard)

    def _ensure_culling(self) -> None:
        if self.cull_idle_timeout > 0 and (self._cull_task is None or self._cull_task.done()):
            self._cull_task = asyncio.ensure_future(self._cull_forever())

    async def _cull_forever(self) -> None:
        while self.sessions:
            await asyncio.sleep(self.cull_interval)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                idle = now - session.last_activity
                if not session.client_count and idle > self.cull_idle_timeout:
                    self.log.info("Culling terminal %s (idle %.0f s)", session.id, idle)
                    with contextlib.suppress(NotFound):
                        await self.close(session.id)
