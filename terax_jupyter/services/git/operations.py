"""What changes a repository: staging (files, hunks, lines), discarding, committing."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AccessDenied, Conflict, InvalidRequest, Unavailable
from terax_jupyter.security import fileio
from terax_jupyter.security.paths import Access
from terax_jupyter.services.git.diff import read_diff
from terax_jupyter.services.git.patch import build_patch
from terax_jupyter.services.git.repository import checked_file
from terax_jupyter.services.git.runner import GitFailed

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.git.diff import FileDiff
    from terax_jupyter.services.git.patch import Selection
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

HOOK_OUTPUT_CAP = 8000
# Which diff a selection refers to, and how its patch is applied.
_SELECTION_MODES = {
    "stage": ("worktree", False, ("--cached",)),
    "unstage": ("index", True, ("--cached", "--reverse")),
    "discard": ("worktree", True, ("--reverse",)),
}


@dataclass
class DiffSettings:
    context: int = 3
    max_bytes: int = 4 * 1024 * 1024


@dataclass
class Confirmation:
    """Discarding needs the client to repeat the request with this token."""

    token: str
    files: int
    lines_lost: int
    message: str = field(default="Discarding changes cannot be undone; confirm to go ahead.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "reason": "confirmation_required",
            "confirm": self.token,
            "summary": {"files": self.files, "lines_lost": self.lines_lost},
        }


def ensure_unlocked(repo: Repo) -> None:
    """A present index.lock means another git is at work (or died): report it, never delete it."""
    if repo.index_locked():
        raise Conflict(
            f"{repo.index_lock} exists: another git process is running, or one crashed. "
            "If no git is running, delete that file yourself and try again.",
            reason="index_locked",
        )


# -- whole files -------------------------------------------------------------------------


async def stage_files(runner: GitRunner, repo: Repo, files: list[str]) -> None:
    await runner.run(repo, "add", "--all", "--", *files, hooks=True)


async def refuse_submodules(runner: GitRunner, repo: Repo, files: list[str]) -> None:
    """Staging a submodule runs git inside it, under the submodule's own configuration
    (its filters), which the untrusted settings of this repository do not cover."""
    listed = await runner.run(repo, "ls-files", "-s", "-z", "--", *files)
    submodules = [
        record.split("\t", 1)[1]
        for record in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
        if record.startswith("160000 ") and "\t" in record
    ]
    if submodules:
        raise AccessDenied(
            f"{', '.join(submodules[:5])} is a submodule: staging it runs git inside it, with "
            "its own configuration. Trust the repository in the Git panel to stage submodules.",
            reason="untrusted_repository",
        )


async def unstage_files(runner: GitRunner, repo: Repo, files: list[str]) -> None:
    # ``git reset -- paths`` also works before the first commit (against the empty tree);
    # ``git rm --cached`` there refused a file staged in part ("staged content different
    # from both the file and the HEAD"), a 409 for a plain unstage.
    await runner.run(repo, "reset", "-q", "--", *files, hooks=True)


# -- hunks and lines ---------------------------------------------------------------------


async def current_diff(
    runner: GitRunner,
    security: SecurityLayer,
    repo: Repo,
    file: str,
    source: str,
    settings: DiffSettings,
    *,
    write: bool = False,
) -> FileDiff:
    """The diff a selection refers to; the file's content passes the security layer first."""
    checked = checked_file(security, repo, file, Access.WRITE if write else Access.READ)
    # Verified against the file read through the security layer, as the diff shown was: a
    # folder swapped for a link between the two cannot feed git another file's lines.
    diff, _ = await read_diff(
        runner,
        repo,
        file,
        source,
        context=settings.context,
        max_bytes=settings.max_bytes,
        checked=((file, checked),) if source != "commit" else (),
    )
    return diff


def check_fingerprint(diff: FileDiff, fingerprint: object) -> None:
    if not isinstance(fingerprint, str) or not hmac.compare_digest(diff.fingerprint, fingerprint):
        raise Conflict(
            f"{diff.file} changed since its diff was read; reload it and select again.",
            reason="stale_diff",
        )


async def apply_selection(
    runner: GitRunner,
    repo: Repo,
    diff: FileDiff,
    selection: list[Selection],
    mode: str,
    settings: DiffSettings,
) -> None:
    """Stage, unstage or discard exactly ``selection`` of ``diff`` (checked and current)."""
    if not diff.selectable:
        why = "binary" if diff.binary else "too large" if diff.too_large else diff.status
        raise InvalidRequest(
            f"{diff.file} cannot be changed hunk by hunk ({why}); use the whole file.",
            reason="not_selectable",
        )
    _, reverse, options = _SELECTION_MODES[mode]
    patch = build_patch(diff, selection, reverse=reverse)
    zero = ("--unidiff-zero",) if settings.context == 0 else ()
    try:
        await runner.run(
            repo, "apply", *options, *zero, "--whitespace=nowarn", "-", input=patch, hooks=True
        )
    except GitFailed as error:
        raise Conflict(
            f"git could not apply the selection to {diff.file}: {error.stderr.strip()}",
            reason="patch_failed",
        ) from None


def selection_source(mode: str) -> str:
    return _SELECTION_MODES[mode][0]


def lines_lost(diff: FileDiff, selection: list[Selection] | None = None) -> int:
    """Lines a discard removes from the work tree (the additions it undoes)."""
    picked = {s.hunk: s.lines for s in selection} if selection is not None else None
    count = 0
    for hunk in diff.hunks:
        if picked is not None and hunk.index not in picked:
            continue
        lines = picked.get(hunk.index) if picked is not None else None
        count += sum(
            1
            for i, line in enumerate(hunk.lines)
            if line.kind == "add" and (lines is None or i in lines)
        )
    return count


# -- discard confirmation ----------------------------------------------------------------


def confirmation_token(secret: bytes, repo: Repo, bound: list[tuple[str, str]], extra: Any) -> str:
    """An HMAC over what the client saw: files, their fingerprints, the selection."""
    payload = json.dumps([repo.root, sorted(bound), extra], sort_keys=True).encode()
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


def token_matches(expected: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected, given)


async def discard_files(
    runner: GitRunner, security: SecurityLayer, repo: Repo, files: list[str]
) -> None:
    """Tracked files go back to their index version; untracked files are deleted."""
    listed = await runner.run(repo, "ls-files", "-z", "--cached", "--", *files)
    tracked = {p.decode("utf-8", "surrogateescape") for p in listed.stdout.split(b"\0") if p}
    untracked = [f for f in files if f not in tracked]
    checked = [checked_file(security, repo, f, Access.WRITE) for f in untracked]
    for path in checked:
        if fileio.is_directory(path):
            raise InvalidRequest(f"{path.path} is a folder; discard its files one by one.")
    restore = [f for f in files if f in tracked]
    if restore:
        await runner.run(repo, "checkout", "-q", "--", *restore, hooks=True)
    for path in checked:
        await asyncio.to_thread(fileio.delete, path, recursive=False)


# -- commit ------------------------------------------------------------------------------


@dataclass
class CommitResult:
    oid: str
    summary: str
    output: str


async def commit(
    runner: GitRunner, repo: Repo, message: str, *, amend: bool, signoff: bool, conflicted: bool
) -> CommitResult:
    if not message.strip():
        raise InvalidRequest("The commit message is empty.", reason="empty_message")
    if conflicted:
        raise Conflict(
            "Resolve the conflicted files and stage them first.", reason="unmerged_files"
        )
    if not amend and not await _has_staged_changes(runner, repo):
        raise Conflict("Nothing is staged to commit.", reason="nothing_to_commit")
    args = ["commit", "-F", "-"]
    if not repo.trusted:
        # Hooks do not run anyway (core.hooksPath is /dev/null for it); said twice for
        # anyone reading the command.
        args.append("--no-verify")
    if amend:
        args.append("--amend")
    if signoff:
        args.append("--signoff")
    result = await runner.run(repo, *args, input=message.encode(), check=False, hooks=True)
    output = _capped(result.stdout.decode("utf-8", "replace") + result.stderr)
    if result.code != 0:
        raise _commit_error(result.stderr, output)
    head = await runner.run(repo, "log", "-1", "--no-show-signature", "--format=%H%x00%s", "--")
    oid, _, summary = head.text.rstrip("\n").partition("\0")
    return CommitResult(oid, summary, output)


async def _has_staged_changes(runner: GitRunner, repo: Repo) -> bool:
    diff = await runner.run(repo, "diff", "--cached", "--quiet", "--no-ext-diff", "--", check=False)
    if diff.code == 1:
        return True
    # A merge whose result equals HEAD still has something to commit.
    merge = await runner.run(repo, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False)
    return merge.code == 0


def _commit_error(stderr: str, output: str) -> Conflict:
    lowered = stderr.lower()
    if "please tell me who you are" in lowered or "unable to auto-detect email" in lowered:
        return Conflict(
            "git does not know who you are: set user.name and user.email.",
            reason="identity_unknown",
        )
    if "gpg failed" in lowered or "failed to sign" in lowered:
        return Conflict(f"Signing the commit failed: {output}", reason="signing_failed")
    return Conflict(f"A commit hook refused the commit:\n{output}", reason="hook_failed")


def _capped(text: str) -> str:
    text = text.strip()
    if len(text) > HOOK_OUTPUT_CAP:
        return text[:HOOK_OUTPUT_CAP] + "\n[output cut]"
    return text


# -- remotes -----------------------------------------------------------------------------

_CREDENTIALS = (
    "could not read username",
    "could not read password",
    "authentication failed",
    "terminal prompts disabled",
    "permission denied (publickey",
    "invalid username or password",
    "access denied",
    "returned error: 401",
    "returned error: 403",
)
_UNREACHABLE = (
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "operation timed out",
    "network is unreachable",
    "no route to host",
    "unable to access",
    "does not appear to be a git repository",
    "could not read from remote repository",
    "repository not found",
)
_REJECTED = ("[rejected]", "[remote rejected]", "updates were rejected", "failed to push")
_NOT_FAST_FORWARD = ("not possible to fast-forward", "diverging branches", "non-fast-forward")


def remote_error(error: GitFailed, action: str) -> Exception:
    """git's failure said as one of: credentials needed, remote unreachable, rejected, ..."""
    text = error.stderr.lower()
    detail = error.stderr.strip()
    if any(mark in text for mark in _CREDENTIALS):
        return AccessDenied(
            f"The remote needs credentials git could not get without asking: {detail}",
            reason="credentials_required",
        )
    if any(mark in text for mark in _UNREACHABLE):
        return Unavailable(f"The remote cannot be reached: {detail}", reason="remote_unavailable")
    if action == "push" and any(mark in text for mark in _REJECTED):
        return Conflict(
            f"The remote rejected the push (fetch and integrate its changes first): {detail}",
            reason="push_rejected",
        )
    if action == "pull" and any(mark in text for mark in _NOT_FAST_FORWARD):
        return Conflict(
            "The branch and its upstream have diverged; pull only fast-forwards.",
            reason="not_fast_forward",
        )
    if "would be overwritten" in text:
        return Conflict(f"Local changes would be overwritten: {detail}", reason="would_overwrite")
    if "no tracking information" in text:
        return Conflict("The branch has no upstream to pull from.", reason="no_upstream")
    return error


async def remotes(runner: GitRunner, repo: Repo) -> list[str]:
    return (await runner.run(repo, "remote")).text.split()


async def upstream_of(runner: GitRunner, repo: Repo, branch: str) -> tuple[str, str] | None:
    """(remote, remote ref) the branch tracks, or None."""
    result = await runner.run(
        repo,
        "for-each-ref",
        "--format=%(upstream:remotename)%00%(upstream:remoteref)",
        f"refs/heads/{branch}",
    )
    remote, _, ref = result.text.strip("\n").partition("\0")
    return (remote, ref) if remote and ref else None


async def network(runner: GitRunner, repo: Repo, action: str, *args: str) -> str:
    try:
        result = await runner.run(repo, action, *args, network=True, hooks=True)
    except GitFailed as error:
        raise remote_error(error, action) from None
    return (result.stdout.decode("utf-8", "replace") + result.stderr).strip()


async def fetch(runner: GitRunner, repo: Repo, remote: str | None, branch: str | None) -> str:
    args = ["--prune"]
    if remote:
        args.append(remote)
        if branch:
            args.append(branch)
    elif branch:
        raise InvalidRequest("'branch' needs 'remote'.", reason="invalid_parameter")
    return await network(runner, repo, "fetch", *args)


async def pull(runner: GitRunner, repo: Repo, remote: str | None, branch: str | None) -> str:
    args = ["--no-rebase", "--ff-only"]
    if remote:
        args.append(remote)
        if branch:
            args.append(branch)
    elif branch:
        raise InvalidRequest("'branch' needs 'remote'.", reason="invalid_parameter")
    return await network(runner, repo, "pull", *args)


async def push(
    runner: GitRunner, repo: Repo, local_branch: str, remote: str | None, branch: str | None
) -> str:
    """Push the current branch; sets its upstream when it has none."""
    upstream = await upstream_of(runner, repo, local_branch)
    if upstream is not None and remote in (None, upstream[0]) and branch is None:
        return await network(runner, repo, "push", upstream[0], f"HEAD:{upstream[1]}")
    known = await remotes(runner, repo)
    if remote is None:
        remote = upstream[0] if upstream else _default_remote(known)
    target = f"HEAD:refs/heads/{branch or local_branch}"
    options = ["--set-upstream"] if upstream is None else []
    return await network(runner, repo, "push", *options, remote, target)


def _default_remote(known: list[str]) -> str:
    if "origin" in known:
        return "origin"
    if len(known) == 1:
        return known[0]
    raise Conflict(
        "The branch has no upstream and no single remote to push to; name a remote.",
        reason="no_remote",
    )
