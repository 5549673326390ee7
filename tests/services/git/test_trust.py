"""Repository trust through a real server: every read route on hostile repositories runs
nothing; hooks run for commit and push only once the user trusts the repository; reads of a
user who may not write (a read-only Authorizer, a read-only server) write nothing."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_server.auth import Authorizer
from tornado.httpclient import HTTPClientError

from terax_jupyter.exceptions import Conflict
from terax_jupyter.pytest_plugin import BASE_URLS, error_of
from terax_jupyter.services.git.manager import GitManager

from .conftest import commit_all, git, init_repo, write
from .hostile import (
    Trap,
    embedded_bare_clone,
    git_state,
    hostile_config,
    make_trap,
    plant_hooks,
    raw_git,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.security import SecurityLayer

    Api = Callable[..., Awaitable[Any]]

COMMIT_HOOKS = ("pre-commit", "commit-msg", "post-commit")


class NoGitWrites(Authorizer):  # type: ignore[misc]
    """May read everything, may change no repository."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return not (action == "write" and resource == "terax.git")


@pytest.fixture
def trap(tmp_path: Path) -> Trap:
    return make_trap(tmp_path / "trap")


@pytest.fixture
def history_repo(jp_root_dir: Path) -> Path:
    root = init_repo(jp_root_dir / "repo")
    for n in range(3):
        write(root, "notes.txt", f"version {n}\n")
        commit_all(root, f"commit {n}")
    write(root, "notes.txt", "work in progress\n")
    return root


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    return caught.value.code, error_of(caught.value)


async def every_read(api: Api, path: str, head: str) -> list[Any]:
    """Each read route of the git API once, for the repository of ``path``."""
    return [
        await api("git/repository", params={"path": path}),
        await api("git/status", params={"path": path}),
        await api("git/diff", params={"path": path, "file": "notes.txt"}),
        await api("git/diff", params={"path": path, "file": "touched.txt"}),
        await api("git/diff", params={"path": path, "file": "notes.txt", "source": "index"}),
        await api(
            "git/diff",
            params={"path": path, "file": "notes.txt", "source": "commit", "commit": head},
        ),
        await api("git/log", params={"path": path}),
        await api("git/log", params={"path": path, "file": "notes.txt"}),
        await api("git/commit", params={"path": path, "oid": head}),
        await api("git/branches", params={"path": path}),
        await api("git/trust", params={"path": path}),
    ]


async def read(path: str) -> str:
    return await asyncio.to_thread(Path(path).read_text, encoding="utf-8")


def context(serverapp: Any) -> Any:
    return serverapp.web_app.settings["terax"]


@pytest.mark.parametrize("jp_base_url", BASE_URLS)
async def test_every_read_route_runs_nothing_a_hostile_repository_names(
    terax_api: Api, jp_root_dir: Path, jp_serverapp: Any, trap: Trap
) -> None:
    root = hostile_config(jp_root_dir / "hostile", trap)
    raw_git(root, "status")
    assert trap.fired(), "plain git status runs the repository's fsmonitor"
    trap.reset()
    before = git_state(root / ".git")
    head = git(root, "rev-parse", "HEAD~1").strip()
    answers = await every_read(terax_api, "hostile", head)
    await context(jp_serverapp).git.history.wait_commit_graph(str(root))
    assert trap.fired() == []
    repository, status = answers[0], answers[1]
    assert repository["trust"]["trusted"] is False
    assert "core.fsmonitor" in {p["key"] for p in repository["trust"]["programs"]}
    assert [e["path"] for e in status["unstaged"]] == ["notes.txt"]
    # This user may write: the commit-graph (and nothing else) was written.
    changed = {k for k, v in git_state(root / ".git").items() if before.get(k) != v}
    assert changed
    assert all(k.startswith("objects/info/commit-graph") for k in changed), changed


async def test_browsing_into_an_embedded_bare_repository_runs_nothing(
    terax_api: Api, jp_root_dir: Path, tmp_path: Path, trap: Trap
) -> None:
    clone = embedded_bare_clone(jp_root_dir, tmp_path / "source", trap)
    raw_git(clone / "docs" / "payload", "status")
    assert trap.fired()
    trap.reset()
    # What the Git panel asks when the file browser enters a folder.
    for folder in ("clone/docs/payload", "clone/docs/payload/refs/heads"):
        info = await terax_api("git/repository", params={"path": folder})
        assert info["relative_root"] == "clone"
        status = await terax_api("git/status", params={"path": info["root"]})
        assert status["root"] == str(clone)
        await terax_api("git/log", params={"path": folder})
        await terax_api("git/branches", params={"path": folder})
        await terax_api("git/trust", params={"path": folder})
    assert trap.fired() == []


@pytest.mark.parametrize(
    "terax_config",
    [
        {"ServerApp": {"authorizer_class": NoGitWrites}},
        {"TeraxApp": {"read_only": True}},
    ],
    ids=["read-only-authorizer", "read-only-server"],
)
async def test_reads_of_a_user_who_may_not_write_write_nothing(
    terax_api: Api, history_repo: Path, jp_serverapp: Any
) -> None:
    before = git_state(history_repo / ".git")
    head = git(history_repo, "rev-parse", "HEAD").strip()
    await terax_api("git/repository", params={"path": "repo"})
    await terax_api("git/status", params={"path": "repo"})
    await terax_api("git/diff", params={"path": "repo", "file": "notes.txt"})
    await terax_api("git/log", params={"path": "repo"})
    await terax_api("git/commit", params={"path": "repo", "oid": head})
    await terax_api("git/branches", params={"path": "repo"})
    await context(jp_serverapp).git.history.wait_commit_graph(str(history_repo))
    assert git_state(history_repo / ".git") == before
    assert not (history_repo / ".git" / "objects" / "info" / "commit-graphs").exists()
    # And no change of trust either.
    code, _ = await failure(
        terax_api, "git/trust", method="PUT", body={"path": "repo", "trusted": True}
    )
    assert code == 403
    assert (await terax_api("git/trust", params={"path": "repo"}))["trusted"] is False


@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"read_only": True}}])
async def test_a_read_only_server_changes_no_repository(terax_api: Api, history_repo: Path) -> None:
    before = git_state(history_repo / ".git")
    for route, body in (
        ("git/stage", {"path": "repo", "files": ["notes.txt"]}),
        ("git/commit", {"path": "repo", "message": "no"}),
        ("git/branches", {"path": "repo", "name": "topic"}),
        ("git/checkout", {"path": "repo", "branch": "main"}),
        ("git/fetch", {"path": "repo"}),
    ):
        code, error = await failure(terax_api, route, method="POST", body=body)
        assert (code, error["reason"]) == (403, "read_only"), route
    assert git_state(history_repo / ".git") == before


async def test_reads_of_a_user_who_may_write_keep_the_commit_graph(
    terax_api: Api, history_repo: Path, jp_serverapp: Any
) -> None:
    # The control of the test above: the same reads by a user who may write do write it.
    await terax_api("git/repository", params={"path": "repo"})
    await context(jp_serverapp).git.history.wait_commit_graph(str(history_repo))
    assert (history_repo / ".git" / "objects" / "info" / "commit-graphs").exists()


async def test_trust_is_asked_for_remembered_and_audited(
    terax_api: Api, history_repo: Path, jp_serverapp: Any
) -> None:
    plant_hooks(history_repo / ".git", make_trap(history_repo.parent / "t"), ("pre-commit",))
    trust = await terax_api("git/trust", params={"path": "repo/notes.txt"})
    assert trust == {
        "trusted": False,
        "source": None,
        "trusted_by": None,
        "trusted_at": None,
        "can_change": True,
        "programs": [],
        "hooks": ["pre-commit"],
    }
    code, error = await failure(
        terax_api, "git/trust", method="PUT", body={"path": "repo", "trusted": "yes"}
    )
    assert (code, error["reason"]) == (400, "invalid_parameter")
    trust = await terax_api("git/trust", method="PUT", body={"path": "repo", "trusted": True})
    assert (trust["trusted"], trust["source"]) == (True, "user")
    assert trust["trusted_at"]
    info = await terax_api("git/repository", params={"path": "repo"})
    assert info["trust"]["trusted"] is True
    # Remembered in a private file of the server's state folder ...
    git_manager: GitManager = context(jp_serverapp).git
    store = git_manager.trust._store_path
    assert store is not None
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    saved = json.loads(await asyncio.to_thread(Path(store).read_text, encoding="utf-8"))
    assert [r["root"] for r in saved["repositories"]] == [str(history_repo)]
    # ... and audited.
    audit = await read(context(jp_serverapp).security.audit.path)
    assert '"action": "git.repository_trusted"' in audit
    trust = await terax_api("git/trust", method="PUT", body={"path": "repo", "trusted": False})
    assert trust["trusted"] is False
    audit = await read(context(jp_serverapp).security.audit.path)
    assert '"action": "git.repository_untrusted"' in audit


@pytest.mark.parametrize("terax_config", [{"GitManager": {"allow_user_trust": False}}])
async def test_an_administrator_may_forbid_trusting(terax_api: Api, history_repo: Path) -> None:
    assert (await terax_api("git/trust", params={"path": "repo"}))["can_change"] is False
    code, error = await failure(
        terax_api, "git/trust", method="PUT", body={"path": "repo", "trusted": True}
    )
    assert (code, error["reason"]) == (403, "trust_locked")


async def test_commit_runs_hooks_only_in_a_trusted_repository(
    terax_api: Api, history_repo: Path, trap: Trap
) -> None:
    plant_hooks(history_repo / ".git", trap, COMMIT_HOOKS)
    git(history_repo, "add", "notes.txt")
    trap.reset()
    result = await terax_api(
        "git/commit", method="POST", body={"path": "repo", "message": "untrusted"}
    )
    assert trap.fired() == []
    assert result["trusted"] is False
    assert result["hooks_skipped"] == ["pre-commit", "commit-msg", "post-commit"]
    assert git(history_repo, "log", "-1", "--format=%s").strip() == "untrusted"
    await terax_api("git/trust", method="PUT", body={"path": "repo", "trusted": True})
    write(history_repo, "notes.txt", "trusted\n")
    git(history_repo, "add", "notes.txt")
    result = await terax_api(
        "git/commit", method="POST", body={"path": "repo", "message": "trusted"}
    )
    assert [line.split()[0] for line in trap.fired()] == list(COMMIT_HOOKS)
    assert (result["trusted"], result["hooks_skipped"]) == (True, [])


async def test_push_runs_pre_push_only_in_a_trusted_repository(
    terax_api: Api, history_repo: Path, tmp_path: Path, trap: Trap
) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(history_repo, "remote", "add", "origin", str(bare))
    plant_hooks(history_repo / ".git", trap, ("pre-push", "reference-transaction"))
    result = await terax_api("git/push", method="POST", body={"path": "repo"})
    assert trap.fired() == []
    assert result["hooks_skipped"] == ["pre-push", "reference-transaction"]
    assert git(bare, "rev-parse", "main") == git(history_repo, "rev-parse", "main")
    await terax_api("git/trust", method="PUT", body={"path": "repo", "trusted": True})
    write(history_repo, "notes.txt", "more\n")
    commit_all(history_repo, "more")
    trap.reset()
    result = await terax_api("git/push", method="POST", body={"path": "repo"})
    assert "pre-push" in [line.split()[0] for line in trap.fired()]
    assert result["hooks_skipped"] == []


# -- the store, without a server -------------------------------------------------------------


async def test_trust_survives_a_restart_but_not_a_new_repository(
    terax_security: Callable[..., SecurityLayer], workspace_root: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    repo = init_repo(workspace_root / "repo")
    first = GitManager(terax_security(workspace_root), str(state))
    await first.set_trust(str(repo), True, user="ada")
    second = GitManager(terax_security(workspace_root), str(state))
    assert (await second.resolve(str(repo))).trusted is True
    # The folder is moved away and another repository put in its place (an archive
    # unpacked there brings its own .git).
    repo.rename(workspace_root / "moved")
    init_repo(repo)
    assert (await second.resolve(str(repo))).trusted is False
    third = GitManager(terax_security(workspace_root), str(state))
    assert (await third.resolve(str(repo))).trusted is False


async def test_a_store_others_can_write_is_not_honoured(
    terax_security: Callable[..., SecurityLayer], workspace_root: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    repo = init_repo(workspace_root / "repo")
    await GitManager(terax_security(workspace_root), str(state)).set_trust(
        str(repo), True, user="ada"
    )
    (state / "git-trust.json").chmod(0o666)
    manager = GitManager(terax_security(workspace_root), str(state))
    assert (await manager.resolve(str(repo))).trusted is False


async def test_an_admin_folder_the_workspace_refuses_is_logged_and_not_trusted(
    terax_security: Callable[..., SecurityLayer],
    workspace_root: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    outside = init_repo(tmp_path / "elsewhere" / "repo")
    inside = init_repo(workspace_root / "team" / "repo")
    with caplog.at_level(logging.WARNING):
        manager = GitManager(
            terax_security(workspace_root),
            str(tmp_path / "state"),
            trusted_folders=[str(outside.parent), str(inside.parent)],
        )
    assert f"Not trusting {outside.parent}" in caplog.text
    assert (await manager.trust_info(str(inside)))["source"] == "admin"


async def test_admin_folders_are_trusted_and_stay_so(
    terax_security: Callable[..., SecurityLayer], workspace_root: Path, tmp_path: Path
) -> None:
    repo = init_repo(workspace_root / "team" / "repo")
    manager = GitManager(
        terax_security(workspace_root), str(tmp_path / "state"), trusted_folders=[str(repo.parent)]
    )
    info = await manager.trust_info(str(repo))
    assert (info["trusted"], info["source"], info["can_change"]) == (True, "admin", False)
    with pytest.raises(Conflict) as caught:
        await manager.set_trust(str(repo), False, user="ada")
    assert caught.value.reason == "admin_trusted"
