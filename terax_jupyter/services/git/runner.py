"""Runs the git CLI off the event loop: fixed environment, timeouts, output caps, per-repo locks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import AccessDenied, Conflict, Timeout, TooLarge, Unavailable
from terax_jupyter.services.git.safety import UNTRUSTED_SAFETY

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from terax_jupyter.security.redact import Redactor
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.safety import Safety

DEFAULT_TIMEOUT = 30.0
NETWORK_TIMEOUT = 120.0
DEFAULT_CAP = 32 * 1024 * 1024
STDERR_CAP = 256 * 1024
_CHUNK = 256 * 1024

# Every git call sees these. GIT_OPTIONAL_LOCKS=0 keeps read-only commands (status) from
# taking index.lock behind the user's back; commands that must lock still do. Pathspecs are
# literal: a client's "*.py" or ":(top)x" names a file, it is not a pattern.
_ENV = {
    "GIT_LITERAL_PATHSPECS": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GCM_INTERACTIVE": "never",
    "SSH_ASKPASS_REQUIRE": "never",
    "LC_ALL": "C",
    "LANGUAGE": "C",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_MERGE_AUTOEDIT": "no",
}
# Every call but fetch, pull and push (``network=True``): no transport at all. A partial clone
# (extensions.partialClone, a promisor remote) fetches a missing object on a read, through the
# repository's own remote URL and upload-pack, ssh command or remote helper; with no protocol
# allowed that fetch fails before anything starts, and the read fails on the missing object.
# GIT_NO_LAZY_FETCH (git 2.45+) stops it sooner; older git ignores it.
_OFFLINE_ENV = {"GIT_ALLOW_PROTOCOL": "none", "GIT_NO_LAZY_FETCH": "1"}
# The warning git prints first then, which says nothing about what is missing.
_LAZY_OFF = "lazy fetching disabled"
# What git says when a read needs an object the repository does not have (and may not fetch).
# What git says when the operating system refuses it a file of the work tree (EACCES).
_NO_PERMISSION = re.compile(r": Permission denied$", re.MULTILINE)
_MISSING_OBJECT = re.compile(
    r"unable to read (?:tree )?[0-9a-f]{40,64}|transport '[^']*' not allowed"
    r"|lazy fetching disabled|could not fetch [0-9a-f]{40,64} from promisor remote"
    r"|missing (?:blob|tree|commit) [0-9a-f]{40,64}|bad object [0-9a-f]{40,64}",
    re.IGNORECASE,
)
_CONFIG = ("-c", "core.quotepath=off", "-c", "color.ui=false", "-c", "advice.detachedHead=false")
# Variables that would point git at another repository, index or object store than the
# one the security layer checked (inherited from whoever started the server).
_REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)


@dataclass(frozen=True)
class GitResult:
    code: int
    stdout: bytes
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


class GitFailed(Conflict):
    """git exited with an error; ``stderr`` holds what it said (redacted, capped)."""

    reason = "git_failed"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        code: int = 1,
        stderr: str = "",
        command: str = "",
    ) -> None:
        super().__init__(message, reason=reason)
        self.code = code
        self.stderr = stderr
        self.command = command


class GitNoPermission(AccessDenied, GitFailed):
    """A local git call the operating system refused a file (the server's Unix account may
    not read it): 403 ``permission_denied`` like any read of that file, still a GitFailed."""

    reason = "permission_denied"


class GitRunner:
    """Runs ``git -C <root> ...`` as an asyncio subprocess and collects its output.

    One runner per server. ``lock(root)`` serializes the operations on one repository
    that mutate it or must see it consistent; plain reads (log) run without it.

    Every call carries the settings of ``safety.py``: given a ``Repo``, its safety (trusted
    or not, what its own configuration names); given a folder, the untrusted ones. Hooks
    run only for calls that ask (``hooks=True``, the writes) in a trusted repository. Only
    fetch, pull and push (``network=True``) may use a transport: any other call that needs
    an object a partial clone lacks fails (reason ``missing_objects``) instead of fetching.
    """

    def __init__(
        self,
        *,
        git: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        network_timeout: float = NETWORK_TIMEOUT,
        cap: int = DEFAULT_CAP,
        redactor: Redactor | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.git = git or shutil.which("git") or "git"
        self.timeout = timeout
        self.network_timeout = network_timeout
        self.cap = cap
        self.redactor = redactor
        self._extra_env = dict(env or {})
        self._locks: dict[str, asyncio.Lock] = {}
        self._running: set[asyncio.subprocess.Process] = set()
        self._closed = False

    @contextlib.asynccontextmanager
    async def lock(self, root: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(root, asyncio.Lock())
        async with lock:
            yield

    def is_locked(self, root: str) -> bool:
        lock = self._locks.get(root)
        return lock is not None and lock.locked()

    async def run(
        self,
        where: str | Repo,
        *args: str,
        input: bytes | None = None,
        timeout: float | None = None,
        cap: int | None = None,
        network: bool = False,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        hooks: bool = False,
    ) -> GitResult:
        """Run git in a repository (or a folder); raise GitFailed (when ``check``), Timeout
        or TooLarge. ``hooks``: this call may run the repository's hooks if it is trusted."""
        if isinstance(where, str):
            root, safety = where, UNTRUSTED_SAFETY
        else:
            root, safety = where.root, where.safety
        limit = (
            timeout if timeout is not None else (self.network_timeout if network else self.timeout)
        )
        cap = cap if cap is not None else self.cap
        command = args[0] if args else ""
        try:
            process = await asyncio.create_subprocess_exec(
                self.git,
                "--no-pager",
                "-C",
                root,
                *_CONFIG,
                *safety.arguments(hooks=hooks),
                *args,
                stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._environment(env, safety, network=network),
                # Its own session: no controlling terminal to prompt on, and a timeout can
                # end hooks and ssh with it.
                start_new_session=True,
            )
        except FileNotFoundError as error:
            raise Unavailable(
                "git is not installed or not on PATH.", reason="git_missing"
            ) from error
        self._running.add(process)
        try:
            if self._closed:
                # Closed while this git was starting (before it was known to close()).
                raise GitFailed(
                    f"git {command} was stopped: the server is stopping.", reason="git_stopped"
                )
            stdout, stderr = await asyncio.wait_for(
                _collect(process, input, cap, command), timeout=limit
            )
            code = await process.wait()
        except asyncio.TimeoutError:
            await _kill(process)
            raise Timeout(
                f"git {command} did not finish within {limit:g} s.", reason="git_timeout"
            ) from None
        except BaseException:
            await _kill(process)
            raise
        finally:
            self._running.discard(process)
        text = self._redact(stderr.decode("utf-8", "replace"))
        if check and code != 0:
            raise git_failed(command, code, text, offline=not network)
        return GitResult(code, stdout, text)

    async def close(self) -> None:
        """End every git still running (and what it started: hooks, ssh), as the server stops."""
        self._closed = True
        await asyncio.gather(*(_kill(process) for process in list(self._running)))

    def _environment(
        self, extra: Mapping[str, str] | None, safety: Safety, *, network: bool = False
    ) -> dict[str, str]:
        env = dict(os.environ)
        for name in _REPOSITORY_ENV:
            env.pop(name, None)
        env.update(_ENV)
        env.update(self._extra_env)
        if extra:
            env.update(extra)
        if not network:
            # After the server's and the caller's: nothing turns the network back on for a
            # call that is not fetch, pull or push (those keep the server's own rules).
            env.update(_OFFLINE_ENV)
        # Last: they extend the server's own GIT_CONFIG_COUNT entries, never replace them.
        env.update(safety.environment(env))
        return env

    def _redact(self, text: str) -> str:
        return self.redactor.redact(text) if self.redactor is not None else text


async def _collect(
    process: asyncio.subprocess.Process, input: bytes | None, cap: int, command: str
) -> tuple[bytes, bytes]:
    assert process.stdout is not None
    assert process.stderr is not None
    feed_task = None
    if input is not None:
        assert process.stdin is not None
        feed_task = asyncio.ensure_future(_feed(process.stdin, input))
    stderr_task = asyncio.ensure_future(_read_capped(process.stderr, STDERR_CAP))
    try:
        chunks: list[bytes] = []
        size = 0
        while chunk := await process.stdout.read(_CHUNK):
            size += len(chunk)
            if size > cap:
                raise TooLarge(
                    f"git {command} produced more than {cap // (1024 * 1024)} MiB of output.",
                    reason="git_output_too_large",
                )
            chunks.append(chunk)
        return b"".join(chunks), await stderr_task
    finally:
        stderr_task.cancel()
        if feed_task is not None:
            feed_task.cancel()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
        stdin.close()


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Read all of a stream but keep only its first ``cap`` bytes (git must not block on it)."""
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
    return bytes(kept)


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    # A task, not a bare coroutine handed to wait_for: cancelled before its first step (the
    # server stopping), a coroutine would never be awaited and Python would warn.
    waiter = asyncio.ensure_future(process.wait())
    with contextlib.suppress(Exception):
        await asyncio.wait({waiter}, timeout=5)
    if not waiter.done():
        waiter.cancel()


def git_failed(command: str, code: int, stderr: str, *, offline: bool = True) -> GitFailed:
    """The error for a git call that exited with ``code``. For a call that may not use the
    network (``offline``), an object the repository lacks gets its own reason."""
    if offline and _MISSING_OBJECT.search(stderr):
        return GitFailed(
            f"git {command} needs objects this repository does not have (a partial or "
            "damaged clone). Terax does not download them while reading: fetch from the "
            f"remote first, or repair the repository. git said: {_detail(stderr, _LAZY_OFF)}",
            reason="missing_objects",
            code=code,
            stderr=stderr,
            command=command,
        )
    if offline and _NO_PERMISSION.search(stderr):
        return GitNoPermission(
            f"git {command} was refused a file: the Unix account this server runs as has no "
            f"permission to open it. git said: {_detail(stderr)}",
            code=code,
            stderr=stderr,
            command=command,
        )
    return GitFailed(failure_message(command, stderr), code=code, stderr=stderr, command=command)


def failure_message(command: str, stderr: str) -> str:
    detail = _detail(stderr)
    return f"git {command} failed: {detail}" if detail else f"git {command} failed."


def _detail(stderr: str, skip: str = "\0") -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and skip not in line]
    detail = " ".join(lines[:6])
    if len(detail) > 600:
        detail = detail[:600] + "..."
    return detail
