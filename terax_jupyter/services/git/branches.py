"""Local and remote branches: list, create, check out (refusing to overwrite local changes)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AlreadyExists, Conflict, NotFound
from terax_jupyter.services.git.runner import GitFailed

if TYPE_CHECKING:
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

_FORMAT = (
    "--format=%(refname)%00%(objectname)%00%(upstream:short)%00%(upstream:track,nobracket)"
    "%00%(contents:subject)%00%(symref)"
)
_TRACK = re.compile(r"(ahead|behind) (\d+)")


@dataclass
class LocalBranch:
    name: str
    oid: str
    upstream: str | None
    ahead: int
    behind: int
    subject: str


@dataclass
class RemoteBranch:
    name: str
    remote: str
    oid: str


@dataclass
class Branches:
    current: str | None
    detached: bool
    local: list[LocalBranch] = field(default_factory=list)
    remote: list[RemoteBranch] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def list_branches(runner: GitRunner, repo: Repo) -> Branches:
    refs = await runner.run(repo, "for-each-ref", _FORMAT, "refs/heads", "refs/remotes")
    remotes = sorted((await runner.run(repo, "remote")).text.split(), key=len, reverse=True)
    current = await current_branch(runner, repo)
    branches = Branches(current=current, detached=current is None)
    for line in refs.text.splitlines():
        fields = line.split("\0")
        if len(fields) != 6 or fields[5]:  # symbolic refs (origin/HEAD) are not branches
            continue
        refname, oid, upstream, track, subject, _ = fields
        if refname.startswith("refs/heads/"):
            counts = dict((k, int(v)) for k, v in _TRACK.findall(track))
            branches.local.append(
                LocalBranch(
                    refname[len("refs/heads/") :],
                    oid,
                    upstream or None,
                    counts.get("ahead", 0),
                    counts.get("behind", 0),
                    subject,
                )
            )
        else:
            name = refname[len("refs/remotes/") :]
            remote = next((r for r in remotes if name.startswith(r + "/")), name.split("/")[0])
            branches.remote.append(RemoteBranch(name, remote, oid))
    return branches


async def current_branch(runner: GitRunner, repo: Repo) -> str | None:
    """The checked-out branch (also when it has no commit yet), or None when detached."""
    result = await runner.run(repo, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    return result.text.strip() or None if result.code == 0 else None


async def branch_exists(runner: GitRunner, repo: Repo, ref: str) -> bool:
    result = await runner.run(repo, "show-ref", "--verify", "--quiet", ref, check=False)
    return result.code == 0


async def create_branch(runner: GitRunner, repo: Repo, name: str, start_oid: str | None) -> None:
    if await branch_exists(runner, repo, f"refs/heads/{name}"):
        raise AlreadyExists(f"A branch named {name} already exists.", reason="already_exists")
    await runner.run(
        repo, "branch", "--no-track", name, *([start_oid] if start_oid else []), hooks=True
    )


async def checkout(runner: GitRunner, repo: Repo, branch: str) -> None:
    """Switch to a local branch, or create a tracking one for a remote branch.

    Never forced: git refuses when local changes would be overwritten, and changes nothing.
    """
    if await branch_exists(runner, repo, f"refs/heads/{branch}"):
        args: tuple[str, ...] = ("switch", "--no-guess", branch)
    elif await branch_exists(runner, repo, f"refs/remotes/{branch}"):
        local = await _local_name_for(runner, repo, branch)
        if await branch_exists(runner, repo, f"refs/heads/{local}"):
            args = ("switch", "--no-guess", local)
        else:
            args = ("switch", "--no-guess", "--create", local, "--track", f"refs/remotes/{branch}")
    else:
        raise NotFound(f"There is no branch named {branch}.", reason="unknown_branch")
    try:
        await runner.run(repo, *args, hooks=True)
    except GitFailed as error:
        raise _checkout_error(error, branch) from None


async def _local_name_for(runner: GitRunner, repo: Repo, remote_branch: str) -> str:
    remotes = sorted((await runner.run(repo, "remote")).text.split(), key=len, reverse=True)
    for remote in remotes:
        if remote_branch.startswith(remote + "/"):
            return remote_branch[len(remote) + 1 :]
    return remote_branch.split("/", 1)[-1]


def _checkout_error(error: GitFailed, branch: str) -> Exception:
    if "would be overwritten" not in error.stderr:
        return error
    files = [line.strip() for line in error.stderr.splitlines() if line.startswith("\t")]
    listed = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
    return Conflict(
        f"Switching to {branch} would overwrite local changes to {listed or 'some files'}; "
        "commit, stash or discard them first. Nothing was changed.",
        reason="would_overwrite",
    )
