"""Private files of the server itself (stores, settings): atomic, 0600, never in a workspace."""

from __future__ import annotations

import contextlib
import os
import tempfile


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
