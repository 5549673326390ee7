"""Hunk and line staging, unstaging and discarding: the result is exactly the selection,
checked against git's own view (``git diff --cached``, ``git show :file``)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import Conflict, InvalidPath, InvalidRequest, PathDenied
from terax_jupyter.services.git.operations import Confirmation

from .conftest import TEN_LINES, commit_all, diff_body, git, index_content, init_repo, write

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.services.git.manager import GitManager

# Two hunks far apart; the first mixes deletions and additions.
CHANGED = (
    "line 1\nline 2 changed\nline 2b added\nline 4\nline 5\n"
    "line 6\nline 7\nline 8\nline 9\nline 10\nline 11 added\n"
)


@pytest.fixture
def repo(workspace_root: Path) -> Path:
    root = init_repo(workspace_root / "repo")
    write(root, "notes.txt", TEN_LINES)
    write(root, "other.txt", "other\n")
    commit_all(root, "first")
    return root


async def read(
    manager: GitManager, root: Path, file: str, source: str = "worktree", context: int = 3
) -> dict[str, Any]:
    return await manager.diff(str(root), file, source=source, context=context)


def model(diff: dict[str, Any], chosen: dict[int, set[int]], *, reverse: bool) -> str:
    """What the target becomes: forward applies the chosen changes to the old side, reverse
    takes them back out of the new side."""
    out: list[str] = []
    for hunk in diff["hunks"]:
        picked = chosen.get(hunk["index"], set())
        for i, line in enumerate(hunk["lines"]):
            text = line["text"] + ("" if line["no_newline"] else "\n")
            keep = {
                "context": True,
                "delete": (i in picked) == reverse,
                "add": (i in picked) != reverse,
            }[line["kind"]]
            if keep:
                out.append(text)
    return "".join(out)


def changed_lines(diff: dict[str, Any]) -> list[tuple[int, int]]:
    return [
        (hunk["index"], i)
        for hunk in diff["hunks"]
        for i, line in enumerate(hunk["lines"])
        if line["kind"] != "context"
    ]


def whole_file_model(
    old: str, diff: dict[str, Any], chosen: dict[int, set[int]], *, reverse: bool
) -> str:
    """``model`` applied inside a file: lines outside the hunks stay as they are."""
    lines = old.splitlines(keepends=True)
    side = "new" if reverse else "old"
    count = "new_lines" if reverse else "old_lines"
    result: list[str] = []
    position = 1
    for hunk in diff["hunks"]:
        start = hunk[f"{side}_start"] if hunk[count] else hunk[f"{side}_start"] + 1
        result += lines[position - 1 : start - 1]
        result.append(model({"hunks": [hunk]}, chosen, reverse=reverse))
        position = start + hunk[count]
    result += lines[position - 1 :]
    return "".join(result)


async def test_staging_one_hunk_of_two_stages_exactly_that_hunk(
    manager: GitManager, repo: Path
) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    assert len(diff["hunks"]) == 2
    status = await manager.stage(
        str(repo),
        {"file": "notes.txt", "fingerprint": diff["fingerprint"], "selection": [{"hunk": 1}]},
    )
    assert diff_body(git(repo, "diff", "--cached")) == ["+line 11 added"]
    assert diff_body(git(repo, "diff")) == [
        "-line 2",
        "-line 3",
        "+line 2 changed",
        "+line 2b added",
    ]
    assert [e["path"] for e in status["staged"]] == ["notes.txt"]
    assert [e["path"] for e in status["unstaged"]] == ["notes.txt"]


async def test_every_single_line_and_pair_stages_exactly(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    changes = changed_lines(diff)
    selections = [[c] for c in changes] + list(itertools.combinations(changes, 2))
    for picked in selections:
        git(repo, "reset", "-q")
        chosen: dict[int, set[int]] = {}
        for hunk, line in picked:
            chosen.setdefault(hunk, set()).add(line)
        await manager.stage(
            str(repo),
            {
                "file": "notes.txt",
                "fingerprint": diff["fingerprint"],
                "selection": [{"hunk": h, "lines": sorted(ls)} for h, ls in chosen.items()],
            },
        )
        expected = whole_file_model(TEN_LINES, diff, chosen, reverse=False)
        assert index_content(repo, "notes.txt") == expected, picked
        staged = diff_body(git(repo, "diff", "--cached"))
        wanted = [
            ("+" if diff["hunks"][h]["lines"][i]["kind"] == "add" else "-")
            + diff["hunks"][h]["lines"][i]["text"]
            for h, i in picked
        ]
        assert sorted(staged) == sorted(wanted), picked


async def test_unstage_lines_takes_exactly_them_out_of_the_index(
    manager: GitManager, repo: Path
) -> None:
    write(repo, "notes.txt", CHANGED)
    git(repo, "add", "notes.txt")
    staged = await read(manager, repo, "notes.txt", "index")
    for hunk, line in changed_lines(staged):
        git(repo, "add", "notes.txt")
        await manager.unstage(
            str(repo),
            {
                "file": "notes.txt",
                "fingerprint": staged["fingerprint"],
                "selection": [{"hunk": hunk, "lines": [line]}],
            },
        )
        expected = whole_file_model(CHANGED, staged, {hunk: {line}}, reverse=True)
        assert index_content(repo, "notes.txt") == expected, (hunk, line)
        # Unstaging moves the change to the work tree's diff; nothing else moves.
        assert (repo / "notes.txt").read_text() == CHANGED


async def test_discard_lines_needs_confirmation_and_is_exact(
    manager: GitManager, repo: Path
) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    body = {
        "file": "notes.txt",
        "fingerprint": diff["fingerprint"],
        "selection": [{"hunk": 0, "lines": [3]}],  # "+line 2 changed"
    }
    asked = await manager.discard(str(repo), dict(body))
    assert isinstance(asked, Confirmation)
    assert (asked.files, asked.lines_lost) == (1, 1)
    assert (repo / "notes.txt").read_text() == CHANGED  # nothing happened yet
    await manager.discard(str(repo), {**body, "confirm": asked.token})
    expected = whole_file_model(CHANGED, diff, {0: {3}}, reverse=True)
    assert (repo / "notes.txt").read_text() == expected
    assert "line 2 changed" not in expected
    assert "line 2b added" in expected


async def test_discard_with_a_forged_token_changes_nothing(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    with pytest.raises(Conflict) as caught:
        await manager.discard(
            str(repo),
            {
                "file": "notes.txt",
                "fingerprint": diff["fingerprint"],
                "selection": [{"hunk": 0}],
                "confirm": "0" * 64,
            },
        )
    assert caught.value.reason == "stale_diff"
    assert (repo / "notes.txt").read_text() == CHANGED


async def test_untracked_file_lines_stage_as_a_new_file(manager: GitManager, repo: Path) -> None:
    write(repo, "fresh.txt", "a\nb\nc\n")
    diff = await read(manager, repo, "fresh.txt")
    assert diff["status"] == "added"
    assert [line["kind"] for line in diff["hunks"][0]["lines"]] == ["add"] * 3
    await manager.stage(
        str(repo),
        {
            "file": "fresh.txt",
            "fingerprint": diff["fingerprint"],
            "selection": [{"hunk": 0, "lines": [0, 2]}],
        },
    )
    assert index_content(repo, "fresh.txt") == "a\nc\n"
    # The rest can be staged later, and unstaging a part keeps the file in the index.
    staged = await read(manager, repo, "fresh.txt", "index")
    await manager.unstage(
        str(repo),
        {
            "file": "fresh.txt",
            "fingerprint": staged["fingerprint"],
            "selection": [{"hunk": 0, "lines": [0]}],
        },
    )
    assert index_content(repo, "fresh.txt") == "c\n"
    staged = await read(manager, repo, "fresh.txt", "index")
    await manager.unstage(
        str(repo),
        {"file": "fresh.txt", "fingerprint": staged["fingerprint"], "selection": [{"hunk": 0}]},
    )
    assert git(repo, "ls-files", "--", "fresh.txt") == ""


async def test_deleted_file_lines_stage_as_a_shorter_file(manager: GitManager, repo: Path) -> None:
    (repo / "notes.txt").unlink()
    diff = await read(manager, repo, "notes.txt")
    assert diff["status"] == "deleted"
    await manager.stage(
        str(repo),
        {
            "file": "notes.txt",
            "fingerprint": diff["fingerprint"],
            "selection": [{"hunk": 0, "lines": [0, 9]}],
        },
    )
    assert index_content(repo, "notes.txt") == "".join(f"line {n}\n" for n in range(2, 10))
    # Unstaging one of the two deletions puts that line back in the index.
    staged = await read(manager, repo, "notes.txt", "index")
    await manager.unstage(
        str(repo),
        {
            "file": "notes.txt",
            "fingerprint": staged["fingerprint"],
            "selection": [{"hunk": 1, "lines": [3]}],
        },
    )
    assert index_content(repo, "notes.txt") == "".join(f"line {n}\n" for n in range(2, 11))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb", "a\nb\nc\n"),  # a newline added to the last line, and a line after it
        ("a\nb\n", "a\nb\nc"),  # a last line without newline added
        ("a\nb", "a\nB"),  # the last line changed, no newline on either side
    ],
)
async def test_missing_final_newline(manager: GitManager, repo: Path, old: str, new: str) -> None:
    write(repo, "tail.txt", old)
    commit_all(repo, "tail")
    write(repo, "tail.txt", new)
    diff = await read(manager, repo, "tail.txt")
    # Staging every change gives the work tree's file.
    await manager.stage(
        str(repo),
        {"file": "tail.txt", "fingerprint": diff["fingerprint"], "selection": [{"hunk": 0}]},
    )
    assert index_content(repo, "tail.txt") == new
    git(repo, "reset", "-q")
    # Single lines: either exactly the model, or a clear refusal that changes nothing.
    for hunk, line in changed_lines(diff):
        git(repo, "reset", "-q")
        body = {
            "file": "tail.txt",
            "fingerprint": diff["fingerprint"],
            "selection": [{"hunk": hunk, "lines": [line]}],
        }
        try:
            await manager.stage(str(repo), body)
        except InvalidRequest as error:
            refused = error.reason
        else:
            refused = None
        if refused is not None:
            assert refused == "invalid_selection"
            assert index_content(repo, "tail.txt") == old
            continue
        assert index_content(repo, "tail.txt") == model(diff, {hunk: {line}}, reverse=False)


async def test_zero_context_diffs_stage_exactly(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt", context=0)
    await manager.stage(
        str(repo),
        {
            "file": "notes.txt",
            "fingerprint": diff["fingerprint"],
            "context": 0,
            "selection": [{"hunk": 0, "lines": [0, 2]}],
        },
    )
    # The kept deletion stays where it was, before the added line.
    expected = whole_file_model(TEN_LINES, diff, {0: {0, 2}}, reverse=False)
    assert index_content(repo, "notes.txt") == expected
    assert expected.startswith("line 1\nline 3\nline 2 changed\nline 4\n")


# -- refusals: nothing changes -------------------------------------------------------------


async def test_stale_fingerprint_is_refused(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    write(repo, "notes.txt", CHANGED + "more\n")
    with pytest.raises(Conflict) as caught:
        await manager.stage(
            str(repo),
            {"file": "notes.txt", "fingerprint": diff["fingerprint"], "selection": [{"hunk": 0}]},
        )
    assert caught.value.reason == "stale_diff"
    assert staged_nothing(repo)


def staged_nothing(repo: Path) -> bool:
    return git(repo, "diff", "--cached", "--name-only") == ""


@pytest.mark.parametrize(
    "file",
    [
        "-rf",
        "--output=x",
        "a\0b",
        "a\nb",
        "../outside.txt",
        "/etc/passwd",
        ".git/config",
        "sub/../notes.txt",
        "",
        "a\\b",
    ],
)
async def test_hostile_file_names_are_refused(manager: GitManager, repo: Path, file: str) -> None:
    write(repo, "notes.txt", CHANGED)
    with pytest.raises(InvalidRequest):
        await manager.stage(str(repo), {"files": [file]})
    with pytest.raises(InvalidRequest):
        await manager.stage(
            str(repo), {"file": file, "fingerprint": "x", "selection": [{"hunk": 0}]}
        )
    assert staged_nothing(repo)
    assert not (repo / "x").exists()


async def test_denied_file_content_never_served_but_whole_file_staging_works(
    manager: GitManager, repo: Path
) -> None:
    write(repo, ".env", "TOKEN=abcdef123456\n")
    status = await manager.status(str(repo))
    assert status["untracked"] == [
        {
            "path": ".env",
            "old_path": None,
            "status": "untracked",
            "submodule": False,
            "denied": True,
        }
    ]
    with pytest.raises(PathDenied):
        await read(manager, repo, ".env")
    with pytest.raises(PathDenied):
        await manager.stage(
            str(repo), {"file": ".env", "fingerprint": "x", "selection": [{"hunk": 0}]}
        )
    with pytest.raises(PathDenied):
        await manager.discard(str(repo), {"files": [".env"]})
    await manager.stage(str(repo), {"files": [".env"]})
    assert git(repo, "diff", "--cached", "--name-only") == ".env\n"


async def test_symlink_out_of_the_workspace_is_not_read(
    manager: GitManager, repo: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("outside\n")
    (repo / "link.txt").symlink_to(secret)
    with pytest.raises(PathDenied.__mro__[1]):  # AccessDenied: outside the workspace
        await read(manager, repo, "link.txt")


async def test_stale_index_lock_is_reported_and_kept(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    with pytest.raises(Conflict) as caught:
        await manager.stage(str(repo), {"files": ["notes.txt"]})
    assert caught.value.reason == "index_locked"
    assert str(lock) in caught.value.message
    assert lock.exists()
    assert (await manager.status(str(repo)))["index_locked"] is True


@pytest.mark.parametrize(
    "selection",
    [
        [],
        [{"hunk": 5}],
        [{"hunk": 0, "lines": [0]}],
        [{"hunk": "0"}],
        [{"hunk": 0}, {"hunk": 0}],
        [{"hunk": True}],
        "all",
        [{"hunk": 0, "lines": [-1]}],
    ],
)
async def test_bad_selections_are_refused(manager: GitManager, repo: Path, selection: Any) -> None:
    write(repo, "notes.txt", CHANGED)
    diff = await read(manager, repo, "notes.txt")
    assert diff["hunks"][0]["lines"][0]["kind"] == "context"
    with pytest.raises(InvalidRequest) as caught:
        await manager.stage(
            str(repo),
            {"file": "notes.txt", "fingerprint": diff["fingerprint"], "selection": selection},
        )
    assert caught.value.reason == "invalid_selection"
    assert staged_nothing(repo)


async def test_binary_files_stage_whole_only(manager: GitManager, repo: Path) -> None:
    write(repo, "blob.bin", b"\0\1\2")
    diff = await read(manager, repo, "blob.bin")
    assert diff["binary"] is True
    assert diff["hunks"] == []
    with pytest.raises(InvalidRequest) as caught:
        await manager.stage(
            str(repo),
            {"file": "blob.bin", "fingerprint": diff["fingerprint"], "selection": [{"hunk": 0}]},
        )
    assert caught.value.reason in ("not_selectable", "invalid_selection")


# -- whole files -------------------------------------------------------------------------------


async def test_whole_files_stage_and_unstage(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    write(repo, "new.txt", "new\n")
    (repo / "other.txt").unlink()
    status = await manager.stage(str(repo), {"files": ["notes.txt", "new.txt", "other.txt"]})
    assert {(e["path"], e["status"]) for e in status["staged"]} == {
        ("notes.txt", "modified"),
        ("new.txt", "added"),
        ("other.txt", "deleted"),
    }
    status = await manager.unstage(str(repo), {"files": ["notes.txt", "new.txt", "other.txt"]})
    assert status["staged"] == []


async def test_unstaging_a_rename_unstages_both_names(manager: GitManager, repo: Path) -> None:
    git(repo, "mv", "other.txt", "renamed.txt")
    status = await manager.status(str(repo))
    assert status["staged"][0]["old_path"] == "other.txt"
    status = await manager.unstage(str(repo), {"files": ["renamed.txt"]})
    assert status["staged"] == []


async def test_unstage_in_a_repository_without_commits(
    manager: GitManager, workspace_root: Path
) -> None:
    root = init_repo(workspace_root / "empty")
    write(root, "a.txt", "a\n")
    status = await manager.stage(str(root), {"files": ["a.txt"]})
    assert status["branch"]["unborn"] is True
    assert [e["path"] for e in status["staged"]] == ["a.txt"]
    status = await manager.unstage(str(root), {"files": ["a.txt"]})
    assert status["staged"] == []
    assert [e["path"] for e in status["untracked"]] == ["a.txt"]


async def test_unstage_a_partly_staged_new_file_before_the_first_commit(
    manager: GitManager, workspace_root: Path
) -> None:
    root = init_repo(workspace_root / "fresh")
    write(root, "a.txt", "one\n")
    await manager.stage(str(root), {"files": ["a.txt"]})
    write(root, "a.txt", "one\ntwo\n")  # staged in part: the index differs from the file
    status = await manager.unstage(str(root), {"files": ["a.txt"]})
    assert status["staged"] == []
    assert [e["path"] for e in status["untracked"]] == ["a.txt"]
    assert (root / "a.txt").read_text() == "one\ntwo\n"  # the work is kept


async def test_discard_whole_files(manager: GitManager, repo: Path) -> None:
    write(repo, "notes.txt", CHANGED)
    write(repo, "junk.txt", "junk\n")
    asked = await manager.discard(str(repo), {"files": ["notes.txt", "junk.txt"]})
    assert isinstance(asked, Confirmation)
    assert asked.files == 2
    assert asked.lines_lost == 3 + 1
    write(repo, "junk.txt", "junk changed\n")  # changed after the summary was shown
    with pytest.raises(Conflict) as caught:
        await manager.discard(
            str(repo), {"files": ["notes.txt", "junk.txt"], "confirm": asked.token}
        )
    assert caught.value.reason == "stale_diff"
    assert (repo / "junk.txt").exists()
    assert (repo / "notes.txt").read_text() == CHANGED
    asked = await manager.discard(str(repo), {"files": ["notes.txt", "junk.txt"]})
    assert isinstance(asked, Confirmation)
    status = await manager.discard(
        str(repo), {"files": ["notes.txt", "junk.txt"], "confirm": asked.token}
    )
    assert not (repo / "junk.txt").exists()
    assert (repo / "notes.txt").read_text() == TEN_LINES
    assert status["unstaged"] == []
    assert status["untracked"] == []


async def test_invalid_path_errors_are_invalid_path(manager: GitManager, repo: Path) -> None:
    with pytest.raises(InvalidPath):
        await manager.stage(str(repo), {"files": ["-rf"]})
