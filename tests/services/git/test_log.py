"""The history log on real repositories: order, decorations, pages, filters, commit-graph."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound
from terax_jupyter.services.git.graph import decode_rows
from terax_jupyter.services.git.log import GitHistory, parse_decorations, parse_log

from .history_fixtures import (
    commit,
    fast_import,
    git,
    graph_rows,
    history,  # noqa: F401 (fixture)
    init,
    random_dag,
    repo_of,
    runner,  # noqa: F401 (fixture)
)
from .test_graph import check_layout

if TYPE_CHECKING:
    from terax_jupyter.services.git.repository import Repo
    from terax_jupyter.services.git.runner import GitRunner

    History = tuple[Repo, dict[str, str]]


@pytest.fixture
def log(runner: GitRunner) -> GitHistory:  # noqa: F811
    return GitHistory(runner, write_commit_graph=False)


async def all_pages(log: GitHistory, repo: Repo, size: int, **filters: Any) -> list[dict]:
    commits: list[dict] = []
    cursor = None
    while True:
        page = await log.log(repo, limit=size, cursor=cursor, **filters)
        commits += page["commits"]
        assert page["total_known"] == len(commits) + (1 if page["cursor"] else 0)
        cursor = page["cursor"]
        if cursor is None:
            return commits


def test_parse_log_and_decorations() -> None:
    record = (
        "a" * 40
        + "\x1f"
        + "b" * 40
        + " "
        + "c" * 40
        + "\x1fAda\x1fada@x\x1f2024-01-02T03:04:05+01:00"
    )
    record += "\x1fHEAD -> refs/heads/main, tag: refs/tags/v1, refs/remotes/origin/HEAD, "
    record += "refs/remotes/origin/main, refs/stash\x1fsubject \x1f with a separator"
    (entry,) = parse_log(record.encode() + b"\0\n")
    assert entry.parents == ("b" * 40, "c" * 40)
    assert entry.subject == "subject \x1f with a separator"
    assert parse_decorations(entry.decorations) == [
        {"kind": "head", "name": "HEAD"},
        {"kind": "branch", "name": "main"},
        {"kind": "tag", "name": "v1"},
        {"kind": "remote", "name": "origin/main"},
    ]
    assert parse_decorations("HEAD") == [{"kind": "head", "name": "HEAD"}]
    assert parse_decorations("") == []


async def test_first_page_order_refs_and_lanes(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, c = history
    # A stash is a commit under refs/stash: it must not show up as history.
    (Path(repo.root) / "README.md").write_text("wip\n")
    git(repo.root, "stash", "-q")
    page = await log.log(repo, limit=50)
    assert page["graph"] is True
    assert page["cursor"] is None
    oids = [x["oid"] for x in page["commits"]]
    expected = git(
        repo.root, "log", "--exclude=refs/stash", "--all", "--topo-order", "--format=%H"
    ).split()
    assert oids == expected
    assert len(oids) == page["total_known"] == 10
    by = {x["oid"]: x for x in page["commits"]}
    assert by[c["c4"]]["refs"] == [
        {"kind": "head", "name": "HEAD"},
        {"kind": "branch", "name": "main"},
    ]
    assert {"kind": "tag", "name": "v2"} in by[c["m1"]]["refs"]
    assert {"kind": "remote", "name": "origin/main"} in by[c["m1"]]["refs"]
    assert by[c["c2"]]["refs"] == [{"kind": "tag", "name": "v1"}]
    assert by[c["m2"]]["parents"] == [c["m1"], c["a"], c["b"]]
    rows = decode_rows(page["lanes"], [x["graph"] for x in page["commits"]])
    graphs = dict(zip(oids, rows, strict=True))
    merges = [e for e in graphs[c["m2"]]["edges"] if e["kind"] == "merge"]
    assert len(merges) == 2
    first = page["commits"][0]
    assert first["short"] == first["oid"][:7]
    assert first["author"] == "Ada Lovelace"
    assert first["email"] == "ada@example.com"
    assert first["date"].endswith("+01:00")
    assert first["subject"] == "fourth: after the octopus"
    check_layout(
        [(x["oid"], tuple(x["parents"])) for x in page["commits"]],
        [x["graph"] for x in page["commits"]],
    )


async def test_detached_head(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, c = history
    git(repo.root, "checkout", "-q", "--detach", c["c2"])
    page = await log.log(repo)
    by = {x["oid"]: x for x in page["commits"]}
    assert by[c["c2"]]["refs"] == [{"kind": "head", "name": "HEAD"}, {"kind": "tag", "name": "v1"}]
    assert by[c["c4"]]["refs"] == [{"kind": "branch", "name": "main"}]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 10])
async def test_pages_concatenate_to_the_whole(
    log: GitHistory,
    history: History,  # noqa: F811
    size: int,
) -> None:
    repo, _ = history
    whole = (await log.log(repo, limit=1000))["commits"]
    assert await all_pages(log, repo, size) == whole


async def test_lost_layout_state_is_rebuilt(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, _ = history
    whole = (await log.log(repo, limit=1000))["commits"]
    first = await log.log(repo, limit=4)
    log._layouts.clear()
    second = await log.log(repo, limit=4, cursor=first["cursor"])
    assert first["commits"] + second["commits"] == whole[:8]


async def test_cursor_after_refs_moved_is_refused(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, _ = history
    first = await log.log(repo, limit=3)
    commit(Path(repo.root), "new work", {"new.txt": "x\n"}, when=20)
    with pytest.raises(Conflict) as caught:
        await log.log(repo, limit=3, cursor=first["cursor"])
    assert caught.value.reason == "history_changed"


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "x",
        "0123456789abcdef.3",
        "0123456789abcdef.-3.12345678",
        "0123456789abcdef.999999999.12345678",
    ],
)
async def test_bad_cursor(log: GitHistory, history: History, cursor: str) -> None:  # noqa: F811
    repo, _ = history
    if not cursor:
        assert (await log.log(repo, cursor=cursor))["commits"]
        return
    with pytest.raises(InvalidRequest) as caught:
        await log.log(repo, cursor=cursor)
    assert caught.value.reason == "bad_cursor"


async def test_cursor_of_other_filters_is_refused(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, _ = history
    first = await log.log(repo, limit=1, author="ada")
    with pytest.raises(InvalidRequest):
        await log.log(repo, limit=1, cursor=first["cursor"])


@pytest.mark.parametrize("limit", [0, -1, 1001, 2**31, True, "5"])
async def test_limit_bounds(log: GitHistory, history: History, limit: Any) -> None:  # noqa: F811
    repo, _ = history
    with pytest.raises(InvalidRequest):
        await log.log(repo, limit=limit)


async def test_one_ref(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, c = history
    page = await log.log(repo, ref="feature")
    assert [x["oid"] for x in page["commits"]] == [c["f2"], c["f1"], c["c2"], c["c1"]]
    assert page["graph"] is True
    tagged = await log.log(repo, ref="v2")
    assert tagged["commits"][0]["oid"] == c["m1"]
    # A cursor belongs to its scope: offsets of one ref's history mean nothing in another.
    first = await log.log(repo, ref="feature", limit=2)
    with pytest.raises(InvalidRequest):
        await log.log(repo, limit=2, cursor=first["cursor"])
    second = await log.log(repo, ref="feature", limit=2, cursor=first["cursor"])
    assert [x["oid"] for x in second["commits"]] == [c["c2"], c["c1"]]


@pytest.mark.parametrize("ref", ["--output=/tmp/terax-x", "-n1", "a\nb", "main\x00"])
async def test_ref_option_injection_refused(
    log: GitHistory,
    history: History,  # noqa: F811
    ref: str,
    tmp_path: Path,
) -> None:
    repo, _ = history
    with pytest.raises(InvalidRequest):
        await log.log(repo, ref=ref)


@pytest.mark.parametrize("ref", ["nope", "main..feature", "HEAD~100"])
async def test_unknown_ref(log: GitHistory, history: History, ref: str) -> None:  # noqa: F811
    repo, _ = history
    with pytest.raises(NotFound):
        await log.log(repo, ref=ref)


async def test_filters_are_flat_and_literal(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, c = history
    page = await log.log(repo, query="FEATURE: MORE (#")
    assert page["graph"] is False
    assert [x["oid"] for x in page["commits"]] == [c["f2"]]
    assert page["commits"][0]["graph"] is None
    assert "lanes" not in page
    by_author = await log.log(repo, author="ADA@EXAMPLE")
    assert len(by_author["commits"]) == 10  # every commit, merges included
    nobody = await log.log(repo, author="nobody")
    assert nobody == {"commits": [], "cursor": None, "total_known": 0, "graph": False}
    both = await log.log(repo, query="topic", author="ada")
    assert {x["oid"] for x in both["commits"]} == {c["a"], c["b"]}
    by_file = await log.log(repo, file="README.md")
    assert [x["oid"] for x in by_file["commits"]] == [c["c4"], c["c3"], c["c2"], c["c1"]]
    renamed = await log.log(repo, file="b.txt")
    # git's history simplification decides which merges touch a path; the rename is there.
    assert [x["oid"] for x in renamed["commits"]][-1] == c["c3"]
    paged = await all_pages(log, repo, 2, author="ada")
    assert paged == by_author["commits"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("file", "../outside"),
        ("file", "/etc/passwd"),
        ("file", "-p"),
        ("file", ".git/config"),
        ("query", "a\x00b"),
        ("author", "x\ny"),
        ("query", "q" * 1001),
    ],
)
async def test_bad_filters(log: GitHistory, history: History, name: str, value: str) -> None:  # noqa: F811
    repo, _ = history
    with pytest.raises(InvalidRequest):
        await log.log(repo, **{name: value})


async def test_option_like_filters_are_text(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, _ = history
    page = await log.log(repo, query="--all", author="--output=/tmp/x")
    assert page["commits"] == []


async def test_empty_repository(log: GitHistory, tmp_path: Path) -> None:
    repo = repo_of(init(tmp_path / "empty"))
    assert await log.log(repo) == {
        "commits": [],
        "cursor": None,
        "total_known": 0,
        "graph": True,
        "lanes": [],
    }


async def test_generated_history_pages_keep_the_invariants(log: GitHistory, tmp_path: Path) -> None:
    dag = random_dag(400, 7, branches=6, roots=2)
    children = {p for _, parents in dag for p in parents}
    tips = [oid for oid, _ in dag if oid not in children]
    mapping = fast_import(tmp_path / "gen", dag, {f"tip{i}": t for i, t in enumerate(tips)})
    repo = repo_of(tmp_path / "gen")
    commits = await all_pages(log, repo, 37)
    assert len(commits) == len(dag) == len(mapping)
    rows = graph_rows({"commits": commits})
    check_layout([(oid, parents) for oid, parents, _ in rows], [g for _, _, g in rows])
    assert commits == (await log.log(repo, limit=1000))["commits"]


async def test_commit_graph_written_in_the_background(runner: GitRunner, history: History) -> None:  # noqa: F811
    repo, _ = history
    log = GitHistory(runner, write_commit_graph=True)
    assert not await log.has_commit_graph(repo)
    before = await log.log(repo)
    await log.wait_commit_graph(repo.root)
    assert await log.has_commit_graph(repo)
    assert git(repo.root, "commit-graph", "verify").strip() == ""
    # The order does not change with the commit-graph: old cursors stay valid.
    assert (await log.log(repo))["commits"] == before["commits"]
    await log.close()


async def test_prepare_writes_the_commit_graph_before_the_first_log(
    runner: GitRunner,  # noqa: F811
    history: History,  # noqa: F811
) -> None:
    repo, _ = history
    log = GitHistory(runner, changed_paths=False)
    await log.prepare(repo)
    await log.wait_commit_graph(repo.root)
    assert await log.has_commit_graph(repo)
    await log.close()


async def test_commit_graph_off(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, _ = history
    await log.log(repo)
    await log.wait_commit_graph(repo.root)
    assert not await log.has_commit_graph(repo)


# -- which refs the graph starts from ------------------------------------------------------------


@pytest.fixture
def hosted(history: History) -> tuple[Repo, dict[str, str]]:  # noqa: F811
    """The history as a mirror of a hosted repository has it: a pull request's head and the
    merge commit the host made of it, a review tool's ref, a remote-tracking branch ahead of
    main, a tag on a commit of no branch, and a detached HEAD on a commit of no branch."""
    repo, c = history
    root = repo.root
    c["pr"] = commit_tree(root, "pull request 7", c["c4"])
    c["pr_merge"] = commit_tree(root, "Merge pull request 7 into main", c["c4"], c["pr"])
    c["review"] = commit_tree(root, "reviewable snapshot", c["c3"])
    c["remote"] = commit_tree(root, "pushed elsewhere", c["c4"])
    c["tagged"] = commit_tree(root, "released from a detached HEAD", c["m1"])
    c["detached"] = commit_tree(root, "work on a detached HEAD", c["c2"])
    git(root, "update-ref", "refs/pull/7/head", c["pr"])
    git(root, "update-ref", "refs/pull/7/merge", c["pr_merge"])
    git(root, "update-ref", "refs/reviewable/pr7/r1", c["review"])
    git(root, "update-ref", "refs/remotes/origin/main", c["remote"])
    git(root, "tag", "v3", c["tagged"])
    git(root, "checkout", "-q", "--detach", c["detached"])
    return repo, c


def commit_tree(root: str, message: str, *parents: str) -> str:
    """A commit of the first parent's tree, on no branch."""
    args = [arg for parent in parents for arg in ("-p", parent)]
    return git(root, "commit-tree", *args, "-m", message, f"{parents[0]}^{{tree}}").strip()


async def listed(log: GitHistory, repo: Repo, **options: Any) -> list[str]:
    return [x["oid"] for x in await all_pages(log, repo, 4, **options)]


async def test_pull_request_refs_are_left_out_by_default(
    log: GitHistory, hosted: tuple[Repo, dict[str, str]]
) -> None:
    repo, c = hosted
    branches = await listed(log, repo)
    assert branches == await listed(log, repo, refs="branches")
    assert branches == git(
        repo.root, "log", "--topo-order", "--format=%H", "--branches", "--remotes", "--tags",
        "HEAD",
    ).split()  # fmt: skip
    assert {c["remote"], c["tagged"], c["detached"], c["c4"]} <= set(branches)
    assert not {c["pr"], c["pr_merge"], c["review"]} & set(branches)

    everything = await listed(log, repo, refs="all")
    assert (
        everything
        == git(
            repo.root, "log", "--topo-order", "--format=%H", "--exclude=refs/stash", "--all"
        ).split()
    )
    assert {c["pr"], c["pr_merge"], c["review"]} <= set(everything)

    local = await listed(log, repo, refs="local")
    assert (
        local == git(repo.root, "log", "--topo-order", "--format=%H", "--branches", "HEAD").split()
    )
    assert c["detached"] in local
    assert not {c["remote"], c["tagged"], c["pr"]} & set(local)

    # Every scope is a whole graph: the lanes of its pages check out.
    for refs in ("branches", "all", "local"):
        commits = await all_pages(log, repo, 3, refs=refs)
        check_layout(
            [(x["oid"], tuple(x["parents"])) for x in commits], [x["graph"] for x in commits]
        )


async def test_a_cursor_belongs_to_its_refs(
    log: GitHistory, hosted: tuple[Repo, dict[str, str]]
) -> None:
    repo, _ = hosted
    first = await log.log(repo, limit=2)
    with pytest.raises(InvalidRequest) as caught:
        await log.log(repo, limit=2, cursor=first["cursor"], refs="all")
    assert caught.value.reason == "bad_cursor"
    # A pull request fetched into refs/pull/* changes nothing the default view draws: its
    # cursor stays good. The view of every ref has moved.
    everything = await log.log(repo, limit=2, refs="all")
    git(repo.root, "update-ref", "refs/pull/8/head", git(repo.root, "rev-parse", "main").strip())
    assert (await log.log(repo, limit=2, cursor=first["cursor"]))["commits"]
    with pytest.raises(Conflict) as moved:
        await log.log(repo, limit=2, cursor=everything["cursor"], refs="all")
    assert moved.value.reason == "history_changed"


@pytest.mark.parametrize("refs", ["pull", "ALL", "branches ", "refs/pull/*", "--all", 3, ["all"]])
async def test_bad_refs_are_refused_and_change_nothing(
    runner: GitRunner,  # noqa: F811
    history: History,  # noqa: F811
    refs: object,
) -> None:
    repo, _ = history
    log = GitHistory(runner, write_commit_graph=True)
    with pytest.raises(InvalidRequest) as caught:
        await log.log(repo, refs=refs)  # type: ignore[arg-type]
    assert caught.value.reason == "invalid_parameter"
    assert "'branches', 'all', 'local'" in str(caught.value)
    await log.wait_commit_graph(repo.root)
    assert not await log.has_commit_graph(repo)  # refused before anything ran
    assert not log._layouts
    await log.close()


async def test_an_unborn_head_with_other_branches(log: GitHistory, history: History) -> None:  # noqa: F811
    repo, c = history
    git(repo.root, "checkout", "-q", "--orphan", "fresh")
    for refs in ("branches", "local", "all"):
        oids = await listed(log, repo, refs=refs)
        assert oids[0] == c["c4"]
        assert len(oids) == 10


async def test_pages_after_the_first_are_read_ahead(
    runner: GitRunner,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scrolling through a history runs git log once per few thousand rows, not once per page
    # (each run walks the whole topological order again when there is no commit-graph).
    dag = random_dag(900, 3, branches=6, roots=2)
    children = {p for _, parents in dag for p in parents}
    tips = [oid for oid, _ in dag if oid not in children]
    mapping = fast_import(tmp_path / "gen", dag, {f"tip{i}": t for i, t in enumerate(tips)})
    repo = repo_of(tmp_path / "gen")
    log = GitHistory(runner, write_commit_graph=False)
    whole = (await log.log(repo, limit=1000))["commits"]
    runs: list[str] = []
    run = runner.run

    async def counting(repo: Repo, *args: str, **options: Any) -> Any:
        runs.append(args[0])
        return await run(repo, *args, **options)

    monkeypatch.setattr(runner, "run", counting)
    commits = await all_pages(log, repo, 50)
    assert commits == whole
    assert runs.count("log") == 2  # the first page, then one read for the other 17
    # The refs are checked once for the read, not once per page read ahead.
    assert runs.count("show-ref") <= 3

    # Read ahead in smaller steps: the rows continue exactly across each new read.
    monkeypatch.setattr("terax_jupyter.services.git.log._READ_AHEAD", 120)
    runs.clear()
    assert await all_pages(GitHistory(runner, write_commit_graph=False), repo, 50) == whole
    assert 2 < runs.count("log") < 18
    rows = graph_rows({"commits": commits})
    check_layout([(oid, parents) for oid, parents, _ in rows], [g for _, _, g in rows])

    # Rows read ahead are not served once the refs moved and the move was seen: the refs
    # are checked again at most every REFS_RECHECK seconds. Until then the pages go on
    # exactly as the cursor's snapshot listed them.
    first = await log.log(repo, limit=50)
    second = await log.log(repo, limit=50, cursor=first["cursor"])
    git(repo.root, "branch", "moved", mapping[tips[-1]])
    third = await log.log(repo, limit=50, cursor=second["cursor"])
    assert third["commits"] == whole[100:150]
    monkeypatch.setattr("terax_jupyter.services.git.log.REFS_RECHECK", 0.0)
    with pytest.raises(Conflict):
        await log.log(repo, limit=50, cursor=third["cursor"])
