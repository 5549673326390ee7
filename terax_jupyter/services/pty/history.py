"""Command suggestions from the shells' history files and the commands Terax saw run."""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

# Only the end of a history file is read: recent commands are the useful ones.
TAIL_BYTES = 2 * 1024 * 1024
MAX_COMMAND_CHARS = 2000


def history_files(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The history files of bash, zsh and fish for this user (whether or not they exist)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    zdotdir = env.get("ZDOTDIR") or home
    data_home = env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    return {
        "bash": os.path.join(home, ".bash_history"),
        "zsh": os.path.join(zdotdir, ".zsh_history"),
        "fish": os.path.join(data_home, "fish", "fish_history"),
    }


def parse_bash(data: bytes) -> list[str]:
    lines = data.decode("utf-8", "replace").splitlines()
    if not any(_is_stamp(line) for line in lines):
        return lines
    # With HISTTIMEFORMAT set, each entry follows its time stamp and may span lines.
    commands: list[str] = []
    entry: list[str] | None = None
    for line in lines:
        if _is_stamp(line):
            if entry:
                commands.append("\n".join(entry))
            entry = []
        elif entry is None:
            commands.append(line)  # written before time stamps were switched on
        else:
            entry.append(line)
    if entry:
        commands.append("\n".join(entry))
    return commands


def _is_stamp(line: str) -> bool:
    return line.startswith("#") and line[1:].isascii() and line[1:].isdigit()


def parse_zsh(data: bytes) -> list[str]:
    commands: list[str] = []
    pending = ""
    for raw in _unmetafy(data).decode("utf-8", "replace").split("\n"):
        line = pending + raw
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + "\n"
            continue
        if line.startswith(": ") and ";" in line:
            head, _, command = line.partition(";")
            if head[2:].split(":")[0].isdigit():
                line = command
        if line:
            commands.append(line)
    return commands


_FISH_ESCAPE = re.compile(r"\\([\\n])")


def parse_fish(data: bytes) -> list[str]:
    commands = []
    for raw in data.decode("utf-8", "replace").splitlines():
        if raw.startswith("- cmd: "):
            # fish writes a backslash as \\ and a newline as \n; undo both in one pass.
            commands.append(
                _FISH_ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else "\\", raw[7:])
            )
    return commands


_PARSERS: dict[str, Callable[[bytes], list[str]]] = {
    "bash": parse_bash,
    "zsh": parse_zsh,
    "fish": parse_fish,
}


class CommandHistory:
    """Recent distinct commands, newest first: the shells' files plus commands seen live."""

    def __init__(self, files: dict[str, str], keep: Callable[[str], bool]) -> None:
        self._files = files
        self._keep = keep
        self._cache: dict[str, tuple[tuple[int, int], list[str]]] = {}
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, command: str) -> None:
        command = command.strip()
        if not command or len(command) > MAX_COMMAND_CHARS or not self._keep(command):
            return
        with self._lock:
            self._seen.pop(command, None)
            self._seen[command] = None
            while len(self._seen) > 5000:
                self._seen.popitem(last=False)

    def commands(self) -> list[str]:
        """Distinct commands, newest first (commands run in Terax before the files' ones)."""
        ordered: OrderedDict[str, None] = OrderedDict()
        with self._lock:
            live = list(reversed(self._seen))
        for command in live:
            ordered.setdefault(command, None)
        for shell in ("zsh", "fish", "bash"):
            for command in reversed(self._read(shell)):
                ordered.setdefault(command, None)
        return list(ordered)

    def suggest(self, text: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """Commands that start with ``text`` (newest first), then fuzzy matches."""
        commands = self.commands()
        if not text:
            return [{"command": c, "match": "recent"} for c in commands[:limit]]
        prefixed = [c for c in commands if c.startswith(text) and c != text][:limit]
        results: list[dict[str, Any]] = [{"command": c, "match": "prefix"} for c in prefixed]
        if len(results) < limit:
            from rapidfuzz import fuzz, process  # loaded on first use (memory of idle servers)

            taken = set(prefixed) | {text}
            rest = [c for c in commands if c not in taken]
            for command, score, _ in process.extract(
                text, rest, scorer=fuzz.partial_ratio, limit=limit - len(results), score_cutoff=70
            ):
                results.append({"command": command, "match": "fuzzy", "score": round(score, 1)})
        return results

    def _read(self, shell: str) -> list[str]:
        path = self._files.get(shell)
        if not path:
            return []
        try:
            info = os.stat(path)
        except OSError:
            return []
        stamp = (info.st_mtime_ns, info.st_size)
        cached = self._cache.get(shell)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            with open(path, "rb") as handle:
                if info.st_size > TAIL_BYTES:
                    handle.seek(info.st_size - TAIL_BYTES)
                    handle.readline()  # skip the partial first line
                data = handle.read()
        except OSError:
            return []
        commands = [
            c.strip()
            for c in _PARSERS[shell](data)
            if c.strip() and len(c) <= MAX_COMMAND_CHARS and self._keep(c.strip())
        ]
        self._cache[shell] = (stamp, commands)
        return commands


def _unmetafy(data: bytes) -> bytes:
    """zsh writes bytes >= 0x83 as 0x83 followed by the byte XOR 32."""
    if b"\x83" not in data:
        return data
    out = bytearray()
    iterator = iter(data)
    for byte in iterator:
        if byte == 0x83:
            out.append(next(iterator, 0x20) ^ 32)
        else:
            out.append(byte)
    return bytes(out)
