"""Read-only means no change through Terax: every mutating route of the OpenAPI document is
refused with 403 ``read_only`` (terminals: ``disabled_by_policy``) before it changes anything,
whether the server was made read-only by ``TeraxApp.read_only`` or by the administrator's
policy file. A new mutating route fails ``test_every_mutating_route_has_a_read_only_decision``
until it is refused here or allowed with a reason."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.openapi import openapi_document
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security.policy import POLICY_FILE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

MUTATING = ("post", "put", "patch", "delete")


@dataclass(frozen=True)
class Case:
    method: str
    route: str  # the OpenAPI path
    path: str  # what is called, below /terax/api/
    body: Any = None
    params: dict[str, str] = field(default_factory=dict)
    reason: str = "read_only"


# Every mutating route refused in read-only mode, with a body that would work otherwise.
REFUSED = (
    Case(
        "PUT", "/terax/api/fs/file", "fs/file", {"path": "a.txt", "content": "x", "overwrite": True}
    ),
    Case("DELETE", "/terax/api/fs/file", "fs/file", params={"path": "a.txt"}),
    Case("POST", "/terax/api/fs/create", "fs/create", {"path": "new.txt"}),
    Case("POST", "/terax/api/fs/rename", "fs/rename", {"path": "a.txt", "new_path": "z.txt"}),
    Case("POST", "/terax/api/fs/copy", "fs/copy", {"path": "a.txt", "new_path": "z.txt"}),
    Case("POST", "/terax/api/pty/sessions", "pty/sessions", {}, reason="disabled_by_policy"),
    Case(
        "POST",
        "/terax/api/pty/sessions/{session_id}/run",
        "pty/sessions/t1/run",
        {"command": "touch ran"},
        reason="disabled_by_policy",
    ),
    Case("PUT", "/terax/api/git/trust", "git/trust", {"path": "", "trusted": True}),
    Case("POST", "/terax/api/git/stage", "git/stage", {"path": "", "files": ["a.txt"]}),
    Case("POST", "/terax/api/git/unstage", "git/unstage", {"path": "", "files": ["b.txt"]}),
    Case("POST", "/terax/api/git/discard", "git/discard", {"path": "", "files": ["a.txt"]}),
    Case("POST", "/terax/api/git/commit", "git/commit", {"path": "", "message": "x"}),
    Case("POST", "/terax/api/git/fetch", "git/fetch", {"path": "", "remote": "origin"}),
    Case("POST", "/terax/api/git/pull", "git/pull", {"path": "", "remote": "origin"}),
    Case("POST", "/terax/api/git/push", "git/push", {"path": "", "remote": "origin"}),
    Case("POST", "/terax/api/git/branches", "git/branches", {"path": "", "name": "new"}),
    Case("POST", "/terax/api/git/checkout", "git/checkout", {"path": "", "branch": "other"}),
    Case(
        "POST",
        "/terax/api/git/resolve",
        "git/resolve",
        {"path": "", "files": ["a.txt"], "side": "ours"},
    ),
    Case(
        "POST",
        "/terax/api/git/operation",
        "git/operation",
        {"path": "", "operation": "merge", "action": "abort"},
    ),
    Case(
        "PUT",
        "/terax/api/git/identity",
        "git/identity",
        {"path": "", "name": "Mallory", "email": "m@example.com", "scope": "global"},
    ),
    Case("POST", "/terax/api/workspace/roots", "workspace/roots", {"path": "extra"}),
    Case("DELETE", "/terax/api/workspace/roots", "workspace/roots", params={"path": "extra"}),
    Case("PUT", "/terax/api/secrets/{name}", "secrets/OPENAI_API_KEY", {"value": "sk-test-123"}),
    Case("DELETE", "/terax/api/secrets/{name}", "secrets/OPENAI_API_KEY"),
    Case(
        "PUT",
        "/terax/api/ai/sessions/{session_id}/rules",
        "ai/sessions/{session}/rules",
        {"rules": [{"tool": "edit"}]},
    ),
    Case(
        "POST",
        "/terax/api/ai/sessions/{session_id}/plan",
        "ai/sessions/{session}/plan",
        {"action": "apply"},
    ),
    Case(
        "PUT",
        "/terax/api/ai/providers/{provider_id}",
        "ai/providers/mine",
        {"label": "Mine", "kind": "openai", "base_url": "https://api.example.com/v1"},
    ),
    Case("DELETE", "/terax/api/ai/providers/{provider_id}", "ai/providers/openai"),
    Case(
        "POST",
        "/terax/api/ai/models",
        "ai/models",
        {"provider": "openai", "id": "my-model", "context_window": 8000},
    ),
    Case(
        "DELETE",
        "/terax/api/ai/models",
        "ai/models",
        params={"provider": "openai", "model": "gpt-x"},
    ),
    Case(
        "PUT",
        "/terax/api/ai/agents/{name}",
        "ai/agents/mine",
        {"prompt": "p", "tools": ["read_file"]},
    ),
    Case("DELETE", "/terax/api/ai/agents/{name}", "ai/agents/mine"),
    Case("DELETE", "/terax/api/browser/workflows/{workflow}", "browser/workflows/flow"),
    Case(
        "POST",
        "/terax/api/browser/workflows/{workflow}/run",
        "browser/workflows/flow/run",
        {"side_effect": "mutating"},
    ),
    Case(
        "POST",
        "/terax/api/browser/tabs/{tab}/{action}",
        "browser/tabs/t1/save",
        {"name": "flow", "side_effect": "read_only"},
    ),
)

# Mutating routes that still work in read-only mode, each with why that changes nothing
# through Terax (in the workspace, git, settings or keys).
ALLOWED = {
    ("PATCH", "/terax/api/pty/sessions/{session_id}"): "no terminal exists: creation is refused",
    ("DELETE", "/terax/api/pty/sessions/{session_id}"): "ending a terminal changes no file",
    ("POST", "/terax/api/ai/sessions"): "a chat with the agent, whose mutating tools refuse",
    ("PATCH", "/terax/api/ai/sessions/{session_id}"): "a chat's own title, agent, model",
    ("DELETE", "/terax/api/ai/sessions/{session_id}"): "deletes a chat (Terax's own record)",
    ("POST", "/terax/api/ai/sessions/{session_id}/runs"): "a prompt; mutating tools refuse",
    ("POST", "/terax/api/ai/sessions/{session_id}/cancel"): "stops a run",
    ("POST", "/terax/api/ai/approvals/{approval_id}"): "no mutating call can ask: they refuse",
    ("POST", "/terax/api/ai/providers/{provider_id}/test"): "a model call; writes nothing",
    ("POST", "/terax/api/ai/complete"): "a completion is shown, not written",
    ("DELETE", "/terax/api/browser/tabs/{tab}"): "closes a headless tab",
    ("POST", "/terax/api/preview/capabilities"): "an address to view a page, not a change",
    ("DELETE", "/terax/api/preview/capabilities"): "revoking takes access away",
    **{
        (method, f"/terax/proxy/{{port}}{tail}/{{path}}"): "the previewed server's own requests"
        for method in ("POST", "PUT", "PATCH", "DELETE")
        for tail in ("", "~{capability}")
    },
}

# A tab's other actions (open, snapshot, click, type, wait) only drive the headless browser:
# the route is refused for its one action that writes (save), the case above.
PARTLY_ALLOWED = {("POST", "/terax/api/browser/tabs/{tab}/{action}")}


def mutating_routes() -> set[tuple[str, str]]:
    found = set()
    for route, operations in openapi_document()["paths"].items():
        for verb in operations:
            if verb in MUTATING:
                found.add((verb.upper(), route))
    return found


def test_every_mutating_route_has_a_read_only_decision() -> None:
    refused = {(case.method, case.route) for case in REFUSED}
    routes = mutating_routes()
    undecided = routes - refused - set(ALLOWED)
    assert not undecided, f"mutating routes with no read-only decision: {sorted(undecided)}"
    assert not refused - routes, "refused routes the document no longer has"
    assert not set(ALLOWED) - routes, "allowed routes the document no longer has"
    assert not (refused & set(ALLOWED) - PARTLY_ALLOWED)


# -- a real server, made read-only two ways -------------------------------------------------


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(params=["trait", "policy"])
def read_only_by(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    home = tmp_path / "git-home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Test\n\temail = test@example.com\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    if request.param == "policy":
        folder = tmp_path / "etc-jupyter"
        folder.mkdir()
        (folder / POLICY_FILE).write_text(json.dumps({"read_only": True}))
        # Named before the server starts: it reads the policy once.
        monkeypatch.setenv("TERAX_POLICY_DIRS", str(folder))
    return str(request.param)


@pytest.fixture
def terax_config(read_only_by: str) -> dict[str, Any]:
    return {"TeraxApp": {"read_only": True}} if read_only_by == "trait" else {}


@pytest.fixture
def repo(jp_root_dir: Path, tmp_path: Path) -> Path:
    """A repository with a staged change, an unstaged one, an untracked file, a second
    branch and an upstream: each git route has something it could change."""
    root = jp_root_dir
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("two\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    git(root, "branch", "other")
    upstream = tmp_path / "upstream.git"
    git(tmp_path, "init", "-q", "--bare", str(upstream))
    git(root, "remote", "add", "origin", str(upstream))
    git(root, "push", "-q", "-u", "origin", "main")
    (root / "a.txt").write_text("one changed\n")
    (root / "b.txt").write_text("two staged\n")
    git(root, "add", "b.txt")
    (root / "c.txt").write_text("untracked\n")
    (root / "extra").mkdir()
    return root


def tree(*folders: Path) -> dict[str, str]:
    """Every file under ``folders`` and its content's hash (the audit log aside: refusals
    may be recorded)."""
    found = {}
    for folder in folders:
        for top, _, files in os.walk(folder):
            for name in files:
                path = os.path.join(top, name)
                if name == "audit.jsonl":
                    continue
                with open(path, "rb") as stream:
                    found[path] = hashlib.sha256(stream.read()).hexdigest()
    return found


def snapshot(repo: Path, *folders: Path) -> dict[str, Any]:
    return {
        "status": git(repo, "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "config": git(repo, "config", "--list", "--show-origin"),
        "files": tree(repo, *folders),
    }


async def test_read_only_refuses_every_mutating_route(
    terax_api: Api,
    repo: Path,
    jp_data_dir: Path,
    tmp_path: Path,
    read_only_by: str,
) -> None:
    info = await terax_api("info")
    assert info["read_only"] is True, read_only_by
    # A chat still works read-only: the rules and plan routes are called on a real one.
    session = (await terax_api("ai/sessions", method="POST", body={}))["id"]
    before = snapshot(repo, jp_data_dir, tmp_path / "git-home", tmp_path / "upstream.git")
    problems = []
    for case in REFUSED:
        try:
            answer = await terax_api(
                case.path.format(session=session),
                method=case.method,
                body=case.body,
                params=case.params or None,
            )
        except HTTPClientError as error:
            try:
                reason = error_of(error).get("reason")
            except ValueError:
                reason = None
            if (error.code, reason) != (403, case.reason):
                problems.append(f"{case.method} {case.path}: {error.code} {reason}")
        else:
            problems.append(f"{case.method} {case.path}: answered {str(answer)[:80]!r}")
    after = snapshot(repo, jp_data_dir, tmp_path / "git-home", tmp_path / "upstream.git")
    assert not problems, "\n".join(problems)
    changed = sorted(
        path
        for path in before["files"].keys() | after["files"].keys()
        if before["files"].get(path) != after["files"].get(path)
    )
    assert not changed, f"files changed: {changed}"
    assert after == before


async def test_read_only_refusal_says_why(terax_api: Api, repo: Path) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("git/commit", method="POST", body={"path": "", "message": "x"})
    body = error_of(caught.value)
    assert caught.value.code == 403
    assert body["reason"] == "read_only"
    assert body["message"].startswith("The server is read-only")
