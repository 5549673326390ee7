"""Finding the repository for a path, and validating what clients send into git commands."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidPath, InvalidRequest, NotFound, OutsideWorkspace
from terax_jupyter.security.normalize import reject_unusable
from terax_jupyter.security.paths import Access

if TYPE_CHECKING:
    from terax_jupyter.security import CheckedPath, SecurityLayer
    from terax_jupyter.services.git.runner import GitRunner

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_OID = re.compile(r"[0-9a-fA-F]{4,64}")


@dataclass(frozen=True)
class Repo:
    """A work tree the security layer approved: canonical root, its git dir."""

    root: str
    git_dir: str
    relative_root: str

    @property
    def index_lock(self) -> str:
        return os.path.join(self.git_dir, "index.lock")

    def index_locked(self) -> bool:
        return os.path.exists(self.index_lock)

    def absolute(self, relpath: str) -> str:
        return os.path.join(self.root, *relpath.split("/"))


async def resolve(security: SecurityLayer, runner: GitRunner, path: str) -> Repo:
    """The repository holding ``path`` ("" is the server root); its root must be inside a
    workspace root."""
    checked = security.paths.check(path or security.roots.server_root, Access.READ)
    folder = _existing_folder(checked)
    result = await runner.run(
        folder, "rev-parse", "--show-toplevel", "--absolute-git-dir", check=False
    )
    lines = result.text.splitlines()
    if result.code != 0 or len(lines) != 2 or not lines[0]:
        raise NotFound(
            f"{path or 'The server root'} is not in a git repository.", reason="not_a_repository"
        )
    top, git_dir = lines
    try:
        root = security.paths.check(top, Access.READ)
    except OutsideWorkspace:
        raise OutsideWorkspace(
            f"The repository of {path or 'the server root'} starts at {top}, outside the "
            "workspace roots; add that folder as a root to use it with git."
        ) from None
    return Repo(root.path, git_dir, security.paths.display(root.path))


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
    result = await runner.run(repo.root, "check-ref-format", "--branch", value, check=False)
    if result.code != 0 or value.startswith(("refs/", "@")) or value == "HEAD":
        raise InvalidRequest(f"'{value}' is not a valid branch name.", reason="invalid_ref")
    return value


async def check_revision(runner: GitRunner, repo: Repo, revision: object, name: str) -> str:
    """A revision that names a commit; returned as its full object id."""
    value = check_argument(revision, name)
    result = await runner.run(
        repo.root,
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
