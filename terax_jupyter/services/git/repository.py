"""Finding the repository for a path, and validating what clients send into git commands.

A repository is a work tree with a ``.git`` entry at its top: a folder (``<top>/.git``) or,
for linked worktrees and submodules, a ``.git`` file. No clone can create either from a
project's content (git refuses ``.git`` paths), so a git dir found any other way (a bare
repository committed as plain files, a ``core.worktree`` pointing elsewhere) is refused
before any other git command runs there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import (
    AccessDenied,
    InvalidPath,
    InvalidRequest,
    NotFound,
    OutsideWorkspace,
)
from terax_jupyter.security.normalize import reject_unusable
from terax_jupyter.security.paths import Access
from terax_jupyter.services.git.safety import (
    UNTRUSTED_SAFETY,
    ConfigEntry,
    Safety,
    assess,
    parse_config_list,
)

if TYPE_CHECKING:
    from terax_jupyter.security import CheckedPath, SecurityLayer
    from terax_jupyter.services.git.runner import GitRunner
    from terax_jupyter.services.git.trust import TrustRecord, TrustStore

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_OID = re.compile(r"[0-9a-fA-F]{4,64}")
_BARE_REFUSED = re.compile(r"cannot use bare repository '(?P<path>[^']+)'")
# Bare repositories met on the way up before giving up (each one is a git run).
_MAX_BARE_HOPS = 8
# Discovery and the configuration listing are bounded on their own, whatever the cap of the
# command a request asked for.
_SMALL_CAP = 64 * 1024
CONFIG_CAP = 8 * 1024 * 1024


@dataclass(frozen=True)
class Repo:
    """A work tree the security layer approved: canonical root, its git dir, its safety."""

    root: str
    git_dir: str
    relative_root: str
    common_dir: str = ""
    safety: Safety = UNTRUSTED_SAFETY
    trust: TrustRecord | None = None
    # The repository's configuration (all scopes) as listed when it was resolved.
    config: tuple[ConfigEntry, ...] = field(default=(), compare=False, repr=False)

    @property
    def trusted(self) -> bool:
        return self.safety.trusted

    @property
    def index_lock(self) -> str:
        return os.path.join(self.git_dir, "index.lock")

    def index_locked(self) -> bool:
        return os.path.exists(self.index_lock)

    def operation(self) -> str | None:
        """The multi-step operation in progress in this worktree (what git itself looks
        for: its state files in the git folder), or None."""
        for name, marker in _OPERATIONS:
            if os.path.exists(os.path.join(self.git_dir, marker)):
                return name
        return None

    def absolute(self, relpath: str) -> str:
        return os.path.join(self.root, *relpath.split("/"))


# In git's own order of precedence (a rebase that stopped on a conflicting cherry-pick is a
# rebase); the state files live in the worktree's git folder.
_OPERATIONS = (
    ("rebase", "rebase-merge"),
    ("rebase", "rebase-apply"),
    ("merge", "MERGE_HEAD"),
    ("cherry-pick", "CHERRY_PICK_HEAD"),
    ("revert", "REVERT_HEAD"),
    ("bisect", "BISECT_LOG"),
)

_DISCOVER = (
    "rev-parse",
    "--show-toplevel",
    "--absolute-git-dir",
    "--path-format=absolute",
    "--git-common-dir",
    "--git-path",
    "objects",
    "--show-superproject-working-tree",
)
CONFIG_LIST = ("config", "--list", "--show-scope", "-z")


async def resolve(
    security: SecurityLayer, runner: GitRunner, path: str, trust: TrustStore | None = None
) -> Repo:
    """The repository holding ``path`` ("" is the server root); its root must be inside a
    workspace root, and its git dir the one its ``.git`` entry names."""
    checked = security.paths.check(path or security.roots.server_root, Access.READ)
    folder = _existing_folder(checked)
    shown = path or "The server root"
    # What the repository's own configuration names, to neutralise it in every call: listed
    # alongside the discovery (both find the same repository from the same folder), and
    # again from the root when the discovery had to step over a bare repository.
    listing = asyncio.ensure_future(runner.run(folder, *CONFIG_LIST, check=False, cap=CONFIG_CAP))
    try:
        found = await _discover(runner, folder, shown)
        top, git_dir, common_dir, objects, superproject, found_from = found
        try:
            root = security.paths.check(top, Access.READ)
        except OutsideWorkspace:
            raise OutsideWorkspace(
                f"The repository of {path or 'the server root'} starts at {top}, outside the "
                "workspace roots; add that folder as a root to use it with git."
            ) from None
        await _check_git_dir(
            security, runner, root.path, (git_dir, common_dir, objects), superproject, shown
        )
        listed = await listing
    finally:
        if not listing.done():
            listing.cancel()
            with contextlib.suppress(BaseException):
                await listing
    if found_from != folder or listed.code != 0:
        listed = await runner.run(root.path, *CONFIG_LIST, check=False, cap=CONFIG_CAP)
    record = trust.lookup(root.path, git_dir) if trust is not None else None
    entries = tuple(parse_config_list(listed.stdout))
    safety = assess(entries, trusted=record is not None)
    return Repo(
        root.path,
        git_dir,
        security.paths.display(root.path),
        common_dir or git_dir,
        safety,
        record,
        entries,
    )


async def _discover(
    runner: GitRunner, folder: str, shown: str
) -> tuple[str, str, str, str, str, str]:
    """(top, git dir, common dir, object store, superproject work tree or "", the folder it
    was found from) of the repository around ``folder``. A bare repository on the way (refused by
    safe.bareRepository=explicit) is stepped over: the repository that holds it as files
    is the one meant."""
    start = folder
    for _ in range(_MAX_BARE_HOPS):
        result = await runner.run(start, *_DISCOVER, check=False, cap=_SMALL_CAP)
        lines = result.text.splitlines()
        if result.code == 0 and len(lines) in (4, 5) and lines[0]:
            superproject = lines[4] if len(lines) == 5 else ""
            return lines[0], lines[1], lines[2], lines[3], superproject, start
        bare = _BARE_REFUSED.search(result.stderr)
        if bare is None:
            break
        bare_dir = bare["path"].rstrip("/")
        parent = os.path.dirname(bare_dir)
        if not parent or parent == bare_dir:
            break
        start = parent
    raise NotFound(f"{shown} is not in a git repository.", reason="not_a_repository")


async def _check_git_dir(
    security: SecurityLayer,
    runner: GitRunner,
    top: str,
    data: tuple[str, str, str],
    superproject: str,
    shown: str,
) -> None:
    """Refuse a git dir that ``<top>/.git`` does not name, or git data outside the workspace
    (stat calls on git's own paths).

    ``data``: the git dir, the common dir (refs, the configuration) and the object store, as
    git reports them (canonical). All must be inside a workspace root, and so must every
    alternate object store: a ``.git`` file, a ``commondir`` or ``alternates`` file, or a
    link in ``.git`` can name any repository on the machine, whose history and diffs would
    then be served. A submodule's git dir is in its superproject's ``<common dir>/modules``,
    a linked worktree's in its main repository's ``<common dir>/worktrees``.
    """
    git_dir, common_dir, objects = data
    common_dir = common_dir or git_dir
    for folder in dict.fromkeys((git_dir, common_dir, objects)):
        _refuse_outside(security, folder, shown)
    await _check_alternates(security, runner, top, objects, shown)
    dot_git = os.path.join(top, ".git")
    kind = _kind(dot_git)
    if kind == "folder":
        # A commondir file in .git would move refs and configuration elsewhere.
        if _same(dot_git, git_dir) and _same(git_dir, common_dir):
            return
    elif kind == "file" and await _named_by_git_file(runner, top, git_dir):
        if superproject:
            # A submodule: git found it through the superproject's index, and keeps its data
            # in <superproject's common dir>/modules/<name>.
            modules = await _modules_dir(security, runner, superproject)
            if modules is not None and all(
                _within(folder, modules) and folder != modules for folder in (git_dir, common_dir)
            ):
                return
        elif os.path.basename(os.path.dirname(git_dir)) == "worktrees" and _same(
            os.path.dirname(os.path.dirname(git_dir)), common_dir
        ):
            # A linked worktree: the main repository must list this work tree as its own.
            # (Lines, not -z: that needs git 2.36; a path with a newline just fails here.)
            listed = await runner.run(
                top, "worktree", "list", "--porcelain", check=False, cap=CONFIG_CAP
            )
            for line in listed.text.splitlines():
                if line.startswith("worktree ") and _same(line[9:], top):
                    return
    raise AccessDenied(
        f"{shown} is in a repository whose git data is in {git_dir}, not named by "
        f"{dot_git}: its configuration moves the work tree (core.worktree), it is a "
        "repository stored as plain files, or its .git file names another repository's "
        "data. Terax does not open it.",
        reason="unexpected_git_dir",
    )


def _refuse_outside(security: SecurityLayer, folder: str, shown: str) -> None:
    if not _git_data_inside(security, folder):
        raise AccessDenied(
            f"{shown} is in a repository whose git data is in {folder}, outside the "
            "workspace roots (or in a protected folder). Terax does not open it; add that "
            "repository's folder as a root to use it.",
            reason="unexpected_git_dir",
        )


async def _check_alternates(
    security: SecurityLayer, runner: GitRunner, top: str, objects: str, shown: str
) -> None:
    """Every object store ``objects/info/alternates`` adds must be inside the workspace too
    (listed by git, with the stores they add in turn, only when that file exists)."""
    if not _exists(os.path.join(objects, "info", "alternates")):
        return
    listed = await runner.run(top, "count-objects", "-v", check=False, cap=CONFIG_CAP)
    if listed.code != 0:
        raise AccessDenied(
            f"{shown} is in a repository whose alternate object stores git cannot list. "
            "Terax does not open it.",
            reason="unexpected_git_dir",
        )
    for line in listed.text.splitlines():
        if line.startswith("alternate: "):
            _refuse_outside(security, line[len("alternate: ") :].strip(), shown)


def _git_data_inside(security: SecurityLayer, folder: str) -> bool:
    """Whether git data (a folder git names) is inside a workspace root, below a folder the
    deny-list leaves readable: the part above its ``.git`` segment passes the security
    layer's check (canonical, in a root, not protected), and the part from ``.git`` on has
    no link. (That part is git's: the deny-list keeps the file API out of it, not git.)"""
    if not os.path.isabs(folder):
        return False
    parts = folder.split(os.sep)
    lowered = [part.lower() for part in parts]
    cut = lowered.index(".git") if ".git" in lowered else len(parts)
    above = os.sep.join(parts[:cut]) or os.sep
    try:
        checked = security.paths.check(above, Access.READ)
    except (AccessDenied, InvalidRequest, NotFound):
        return False
    if checked.path != above:
        return False  # git reports canonical paths: a link appeared since
    path = above
    for part in parts[cut:]:
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


async def _modules_dir(security: SecurityLayer, runner: GitRunner, superproject: str) -> str | None:
    """``<common dir>/modules`` of the superproject work tree git named, if it is a
    workspace folder whose git data is inside the workspace roots too."""
    try:
        checked = security.paths.check(superproject, Access.READ)
    except (AccessDenied, InvalidRequest, NotFound):
        return None
    result = await runner.run(
        checked.path,
        "rev-parse",
        "--path-format=absolute",
        "--git-common-dir",
        check=False,
        cap=_SMALL_CAP,
        env={"GIT_CEILING_DIRECTORIES": os.path.dirname(checked.path)},
    )
    common = result.text.strip()
    if result.code != 0 or not common or not _git_data_inside(security, common):
        return None
    return os.path.join(common, "modules")


async def _named_by_git_file(runner: GitRunner, top: str, git_dir: str) -> bool:
    """Whether ``<top>/.git`` (a file) names ``git_dir``: git, asked in ``top`` alone (no
    walking up), reads that file first."""
    named = await runner.run(
        top,
        "rev-parse",
        "--absolute-git-dir",
        check=False,
        cap=_SMALL_CAP,
        env={"GIT_CEILING_DIRECTORIES": os.path.dirname(top)},
    )
    return named.code == 0 and _same(named.text.strip(), git_dir)


def _kind(path: str) -> str | None:
    if os.path.isdir(path):
        return "folder"
    return "file" if os.path.isfile(path) else None


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _existing_folder(checked: CheckedPath) -> str:
    # Imported here: fileio is the security layer's verified I/O, needed only for this stat.
    from terax_jupyter.security import fileio

    return checked.path if fileio.is_directory(checked) else checked.parent


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_relpath(repo: Repo, file: object, *, name: str = "file") -> str:
    """A repository-relative ``/``-separated path, refused if it could be read as anything else.

    Only the form is judged here; callers that read or write the file's content also pass
    it through the security layer (``checked_file``).
    """
    if not isinstance(file, str) or not file:
        raise InvalidRequest(f"'{name}' must be a non-empty string.", reason="invalid_parameter")
    reject_unusable(file)
    if file.startswith("-"):
        raise InvalidPath(f"'{file}': paths given to git may not start with '-'.")
    if file.startswith("/") or "\\" in file:
        raise InvalidPath(f"'{file}' must be relative to the repository, with '/' separators.")
    segments = file.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise InvalidPath(f"'{file}' must not have empty, '.' or '..' segments.")
    if any(s.lower() == ".git" for s in segments):
        raise InvalidPath(f"'{file}' is inside git's own folder.")
    return file


def checked_file(security: SecurityLayer, repo: Repo, file: str, access: Access) -> CheckedPath:
    """The security layer's verdict on a repository file whose content we will read or change."""
    checked = security.paths.check(repo.absolute(file), access)
    if not _within(checked.path, repo.root):
        raise InvalidPath(f"'{file}' resolves outside the repository.")
    return checked


def check_argument(value: object, name: str) -> str:
    """A free-form argument for git (remote, ref): a string that cannot be read as an option."""
    if not isinstance(value, str) or not value:
        raise InvalidRequest(f"'{name}' must be a non-empty string.", reason="invalid_parameter")
    if _CONTROL.search(value):
        raise InvalidRequest(f"'{name}' contains a control character.", reason="invalid_parameter")
    if value.startswith("-"):
        raise InvalidRequest(f"'{name}' may not start with '-'.", reason="invalid_parameter")
    if len(value) > 1024:
        raise InvalidRequest(f"'{name}' is too long.", reason="invalid_parameter")
    return value


async def check_branch_name(runner: GitRunner, repo: Repo, name: object) -> str:
    """A valid new branch name (``git check-ref-format --branch``), else 400 invalid_ref."""
    value = check_argument(name, "name")
    result = await runner.run(repo, "check-ref-format", "--branch", value, check=False)
    if result.code != 0 or value.startswith(("refs/", "@")) or value == "HEAD":
        raise InvalidRequest(f"'{value}' is not a valid branch name.", reason="invalid_ref")
    return value


async def check_revision(runner: GitRunner, repo: Repo, revision: object, name: str) -> str:
    """A revision that names a commit; returned as its full object id."""
    value = check_argument(revision, name)
    result = await runner.run(
        repo,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{value}^{{commit}}",
        check=False,
    )
    oid = result.text.strip()
    if result.code != 0 or not _OID.fullmatch(oid):
        raise NotFound(f"'{value}' does not name a commit.", reason="unknown_revision")
    return oid
