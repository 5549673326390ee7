"""What changes a repository: staging (files, hunks, lines), discarding, committing."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AccessDenied, Conflict, InvalidRequest, Unavailable
from terax_jupyter.security import fileio
from terax_jupyter.security.paths import Access
from terax_jupyter.services.git.diff import conflict_stages, read_diff
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
        return _identity_error()
    if "gpg failed" in lowered or "failed to sign" in lowered:
        return Conflict(f"Signing the commit failed: {output}", reason="signing_failed")
    return Conflict(f"A commit hook refused the commit:\n{output}", reason="hook_failed")


def _capped(text: str) -> str:
    text = text.strip()
    if len(text) > HOOK_OUTPUT_CAP:
        return text[:HOOK_OUTPUT_CAP] + "\n[output cut]"
    return text


# -- conflicts and operations in progress -----------------------------------------------

SIDES = ("ours", "theirs")
# What each operation in progress can do next (git's own flags).
ACTIONS: dict[str, tuple[str, ...]] = {
    "merge": ("continue", "abort"),
    "rebase": ("continue", "abort", "skip"),
    "cherry-pick": ("continue", "abort", "skip"),
    "revert": ("continue", "abort", "skip"),
    "bisect": ("reset",),
}
# The merge strategies git has built in; any other name runs a git-merge-<name> program.
_BUILTIN = frozenset({"ort", "recursive", "resolve", "octopus", "ours", "subtree"})
# The largest state file read (a rebase of many thousand commits has a long todo list).
_STATE_CAP = 8 * 1024 * 1024
# Todo-list commands of an interactive rebase that run a shell command.
_EXEC_COMMANDS = frozenset({"exec", "x"})


async def take_side(
    runner: GitRunner, security: SecurityLayer, repo: Repo, files: list[str], side: str
) -> None:
    """Resolve conflicted ``files`` with one side's version, and stage the result. A side
    that deleted the file resolves it as deleted. Refused (nothing changes) unless every
    file is conflicted now."""
    if side not in SIDES:
        raise InvalidRequest("'side' must be ours or theirs.", reason="invalid_parameter")
    number = 2 if side == "ours" else 3
    plans = []
    for file in files:
        checked_file(security, repo, file, Access.WRITE)
        stages = await conflict_stages(runner, repo, file)
        if not stages:
            raise Conflict(
                f"{file} is not conflicted: there is no side to take.", reason="not_conflicted"
            )
        plans.append((file, number in stages))
    kept = [file for file, present in plans if present]
    gone = [file for file, present in plans if not present]
    if kept:
        await runner.run(repo, "checkout", f"--{side}", "--", *kept, hooks=True)
        await runner.run(repo, "add", "--", *kept, hooks=True)
    if gone:
        # That side deleted the file: taking it deletes it (index and work tree).
        await runner.run(repo, "rm", "-q", "--", *gone, hooks=True)


def check_action(operation: str | None, requested: object, action: object) -> str:
    """The operation in progress, if it is the one the client saw and can do ``action``."""
    if not isinstance(requested, str) or requested not in ACTIONS:
        raise InvalidRequest(
            f"'operation' must be one of {', '.join(ACTIONS)}.", reason="invalid_parameter"
        )
    if not isinstance(action, str) or action not in ACTIONS[requested]:
        raise InvalidRequest(
            f"A {requested} can only {' or '.join(ACTIONS[requested])}.",
            reason="invalid_parameter",
        )
    if operation is None:
        raise Conflict(f"No {requested} is in progress.", reason="no_operation")
    if operation != requested:
        raise Conflict(
            f"A {operation} is in progress, not a {requested}; reload the status.",
            reason="no_operation",
        )
    return operation


async def refuse_untrusted_programs(
    runner: GitRunner, repo: Repo, operation: str, action: str
) -> None:
    """What continuing or skipping would run that an untrusted repository may not make run:
    its own merge drivers (the next commits are merged), a custom merge strategy, the exec
    lines of a rebase's todo list (the state files come with the repository's git folder, so
    a shared folder or archive can bring them), a signing program without a neutral value,
    a signature with the user's key that the state asks for."""
    if repo.trusted or action not in ("continue", "skip") or operation == "bisect":
        return
    named = list(repo.safety.commit_programs) + list(repo.safety.merge_programs)
    strategies = []
    for folder in ("rebase-merge", "rebase-apply"):
        strategies.append((await _state_text(runner, repo, f"{folder}/strategy")).strip())
        # git rebase signs every commit it makes with the key this names (-S<key>); not
        # configuration, so commit.gpgsign set back to false does not cover it.
        if (await _state_text(runner, repo, f"{folder}/gpg_sign_opt")).strip():
            named.append(f"a signature with your key ({folder}/gpg_sign_opt)")
    options = await _state_options(runner, repo, "sequencer/opts")
    strategies += options.get("options.strategy", [])
    if "options.gpg-sign" in options:
        named.append("a signature with your key (sequencer/opts gpg-sign)")
    named += [f"the merge strategy {s!r}" for s in strategies if s and s not in _BUILTIN]
    for line in (await _state_text(runner, repo, "rebase-merge/git-rebase-todo")).splitlines():
        words = line.split(None, 1)
        if words and words[0].lower() in _EXEC_COMMANDS:
            named.append(f"the command {line.strip()[:80]!r}")
            break
    if named:
        raise AccessDenied(
            f"To {action} this {operation}, git would run what this repository names "
            f"({'; '.join(named[:4])}). Trust the repository in the Git panel to do it here, "
            f"or run git {operation} --{action} in a terminal.",
            reason="untrusted_repository",
        )


def _refuse_odd_state(repo: Repo, relative: str) -> str:
    """The path of a state file, refused if it is a link or not a plain file: git follows
    a link to read it (the diff below would show where it points, not what git reads), and
    would wait on a FIFO."""
    path = os.path.join(repo.git_dir, *relative.split("/"))
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        then, reason = "Continue", "invalid_state"
        if not repo.trusted:
            then = "Trust the repository in the Git panel, or continue"
            reason = "untrusted_repository"
        raise AccessDenied(
            f"{relative} in this repository's git folder is not a plain file; git would read "
            f"what it points to. {then} in a terminal.",
            reason=reason,
        )
    return path


def _state_exists(path: str) -> bool:
    return os.path.lexists(path)


async def _state_options(runner: GitRunner, repo: Repo, relative: str) -> dict[str, list[str]]:
    """A state file in git's config format (sequencer/opts), parsed by git as the sequencer
    parses it (any layout: "[options] strategy = x" is one line); {key: [values]}."""
    path = _refuse_odd_state(repo, relative)
    result = await runner.run(
        _OUTSIDE, "config", "--file", path, "--list", "-z", check=False, env=_OUTSIDE_ENV
    )
    found: dict[str, list[str]] = {}
    for record in result.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = record.partition("\n")
        if key:
            found.setdefault(key.lower(), []).append(value.strip())
    if result.code != 0 and _state_exists(path):
        # git could not parse it: the sequencer would not either, but say so rather than
        # guess what it holds.
        found.setdefault("options.strategy", []).append("(unreadable sequencer/opts)")
    return found


# Where state files are read: a folder in no repository (discovery does not go above it), so
# none of the repository's attributes (working-tree-encoding=UTF-16LE for git-rebase-todo in
# .git/info/attributes turned its lines into other characters) or configuration
# (core.bigFileThreshold: "binary", no lines) apply.
_OUTSIDE = os.path.dirname(os.devnull)
_OUTSIDE_ENV = {"GIT_CEILING_DIRECTORIES": os.path.dirname(_OUTSIDE)}


async def _state_text(runner: GitRunner, repo: Repo, relative: str) -> str:
    """A small state file of the operation in progress, in the worktree's git folder ("" if
    there is none), read by git itself (a diff against nothing: its lines, each after a +),
    outside the repository. --text: a NUL byte (git reads the todo list up to it) made the
    file "binary", with no lines shown."""
    path = _refuse_odd_state(repo, relative)
    result = await runner.run(
        _OUTSIDE,
        "diff",
        "--no-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--text",
        "-U0",
        "--",
        os.devnull,
        path,
        check=False,
        cap=_STATE_CAP,
        env=_OUTSIDE_ENV,
    )
    if result.code != 1:
        return ""  # 1: differs from nothing; anything else: no such file
    lines = result.stdout.decode("utf-8", "replace").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    return "\n".join(line[1:] for line in lines[start + 1 :] if line.startswith("+"))


@dataclass
class ActionResult:
    output: str
    stopped: bool  # stopped again on conflicts (a rebase's next commit, ...)


async def run_action(
    runner: GitRunner, repo: Repo, operation: str, action: str, *, conflicted: bool, timeout: float
) -> ActionResult:
    """``git <operation> --<action>`` (``git bisect reset``), never waiting for an editor:
    the runner's GIT_EDITOR=true keeps the prepared message (MERGE_MSG, the commit's own)."""
    if action == "continue" and conflicted:
        raise Conflict(
            f"Resolve the conflicted files and stage them before continuing the {operation}.",
            reason="unmerged_files",
        )
    if operation == "bisect":
        # git bisect reset runs "git checkout <BISECT_START> --": a state file that starts
        # with "-" is an option ("-f" throws away every uncommitted change); no branch name
        # or commit id starts with one.
        start = (await _state_text(runner, repo, "BISECT_START")).strip()
        if start.startswith("-"):
            raise Conflict(
                f"The bisect's starting point ({start[:40]!r}, in BISECT_START) is not a branch "
                "or commit: git would read it as an option. Run git bisect reset <branch> in "
                "a terminal.",
                reason="invalid_state",
            )
    # Hooks run as for a commit: only in a trusted repository (core.hooksPath otherwise).
    args = ["bisect", "reset"] if operation == "bisect" else [operation, f"--{action}"]
    result = await runner.run(repo, *args, check=False, hooks=True, timeout=timeout)
    output = _capped(result.stdout.decode("utf-8", "replace") + result.stderr)
    if result.code == 0:
        return ActionResult(output, stopped=False)
    after = await conflict_stages_any(runner, repo)
    if after and repo.operation() is not None:
        return ActionResult(output, stopped=True)
    lowered = result.stderr.lower()
    if "please tell me who you are" in lowered or "unable to auto-detect email" in lowered:
        raise _identity_error()
    if "is now empty" in lowered or "no changes - did you forget" in lowered:
        raise Conflict(
            f"With the conflicts resolved this way, the commit changes nothing: skip it "
            f"(or abort the {operation}). git said:\n{output}",
            reason="empty_commit",
        )
    raise Conflict(
        f"git {' '.join(args)} failed:\n{output}" if output else f"git {' '.join(args)} failed.",
        reason="operation_failed",
    )


async def conflict_stages_any(runner: GitRunner, repo: Repo) -> bool:
    """Whether any path is unmerged."""
    result = await runner.run(repo, "ls-files", "-u", "-z", cap=4096, check=False)
    return bool(result.stdout)


# -- identity ------------------------------------------------------------------------------

IDENTITY_SCOPES = ("local", "global")
_IDENTITY_KEYS = ("user.name", "user.email")


async def identity(runner: GitRunner, repo: Repo) -> dict[str, Any]:
    """The user.name and user.email git would commit with here, and where each is set."""
    found: dict[str, Any] = {}
    for key in _IDENTITY_KEYS:
        result = await runner.run(
            repo, "config", "--show-scope", "--get", key, check=False, cap=64 * 1024
        )
        scope, _, value = result.text.rstrip("\n").partition("\t")
        short = key.split(".")[1]
        found[short] = value if result.code == 0 else None
        found[f"{short}_scope"] = scope if result.code == 0 else None
    found["configured"] = bool(found["name"]) and bool(found["email"])
    return found


def check_identity_value(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest(f"'{name}' must be a non-empty string.", reason="invalid_parameter")
    value = value.strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in value) or len(value) > 256:
        raise InvalidRequest(
            f"'{name}' must be one line of at most 256 characters.", reason="invalid_parameter"
        )
    if name == "email" and ("<" in value or ">" in value):
        raise InvalidRequest("'email' may not contain < or >.", reason="invalid_parameter")
    if name == "name" and ("<" in value or ">" in value):
        raise InvalidRequest("'name' may not contain < or >.", reason="invalid_parameter")
    return value


async def set_identity(runner: GitRunner, repo: Repo, name: str, email: str, scope: object) -> None:
    """Write user.name and user.email into the repository's configuration (``local``) or
    the user's own (``global``, ~/.gitconfig or what GIT_CONFIG_GLOBAL names)."""
    if scope not in IDENTITY_SCOPES:
        raise InvalidRequest("'scope' must be local or global.", reason="invalid_parameter")
    if scope == "local" and not repo.trusted:
        _refuse_linked_config(repo)
    for key, value in (("user.name", name), ("user.email", email)):
        result = await runner.run(repo, "config", f"--{scope}", key, value, check=False)
        if result.code != 0:
            raise Conflict(
                f"git could not write {key} ({scope}): {result.stderr.strip()}",
                reason="config_failed",
            )


def _refuse_linked_config(repo: Repo) -> None:
    """git config writes through a link: an archive's .git/config linked to a file elsewhere
    (one that does not exist yet, too) would get the values written there."""
    config = os.path.join(repo.common_dir or repo.git_dir, "config")
    if os.path.islink(config):
        raise AccessDenied(
            f"{config} is a link: saving the identity would write to the file it points to. "
            "Trust the repository in the Git panel, or save it for all repositories.",
            reason="untrusted_repository",
        )


def _identity_error() -> Conflict:
    return Conflict(
        "git does not know who you are: user.name and user.email are not set. Enter your "
        "name and email to commit (saved for this repository, or for all of them).",
        reason="identity_unknown",
    )


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
