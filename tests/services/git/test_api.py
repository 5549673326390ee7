"""The git API over HTTP through a real server: shapes, status codes, and refusals."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

from .conftest import TEN_LINES, commit_all, diff_body, git, init_repo, write

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url


@pytest.fixture
def repo(jp_root_dir: Path) -> Path:
    root = init_repo(jp_root_dir / "repo")
    write(root, "notes.txt", TEN_LINES)
    commit_all(root, "first")
    return root


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    return caught.value.code, error_of(caught.value)


async def test_status_diff_stage_commit(terax_api: Api, repo: Path) -> None:
    write(repo, "notes.txt", TEN_LINES.replace("line 2\n", "two\n") + "line 11\n")
    status = await terax_api("git/status", params={"path": "repo"})
    assert [e["path"] for e in status["unstaged"]] == ["notes.txt"]
    info = await terax_api("git/repository", params={"path": "repo/notes.txt"})
    assert (info["relative_root"], info["head"]["branch"]) == ("repo", "main")
    diff = await terax_api("git/diff", params={"path": "repo", "file": "notes.txt"})
    assert len(diff["hunks"]) == 2
    status = await terax_api(
        "git/stage",
        method="POST",
        body={
            "path": "repo",
            "file": "notes.txt",
            "fingerprint": diff["fingerprint"],
            "selection": [{"hunk": 1}],
        },
    )
    assert [e["path"] for e in status["staged"]] == ["notes.txt"]
    assert diff_body(git(repo, "diff", "--cached")) == ["+line 11"]
    result = await terax_api(
        "git/commit", method="POST", body={"path": "repo", "message": "Add line 11"}
    )
    assert result["summary"] == "Add line 11"
    assert [e["path"] for e in result["status"]["unstaged"]] == ["notes.txt"]
    branches = await terax_api("git/branches", params={"path": "repo"})
    assert branches["current"] == "main"


async def test_discard_asks_first(terax_api: Api, repo: Path) -> None:
    write(repo, "notes.txt", "gone\n")
    code, body = await failure(
        terax_api, "git/discard", method="POST", body={"path": "repo", "files": ["notes.txt"]}
    )
    assert (code, body["reason"]) == (409, "confirmation_required")
    assert body["summary"] == {"files": 1, "lines_lost": 1}
    assert (repo / "notes.txt").read_text() == "gone\n"
    status = await terax_api(
        "git/discard",
        method="POST",
        body={"path": "repo", "files": ["notes.txt"], "confirm": body["confirm"]},
    )
    assert status["unstaged"] == []
    assert (repo / "notes.txt").read_text() == TEN_LINES


async def test_refusals_have_status_and_reason(
    terax_api: Api, repo: Path, jp_root_dir: Path
) -> None:
    (jp_root_dir / "plain").mkdir()
    write(repo, ".env", "TOKEN=abcdefgh12345\n")
    cases: list[tuple[str, dict[str, Any], int, str]] = [
        ("git/status", {"params": {"path": "plain"}}, 404, "not_a_repository"),
        ("git/status", {"params": {"path": "/etc"}}, 403, "path_denied"),
        ("git/diff", {"params": {"path": "repo", "file": ".env"}}, 403, "path_denied"),
        ("git/diff", {"params": {"path": "repo", "file": "--output=x"}}, 400, "invalid_path"),
        (
            "git/diff",
            {"params": {"path": "repo", "file": "a", "source": "x"}},
            400,
            "invalid_parameter",
        ),
        (
            "git/stage",
            {"method": "POST", "body": {"path": "repo", "files": ["../x"]}},
            400,
            "invalid_path",
        ),
        (
            "git/stage",
            {"method": "POST", "body": {"path": "repo", "files": ["-rf"]}},
            400,
            "invalid_path",
        ),
        (
            "git/stage",
            {
                "method": "POST",
                "body": {
                    "path": "repo",
                    "file": "notes.txt",
                    "fingerprint": "stale",
                    "selection": [{"hunk": 0}],
                },
            },
            409,
            "stale_diff",
        ),
        (
            "git/commit",
            {"method": "POST", "body": {"path": "repo", "message": "x"}},
            409,
            "nothing_to_commit",
        ),
        (
            "git/branches",
            {"method": "POST", "body": {"path": "repo", "name": "a..b"}},
            400,
            "invalid_ref",
        ),
        (
            "git/checkout",
            {"method": "POST", "body": {"path": "repo", "branch": "nope"}},
            404,
            "unknown_branch",
        ),
        ("git/push", {"method": "POST", "body": {"path": "repo"}}, 409, "no_remote"),
    ]
    for path, kwargs, expected_code, expected_reason in cases:
        code, body = await failure(terax_api, path, **kwargs)
        assert (code, body["reason"]) == (expected_code, expected_reason), (path, kwargs, body)
    assert not (repo / "x").exists()
    assert git(repo, "diff", "--cached", "--name-only") == ""


async def test_checkout_would_overwrite_is_409_and_nothing_changes(
    terax_api: Api, repo: Path
) -> None:
    git(repo, "switch", "-q", "-c", "other")
    write(repo, "notes.txt", "other\n")
    commit_all(repo, "other")
    git(repo, "switch", "-q", "main")
    write(repo, "notes.txt", "mine\n")
    code, body = await failure(
        terax_api, "git/checkout", method="POST", body={"path": "repo", "branch": "other"}
    )
    assert (code, body["reason"]) == (409, "would_overwrite")
    assert (repo / "notes.txt").read_text() == "mine\n"


async def test_hook_failure_is_409_with_its_output(terax_api: Api, repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text("#!/bin/sh\necho 'message must reference an issue' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    write(repo, "notes.txt", "x\n")
    git(repo, "add", "notes.txt")
    # Hooks run only in a repository the user trusts.
    trust = await terax_api("git/trust", method="PUT", body={"path": "repo", "trusted": True})
    assert (trust["trusted"], trust["hooks"]) == (True, ["commit-msg"])
    code, body = await failure(
        terax_api, "git/commit", method="POST", body={"path": "repo", "message": "no issue"}
    )
    assert (code, body["reason"]) == (409, "hook_failed")
    assert "message must reference an issue" in body["message"]


async def test_index_lock_is_409_and_kept(terax_api: Api, repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    write(repo, "notes.txt", "x\n")
    code, body = await failure(
        terax_api, "git/stage", method="POST", body={"path": "repo", "files": ["notes.txt"]}
    )
    assert (code, body["reason"]) == (409, "index_locked")
    assert lock.exists()


async def test_an_empty_path_is_the_server_root(terax_api: Api, jp_root_dir: Path) -> None:
    # As in the file API: "" names the server root, which here is not (yet) a repository.
    code, error = await failure(terax_api, "git/status", params={"path": ""})
    assert (code, error["reason"]) == (404, "not_a_repository")
    init_repo(jp_root_dir)
    write(jp_root_dir, "top.txt", "x\n")
    status = await terax_api("git/status", params={"path": ""})
    assert [e["path"] for e in status["untracked"]] == ["top.txt"]


async def test_conflict_take_side_continue_and_identity(
    terax_api: Api, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real merge conflict through HTTP: the conflicted diff, take theirs, continue; the
    refusals are 409 with their reason; the identity is read and set."""
    git(repo, "switch", "-q", "-c", "other")
    write(repo, "notes.txt", "theirs\n")
    commit_all(repo, "theirs")
    git(repo, "switch", "-q", "main")
    write(repo, "notes.txt", "ours\n")
    commit_all(repo, "ours")
    git(repo, "merge", "other", check=False)
    diff = await terax_api("git/diff", params={"path": "repo", "file": "notes.txt"})
    assert diff["status"] == "conflicted"
    assert diff["conflict"]["sides"]["theirs"]["text"] == "theirs\n"
    code, error = await failure(
        terax_api, "git/operation", method="POST",
        body={"path": "repo", "operation": "merge", "action": "continue"},
    )  # fmt: skip
    assert (code, error["reason"]) == (409, "unmerged_files")
    code, error = await failure(
        terax_api, "git/resolve", method="POST",
        body={"path": "repo", "files": ["nope.txt"], "side": "ours"},
    )  # fmt: skip
    assert (code, error["reason"]) == (409, "not_conflicted")
    status = await terax_api(
        "git/resolve",
        method="POST",
        body={"path": "repo", "files": ["notes.txt"], "side": "theirs"},
    )
    assert status["conflicted"] == []
    assert status["operation"] == "merge"
    result = await terax_api(
        "git/operation", method="POST",
        body={"path": "repo", "operation": "merge", "action": "continue"},
    )  # fmt: skip
    assert result["status"]["operation"] is None
    assert result["stopped"] is False
    code, error = await failure(
        terax_api, "git/operation", method="POST",
        body={"path": "repo", "operation": "merge", "action": "abort"},
    )  # fmt: skip
    assert (code, error["reason"]) == (409, "no_operation")
    identity = await terax_api("git/identity", params={"path": "repo"})
    assert set(identity) >= {"name", "email", "configured"}
    updated = await terax_api(
        "git/identity", method="PUT",
        body={"path": "repo", "name": "Grace", "email": "grace@example.com"},
    )  # fmt: skip
    assert (updated["name"], updated["name_scope"]) == ("Grace", "local")
    code, error = await failure(
        terax_api, "git/identity", method="PUT",
        body={"path": "repo", "name": "Grace", "email": "g@x", "scope": "system"},
    )  # fmt: skip
    assert (code, error["reason"]) == (400, "invalid_parameter")
