"""What the keys service does once, when the server starts: read the administrator's key
file, and take the provider keys out of the server's environment.

Both exist so that an administrator's key does not reach the user's processes. A key in
the server's environment is inherited by every kernel, Lab terminal and Terax terminal
started later (jupyter_client and terminado copy ``os.environ`` when they start one); a
key in the spawner's arguments is in ``ps`` and the hub's log. A key file the server
reads at start is in neither. docs/security.md says what this does not hide from a
process of the same Unix user (the file itself, the server's memory).

The one module of the keys service that touches the OS directly: the administrator names
the file in the server's configuration or the spawner's environment (never a user), and
the server's own ``/proc/self`` is not a user path.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import stat
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidRequest, TeraxError, Unavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# The variable a spawner sets to the file's path (a path, never a key: nothing secret in
# the spawner's arguments or its log).
FILE_VARIABLE = "TERAX_ADMIN_KEYS_FILE"
MAX_FILE_BYTES = 64 * 1024
# ``NAME=value``, ``export NAME=value``, a value in matching quotes.
_LINE = re.compile(r"(?:export\s+)?(?P<name>[^=\s]+)\s*=\s*(?P<value>.*)")


def read_admin_keys(
    path: str, check_name: Callable[[str], str], check_value: Callable[[str], str]
) -> dict[str, str]:
    """The keys of the administrator's key file at ``path``: a JSON object of name to key,
    or ``NAME=value`` lines (``#`` comments, blank lines, ``export`` and quotes allowed).

    All or nothing: a file that cannot be read, is not a regular file, is larger than
    64 KiB, or has one entry that is not a valid name and key is ``InvalidRequest``
    (reason ``admin_keys_file_invalid``) or ``Unavailable`` (``admin_keys_file_unreadable``)
    and gives no key at all. Messages name the file and the line, never a value.
    """
    text = _read(path)
    is_json = text.lstrip().startswith("{")
    pairs = _json_pairs(path, text) if is_json else _dotenv_pairs(path, text)
    keys: dict[str, str] = {}
    for where, name, value in pairs:
        try:
            check_name(name)
            # A JSON entry is named by its name once that is known to be one.
            where = where if where.startswith("line") else f"entry {name}"
            check_value(value)
        except TeraxError as error:
            raise InvalidRequest(
                f"The administrator's key file {path} has an unusable entry ({where}): "
                f"{error.message} No key of the file is used.",
                reason="admin_keys_file_invalid",
            ) from None
        if name in keys:
            raise InvalidRequest(
                f"The administrator's key file {path} sets {name} twice ({where}); no key of "
                "the file is used.",
                reason="admin_keys_file_invalid",
            )
        keys[name] = value
    return keys


def remove_file(path: str) -> str | None:
    """Delete the key file once read; the reason it could not be, or None.

    Every process of the user is a child of the server, started after this: once the file is
    gone, none of them can open it."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        return error.strerror or str(error)
    return None


def world_readable(path: str) -> bool:
    """Whether every user of the system may read the key file (a warning, not a refusal:
    Kubernetes mounts secrets 0644 unless told otherwise). Group-readable is not warned
    about: a secret mounted 0440 with the pod's ``fsGroup`` is how the server reads it."""
    try:
        return bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return False


def _read(path: str) -> str:
    try:
        # O_NONBLOCK: a FIFO at the path must not hang the server's start.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise Unavailable(
            f"The administrator's key file {path} cannot be read ({error.strerror}); "
            "no key of the file is used.",
            reason="admin_keys_file_unreadable",
        ) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidRequest(
                f"The administrator's key file {path} is not a regular file; no key of the "
                "file is used.",
                reason="admin_keys_file_invalid",
            )
        if info.st_size > MAX_FILE_BYTES:
            raise InvalidRequest(
                f"The administrator's key file {path} is larger than 64 KiB; no key of the "
                "file is used.",
                reason="admin_keys_file_invalid",
            )
        chunks = []
        while chunk := os.read(descriptor, MAX_FILE_BYTES + 1):
            chunks.append(chunk)
            if sum(map(len, chunks)) > MAX_FILE_BYTES:
                raise InvalidRequest(
                    f"The administrator's key file {path} is larger than 64 KiB; no key of "
                    "the file is used.",
                    reason="admin_keys_file_invalid",
                )
    except OSError as error:
        raise Unavailable(
            f"The administrator's key file {path} cannot be read ({error.strerror}); "
            "no key of the file is used.",
            reason="admin_keys_file_unreadable",
        ) from None
    finally:
        os.close(descriptor)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidRequest(
            f"The administrator's key file {path} is not UTF-8 text; no key of the file is used.",
            reason="admin_keys_file_invalid",
        ) from None


def _json_pairs(path: str, text: str) -> list[tuple[str, str, str]]:
    try:
        # Pairs, not a dict: a name set twice is refused below, not silently the last one.
        items = json.loads(text, object_pairs_hook=list)
    except RecursionError:
        raise InvalidRequest(
            f"The administrator's key file {path} is nested too deeply; no key of the file "
            "is used.",
            reason="admin_keys_file_invalid",
        ) from None
    except json.JSONDecodeError as error:
        # The position, not the message: json's message may quote the text (a key).
        raise InvalidRequest(
            f"The administrator's key file {path} is not valid JSON (line {error.lineno}, "
            f"column {error.colno}); no key of the file is used.",
            reason="admin_keys_file_invalid",
        ) from None
    if not isinstance(items, list):
        raise InvalidRequest(
            f"The administrator's key file {path} must be one JSON object of name to key; "
            "no key of the file is used.",
            reason="admin_keys_file_invalid",
        )
    pairs = []
    for name, value in items:
        if not isinstance(value, str):
            raise InvalidRequest(
                f"The administrator's key file {path}: the value of an entry is not a "
                "string; no key of the file is used.",
                reason="admin_keys_file_invalid",
            )
        pairs.append(("an entry", name, value))
    return pairs


def _dotenv_pairs(path: str, text: str) -> list[tuple[str, str, str]]:
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise InvalidRequest(
                f"The administrator's key file {path}: line {number} is not NAME=value; no "
                "key of the file is used.",
                reason="admin_keys_file_invalid",
            )
        value = match["value"]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        pairs.append((f"line {number}", match["name"], value))
    return pairs


def remove_from_environment(names: Iterable[str]) -> list[str]:
    """Delete the variables ``names`` from ``os.environ`` (and so from the C environment
    that child processes inherit), then blank their values in the process's initial
    environment block, which ``/proc/<pid>/environ`` and ``ps e`` still show after a
    deletion. Returns the names deleted."""
    removed = [name for name in names if os.environ.pop(name, None) is not None]
    if removed:
        scrub_initial_environment(removed)
    return removed


def scrub_initial_environment(names: Iterable[str]) -> bool:
    """Overwrite with NUL bytes the values of ``names`` in this process's initial
    environment block (the one the kernel shows in ``/proc/self/environ``).

    Deleting a variable takes it out of ``environ``, but not out of that block: its
    strings stay, unreferenced, on the stack where exec put them. Linux only; a kernel
    that refuses writes to ``/proc/self/mem`` (``proc_mem.force_override=never``) leaves
    them, and this returns False. Writes only after checking that the block read through
    ``/proc/self/mem`` is byte for byte what ``/proc/self/environ`` shows.
    """
    wanted = {name.encode() for name in names}
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
        # Fields 50 and 51 of proc(5) (env_start, env_end); ``fields[0]`` is field 3.
        start, end = int(fields[47]), int(fields[48])
        with open("/proc/self/environ", "rb") as handle:
            shown = handle.read()
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            block = memory.read(end - start)
            if block != shown:
                return False
            offset = 0
            for entry in block.split(b"\0"):
                name, separator, value = entry.partition(b"=")
                if separator and name in wanted and value:
                    memory.seek(start + offset + len(name) + 1)
                    memory.write(b"\0" * len(value))
                offset += len(entry) + 1
    except (OSError, IndexError, ValueError):
        return False
    return True


_PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Mark this process not dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its
    ``/proc/<pid>/environ``, ``mem`` and ``maps`` then belong to root, so a process of
    the same Unix user (a kernel, a terminal) cannot read the keys out of the server's
    memory, and no core dump is written. Debuggers and py-spy cannot attach either.
    Processes the server starts are dumpable again after their exec. Linux only; False
    where it is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
