"""``git status --porcelain=v2 -z`` parsed: staged, unstaged, untracked, conflicted entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.services.git.safety import IGNORE_SUBMODULES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from terax_jupyter.security import DenyList
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

STATUS_ARGS = ("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")

_LETTERS = {
    "M": "modified",
    "T": "typechange",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "unmerged",
}


@dataclass(slots=True)
class Entry:
    path: str
    old_path: str | None
    status: str
    submodule: bool = False
    denied: bool = False


@dataclass
class Branch:
    head: str | None = None
    oid: str | None = None
    detached: bool = False
    unborn: bool = False
    upstream: str | None = None
    ahead: int = 0
    behind: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "head": self.head,
            "oid": self.oid,
            "detached": self.detached,
            "unborn": self.unborn,
            "upstream": self.upstream,
            "ahead": self.ahead,
            "behind": self.behind,
        }


@dataclass
class Status:
    root: str = ""
    branch: Branch = field(default_factory=Branch)
    staged: list[Entry] = field(default_factory=list)
    unstaged: list[Entry] = field(default_factory=list)
    untracked: list[Entry] = field(default_factory=list)
    conflicted: list[Entry] = field(default_factory=list)
    index_locked: bool = False
    # Untracked files left out because they lie in a hidden folder (Jupyter's checkpoints).
    hidden_untracked: int = 0
    # A merge, rebase, cherry-pick, revert or bisect in progress (None: none).
    operation: str | None = None

    def entries(self) -> list[Entry]:
        return [*self.staged, *self.unstaged, *self.untracked, *self.conflicted]

    def to_dict(self) -> dict[str, Any]:
        """What ``dataclasses.asdict`` gives, written out: asdict deep-copies every field of
        every entry through recursion and ``copy.deepcopy``, half the time of a status with
        20k untracked files (73 of 149 ms); this is a dict per entry."""
        return {
            "root": self.root,
            "branch": self.branch.to_dict(),
            "staged": _entries(self.staged),
            "unstaged": _entries(self.unstaged),
            "untracked": _entries(self.untracked),
            "conflicted": _entries(self.conflicted),
            "index_locked": self.index_locked,
            "hidden_untracked": self.hidden_untracked,
            "operation": self.operation,
        }


def _entries(entries: list[Entry]) -> list[dict[str, Any]]:
    return [
        {
            "path": e.path,
            "old_path": e.old_path,
            "status": e.status,
            "submodule": e.submodule,
            "denied": e.denied,
        }
        for e in entries
    ]


def parse_status(data: bytes) -> Status:
    """Parse ``git status --porcelain=v2 --branch -z`` output (renames, copies, submodules,
    unmerged entries and the ``# branch.*`` headers)."""
    status = Status()
    records = data.split(b"\0")
    # Untracked files are most of a large status and the simplest records: taken in one
    # pass (the others, in order, below).
    status.untracked = [
        Entry(record[2:].decode("utf-8", "surrogateescape"), None, "untracked")
        for record in records
        if record[:2] == b"? "
    ]
    index = 0
    while index < len(records):
        raw = records[index]
        index += 1
        if not raw or raw[:2] == b"? ":
            continue
        record = raw.decode("utf-8", "surrogateescape")
        kind = record[0]
        if kind == "#":
            _header(status.branch, record)
        elif kind == "1":
            fields = record.split(" ", 8)
            _changed(status, fields[1], fields[2], fields[8], None)
        elif kind == "2":
            fields = record.split(" ", 9)
            old_path = records[index].decode("utf-8", "surrogateescape")
            index += 1
            _changed(status, fields[1], fields[2], fields[9], old_path)
        elif kind == "u":
            fields = record.split(" ", 10)
            status.conflicted.append(
                Entry(fields[10], None, "unmerged", submodule=fields[2].startswith("S"))
            )
        # "?" (untracked) is taken above; "!" (ignored) is not asked for; anything else is a
        # format this parser predates.
    return status


def _header(branch: Branch, record: str) -> None:
    key, _, value = record[2:].partition(" ")
    if key == "branch.oid":
        branch.unborn = value == "(initial)"
        branch.oid = None if branch.unborn else value
    elif key == "branch.head":
        branch.detached = value == "(detached)"
        branch.head = None if branch.detached else value
    elif key == "branch.upstream":
        branch.upstream = value
    elif key == "branch.ab":
        ahead, _, behind = value.partition(" ")
        branch.ahead = abs(int(ahead))
        branch.behind = abs(int(behind))


def _changed(status: Status, xy: str, sub: str, path: str, old_path: str | None) -> None:
    submodule = sub.startswith("S")
    staged, unstaged = xy[0], xy[1]
    if staged != ".":
        status.staged.append(
            Entry(
                path,
                old_path if staged in "RC" else None,
                _LETTERS.get(staged, "modified"),
                submodule,
            )
        )
    if unstaged != ".":
        status.unstaged.append(
            Entry(
                path,
                old_path if unstaged in "RC" else None,
                _LETTERS.get(unstaged, "modified"),
                submodule,
            )
        )


def mark_denied(status: Status, deny: DenyList, root: str) -> None:
    """Flag entries the deny-list protects: they are listed, their content is never served."""
    entries = status.entries()
    paths = [e.path for e in entries]
    for position in deny.denied_among(paths, base=root):
        entries[position].denied = True
    renamed = [e for e in entries if e.old_path is not None and not e.denied]
    for position in deny.denied_among([e.old_path or "" for e in renamed], base=root):
        renamed[position].denied = True


# Folders whose untracked files are not listed (nor staged by Stage All): Lab writes a
# checkpoint of every notebook and file it saves into ``.ipynb_checkpoints``.
HIDDEN_UNTRACKED = (".ipynb_checkpoints",)


def hide_untracked(status: Status, folders: Sequence[str]) -> None:
    """Leave out untracked files inside any folder named in ``folders`` (counted)."""
    if not folders:
        return
    names = set(folders)
    joined = "\n".join(e.path for e in status.untracked)
    if not any(f"{name}/" in joined for name in names):
        return  # no path has such a folder: one search, not a split per path
    kept = [e for e in status.untracked if names.isdisjoint(e.path.split("/")[:-1])]
    status.hidden_untracked = len(status.untracked) - len(kept)
    status.untracked = kept


async def read_status(
    runner: GitRunner, repo: Repo, deny: DenyList, *, hide: Sequence[str] = HIDDEN_UNTRACKED
) -> Status:
    # Untrusted: submodules are not entered, whatever .gitmodules says (safety.UNTRUSTED).
    submodules = () if repo.trusted else (IGNORE_SUBMODULES,)
    result = await runner.run(repo, *STATUS_ARGS, *submodules)
    status = parse_status(result.stdout)
    hide_untracked(status, hide)
    status.root = repo.root
    status.index_locked = repo.index_locked()
    status.operation = repo.operation()
    mark_denied(status, deny, repo.root)
    return status
