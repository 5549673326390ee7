"""The history API over HTTP: log pages with lanes, commit detail, and what it refuses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

from .history_fixtures import build_history, git
from .test_graph import check_layout

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url


@pytest.fixture
def named(jp_root_dir: Path) -> dict[str, str]:
    return build_history(jp_root_dir / "repo")


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    body = error_of(caught.value)
    assert set(body) == {"message", "reason"}
    return caught.value.code, body["reason"]


async def test_log_pages_and_commit_detail(terax_api: Api, named: dict[str, str]) -> None:
    commits: list[dict[str, Any]] = []
    params: dict[str, Any] = {"path": "repo/README.md", "limit": 3}
    while True:
        page = await terax_api("git/log", params=params)
        assert page["graph"] is True
        commits += page["commits"]
        if page["cursor"] is None:
            break
        params["cursor"] = page["cursor"]
    assert len(commits) == 10
    assert commits[0]["oid"] == named["c4"]
    check_layout([(c["oid"], tuple(c["parents"])) for c in commits], [c["graph"] for c in commits])
    whole = await terax_api("git/log", params={"path": "repo", "limit": 1000})
    assert whole["commits"] == commits

    detail = await terax_api("git/commit", params={"path": "repo", "oid": named["c3"]})
    assert detail["stats"]["files"] == 3
    assert {f["path"]: f["status"] for f in detail["files"]}["b.txt"] == "renamed"
    assert detail["web_url"].startswith("https://github.com/terax/demo/commit/")


async def test_filters_over_http(terax_api: Api, named: dict[str, str]) -> None:
    page = await terax_api("git/log", params={"path": "repo", "query": "topic", "ref": "main"})
    assert page["graph"] is False
    assert {c["oid"] for c in page["commits"]} == {named["a"], named["b"]}
    by_file = await terax_api("git/log", params={"path": "repo", "file": "feature.txt"})
    assert {c["oid"] for c in by_file["commits"]} >= {named["f1"], named["f2"]}


@pytest.mark.parametrize(
    ("params", "status", "reason"),
    [
        ({"limit": "0"}, 400, "invalid_parameter"),
        ({"limit": "-1"}, 400, "invalid_parameter"),
        ({"limit": "1001"}, 400, "invalid_parameter"),
        ({"limit": str(10**30)}, 400, "invalid_parameter"),
        ({"limit": "many"}, 400, "invalid_parameter"),
        ({"cursor": "garbage"}, 400, "bad_cursor"),
        ({"ref": "--output=/tmp/terax-history-injection"}, 400, "invalid_parameter"),
        ({"ref": "no-such-branch"}, 404, "unknown_revision"),
        ({"file": "../../etc/passwd"}, 400, "invalid_path"),
        ({"file": "--output=x"}, 400, "invalid_path"),
        ({"query": "a\u0007b"}, 400, "invalid_parameter"),
        ({"refs": "pull"}, 400, "invalid_parameter"),
        ({"refs": "--all"}, 400, "invalid_parameter"),
    ],
)
async def test_log_refusals(
    terax_api: Api, named: dict[str, str], params: dict[str, str], status: int, reason: str
) -> None:
    code, why = await failure(terax_api, "git/log", params={"path": "repo", **params})
    assert (code, why) == (status, reason)


async def test_injected_ref_writes_nothing(
    terax_api: Api, named: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "injected"
    for ref in (f"--output={target}", f"-o{target}"):
        await failure(terax_api, "git/log", params={"path": "repo", "ref": ref})
    assert not target.exists()


@pytest.mark.parametrize(
    ("oid", "status", "reason"),
    [
        ("main", 400, "invalid_oid"),
        ("--output=/tmp/x", 400, "invalid_oid"),
        ("zz" * 20, 400, "invalid_oid"),
        ("0" * 40, 404, "unknown_revision"),
    ],
)
async def test_commit_refusals(
    terax_api: Api, named: dict[str, str], oid: str, status: int, reason: str
) -> None:
    code, why = await failure(terax_api, "git/commit", params={"path": "repo", "oid": oid})
    assert (code, why) == (status, reason)


async def test_commit_needs_an_oid(terax_api: Api, named: dict[str, str]) -> None:
    assert await failure(terax_api, "git/commit", params={"path": "repo"}) == (
        400,
        "missing_parameter",
    )


async def test_not_a_repository_and_outside_the_workspace(
    terax_api: Api, jp_root_dir: Path, tmp_path: Path
) -> None:
    (jp_root_dir / "plain").mkdir()
    assert await failure(terax_api, "git/log", params={"path": "plain"}) == (
        404,
        "not_a_repository",
    )
    outside = tmp_path / "elsewhere"
    build_history(outside)
    code, _ = await failure(terax_api, "git/log", params={"path": str(outside)})
    assert code == 403
    code, _ = await failure(terax_api, "git/commit", params={"path": str(outside), "oid": "a" * 40})
    assert code == 403


async def test_history_changed_is_a_conflict(
    terax_api: Api, named: dict[str, str], jp_root_dir: Path
) -> None:
    first = await terax_api("git/log", params={"path": "repo", "limit": 2})
    git(jp_root_dir / "repo", "tag", "moved")
    code, reason = await failure(
        terax_api, "git/log", params={"path": "repo", "limit": 2, "cursor": first["cursor"]}
    )
    assert (code, reason) == (409, "history_changed")


async def test_refs_over_http(terax_api: Api, named: dict[str, str], jp_root_dir: Path) -> None:
    root = jp_root_dir / "repo"
    tree = git(root, "rev-parse", "main^{tree}").strip()
    pull = git(root, "commit-tree", "-p", named["c4"], "-m", "pull request 1", tree).strip()
    git(root, "update-ref", "refs/pull/1/head", pull)
    default = await terax_api("git/log", params={"path": "repo"})
    assert pull not in {c["oid"] for c in default["commits"]}
    assert len(default["commits"]) == 10
    everything = await terax_api("git/log", params={"path": "repo", "refs": "all"})
    assert everything["commits"][0]["oid"] == pull
    assert everything["lanes"] == []
    check_layout(
        [(c["oid"], tuple(c["parents"])) for c in everything["commits"]],
        [c["graph"] for c in everything["commits"]],
    )
    # A page from the middle carries the lanes above it.
    second = await terax_api(
        "git/log",
        params={"path": "repo", "refs": "all", "limit": 2, "cursor": (
            await terax_api("git/log", params={"path": "repo", "refs": "all", "limit": 2})
        )["cursor"]},
    )  # fmt: skip
    assert second["lanes"]
    code, reason = await failure(terax_api, "git/log", params={"path": "repo", "refs": "bogus"})
    assert (code, reason) == (400, "invalid_parameter")
