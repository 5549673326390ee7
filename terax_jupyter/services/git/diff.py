"""One file's unified diff, parsed into hunks with line numbers; binary and huge diffs flagged."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from terax_jupyter.exceptions import TooLarge
from terax_jupyter.services.git.runner import GitFailed, failure_message

if TYPE_CHECKING:
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

Source = Literal["worktree", "index", "commit"]
SOURCES: tuple[str, ...] = ("worktree", "index", "commit")

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_KINDS = {ord(" "): "context", ord("-"): "delete", ord("+"): "add"}
# Fixed output whatever the user's diff.* settings say: prefixes, no renames unless asked,
# full blob ids (so a binary file's change changes the fingerprint), no external tools.
_DIFF_OPTIONS = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--full-index",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--no-relative",
)


@dataclass
class DiffLine:
    kind: str  # "context" | "add" | "delete"
    old: int | None
    new: int | None
    text: str
    no_newline: bool = False
    raw: bytes = b""  # the line's bytes after its prefix, without the newline

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "text": self.text,
            "no_newline": self.no_newline,
        }


@dataclass
class Hunk:
    index: int
    header: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: list[DiffLine] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "header": self.header,
            "old_start": self.old_start,
            "old_lines": self.old_lines,
            "new_start": self.new_start,
            "new_lines": self.new_lines,
            "lines": [line.to_dict() for line in self.lines],
        }


@dataclass
class ParsedDiff:
    status: str = "modified"
    binary: bool = False
    sections: int = 0
    header: list[bytes] = field(default_factory=list)  # the lines before the first hunk
    hunks: list[Hunk] = field(default_factory=list)


@dataclass
class FileDiff:
    file: str
    old_file: str | None
    source: str
    status: str
    binary: bool
    too_large: bool
    size: int
    hunks: list[Hunk]
    fingerprint: str
    header: list[bytes] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "old_file": self.old_file,
            "source": self.source,
            "status": self.status,
            "binary": self.binary,
            "too_large": self.too_large,
            "size": self.size,
            "hunks": [hunk.to_dict() for hunk in self.hunks],
            "fingerprint": self.fingerprint,
        }

    @property
    def selectable(self) -> bool:
        """Whether hunks and lines of it can be staged one by one."""
        return (
            bool(self.hunks)
            and not (self.binary or self.too_large)
            and self.status
            in (
                "modified",
                "added",
                "deleted",
            )
        )


def fingerprint(raw: bytes) -> str:
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()


def parse_diff(raw: bytes) -> ParsedDiff:
    """Parse ``git diff`` output for one file. A second section (a type change is shown
    as a deletion and an addition) is counted but its hunks are not read."""
    parsed = ParsedDiff()
    hunk: Hunk | None = None
    old = new = 0
    for line in raw.split(b"\n"):
        if line.startswith(b"diff --git ") or line.startswith(b"diff --cc "):
            parsed.sections += 1
            hunk = None
            if parsed.sections > 1:
                parsed.status = "typechange"
                break
            continue
        if hunk is None:
            _header_line(parsed, line)
            if not line.startswith(b"@@"):
                parsed.header.append(line)
            match = _HUNK.match(line)
            if match is None:
                continue
        else:
            match = _HUNK.match(line) if line.startswith(b"@@") else None
        if match is not None:
            old, new = int(match[1]), int(match[3])
            hunk = Hunk(
                index=len(parsed.hunks),
                header=line.decode("utf-8", "replace"),
                old_start=old,
                old_lines=int(match[2]) if match[2] is not None else 1,
                new_start=new,
                new_lines=int(match[4]) if match[4] is not None else 1,
            )
            parsed.hunks.append(hunk)
            continue
        if line.startswith(b"\\"):
            if hunk.lines:
                hunk.lines[-1].no_newline = True
            continue
        if old >= hunk.old_start + hunk.old_lines and new >= hunk.new_start + hunk.new_lines:
            continue  # past the hunk's counted lines (the text's final newline)
        # diff.suppressBlankEmpty writes an empty context line as an empty line.
        kind = _KINDS.get(line[0]) if line else "context"
        if kind is None:
            continue
        body = line[1:]
        text = body.decode("utf-8", "replace")
        if kind == "context":
            hunk.lines.append(DiffLine(kind, old, new, text, raw=body))
            old += 1
            new += 1
        elif kind == "delete":
            hunk.lines.append(DiffLine(kind, old, None, text, raw=body))
            old += 1
        else:
            hunk.lines.append(DiffLine(kind, None, new, text, raw=body))
            new += 1
    return parsed


def _header_line(parsed: ParsedDiff, line: bytes) -> None:
    if line.startswith(b"new file mode"):
        parsed.status = "added"
    elif line.startswith(b"deleted file mode"):
        parsed.status = "deleted"
    elif line.startswith(b"rename from"):
        parsed.status = "renamed"
    elif line.startswith(b"copy from"):
        parsed.status = "copied"
    elif line.startswith(b"Binary files ") or line.startswith(b"GIT binary patch"):
        parsed.binary = True


async def diff_command(
    runner: GitRunner,
    repo: Repo,
    file: str,
    source: str,
    *,
    context: int,
    commit: str | None = None,
    old_file: str | None = None,
) -> tuple[str, ...]:
    """The git arguments that produce this diff (worktree diffs of untracked files use
    ``--no-index`` against /dev/null, so the whole file shows as added)."""
    options = (*_DIFF_OPTIONS, f"-U{context}", "-M" if old_file else "--no-renames")
    paths = (old_file, file) if old_file else (file,)
    if source == "index":
        return ("diff", "--cached", *options, "--", *paths)
    if source == "commit":
        assert commit is not None
        parent = await _first_parent(runner, repo, commit)
        return ("diff", *options, parent, commit, "--", *paths)
    if await _is_untracked(runner, repo, file):
        return ("diff", "--no-index", *options, "--", "/dev/null", file)
    return ("diff", *options, "--", *paths)


async def read_diff(
    runner: GitRunner,
    repo: Repo,
    file: str,
    source: str,
    *,
    context: int = 3,
    commit: str | None = None,
    old_file: str | None = None,
    max_bytes: int,
) -> tuple[FileDiff, bytes]:
    """The parsed diff and the raw bytes it came from (for patches built from it)."""
    args = await diff_command(
        runner, repo, file, source, context=context, commit=commit, old_file=old_file
    )
    try:
        # --no-index exits 1 when the files differ; real failures exit 2 or more.
        result = await runner.run(repo, *args, check=False)
        if result.code > 1 or (result.code == 1 and "--no-index" not in args):
            raise GitFailed(
                failure_message("diff", result.stderr), code=result.code, stderr=result.stderr
            )
        raw = result.stdout
    except TooLarge:
        identity = await _identity(runner, repo, args)
        return FileDiff(
            file, old_file, source, "modified", False, True, -1, [], fingerprint(identity)
        ), b""
    parsed = parse_diff(raw)
    too_large = len(raw) > max_bytes
    diff = FileDiff(
        file=file,
        old_file=old_file if parsed.status in ("renamed", "copied") else None,
        source=source,
        status=parsed.status if raw else "unmodified",
        binary=parsed.binary,
        too_large=too_large,
        size=len(raw),
        hunks=[] if too_large else parsed.hunks,
        fingerprint=fingerprint(raw),
        header=parsed.header,
    )
    return diff, raw


async def _is_untracked(runner: GitRunner, repo: Repo, file: str) -> bool:
    result = await runner.run(repo, "ls-files", "-z", "--cached", "--", file)
    return not result.stdout


async def _first_parent(runner: GitRunner, repo: Repo, commit: str) -> str:
    result = await runner.run(repo, "rev-list", "--parents", "-n", "1", commit, "--")
    oids = result.text.split()
    if len(oids) > 1:
        return oids[1]
    # A root commit: compare with the empty tree (its id depends on the hash function).
    empty = await runner.run(repo, "hash-object", "-t", "tree", "--stdin", input=b"")
    return empty.text.strip()


async def _identity(runner: GitRunner, repo: Repo, args: tuple[str, ...]) -> bytes:
    """What identifies a diff too large to read: its blob ids (worktree content hashed)."""
    split = args.index("--")
    options = [a for a in args[:split] if not a.startswith("-U")]
    raw = await runner.run(repo, *options, "--raw", *args[split:], check=False, cap=1 << 20)
    files = [a for a in args[split + 1 :] if a != "/dev/null"]
    hashed = await runner.run(repo, "hash-object", "--", *files, check=False, cap=1 << 20)
    return raw.stdout + hashed.stdout
