"""REST handlers of the git API (``/terax/api/git/...``): status, diffs, staging, commits."""

from __future__ import annotations

from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from tornado import web

from terax_jupyter.base import TeraxAPIHandler, parse_bool
from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.git.operations import Confirmation

AUTH_RESOURCE = "terax.git"


class GitHandler(TeraxAPIHandler):
    auth_resource = AUTH_RESOURCE

    def path_argument(self) -> str:
        return self.string_argument("path", "")

    def body_path(self, body: dict[str, Any]) -> str:
        value = body.get("path", "")
        if not isinstance(value, str):
            raise InvalidRequest("'path' must be a string.", reason="invalid_parameter")
        return value

    async def may_write(self) -> bool:
        """Whether this user may change repositories: 'write' on terax.git, and the server
        is not read-only. A read for a user who may not writes nothing (no commit-graph)."""
        if self.terax.security.paths.read_only:
            return False
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "write", self.auth_resource)
        )
        return bool(allowed)

    def finish_result(self, result: dict[str, Any] | Confirmation) -> None:
        if isinstance(result, Confirmation):
            self.finish_json(result.to_dict(), status=409)
        else:
            self.finish_json(result)


class RepositoryHandler(GitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(
            await self.terax.git.repository(self.path_argument(), may_write=await self.may_write())
        )


class TrustHandler(GitHandler):
    """Whether git may run the programs a repository names (hooks, filters): ``GET`` says,
    ``PUT {"path", "trusted"}`` changes it (audited)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.terax.git.trust_info(self.path_argument()))

    @web.authenticated
    @authorized
    async def put(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.set_trust(
                self.body_path(body), body.get("trusted"), user=self.user_name
            )
        )


class StatusHandler(GitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.terax.git.status(self.path_argument()))


class DiffHandler(GitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(
            await self.terax.git.diff(
                self.path_argument(),
                self.string_argument("file"),
                source=self.string_argument("source", "worktree"),
                commit=self.string_argument("commit", None),
                context=self.int_argument("context", 3, minimum=0, maximum=1000),
                old_file=self.string_argument("old_file", None),
            )
        )


class StageHandler(GitHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(await self.terax.git.stage(self.body_path(body), body))


class UnstageHandler(GitHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(await self.terax.git.unstage(self.body_path(body), body))


class DiscardHandler(GitHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_result(await self.terax.git.discard(self.body_path(body), body))


class CommitHandler(GitHandler):
    """One path, two verbs: ``GET`` a commit's detail, ``POST`` make a commit."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(
            await self.terax.git.commit_detail(self.path_argument(), self.string_argument("oid"))
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.commit(
                self.body_path(body),
                body.get("message"),
                amend=parse_bool(body.get("amend", False), "amend"),
                signoff=parse_bool(body.get("signoff", False), "signoff"),
            )
        )


class RemoteHandler(GitHandler):
    """fetch, pull (fast-forward only) and push (sets the upstream when missing)."""

    async def remote_action(self, action: str) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.remote_action(
                action, self.body_path(body), body.get("remote"), body.get("branch")
            )
        )


class FetchHandler(RemoteHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.remote_action("fetch")


class PullHandler(RemoteHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.remote_action("pull")


class PushHandler(RemoteHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self.remote_action("push")


class BranchesHandler(GitHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.terax.git.branches(self.path_argument()))

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.create_branch(
                self.body_path(body),
                body.get("name"),
                start_point=body.get("start_point"),
                checkout=parse_bool(body.get("checkout", False), "checkout"),
            )
        )


class CheckoutHandler(GitHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(await self.terax.git.checkout(self.body_path(body), body.get("branch")))


class ResolveHandler(GitHandler):
    """``POST {"path", "files", "side"}``: take ours or theirs for conflicted files."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.resolve_conflict(
                self.body_path(body), body.get("files"), body.get("side")
            )
        )


class OperationHandler(GitHandler):
    """``POST {"path", "operation", "action"}``: continue, abort or skip what is in progress."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.operation_action(
                self.body_path(body), body.get("operation"), body.get("action")
            )
        )


class IdentityHandler(GitHandler):
    """``GET`` the user.name and user.email git commits with; ``PUT`` sets them."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish_json(await self.terax.git.identity(self.path_argument()))

    @web.authenticated
    @authorized
    async def put(self) -> None:
        body = self.json_body()
        self.finish_json(
            await self.terax.git.set_identity(
                self.body_path(body),
                body.get("name"),
                body.get("email"),
                body.get("scope", "local"),
            )
        )


default_handlers = [
    (r"/terax/api/git/repository", RepositoryHandler),
    (r"/terax/api/git/trust", TrustHandler),
    (r"/terax/api/git/status", StatusHandler),
    (r"/terax/api/git/diff", DiffHandler),
    (r"/terax/api/git/stage", StageHandler),
    (r"/terax/api/git/unstage", UnstageHandler),
    (r"/terax/api/git/discard", DiscardHandler),
    (r"/terax/api/git/commit", CommitHandler),
    (r"/terax/api/git/fetch", FetchHandler),
    (r"/terax/api/git/pull", PullHandler),
    (r"/terax/api/git/push", PushHandler),
    (r"/terax/api/git/branches", BranchesHandler),
    (r"/terax/api/git/checkout", CheckoutHandler),
    (r"/terax/api/git/resolve", ResolveHandler),
    (r"/terax/api/git/operation", OperationHandler),
    (r"/terax/api/git/identity", IdentityHandler),
]
