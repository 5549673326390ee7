"""Private files of the server itself (stores, settings): atomic, 0600, never in a workspace."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any

from terax_jupyter.exceptions import Unavailable

log = logging.getLogger(__name__)


def write_private_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically with mode 0600 (temp file, fsync, rename)."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    # mkstemp creates the file with mode 0600.
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def read_private_file(path: str) -> str | None:
    """The text of a private file, or None when there is none.

    Refused (``Unavailable``, reason ``insecure_file``) rather than repaired: a symlink,
    something that is not a regular file, a file of another user, or one that group or
    others may read or write. Fixing the mode silently would hide that what it holds may
    already have been read; the message says what to do instead.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    # Non-blocking so that a FIFO planted under the name cannot hang the open.
    flags |= getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Unavailable(
                f"{path} is a symbolic link; a private file must be a plain file.",
                reason="insecure_file",
            ) from None
        raise
    try:
        info = os.fstat(fd)
        _refuse_insecure(path, info)
        with os.fdopen(fd, encoding="utf-8") as handle:
            fd = -1
            return handle.read()
    finally:
        if fd >= 0:
            os.close(fd)


def read_private_json(
    path: str | None, corrupt: str | None = None, *, reason: str | None = None, missing: Any = None
) -> Any:
    """The JSON value in the private file ``path``; ``missing`` when there is no path or no file.

    The JSON-file stores read themselves with this (and write with ``write_private_file``).
    Insecure files are refused as by ``read_private_file``. Text that is not JSON: with a
    ``reason`` it raises ``Unavailable`` with the message ``corrupt`` (``{path}`` standing for
    the path), for a store whose entries would be lost if it were overwritten; without one it
    reads as None, for a store that may start over, logging ``corrupt`` when it is given.
    """
    text = read_private_file(path) if path else None
    if text is None:
        return missing
    try:
        return json.loads(text)
    except ValueError:
        if reason is not None:
            message = (corrupt or "{path} is not JSON.").format(path=path)
            raise Unavailable(message, reason=reason) from None
        if corrupt is not None:
            log.warning(corrupt.format(path=path))
        return None


def read_or_create_private_file(path: str, make: Callable[[], str]) -> str:
    """The text of the private file ``path``, created with ``make()`` (0600, fsynced) if there
    is none. Two processes creating it at once agree: the new file is linked into place only
    if the name is free, and whatever is there then is read back. Insecure files are refused
    as by ``read_private_file``."""
    text = read_private_file(path)
    if text is not None:
        return text
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".tmp-", dir=directory)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(make())
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
    finally:
        os.unlink(temp)
    text = read_private_file(path)
    if text is None:
        raise Unavailable(f"{path} could not be created.", reason="insecure_file")
    return text


def create_private_store(path: str, what: str) -> None:
    """Create a database file 0600 before SQLite opens it (SQLite gives its -wal and -shm
    files the database's mode), or refuse an existing one that is not private. ``what``
    names the store in the message ("The AI session store")."""
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags, 0o600))
        return
    except FileExistsError:
        pass
    info = os.lstat(path)
    problem = None
    if stat.S_ISLNK(info.st_mode):
        problem = "is a symbolic link; the store must be a plain file"
    elif not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif os.name != "nt" and info.st_uid != os.getuid():
        problem = f"belongs to another user (uid {info.st_uid})"
    elif os.name != "nt" and stat.S_IMODE(info.st_mode) & 0o077:
        problem = (
            f"can be read or changed by other users (mode {stat.S_IMODE(info.st_mode):04o}); "
            f"check what it holds, then run `chmod 600 {path}`"
        )
    if problem is not None:
        raise Unavailable(f"{what} {path} {problem}.", reason="insecure_file")


def private_directory(directory: str, what: str) -> None:
    """Make sure ``directory`` exists as a plain folder only this user can change."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    info = os.lstat(directory)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise Unavailable(f"{what} {directory} is not a plain folder.", reason="insecure_file")
    if os.name != "nt" and (info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o022):
        raise Unavailable(
            f"{what} {directory} can be changed by other users; it is not used.",
            reason="insecure_file",
        )


def create_private_append_only(path: str) -> int:
    """A new file (never an existing one, never through a symlink), 0600, opened to append;
    the caller owns the returned descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags, 0o600)


def _refuse_insecure(path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise Unavailable(f"{path} is not a regular file.", reason="insecure_file")
    if os.name == "nt":
        return  # Mode bits mean nothing there; the profile folder's ACL protects it.
    if info.st_uid != os.getuid():
        raise Unavailable(
            f"{path} belongs to another user (uid {info.st_uid}); it is not used.",
            reason="insecure_file",
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise Unavailable(
            f"{path} can be read or changed by other users (mode {mode:04o}), so what it "
            f"holds may have leaked: rotate those keys, then run `chmod 600 {path}`.",
            reason="insecure_file",
        )
