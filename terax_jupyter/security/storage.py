"""Private files of the server itself (stores, settings): atomic, 0600, never in a workspace."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile

from terax_jupyter.exceptions import Unavailable


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
