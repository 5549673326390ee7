"""One file's unified diff, parsed into hunks with line numbers; binary and huge diffs flagged.

A worktree diff is checked against the file as the security layer reads it: git opens the
file by name, following any directory link on the way, so a folder swapped for a link to
elsewhere while git runs would make it show an outside file. ``verify_worktree`` rejects a
diff whose blob id or shown lines are not those of the checked file.
"""

from __future__ import annotations

import asyncio
import codecs
import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from terax_jupyter.exceptions import NotFound, PathChanged, TooLarge, Unsupported
from terax_jupyter.security import fileio
from terax_jupyter.services.git.runner import git_failed
from terax_jupyter.services.git.safety import IGNORE_SUBMODULES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from terax_jupyter.security import CheckedPath
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
    # A conflicted file (unmerged in the index): its sides; the hunks then compare HEAD with
    # the work-tree file (conflict markers and all), since git's combined diff has no hunks
    # a person or the stager can use.
    conflict: dict[str, Any] | None = None

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
            "conflict": self.conflict,
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
        assert hunk is not None  # a line before the first hunk header was skipped above
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
    against: str | None = None,
) -> tuple[str, ...]:
    """The git arguments that produce this diff (worktree diffs of untracked files use
    ``--no-index`` against /dev/null, so the whole file shows as added). ``against``: a tree
    the work tree is compared with instead of the index (a conflicted file's HEAD)."""
    options = (*_DIFF_OPTIONS, f"-U{context}", "-M" if old_file else "--no-renames")
    paths = (old_file, file) if old_file else (file,)
    # Only this flag beats a submodule.<name>.ignore the repository sets (safety.UNTRUSTED).
    submodules = () if repo.trusted else (IGNORE_SUBMODULES,)
    if source == "index":
        return ("diff", "--cached", *options, *submodules, "--", *paths)
    if source == "commit":
        assert commit is not None
        parent = await _first_parent(runner, repo, commit)
        return ("diff", *options, *submodules, parent, commit, "--", *paths)
    if against is not None:
        return ("diff", *options, *submodules, against, "--", *paths)
    if await _is_untracked(runner, repo, file):
        return ("diff", "--no-index", *options, "--", "/dev/null", file)
    return ("diff", *options, *submodules, "--", *paths)


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
    checked: Sequence[tuple[str, CheckedPath]] = (),
) -> tuple[FileDiff, bytes]:
    """The parsed diff and the raw bytes it came from (for patches built from it).

    ``checked``: the security layer's paths of the files a worktree diff reads; the diff is
    verified against them (``verify_worktree``). A conflicted file's worktree diff is
    ``conflicted``: the work-tree file against HEAD, with the sides in ``conflict``."""
    stages = await conflict_stages(runner, repo, file) if source == "worktree" else {}
    against = await _head_tree(runner, repo) if stages else None
    args = await diff_command(
        runner,
        repo,
        file,
        source,
        context=context,
        commit=commit,
        old_file=None if stages else old_file,
        against=against,
    )
    try:
        # --no-index exits 1 when the files differ; real failures exit 2 or more.
        result = await runner.run(repo, *args, check=False)
        if result.code > 1 or (result.code == 1 and "--no-index" not in args):
            raise git_failed("diff", result.code, result.stderr)
        raw = result.stdout
    except TooLarge:
        identity = await _identity(runner, repo, args)
        return FileDiff(
            file, old_file, source, "modified", False, True, -1, [], fingerprint(identity)
        ), b""
    parsed = parse_diff(raw)
    if source == "worktree" and checked and raw:
        await verify_worktree(runner, repo, raw, parsed, checked, cap=runner.cap)
    too_large = len(raw) > max_bytes
    if stages:
        conflict = await _conflict_sides(runner, repo, stages, parsed, max_bytes)
        # Taking a side changes the stages: a diff read before that is stale.
        stamp = "".join(f"{n}:{oid}" for n, (_, oid) in sorted(stages.items())).encode()
        return FileDiff(
            file=file,
            old_file=None,
            source=source,
            status="conflicted",
            binary=parsed.binary or any(s["binary"] for s in conflict["sides"].values()),
            too_large=too_large,
            size=len(raw),
            hunks=[] if too_large else parsed.hunks,
            fingerprint=fingerprint(raw + b"\0" + stamp),
            header=parsed.header,
            conflict=conflict,
        ), raw
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


# The index stages of an unmerged path, as git numbers them.
STAGE_NAMES = {1: "base", 2: "ours", 3: "theirs"}


async def conflict_stages(runner: GitRunner, repo: Repo, file: str) -> dict[int, tuple[str, str]]:
    """{stage: (mode, blob id)} of ``file`` if it is unmerged (conflicted), else {}."""
    result = await runner.run(repo, "ls-files", "-u", "-z", "--", file)
    stages: dict[int, tuple[str, str]] = {}
    for record in result.stdout.split(b"\0"):
        info, tab, name = record.partition(b"\t")
        fields = info.split()
        named = tab and name.decode("utf-8", "surrogateescape") == file
        if named and len(fields) == 3 and fields[2] in (b"1", b"2", b"3"):
            stages[int(fields[2])] = (fields[0].decode(), fields[1].decode())
    return stages


async def _head_tree(runner: GitRunner, repo: Repo) -> str:
    """HEAD's commit, or the empty tree before the first commit."""
    head = await runner.run(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    if head.code == 0 and head.text.strip():
        return head.text.strip()
    empty = await runner.run(repo, "hash-object", "-t", "tree", "--stdin", input=b"")
    return empty.text.strip()


async def _conflict_sides(
    runner: GitRunner,
    repo: Repo,
    stages: dict[int, tuple[str, str]],
    parsed: ParsedDiff,
    max_bytes: int,
) -> dict[str, Any]:
    """The base, ours and theirs versions of a conflicted file (blobs as stored: no filter
    runs), and how many conflict regions the work-tree file still has."""
    sides: dict[str, Any] = {}
    for number, name in STAGE_NAMES.items():
        entry = stages.get(number)
        if entry is None:
            sides[name] = {
                "present": False,
                "binary": False,
                "too_large": False,
                "size": 0,
                "text": None,
            }
            continue
        mode, oid = entry
        side: dict[str, Any] = {
            "present": True,
            "binary": False,
            "too_large": False,
            "size": 0,
            "text": None,
        }
        if mode == "160000" or not mode.startswith("100"):
            # A gitlink (a commit of the submodule, not in these objects) or a link: no
            # text to show.
            side["binary"] = True
            sides[name] = side
            continue
        size_result = await runner.run(repo, "cat-file", "-s", oid)
        side["size"] = size = int(size_result.text.strip() or 0)
        side["too_large"] = size > max_bytes
        if not side["too_large"]:
            blob = await runner.run(repo, "cat-file", "blob", oid, cap=max_bytes + 1)
            if b"\0" in blob.stdout[:8000]:
                side["binary"] = True
            else:
                side["text"] = blob.stdout.decode("utf-8", "replace")
        sides[name] = side
    regions = sum(
        1
        for hunk in parsed.hunks
        for line in hunk.lines
        if line.new is not None and line.text.startswith("<<<<<<<")
    )
    return {"sides": sides, "regions": regions, "operation": repo.operation()}


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


# -- what git read from the work tree ------------------------------------------------------

_INDEX_LINE = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: ([0-7]+))?$", re.MULTILINE)
_NEW_MODE = re.compile(rb"^new (?:file )?mode ([0-7]+)$", re.MULTILINE)
_REGULAR = (b"100644", b"100755")
_IDENT = re.compile(rb"\$Id:[^$\n]*\$")
_HASHES = {40: hashlib.sha1, 64: hashlib.sha256}
_BOM_SUFFIX = re.compile(r"(?:LE|BE)-BOM$", re.IGNORECASE)


@dataclass(frozen=True)
class _Stored:
    """What git stores for a checked file whose blob id matched the diff's."""

    content: bytes | None  # None: git converts it in a way not redone here (a clean filter)


async def verify_worktree(
    runner: GitRunner,
    repo: Repo,
    raw: bytes,
    parsed: ParsedDiff,
    checked: Sequence[tuple[str, CheckedPath]],
    *,
    cap: int,
) -> None:
    """Refuse (409 path_changed) a worktree diff that shows something other than what the
    checked files (``(name given to git, the security layer's path)``) hold now.

    git reads a work-tree file twice (once for the blob id on the ``index`` line, once for
    the lines it shows), each time by name. Each section's new blob id must be one of the
    checked files' as git would store it (eol, ident and working-tree-encoding conversions
    redone; SHA-1 or SHA-256), and the new-side lines shown must be that content's lines. A
    deleted file (no new side), a symbolic link (its target is shown, not a file's content)
    and a gitlink need no check. A file a clean filter converts: only its blob id is checked;
    one in an encoding not redone here: refused (415 ``unverifiable_diff``).
    """
    contents: dict[int, bytes] = {}
    for position, section in enumerate(raw.split(b"\ndiff --git ")):
        index = _INDEX_LINE.search(section)
        if index is None:
            continue  # a mode change alone, a combined diff: no file content shown
        new_oid = index[2].decode("ascii")
        mode = _NEW_MODE.search(section)
        new_mode = mode[1] if mode is not None else index[3]
        if set(new_oid) == {"0"} or new_mode not in _REGULAR:
            continue
        stored = None
        for number, (name, path) in enumerate(checked):
            if number not in contents:
                contents[number] = await _read_checked(path, cap)
            stored = await _stored_form(runner, repo, name, contents[number], new_oid)
            if stored is not None:
                break
        if stored is None:
            raise PathChanged(
                "The file changed, or a folder on its path was swapped, while git read it; "
                "try again."
            )
        if position == 0 and stored.content is not None and not _shows(parsed, stored.content):
            raise PathChanged(
                "The diff git produced does not match the file as it is now (it changed, or "
                "a folder on its path was swapped, while git read it); try again."
            )


async def _read_checked(path: CheckedPath, cap: int) -> bytes:
    try:
        data, _ = await asyncio.to_thread(fileio.read_bytes, path, cap)
    except (NotFound, Unsupported):
        raise PathChanged(
            f"{path.path} changed while git read it (it is gone or no longer a file); try again."
        ) from None
    return data


async def _stored_form(
    runner: GitRunner, repo: Repo, name: str, data: bytes, oid: str
) -> _Stored | None:
    """What git stores for ``data`` at ``name`` if its blob id is ``oid``, else None."""
    digest = _HASHES.get(len(oid))
    # Most files: git stores them as they are, or with CRLF or $Id$ collapsed.
    found = _matching_form(digest, data, oid)
    if found is not None:
        return _Stored(found)
    # Otherwise git says (with the repository's attributes and the call's safety settings).
    hashed = await runner.run(repo, "hash-object", "--stdin", f"--path={name}", input=data)
    if hashed.text.strip() != oid:
        return None
    encoding = await _working_tree_encoding(runner, repo, name)
    if encoding is None:
        # A clean filter (the user's own, or a trusted repository's): its output cannot be
        # made here without running it again; the blob id is all that is checked.
        return _Stored(None)
    try:
        # git reads UTF-16LE-BOM and the like as UTF-16 with its byte order mark.
        decoded = codecs.decode(data, _BOM_SUFFIX.sub("", encoding)).encode("utf-8")
    except (LookupError, UnicodeError):
        decoded = None
    found = _matching_form(digest, decoded, oid) if decoded is not None else None
    if found is None:
        # The attributes name an encoding Python reads differently from git (or not at all):
        # the lines shown cannot be checked, so they are not shown.
        raise Unsupported(
            f"{name} is stored in git as converted from {encoding} "
            "(working-tree-encoding), which Terax cannot check its worktree diff against; "
            "compare it in a terminal.",
            reason="unverifiable_diff",
        )
    return _Stored(found)


def _matching_form(digest: Any, data: bytes, oid: str) -> bytes | None:
    """``data``, or what git's eol (CRLF to LF) and ident (``$Id: ...$`` to ``$Id$``)
    conversions make of it, whose blob id is ``oid``."""
    if digest is None:
        return None
    forms = [data]
    unix = data.replace(b"\r\n", b"\n")
    if unix != data:
        forms.append(unix)
    for form in list(forms):
        if b"$Id:" in form:
            forms.append(_IDENT.sub(b"$Id$", form))
    for form in forms:
        hasher = digest(b"blob %d\0" % len(form), usedforsecurity=False)
        hasher.update(form)
        if hasher.hexdigest() == oid:
            return form
    return None


async def _working_tree_encoding(runner: GitRunner, repo: Repo, name: str) -> str | None:
    result = await runner.run(repo, "check-attr", "-z", "working-tree-encoding", "--", name)
    fields = result.stdout.split(b"\0")
    value = fields[2].decode("utf-8", "replace") if len(fields) > 2 else ""
    return None if value in ("", "unspecified", "unset", "set") else value


def _shows(parsed: ParsedDiff, content: bytes) -> bool:
    """Whether every new-side line shown is the line of ``content`` at its number."""
    lines = content.split(b"\n") if content else []
    ends_with_newline = content.endswith(b"\n")
    if ends_with_newline:
        lines.pop()
    for hunk in parsed.hunks:
        for line in hunk.lines:
            if line.new is None:
                continue  # a removed line: the index's, not the file's
            number = line.new - 1
            if not 0 <= number < len(lines) or lines[number] != line.raw:
                return False
            if line.no_newline and (number != len(lines) - 1 or ends_with_newline):
                return False
    return True
