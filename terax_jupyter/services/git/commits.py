"""Commit detail: metadata, full message, changed files with line counts, the web page."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.git import remote_url
from terax_jupyter.services.git.log import parse_decorations
from terax_jupyter.services.git.repository import check_revision

if TYPE_CHECKING:
    from terax_jupyter.security.denylist import DenyList
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

MAX_FILES = 3000
MAX_MESSAGE = 100_000  # characters
SHOW_FORMAT = "%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%D%x00%B"
_OID = re.compile(r"^[0-9a-fA-F]{4,64}$")
_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "typechange",
    "U": "unmerged",
}


def check_oid(value: object) -> str:
    if not isinstance(value, str) or not _OID.match(value):
        raise InvalidRequest(
            "'oid' must be a commit id (4 to 64 hexadecimal digits).", reason="invalid_oid"
        )
    return value.lower()


def parse_changes(data: bytes) -> list[dict[str, Any]]:
    """``git diff-tree -r -z -M --raw --numstat`` -> files with status and line counts.

    git prints every raw record (``:modes oids STATUS\\0path\\0[new path\\0]``) and then every
    numstat record (``add\\tdel\\tpath\\0`` or ``add\\tdel\\t\\0old\\0new\\0``) in the same
    order; ``-\\t-`` marks a binary file.
    """
    tokens = data.decode("utf-8", "replace").split("\0")
    files: list[dict[str, Any]] = []
    counts: list[tuple[int, int, bool]] = []
    i = 0
    n = len(tokens)
    while i < n:
        token = tokens[i]
        i += 1
        if not token:
            continue
        if token.startswith(":"):
            letter = token.rsplit(" ", 1)[-1][:1]
            if letter in ("R", "C") and i + 1 < n:
                old, path = tokens[i], tokens[i + 1]
                i += 2
            else:
                old, path = None, tokens[i] if i < n else ""
                i += 1
            files.append(
                {
                    "path": path,
                    "old_path": old,
                    "status": _STATUS.get(letter, "modified"),
                    "additions": 0,
                    "deletions": 0,
                    "binary": False,
                }
            )
            continue
        added, _, rest = token.partition("\t")
        deleted, _, name = rest.partition("\t")
        if not name:
            i += 2  # a rename or copy: old and new name follow
        binary = added == "-" and deleted == "-"
        counts.append(
            (
                int(added) if added.isdigit() else 0,
                int(deleted) if deleted.isdigit() else 0,
                binary,
            )
        )
    for entry, (added_lines, deleted_lines, binary) in zip(files, counts, strict=False):
        entry["additions"] = added_lines
        entry["deletions"] = deleted_lines
        entry["binary"] = binary
    return files


def parse_remotes(data: bytes) -> list[tuple[str, str]]:
    """``git config -z --get-regexp ^remote\\..*\\.url$`` -> [(name, url)]."""
    remotes: list[tuple[str, str]] = []
    for record in data.decode("utf-8", "replace").split("\0"):
        key, _, value = record.partition("\n")
        if key.startswith("remote.") and key.endswith(".url") and value:
            remotes.append((key[7:-4], value))
    return remotes


def pick_web_url(remotes: list[tuple[str, str]]) -> str | None:
    """The web page of the repository: origin's if it has one, else the first remote's."""
    ordered = sorted(remotes, key=lambda item: item[0] != "origin")
    for _name, url in ordered:
        page = remote_url.web_url(url)
        if page is not None:
            return page
    return None


async def remotes(runner: GitRunner, repo: Repo) -> list[tuple[str, str]]:
    result = await runner.run(
        repo, "config", "-z", "--get-regexp", r"^remote\..*\.url$", check=False
    )
    return parse_remotes(result.stdout)


async def commit_detail(
    runner: GitRunner, repo: Repo, oid: object, deny: DenyList | None = None
) -> dict[str, Any]:
    """Everything the history shows about one commit; its file diffs come from /git/diff.

    Files the deny-list protects are listed (a name is not a secret) with ``denied: true``:
    their diff is refused.
    """
    full = await check_revision(runner, repo, check_oid(oid), "oid")
    show, found_remotes = await asyncio.gather(
        runner.run(
            repo,
            "show",
            "-s",
            "--no-show-signature",
            "--decorate=full",
            f"--format={SHOW_FORMAT}",
            full,
            "--",
        ),
        remotes(runner, repo),
    )
    fields = show.stdout.decode("utf-8", "replace").split("\0", 9)
    while len(fields) < 10:
        fields.append("")
    (
        commit_oid,
        parents,
        author,
        email,
        date,
        committer,
        committer_email,
        committer_date,
        decorations,
        message,
    ) = fields
    parent_list = parents.split()
    # First parent -> commit, as /git/diff?source=commit shows it; a root against nothing.
    base = [parent_list[0], commit_oid] if parent_list else ["--root", commit_oid]
    changes = await runner.run(
        repo, "diff-tree", "-r", "-z", "-M", "--raw", "--numstat", "--no-commit-id", *base
    )
    files = parse_changes(changes.stdout)
    shown = files[:MAX_FILES]
    for entry in shown:
        entry["denied"] = False
    if deny is not None and shown:
        for position in deny.denied_among([f["path"] for f in shown], base=repo.root):
            shown[position]["denied"] = True
    message = message.rstrip("\n")
    web = pick_web_url(found_remotes)
    return {
        "oid": commit_oid,
        "short": commit_oid[:7],
        "parents": parent_list,
        "author": author,
        "email": email,
        "date": date,
        "committer": committer,
        "committer_email": committer_email,
        "committer_date": committer_date,
        "message": message[:MAX_MESSAGE],
        "message_truncated": len(message) > MAX_MESSAGE,
        "refs": parse_decorations(decorations),
        "files": shown,
        "files_truncated": len(files) > MAX_FILES,
        "stats": {
            "files": len(files),
            "additions": sum(f["additions"] for f in files),
            "deletions": sum(f["deletions"] for f in files),
        },
        "web_url": remote_url.commit_url(web, commit_oid) if web else None,
    }
