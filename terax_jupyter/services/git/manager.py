"""GitManager: the git service one server shares; each method is one request's work."""

from __future__ import annotations

import os
import secrets
from typing import TYPE_CHECKING, Any

from traitlets import Bool, Float, Int, List, Unicode
from traitlets.config import LoggingConfigurable
from traitlets.log import get_logger

from terax_jupyter.exceptions import (
    AccessDenied,
    Conflict,
    InvalidRequest,
    NotFound,
    PathDenied,
    ReadOnlyMode,
)
from terax_jupyter.security.paths import Access
from terax_jupyter.services.git import branches, operations
from terax_jupyter.services.git.commits import commit_detail
from terax_jupyter.services.git.diff import SOURCES, read_diff
from terax_jupyter.services.git.log import GitHistory
from terax_jupyter.services.git.operations import Confirmation, DiffSettings
from terax_jupyter.services.git.patch import parse_selection
from terax_jupyter.services.git.remote_url import strip_credentials, web_url
from terax_jupyter.services.git.repository import (
    check_argument,
    check_branch_name,
    check_relpath,
    check_revision,
    checked_file,
    resolve,
)
from terax_jupyter.services.git.runner import GitRunner
from terax_jupyter.services.git.safety import (
    ALL_HOOKS,
    HOOKS,
    ConfigEntry,
    hooks_directory,
    present_hooks,
)
from terax_jupyter.services.git.status import HIDDEN_UNTRACKED, Status, read_status
from terax_jupyter.services.git.trust import TrustStore

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.git.diff import FileDiff
    from terax_jupyter.services.git.repository import Repo

MAX_FILES = 10_000
MAX_CONTEXT = 1000


class GitManager(LoggingConfigurable):
    """Repositories inside the workspace roots, through the git CLI (never a prompt)."""

    git_executable = Unicode("", help="The git program; default: 'git' on PATH.").tag(config=True)
    timeout = Float(30.0, help="Seconds a local git command may run.").tag(config=True)
    network_timeout = Float(
        120.0, help="Seconds fetch, pull and push may run before they are stopped."
    ).tag(config=True)
    output_cap = Int(
        32 * 1024 * 1024, help="Bytes of output a git command may produce before it is stopped."
    ).tag(config=True)
    max_diff_bytes = Int(
        4 * 1024 * 1024, help="A file's diff larger than this is reported as too large, not sent."
    ).tag(config=True)
    write_commit_graph = Bool(
        True,
        help="Keep a commit-graph file up to date in repositories whose history is read "
        "(only for users who may write; a read-only server writes none).",
    ).tag(config=True)
    hidden_untracked = List(
        Unicode(),
        default_value=list(HIDDEN_UNTRACKED),
        help="Folder names whose untracked files the Git panel does not list (nor Stage All "
        "stage); the status counts them as hidden_untracked. [] lists everything.",
    ).tag(config=True)
    allow_user_trust = Bool(
        True,
        help="Whether users may mark a repository trusted in the Git panel (its hooks, "
        "filters and fsmonitor then run). Off: only trusted_folders are trusted.",
    ).tag(config=True)
    trusted_folders = List(
        Unicode(),
        help="Folders whose repositories (the folder itself or any inside it) are trusted: "
        "git runs their hooks and the programs their own configuration names.",
    ).tag(config=True)

    def __init__(
        self, security: SecurityLayer, state_dir: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.security = security
        self.trust = TrustStore(
            os.path.join(state_dir, "git-trust.json") if state_dir else None,
            audit=security.audit,
            admin_folders=self._admin_folders(),
        )
        self.runner = GitRunner(
            git=self.git_executable or None,
            timeout=self.timeout,
            network_timeout=self.network_timeout,
            cap=self.output_cap,
            redactor=security.redactor,
        )
        self.history = GitHistory(self.runner, write_commit_graph=self.write_commit_graph)
        # Signs discard confirmations; a restart invalidates tokens, which is harmless.
        self._secret = secrets.token_bytes(32)

    async def close(self) -> None:
        await self.history.close()
        await self.runner.close()

    async def resolve(self, path: str) -> Repo:
        return await resolve(self.security, self.runner, path, self.trust)

    def _admin_folders(self) -> list[str]:
        folders = []
        for folder in self.trusted_folders:
            try:
                folders.append(self.security.paths.check(folder, Access.READ).path)
            except (AccessDenied, NotFound, InvalidRequest) as error:
                # The application's logger: ``log`` on this class is the history API.
                get_logger().warning("Not trusting %s: %s", folder, error)
        return folders

    def _refuse_read_only(self) -> None:
        if self.security.paths.read_only:
            raise ReadOnlyMode("The server is read-only: git cannot change repositories.")

    # -- reading ---------------------------------------------------------------------------

    async def repository(self, path: str, *, may_write: bool = False) -> dict[str, Any]:
        """The repository of ``path``; ``may_write``: the caller may change repositories, so
        the commit-graph may be written ahead of the history (nothing is written otherwise)."""
        repo = await self.resolve(path)
        if may_write and not self.security.paths.read_only:
            # A panel opened the repository: get the commit-graph ready before its history
            # is read.
            await self.history.prepare(repo)
        branch = await branches.current_branch(self.runner, repo)
        head = await self.runner.run(repo, "rev-parse", "-q", "--verify", "HEAD", check=False)
        oid = head.text.strip() or None
        return {
            "root": repo.root,
            "relative_root": repo.relative_root,
            "head": {
                "branch": branch,
                "oid": oid,
                "detached": branch is None,
                "unborn": oid is None,
            },
            "remotes": await self._remotes(repo),
            "trust": await self._trust_info(repo),
        }

    # -- trust -----------------------------------------------------------------------------

    async def trust_info(self, path: str) -> dict[str, Any]:
        return await self._trust_info(await self.resolve(path))

    async def set_trust(self, path: str, trusted: object, *, user: str | None) -> dict[str, Any]:
        """Trust the repository of ``path`` (its hooks and own programs run) or stop trusting it."""
        if not isinstance(trusted, bool):
            raise InvalidRequest("'trusted' must be true or false.", reason="invalid_parameter")
        self._refuse_read_only()
        repo = await self.resolve(path)
        if self.trust.admin_trusted(repo.root):
            raise Conflict(
                f"{repo.root} is trusted by the administrator (GitManager.trusted_folders); "
                "only the configuration can change that.",
                reason="admin_trusted",
            )
        if not self.allow_user_trust:
            raise AccessDenied(
                "The administrator does not allow trusting repositories.", reason="trust_locked"
            )
        if trusted:
            self.trust.trust(repo.root, repo.git_dir, user=user)
        else:
            self.trust.revoke(repo.root, user=user)
        return await self.trust_info(path)

    async def _trust_info(self, repo: Repo) -> dict[str, Any]:
        redact = self.security.redactor.redact
        record = repo.trust
        return {
            "trusted": repo.trusted,
            "source": record.source if record is not None else None,
            "trusted_by": record.trusted_by if record is not None else None,
            "trusted_at": record.trusted_at if record is not None else None,
            "can_change": self.allow_user_trust
            and not self.security.paths.read_only
            and (record is None or record.source == "user"),
            "programs": [
                {"key": key, "value": redact(value)[:500]} for key, value in repo.safety.programs
            ],
            "hooks": self._hooks(repo, list(repo.config), ALL_HOOKS),
        }

    @staticmethod
    def _hooks(repo: Repo, entries: list[ConfigEntry], names: tuple[str, ...]) -> list[str]:
        return present_hooks(hooks_directory(entries, repo.root, repo.common_dir), names)

    def _skipped(self, repo: Repo, *operations: str) -> list[str]:
        """The hooks an untrusted repository has for these operations (none ran)."""
        if repo.trusted:
            return []
        names = tuple(dict.fromkeys(h for op in operations for h in HOOKS[op]))
        return self._hooks(repo, list(repo.config), names)

    async def _remotes(self, repo: Repo) -> list[dict[str, Any]]:
        result = await self.runner.run(
            repo, "config", "-z", "--get-regexp", r"^remote\..*\.url$", check=False
        )
        found = []
        for record in result.text.split("\0"):
            key, _, url = record.partition("\n")
            if key.startswith("remote.") and key.endswith(".url"):
                shown = strip_credentials(url)
                found.append({"name": key[7:-4], "url": shown, "web_url": web_url(shown)})
        return found

    async def status(self, path: str) -> dict[str, Any]:
        repo = await self.resolve(path)
        return (await self._status(repo)).to_dict()

    async def _read_status(self, repo: Repo) -> Status:
        """The status now (the caller holds the repository's lock)."""
        return await read_status(self.runner, repo, self.security.deny, hide=self.hidden_untracked)

    async def _status(self, repo: Repo) -> Status:
        async with self.runner.lock(repo.root):
            return await self._read_status(repo)

    async def diff(
        self,
        path: str,
        file: str,
        *,
        source: str = "worktree",
        commit: str | None = None,
        context: int = 3,
        old_file: str | None = None,
    ) -> dict[str, Any]:
        repo = await self.resolve(path)
        if source not in SOURCES:
            raise InvalidRequest(
                "'source' must be worktree, index or commit.", reason="invalid_parameter"
            )
        file = check_relpath(repo, file)
        old = check_relpath(repo, old_file, name="old_file") if old_file else None
        # A worktree diff is verified against these (git opens the files by name later).
        checked = []
        for name in (file, old):
            if name is not None and source != "commit":
                checked.append((name, checked_file(self.security, repo, name, Access.READ)))
            elif name is not None:
                self._refuse_denied(repo, name)
        oid = None
        if source == "commit":
            if commit is None:
                raise InvalidRequest(
                    "'commit' is required for source=commit.", reason="missing_parameter"
                )
            oid = await check_revision(self.runner, repo, commit, "commit")
        diff, _ = await read_diff(
            self.runner,
            repo,
            file,
            source,
            context=_context(context),
            commit=oid,
            old_file=old,
            max_bytes=self.max_diff_bytes,
            checked=checked,
        )
        return diff.to_dict()

    def _refuse_denied(self, repo: Repo, file: str) -> None:
        """Files of past commits need not exist; the deny-list still judges their names."""
        if self.security.deny.check(repo.absolute(file), write=False) is not None:
            raise PathDenied(f"{file} is protected: its content is not shown.")

    # -- staging -----------------------------------------------------------------------------

    async def stage(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._change(path, body, "stage")

    async def unstage(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self._change(path, body, "unstage")

    async def _change(self, path: str, body: dict[str, Any], mode: str) -> dict[str, Any]:
        self._refuse_read_only()
        repo = await self.resolve(path)
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            if "files" in body:
                files = _files(repo, body.get("files"))
                if mode == "stage":
                    if not repo.trusted:
                        await operations.refuse_submodules(self.runner, repo, files)
                    await operations.stage_files(self.runner, repo, files)
                else:
                    status = await self._read_status(repo)
                    await operations.unstage_files(
                        self.runner,
                        repo,
                        _with_rename_sources(status, files),
                    )
            else:
                diff, selection, settings = await self._selection(repo, body, mode)
                await operations.apply_selection(self.runner, repo, diff, selection, mode, settings)
            return (await self._read_status(repo)).to_dict()

    async def _selection(
        self, repo: Repo, body: dict[str, Any], mode: str
    ) -> tuple[FileDiff, list[Any], DiffSettings]:
        file = check_relpath(repo, body.get("file"))
        selection = parse_selection(body.get("selection"))
        settings = DiffSettings(_context(body.get("context", 3)), self.max_diff_bytes)
        diff = await operations.current_diff(
            self.runner,
            self.security,
            repo,
            file,
            operations.selection_source(mode),
            settings,
            write=mode == "discard",
        )
        operations.check_fingerprint(diff, body.get("fingerprint"))
        return diff, selection, settings

    async def discard(self, path: str, body: dict[str, Any]) -> dict[str, Any] | Confirmation:
        """Discard files or a selection; without a valid ``confirm`` token, ask for one."""
        self._refuse_read_only()
        repo = await self.resolve(path)
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            if "files" in body:
                files = _files(repo, body.get("files"))
                settings = DiffSettings(3, self.max_diff_bytes)
                diffs = [
                    await operations.current_diff(
                        self.runner, self.security, repo, f, "worktree", settings, write=True
                    )
                    for f in files
                ]
                bound = [(d.file, d.fingerprint) for d in diffs]
                token = operations.confirmation_token(self._secret, repo, bound, None)
                lost = sum(operations.lines_lost(d) for d in diffs)
                if not self._confirmed(token, body.get("confirm")):
                    return Confirmation(token, len(files), lost)
                await operations.discard_files(self.runner, self.security, repo, files)
            else:
                diff, selection, settings = await self._selection(repo, body, "discard")
                chosen = sorted(
                    (s.hunk, sorted(s.lines) if s.lines is not None else None) for s in selection
                )
                token = operations.confirmation_token(
                    self._secret, repo, [(diff.file, diff.fingerprint)], [settings.context, chosen]
                )
                lost = operations.lines_lost(diff, selection)
                if not self._confirmed(token, body.get("confirm")):
                    return Confirmation(token, 1, lost)
                await operations.apply_selection(
                    self.runner, repo, diff, selection, "discard", settings
                )
            return (await self._read_status(repo)).to_dict()

    @staticmethod
    def _confirmed(token: str, given: object) -> bool:
        if given is None:
            return False
        if not operations.token_matches(token, given):
            raise Conflict(
                "The files changed since the discard was confirmed (or the confirmation is "
                "not valid); review them and confirm again.",
                reason="stale_diff",
            )
        return True

    # -- commits and remotes ---------------------------------------------------------------

    async def commit(
        self, path: str, message: object, *, amend: bool = False, signoff: bool = False
    ) -> dict[str, Any]:
        if not isinstance(message, str):
            raise InvalidRequest("'message' must be a string.", reason="invalid_parameter")
        if "\0" in message:
            raise InvalidRequest(
                "The message contains a NUL character.", reason="invalid_parameter"
            )
        self._refuse_read_only()
        repo = await self.resolve(path)
        if not repo.trusted and repo.safety.commit_programs:
            raise AccessDenied(
                "This repository's own configuration names a program git would run to sign "
                f"the commit ({', '.join(repo.safety.commit_programs)}). Trust the repository "
                "in the Git panel to commit with it, or remove that setting.",
                reason="untrusted_repository",
            )
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            before = await self._read_status(repo)
            result = await operations.commit(
                self.runner,
                repo,
                message,
                amend=amend,
                signoff=signoff,
                conflicted=bool(before.conflicted),
            )
            status = await self._read_status(repo)
        return {
            "oid": result.oid,
            "summary": result.summary,
            "output": result.output,
            "trusted": repo.trusted,
            "hooks_skipped": self._skipped(repo, "commit", "index"),
            "status": status.to_dict(),
        }

    # -- conflicts, operations in progress, identity ---------------------------------------

    async def resolve_conflict(self, path: str, files: object, side: object) -> dict[str, Any]:
        """Take ``side`` (ours or theirs) for conflicted ``files`` and stage them."""
        self._refuse_read_only()
        repo = await self.resolve(path)
        chosen = _files(repo, files)
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            if not repo.trusted:
                # Staging a submodule's side runs git inside it (as staging does).
                await operations.refuse_submodules(self.runner, repo, chosen)
            await operations.take_side(self.runner, self.security, repo, chosen, str(side))
            return (await self._read_status(repo)).to_dict()

    async def operation_action(
        self, path: str, operation: object, action: object
    ) -> dict[str, Any]:
        """Continue, abort or skip the merge, rebase, cherry-pick or revert in progress (or
        end a bisect): ``operation`` is the one the client saw, refused if it is not the one
        in progress."""
        self._refuse_read_only()
        repo = await self.resolve(path)
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            current = operations.check_action(repo.operation(), operation, action)
            verb = str(action)
            await operations.refuse_untrusted_programs(self.runner, repo, current, verb)
            before = await self._read_status(repo)
            result = await operations.run_action(
                self.runner,
                repo,
                current,
                verb,
                conflicted=bool(before.conflicted),
                timeout=self.network_timeout,
            )
            status = await self._read_status(repo)
        return {
            "operation": current,
            "action": verb,
            "output": result.output,
            "stopped": result.stopped,
            "trusted": repo.trusted,
            "hooks_skipped": self._skipped(repo, "commit", "checkout")
            if verb in ("continue", "skip")
            else [],
            "status": status.to_dict(),
        }

    async def identity(self, path: str) -> dict[str, Any]:
        """The name and email git commits with in this repository, and where they are set."""
        return await operations.identity(self.runner, await self.resolve(path))

    async def set_identity(
        self, path: str, name: object, email: object, scope: object = "local"
    ) -> dict[str, Any]:
        """Set user.name and user.email for this repository (``local``) or the user's own
        configuration (``global``)."""
        checked_name = operations.check_identity_value(name, "name")
        checked_email = operations.check_identity_value(email, "email")
        self._refuse_read_only()
        repo = await self.resolve(path)
        async with self.runner.lock(repo.root):
            await operations.set_identity(self.runner, repo, checked_name, checked_email, scope)
        return await operations.identity(self.runner, repo)

    async def remote_action(
        self, action: str, path: str, remote: object = None, branch: object = None
    ) -> dict[str, Any]:
        self._refuse_read_only()
        repo = await self.resolve(path)
        if not repo.trusted and repo.safety.network_programs:
            raise AccessDenied(
                f"This repository's own configuration names programs git would run to {action} "
                f"({', '.join(repo.safety.network_programs)}). Trust the repository in the Git "
                "panel to use them, or remove those settings.",
                reason="untrusted_repository",
            )
        remote_name = await self._remote(repo, remote)
        branch_name = check_argument(branch, "branch") if branch is not None else None
        async with self.runner.lock(repo.root):
            if action != "fetch":
                operations.ensure_unlocked(repo)
            if action == "fetch":
                output = await operations.fetch(self.runner, repo, remote_name, branch_name)
            elif action == "pull":
                output = await operations.pull(self.runner, repo, remote_name, branch_name)
            else:
                self.security.policy.require("git_push")
                current = await branches.current_branch(self.runner, repo)
                if current is None:
                    raise Conflict(
                        "HEAD is detached: check out a branch to push.", reason="detached_head"
                    )
                output = await operations.push(self.runner, repo, current, remote_name, branch_name)
            status = await self._read_status(repo)
        return {
            "output": output,
            "trusted": repo.trusted,
            "hooks_skipped": self._skipped(repo, action),
            "status": status.to_dict(),
        }

    async def _remote(self, repo: Repo, remote: object) -> str | None:
        if remote is None:
            return None
        name = check_argument(remote, "remote")
        if name not in await operations.remotes(self.runner, repo):
            raise NotFound(f"There is no remote named {name}.", reason="unknown_remote")
        return name

    # -- branches ------------------------------------------------------------------------------

    async def branches(self, path: str) -> dict[str, Any]:
        repo = await self.resolve(path)
        return (await branches.list_branches(self.runner, repo)).to_dict()

    async def create_branch(
        self, path: str, name: object, *, start_point: object = None, checkout: bool = False
    ) -> dict[str, Any]:
        self._refuse_read_only()
        repo = await self.resolve(path)
        branch = await check_branch_name(self.runner, repo, name)
        start = (
            await check_revision(self.runner, repo, start_point, "start_point")
            if start_point is not None
            else None
        )
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            await branches.create_branch(self.runner, repo, branch, start)
            if checkout:
                await branches.checkout(self.runner, repo, branch)
        return (await branches.list_branches(self.runner, repo)).to_dict()

    async def checkout(self, path: str, branch: object) -> dict[str, Any]:
        self._refuse_read_only()
        repo = await self.resolve(path)
        name = check_argument(branch, "branch")
        async with self.runner.lock(repo.root):
            operations.ensure_unlocked(repo)
            await branches.checkout(self.runner, repo, name)
            return (await self._read_status(repo)).to_dict()

    # -- history (log.py, commits.py) ----------------------------------------------------------

    async def log(self, path: str, *, may_write: bool = False, **options: Any) -> dict[str, Any]:
        """A page of history with graph lanes (``GitHistory.log`` has the options);
        ``may_write``: the commit-graph may be kept up to date on the way."""
        return await self.history.log(
            await self.resolve(path),
            may_write=may_write and not self.security.paths.read_only,
            **options,
        )

    async def commit_detail(self, path: str, oid: object) -> dict[str, Any]:
        return await commit_detail(self.runner, await self.resolve(path), oid, self.security.deny)


def _context(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_CONTEXT:
        raise InvalidRequest(
            f"'context' must be an integer from 0 to {MAX_CONTEXT}.", reason="invalid_parameter"
        )
    return value


def _files(repo: Repo, value: object) -> list[str]:
    if not isinstance(value, list) or not value or len(value) > MAX_FILES:
        raise InvalidRequest(
            f"'files' must be a list of 1 to {MAX_FILES} paths.", reason="invalid_parameter"
        )
    return list(dict.fromkeys(check_relpath(repo, f, name="files") for f in value))


def _with_rename_sources(status: Status, files: list[str]) -> list[str]:
    """Unstaging a staged rename's new name also unstages the removal of its old name."""
    sources = {e.path: e.old_path for e in status.staged if e.old_path and e.status == "renamed"}
    extra = [sources[f] for f in files if sources.get(f)]
    return list(dict.fromkeys([*files, *extra]))
