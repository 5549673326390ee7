"""Run ripgrep: the file list for the fuzzy index, and streaming JSON matches for grep."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sysconfig
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidPattern, Timeout
from terax_jupyter.security.denylist import SEARCH_EXCLUDE_GLOBS
from terax_jupyter.services.fs.ignore import PRUNED_DIRECTORIES

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator

_STDOUT_LIMIT = 1 << 24  # longest single line asyncio will buffer (a 16 MiB JSON line)
_READ_SIZE = 1 << 20
# rg writes each event as {"type":"<kind>","data":{...}}; the kind is read without parsing.
_TYPE_PREFIX = '{"type":"'


def find_ripgrep(configured: str = "") -> str | None:
    """The rg binary: configured path, the ``ripgrep`` wheel's beside this Python, then PATH."""
    if configured:
        return configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    name = "rg.exe" if os.name == "nt" else "rg"
    bundled = os.path.join(sysconfig.get_path("scripts"), name)
    if os.access(bundled, os.X_OK):
        return bundled
    return shutil.which("rg")


def common_arguments() -> list[str]:
    """Flags shared by listing and grep: hidden files yes, .gitignore yes, secrets and junk no.

    Only the ignore files the Python engine reads count (``.gitignore``, ``.git/info/exclude``):
    not a user's global git excludes, not ``.ignore`` or ``.rgignore``, so both engines agree.
    """
    arguments = [
        "--no-config",
        "--hidden",
        "--no-require-git",
        "--no-follow",
        "--no-ignore-global",
        "--no-ignore-dot",
    ]
    for name in sorted(PRUNED_DIRECTORIES):
        arguments += ["--glob", f"!{name}/"]
    for glob in SEARCH_EXCLUDE_GLOBS:
        arguments += ["--iglob", f"!{glob}"]
    return arguments


async def list_files(
    rg: str, top: str, *, max_files: int, timeout: float
) -> tuple[list[str], bool]:
    """Relative paths of the files under ``top`` and whether ``max_files`` cut the list."""
    process = await asyncio.create_subprocess_exec(
        rg,
        "--files",
        "--null",
        *common_arguments(),
        cwd=top,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    stdout = process.stdout
    files: list[str] = []
    state = {"truncated": False}

    async def read_all() -> None:
        remainder = b""
        while True:
            chunk = await stdout.read(1 << 20)
            if not chunk:
                return
            # Decoded in one piece: a NUL byte never sits inside an encoded character.
            complete, separator, remainder = (remainder + chunk).rpartition(b"\0")
            if separator:
                files.extend(os.fsdecode(complete).split("\0"))
            if len(files) >= max_files:
                state["truncated"] = True
                return

    try:
        await asyncio.wait_for(read_all(), timeout)
    except asyncio.TimeoutError:
        state["truncated"] = True
    finally:
        await _stop(process)
    del files[max_files:]
    return files, state["truncated"]


async def grep(
    rg: str,
    top: str,
    pattern: str,
    *,
    fixed_strings: bool,
    case: str,
    whole_word: bool,
    include: list[str],
    exclude: list[str],
    max_filesize: int,
) -> AsyncGenerator[list[str], None]:
    """Yield rg's JSON lines (``begin``, ``match``, ``end``, ``summary``) in batches as they arrive.

    The lines are left unparsed: the caller parses only those it uses (see ``event_type``).
    A pattern rg refuses raises InvalidPattern before anything is yielded.
    Closing the iterator stops rg.
    """
    arguments = [
        "--json",
        *common_arguments(),
        *([f"--max-filesize={max_filesize}"] if max_filesize > 0 else []),
        {"sensitive": "--case-sensitive", "insensitive": "--ignore-case"}.get(case, "--smart-case"),
    ]
    if fixed_strings:
        arguments.append("--fixed-strings")
    if whole_word:
        arguments.append("--word-regexp")
    for glob in include:
        arguments += ["--glob", glob]
    for glob in exclude:
        arguments += ["--glob", f"!{glob}"]
    process = await asyncio.create_subprocess_exec(
        rg,
        *arguments,
        "--regexp",
        pattern,
        "--",
        ".",
        cwd=top,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_STDOUT_LIMIT,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    stdout = process.stdout
    try:
        chunk = await stdout.read(_READ_SIZE)
        if not chunk:
            code = await process.wait()
            if code == 2:
                message = (await process.stderr.read(4096)).decode("utf-8", "replace").strip()
                raise InvalidPattern(_pattern_error(message))
            return
        # Whole chunks rather than a line at a time: one await per chunk, not per match, and
        # one decode per chunk (rg writes UTF-8 JSON; bytes that are not UTF-8 go in base64).
        pending = b""
        while chunk:
            complete, newline, pending = (pending + chunk).rpartition(b"\n")
            if len(pending) > _STDOUT_LIMIT:
                # One line longer than the bound: stop here rather than buffer without bound.
                raise Timeout("ripgrep produced a line too long to handle.", reason="line_too_long")
            if newline:
                yield complete.decode("utf-8", "replace").split("\n")
            chunk = await stdout.read(_READ_SIZE)
        if pending:
            yield [pending.decode("utf-8", "replace")]
    finally:
        await _stop(process)


def event_type(line: str) -> str | None:
    """The ``type`` of one line of ``rg --json``, read from its fixed prefix when it can be."""
    if line.startswith(_TYPE_PREFIX):
        end = line.find('"', len(_TYPE_PREFIX))
        if end != -1:
            return line[len(_TYPE_PREFIX) : end]
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event.get("type") if isinstance(event, dict) else None


def _pattern_error(message: str) -> str:
    lines = [line for line in message.splitlines() if line.strip()]
    detail = lines[-1].removeprefix("error: ") if lines else "the pattern is not valid"
    return f"The search pattern is not valid: {detail}."


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    # wait() returns once the pipes are closed too, and a reader paused on a full buffer
    # never reads to the end of its pipe: drain what is left (rg is gone, so it is little).
    if process.stdout is not None:
        with contextlib.suppress(Exception):
            while await process.stdout.read(_READ_SIZE):
                pass
    with contextlib.suppress(Exception):
        await process.wait()
