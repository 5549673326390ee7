"""The Git panel and the History panel in Chromium, against real repositories built with git."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from tests.services.git.history_fixtures import fast_import, random_dag
from tests.services.git.hostile import embedded_bare_clone, make_trap, plant_hooks, raw_git

from .helpers import (
    DARK,
    LIGHT,
    artifact_name,
    change_theme,
    server_api,
    wait_for_reloaded,
    write,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator, Page

    from .conftest import LabServer

pytestmark = pytest.mark.ui

PANEL = "#terax-git"
HISTORY = ".jp-TeraxHistory"
TIMEOUT_MS = 15_000

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Lovelace",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}

# 30 numbered lines: changes at lines 2 and 27 are far enough apart for two hunks.
ORIGINAL = "".join(f"value_{n} = {n}\n" for n in range(1, 31))


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return result.stdout


def changed_lines(diff: str) -> list[str]:
    """The +/- lines of a unified diff, without the file headers."""
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


@pytest.fixture
def repo(lab: LabServer) -> Path:
    """A repository in the Lab root: a merged feature branch, then two separate edits of app.py."""
    root = lab.root / f"project-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "commit.gpgsign", "false")
    # The Lab server runs git with its own HOME: the identity must be in the repository.
    git(root, "config", "user.name", "Ada Lovelace")
    git(root, "config", "user.email", "ada@example.com")
    write(root / "app.py", ORIGINAL)
    write(root / "README.md", "# Project\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial commit")
    git(root, "switch", "-q", "-c", "feature")
    write(root / "feature.txt", "A feature.\n")
    git(root, "add", "feature.txt")
    git(root, "commit", "-q", "-m", "Add the feature notes")
    git(root, "switch", "-q", "main")
    write(root / "README.md", "# Project\n\nNow with a readme.\n")
    git(root, "commit", "-q", "-am", "Describe the project")
    git(root, "merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")
    lines = ORIGINAL.splitlines(keepends=True)
    lines[1] = "value_2 = 'two'\n"
    lines[26] = "value_27 = 'twenty-seven'\n"
    write(root / "app.py", "".join(lines))
    return root


def open_repository(page: Page, repo: Path) -> Locator:
    """Browse to the repository's folder and show the Git panel on it."""
    page.evaluate(
        "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })",
        f"{repo.name}/",
    )
    page.evaluate("() => window.jupyterapp.commands.execute('terax:git-panel')")
    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("main", timeout=TIMEOUT_MS)
    return panel


def file_row(panel: Locator, group: str, path: str) -> Locator:
    return panel.locator(f".jp-TeraxGit-group[data-group='{group}'] [data-path='{path}']")


DIFF_TAB = "#jp-main-dock-panel .jp-TeraxGitDiff"


def main_diff(page: Page, path: str) -> Locator:
    """The diff of ``path`` in the main-area diff tab (the sidebar keeps the list)."""
    return page.locator(f"{DIFF_TAB} .jp-TeraxDiff[data-file='{path}']")


def open_diff(panel: Locator, group: str, path: str, hunks: int = 2) -> Locator:
    file_row(panel, group, path).locator(".jp-TeraxGit-fileName").click()
    diff = main_diff(panel.page, path)
    expect(diff.locator(".jp-TeraxDiff-hunk")).to_have_count(hunks, timeout=TIMEOUT_MS)
    # Not in the sidebar any more.
    expect(panel.locator(".jp-TeraxDiff")).to_have_count(0)
    return diff


@pytest.fixture
def dark_page(page: Page) -> Iterator[Page]:
    change_theme(page, DARK)
    try:
        yield page
    finally:
        page.keyboard.press("Escape")
        change_theme(page, LIGHT)


def test_stage_one_hunk_commit_with_keyboard_and_see_it_in_the_graph(
    page: Page, repo: Path, request: pytest.FixtureRequest
) -> None:
    panel = open_repository(page, repo)
    diff = open_diff(panel, "unstaged", "app.py")
    expect(diff.locator(".jp-TeraxDiff-line[data-kind='add']")).to_have_count(2)

    diff.locator(".jp-TeraxDiff-hunk[data-hunk='0'] [data-action='stage-hunk']").click()
    expect(file_row(panel, "staged", "app.py")).to_be_visible(timeout=TIMEOUT_MS)
    expect(file_row(panel, "unstaged", "app.py")).to_be_visible()
    assert changed_lines(git(repo, "diff", "--cached")) == [
        "-value_2 = 2",
        "+value_2 = 'two'",
    ]
    assert changed_lines(git(repo, "diff")) == [
        "-value_27 = 27",
        "+value_27 = 'twenty-seven'",
    ]
    page.screenshot(path=artifact_name(request, "-staged-hunk"))

    message = panel.locator(".jp-TeraxGit-commitInput")
    message.click()
    page.keyboard.type("Name the second value")
    page.keyboard.press("Control+Enter")
    expect(message).to_have_value("", timeout=TIMEOUT_MS)
    assert git(repo, "log", "-1", "--format=%s").strip() == "Name the second value"
    assert changed_lines(git(repo, "diff", "--cached")) == []
    expect(panel.locator(".jp-TeraxGit-group[data-group='staged']")).to_have_count(0)

    page.keyboard.press("Alt+Shift+H")
    history = page.locator(f"#jp-main-dock-panel {HISTORY}")
    expect(history).to_be_visible(timeout=TIMEOUT_MS)
    rows = history.locator(".jp-TeraxHistory-row")
    first = rows.first
    expect(first).to_have_attribute("data-index", "0", timeout=TIMEOUT_MS)
    expect(first.locator(".jp-TeraxHistory-subject-text")).to_have_text("Name the second value")
    expect(first.locator(".jp-TeraxHistory-ref[data-kind='head']")).to_have_count(1)

    merge = history.locator(".jp-TeraxHistory-row[data-parents='2']")
    expect(merge).to_have_count(1)
    expect(merge.locator(".jp-TeraxHistory-subject-text")).to_have_text("Merge branch 'feature'")
    # The merge row draws an edge from its dot towards the second parent's lane.
    expect(merge.locator("svg path[data-kind='merge']")).to_have_count(1)
    expect(merge.locator("svg circle[data-kind='merge']")).to_have_count(1)
    lanes = history.locator(".jp-TeraxHistory-graph").first.get_attribute("width")
    assert lanes is not None
    assert int(lanes) >= 28  # two lanes at least

    first.click()
    detail = history.locator(".jp-TeraxHistory-detail")
    expect(detail.locator("h3")).to_have_text("Name the second value", timeout=TIMEOUT_MS)
    detail.locator(".jp-TeraxHistory-file[data-path='app.py']").click()
    added = detail.locator(".jp-TeraxDiff-line[data-kind='add']")
    expect(added).to_have_count(1, timeout=TIMEOUT_MS)
    expect(added).to_contain_text("value_2 = 'two'")
    page.screenshot(path=artifact_name(request, "-history"))


def test_stage_selected_lines_and_discard_with_confirmation(page: Page, repo: Path) -> None:
    write(repo / "notes.txt", "keep\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-q", "-m", "Add notes")
    write(repo / "notes.txt", "keep\nfirst\nsecond\nthird\n")
    panel = open_repository(page, repo)

    file_row(panel, "unstaged", "notes.txt").locator(".jp-TeraxGit-fileName").click()
    diff = main_diff(page, "notes.txt")
    added = diff.locator(".jp-TeraxDiff-line[data-kind='add']")
    expect(added).to_have_count(3, timeout=TIMEOUT_MS)
    added.nth(0).click()
    added.nth(1).click(modifiers=["Shift"])
    expect(diff.locator(".jp-TeraxDiff-line[data-selected='true']")).to_have_count(2)
    diff.locator("[data-action='stage-lines']").click()
    expect(file_row(panel, "staged", "notes.txt")).to_be_visible(timeout=TIMEOUT_MS)
    assert changed_lines(git(repo, "diff", "--cached", "--", "notes.txt")) == [
        "+first",
        "+second",
    ]

    file_row(panel, "unstaged", "notes.txt").hover()
    file_row(panel, "unstaged", "notes.txt").locator("[data-action='discard']").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_be_visible(timeout=TIMEOUT_MS)
    expect(dialog).to_contain_text("cannot be undone")
    dialog.locator(".jp-mod-warn").click()
    expect(file_row(panel, "unstaged", "notes.txt")).to_have_count(0, timeout=TIMEOUT_MS)
    assert (repo / "notes.txt").read_text() == "keep\nfirst\nsecond\n"


def test_a_commit_made_elsewhere_refreshes_the_panel(page: Page, repo: Path) -> None:
    # As from a terminal: git changes only files under .git, which the panel hears about as
    # a "repository" watch event; no polling, no reload.
    panel = open_repository(page, repo)
    expect(file_row(panel, "unstaged", "app.py")).to_be_visible(timeout=TIMEOUT_MS)
    git(repo, "commit", "-q", "-am", "Committed in a terminal")
    expect(file_row(panel, "unstaged", "app.py")).to_have_count(0, timeout=TIMEOUT_MS)
    git(repo, "switch", "-q", "-c", "elsewhere")
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("elsewhere", timeout=TIMEOUT_MS)


# Where the first and the last character of an element's text are drawn, left to right.
EDGES = """element => {
  const text = element.querySelector('bdi') || element;
  const node = text.firstChild;
  const range = document.createRange();
  range.setStart(node, 0); range.setEnd(node, 1);
  const first = range.getBoundingClientRect().left;
  range.setStart(node, node.length - 1); range.setEnd(node, node.length);
  return [first, range.getBoundingClientRect().left, text.textContent];
}"""


def test_a_folder_that_starts_with_a_dot_reads_left_to_right(page: Page, repo: Path) -> None:
    write(repo / ".config-local" / "settings.toml", "a = 1\n")
    write(repo / ".ipynb_checkpoints" / "app-checkpoint.py", "x = 1\n")
    panel = open_repository(page, repo)
    row = file_row(panel, "untracked", ".config-local/settings.toml")
    expect(row).to_be_visible(timeout=TIMEOUT_MS)
    first, last, shown = row.locator(".jp-TeraxGit-fileDir").evaluate(EDGES)
    assert shown.startswith(".config-local")
    assert first < last  # the dot is drawn first, not moved to the end by the rtl cut
    # Lab's checkpoints are not listed (nor staged by Stage All).
    expect(panel.locator("[data-path^='.ipynb_checkpoints/']")).to_have_count(0)


def test_a_merge_stopped_by_a_conflict_says_what_to_do(page: Page, repo: Path) -> None:
    git(repo, "commit", "-q", "-am", "Change app.py on main")
    git(repo, "switch", "-q", "-c", "rival", "HEAD~1")
    write(repo / "app.py", "rival = True\n")
    git(repo, "commit", "-q", "-am", "Rewrite app.py")
    git(repo, "switch", "-q", "main")
    merge = subprocess.run(["git", "-C", str(repo), "merge", "-q", "rival"], capture_output=True)
    assert merge.returncode != 0  # stopped on the conflict in app.py
    panel = open_repository(page, repo)
    note = panel.locator("[data-reason='operation'][data-operation='merge']")
    expect(note).to_contain_text("A merge is in progress", timeout=TIMEOUT_MS)
    expect(file_row(panel, "conflicted", "app.py")).to_be_visible()
    git(repo, "merge", "--abort")  # the panel hears it (a repository watch event)
    expect(note).to_have_count(0, timeout=TIMEOUT_MS)


def conflict(repo: Path, command: tuple[str, ...]) -> None:
    """app.py rewritten on a branch "rival" and changed on main; then ``command`` (a merge,
    rebase or cherry-pick) stops on the conflict in app.py."""
    git(repo, "commit", "-q", "-am", "Change app.py on main")
    git(repo, "switch", "-q", "-c", "rival", "HEAD~1")
    write(repo / "app.py", "rival = True\n")
    git(repo, "commit", "-q", "-am", "Rewrite app.py")
    git(repo, "switch", "-q", "main")
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    stopped = subprocess.run(["git", "-C", str(repo), *command], capture_output=True, env=env)
    assert stopped.returncode != 0, stopped  # stopped on the conflict in app.py
    assert "<<<<<<<" in (repo / "app.py").read_text()


def test_a_conflicted_file_shows_its_sides_then_take_theirs_and_continue(
    page: Page, repo: Path, request: pytest.FixtureRequest
) -> None:
    conflict(repo, ("merge", "-q", "rival"))
    panel = open_repository(page, repo)
    bar = panel.locator("[data-reason='operation'][data-operation='merge']")
    expect(bar).to_contain_text("A merge is in progress", timeout=TIMEOUT_MS)
    # Continue waits for the conflict to be resolved.
    expect(bar.locator("[data-action='continue']")).to_be_disabled()
    file_row(panel, "conflicted", "app.py").locator(".jp-TeraxGit-fileName").click()
    diff = main_diff(page, "app.py")
    bar_in_diff = diff.locator(".jp-TeraxDiff-conflict")
    expect(bar_in_diff).to_contain_text("1 conflict region", timeout=TIMEOUT_MS)
    added = diff.locator(".jp-TeraxDiff-line[data-kind='add']")
    expect(added.first).to_contain_text("<<<<<<< HEAD")
    expect(diff).to_contain_text("rival = True")
    # The hunks of a conflicted file are not staged one by one.
    expect(diff.locator("[data-action='stage-hunk']")).to_have_count(0)
    theirs = bar_in_diff.locator("[data-side='theirs']")
    theirs.locator("summary").click()
    expect(theirs.locator("pre")).to_have_text("rival = True\n")
    page.screenshot(path=artifact_name(request, "-conflict"))

    bar_in_diff.locator("[data-action='take-theirs']").click()
    expect(file_row(panel, "conflicted", "app.py")).to_have_count(0, timeout=TIMEOUT_MS)
    expect(file_row(panel, "staged", "app.py")).to_be_visible()
    assert (repo / "app.py").read_text() == "rival = True\n"
    continue_button = bar.locator("[data-action='continue']")
    expect(continue_button).to_be_enabled()
    continue_button.click()
    expect(bar).to_have_count(0, timeout=TIMEOUT_MS)
    assert git(repo, "log", "-1", "--format=%s").strip() == "Merge branch 'rival'"
    assert git(repo, "status", "--porcelain").strip() == ""


def show_panel(page: Page, folder: Path) -> Locator:
    """The Git panel on ``folder`` (whatever its branch: a rebase detaches HEAD)."""
    page.evaluate(
        "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })",
        f"{folder.name}/",
    )
    page.evaluate("() => window.jupyterapp.commands.execute('terax:git-panel')")
    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=TIMEOUT_MS)
    return panel


def test_a_rebase_is_aborted_after_asking(page: Page, repo: Path) -> None:
    # main's change of app.py replayed onto rival, which rewrote it: a conflict.
    conflict(repo, ("rebase", "rival"))
    panel = show_panel(page, repo)
    bar = panel.locator("[data-reason='operation'][data-operation='rebase']")
    expect(bar).to_contain_text("A rebase is in progress", timeout=TIMEOUT_MS)
    expect(bar.locator("[data-action='skip']")).to_be_visible()
    before = git(repo, "rev-parse", "main").strip()
    bar.locator("[data-action='abort']").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Abort the rebase?", timeout=TIMEOUT_MS)
    dialog.locator(".jp-mod-warn").click()
    expect(bar).to_have_count(0, timeout=TIMEOUT_MS)
    assert git(repo, "rev-parse", "HEAD").strip() == before
    assert git(repo, "branch", "--show-current").strip() == "main"
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("main", timeout=TIMEOUT_MS)


def test_committing_without_an_identity_asks_for_one(
    page: Page, lab: LabServer, request: pytest.FixtureRequest
) -> None:
    """No user.name / user.email anywhere the Lab server's git looks (its own HOME, no
    system identity): the commit error says so and the panel shows the fields."""
    root = lab.root / f"nobody-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / "notes.txt", "hello\n")
    git(root, "add", "notes.txt")
    panel = show_panel(page, root)
    expect(file_row(panel, "staged", "notes.txt")).to_be_visible(timeout=TIMEOUT_MS)
    message = panel.locator(".jp-TeraxGit-commitInput")
    message.fill("First commit")
    panel.locator(".jp-TeraxGit-commitButton").click()
    alert = panel.locator("[data-reason='identity_unknown']")
    expect(alert).to_contain_text("user.name and user.email are not set", timeout=TIMEOUT_MS)
    form = panel.locator(".jp-TeraxGit-identity")
    save = form.locator("button[type='submit']")
    expect(save).to_be_disabled()
    form.locator("[data-field='name']").fill("Grace Hopper")
    form.locator("[data-field='email']").fill("grace@example.com")
    page.screenshot(path=artifact_name(request, "-fields"))
    save.click()
    expect(message).to_have_value("", timeout=TIMEOUT_MS)
    expect(form).to_have_count(0)
    assert git(root, "log", "-1", "--format=%an <%ae> %s").strip() == (
        "Grace Hopper <grace@example.com> First commit"
    )
    # Saved in the repository only (the server's own configuration is untouched).
    assert git(root, "config", "--local", "user.email").strip() == "grace@example.com"


@pytest.mark.parametrize("theme", [LIGHT, DARK])
def test_the_diff_opens_in_the_main_area_with_room_for_code(
    page: Page, repo: Path, request: pytest.FixtureRequest, theme: str
) -> None:
    """At Lab's default window size the sidebar keeps the list (at a usable width) and the
    diff gets a main-area tab wide enough for a line of code."""
    page.set_viewport_size({"width": 1280, "height": 720})
    long_line = "result = compute_the_total(first_argument, second_argument, third_argument)"
    write(repo / "wide.py", f"{long_line}\n")
    if theme == DARK:
        change_theme(page, DARK)
    try:
        panel = open_repository(page, repo)
        diff = open_diff(panel, "untracked", "wide.py", hunks=1)
        tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
        expect(tab).to_contain_text("Diff: wide.py")
        sidebar = panel.bounding_box()
        assert sidebar is not None
        assert 340 <= sidebar["width"] <= 420, sidebar
        text = diff.locator(".jp-TeraxDiff-text").first
        expect(text).to_have_text(long_line)
        box = text.bounding_box()
        assert box is not None
        # The whole line is visible: the text is not cut by the tab's width.
        fits = text.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert fits
        assert box["width"] >= 600, box
        expect(file_row(panel, "untracked", "wide.py")).to_have_attribute("aria-selected", "true")
        page.screenshot(path=artifact_name(request, f"-{theme.split()[-1].lower()}"))
        # Closing the tab closes the diff: the row is no longer selected.
        page.locator(
            "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabCloseIcon"
        ).click()
        expect(file_row(panel, "untracked", "wide.py")).to_have_attribute(
            "aria-selected", "false", timeout=TIMEOUT_MS
        )
    finally:
        if theme == DARK:
            change_theme(page, LIGHT)


def test_push_sets_the_upstream_then_pull_and_push_follow_it(page: Page, repo: Path) -> None:
    remote = repo.parent / f"{repo.name}-origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    panel = open_repository(page, repo)
    upstream = panel.locator(".jp-TeraxGit-upstream[data-upstream]")
    expect(upstream).to_have_text("No upstream · Push will publish to origin/main")
    push = panel.locator(".jp-TeraxGit-remoteButton[data-operation='push']")
    expect(push).to_have_attribute("title", re.compile("set it as upstream"))
    push.click()
    expect(upstream).to_have_text("origin/main · up to date", timeout=TIMEOUT_MS)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert git(remote, "rev-parse", "main").strip() == head

    git(repo, "commit", "-q", "--allow-empty", "-m", "One more")
    panel.locator(".jp-SidePanel-toolbar").get_by_title("Refresh").click()
    expect(push.locator(".jp-TeraxGit-badge")).to_have_text("1", timeout=TIMEOUT_MS)
    expect(upstream).to_have_text("origin/main · 1 ahead, 0 behind")
    push.click()
    expect(push.locator(".jp-TeraxGit-badge")).to_have_count(0, timeout=TIMEOUT_MS)
    assert git(remote, "rev-parse", "main").strip() == git(repo, "rev-parse", "HEAD").strip()

    # The branch switcher (Alt+Shift+B) creates a branch from a new name.
    page.keyboard.press("Alt+Shift+B")
    switcher = panel.locator(".jp-TeraxGit-switcher")
    expect(switcher.locator("[data-branch='main'][data-current='true']")).to_be_visible(
        timeout=TIMEOUT_MS
    )
    page.keyboard.type("topic")
    expect(switcher.locator("[data-kind='create']")).to_have_text("Create branch “topic”")
    page.keyboard.press("Enter")
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("topic", timeout=TIMEOUT_MS)
    assert git(repo, "branch", "--show-current").strip() == "topic"
    expect(upstream).to_have_text("No upstream · Push will publish to origin/topic")


def test_git_panels_in_the_dark_theme(
    dark_page: Page, repo: Path, request: pytest.FixtureRequest
) -> None:
    page = dark_page
    panel = open_repository(page, repo)
    write(repo / "docs" / "guide.md", "# Guide\n")
    expect(file_row(panel, "untracked", "docs/guide.md")).to_be_visible(timeout=TIMEOUT_MS)
    diff = open_diff(panel, "unstaged", "app.py")
    added = diff.locator(".jp-TeraxDiff-line[data-kind='add']")
    added.nth(1).click()
    expect(diff.locator(".jp-TeraxDiff-selectionBar")).to_be_visible()
    page.screenshot(path=artifact_name(request, "-panel"))

    page.evaluate("() => window.jupyterapp.commands.execute('terax:git-history').then(() => null)")
    history = page.locator(f"#jp-main-dock-panel {HISTORY}")
    expect(history.locator(".jp-TeraxHistory-row").first).to_be_visible(timeout=TIMEOUT_MS)
    history.locator(".jp-TeraxHistory-row[data-parents='2']").click()
    expect(history.locator(".jp-TeraxHistory-detail h3")).to_have_text(
        "Merge branch 'feature'", timeout=TIMEOUT_MS
    )
    page.screenshot(path=artifact_name(request, "-history"))


# -- a long history ----------------------------------------------------------------------------

LONG_HISTORY = 3000
ROW_HEIGHT = 28
MAX_ROWS = 200

# What the browser has of the list: the scroll box and every row element with its graph.
LIST_STATE = """list => {
  const box = list.getBoundingClientRect();
  const summary = list.closest('.jp-TeraxHistory').querySelector('.jp-TeraxHistory-summary');
  return {
    scrollTop: list.scrollTop,
    height: list.clientHeight,
    scrollHeight: list.scrollHeight,
    summary: summary ? summary.textContent : '',
    rows: [...list.querySelectorAll('.jp-TeraxHistory-row')].map(row => ({
      index: Number(row.dataset.index),
      oid: row.dataset.oid,
      parents: Number(row.dataset.parents),
      top: row.getBoundingClientRect().top - box.top + list.scrollTop,
      paths: row.querySelectorAll('svg path').length,
      merges: row.querySelectorAll("svg path[data-kind='merge']").length,
    })),
  };
}"""


def loaded_count(summary: str) -> int:
    """The number in the History summary ("1,200+ commits", "3,000 commits")."""
    digits = re.sub(r"\D", "", summary)
    return int(digits) if digits else 0


def check_window(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The rendered rows are few, consecutive, each at its own index and cover the viewport."""
    rows = sorted(state["rows"], key=lambda row: row["index"])
    assert rows, "no row is rendered"
    assert len(rows) < MAX_ROWS, f"{len(rows)} row elements: the list is not virtual"
    indexes = [row["index"] for row in rows]
    assert indexes == list(range(indexes[0], indexes[0] + len(rows))), indexes
    for row in rows:
        assert abs(row["top"] - row["index"] * ROW_HEIGHT) < 1, row
    top, bottom = state["scrollTop"], state["scrollTop"] + state["height"]
    assert indexes[0] * ROW_HEIGHT <= top
    assert (indexes[-1] + 1) * ROW_HEIGHT >= min(bottom, state["scrollHeight"])
    return rows


@pytest.fixture
def long_history(lab: LabServer) -> Path:
    """A repository of 3000 generated commits, some hundreds of them merges (git fast-import)."""
    root = lab.root / f"long-{uuid.uuid4().hex[:8]}"
    dag = random_dag(LONG_HISTORY, seed=7, branches=8)
    merged = {parent for _, parents in dag for parent in parents}
    # Every tip gets a branch, so that --all lists every commit; main is the newest.
    tips = [oid for oid, _ in dag if oid not in merged]
    heads = {"main": tips[0], **{f"topic-{n}": tip for n, tip in enumerate(tips[1:])}}
    fast_import(root, dag, heads)
    # fast-import leaves the index and the work tree empty: check main out.
    git(root, "read-tree", "-u", "--reset", "HEAD")
    return root


def test_history_scrolls_through_thousands_of_commits(
    page: Page, long_history: Path, request: pytest.FixtureRequest
) -> None:
    repo = long_history
    parents_of = {
        line.split()[0]: line.split()[1:]
        for line in git(repo, "log", "--all", "--format=%H %P").splitlines()
    }
    total = len(parents_of)
    assert total == LONG_HISTORY
    assert sum(len(parents) > 1 for parents in parents_of.values()) >= 300
    (root_oid,) = git(repo, "rev-list", "--max-parents=0", "HEAD").split()

    log_requests: list[str] = []
    refused: list[int] = []
    page.on("request", lambda r: log_requests.append(r.url) if "/git/log" in r.url else None)
    page.on(
        "response",
        lambda r: refused.append(r.status) if "/git/log" in r.url and r.status >= 400 else None,
    )
    open_repository(page, repo)
    started = time.monotonic()
    page.keyboard.press("Alt+Shift+H")
    history = page.locator(f"#jp-main-dock-panel {HISTORY}")
    rows = history.locator(".jp-TeraxHistory-row")
    expect(rows.first).to_be_visible(timeout=TIMEOUT_MS)
    first_rows = time.monotonic() - started
    expect(rows.first).to_have_attribute("data-index", "0")
    listbox = history.locator(".jp-TeraxHistory-list")
    summary = history.locator(".jp-TeraxHistory-summary")
    expect(summary).to_have_text(re.compile(r"^[\d,]+\+ commits$"), timeout=TIMEOUT_MS)
    state = listbox.evaluate(LIST_STATE)
    check_window(state)
    page_size = loaded_count(state["summary"])
    assert 0 < page_size < total

    # End goes to the last loaded commit; the list then asks for the next page with the
    # cursor, and End again goes further, until the initial commit is there. On the way a
    # branch appears, as from a terminal: the refs move, HEAD does not, the next cursor is
    # stale (409), and the list lays itself out again as far as it was and goes on.
    root_row = history.locator(f".jp-TeraxHistory-row[data-oid='{root_oid}']")
    presses = 0
    while root_row.count() == 0:
        presses += 1
        assert presses <= 2 * (total // page_size + 2), "End never reached the initial commit"
        before = loaded_count(summary.text_content() or "")
        if presses == 1:
            # Before the first further page: one End press may load more than one page, so
            # a third press might never come.
            git(repo, "branch", "made-elsewhere", root_oid)
        listbox.focus()
        page.keyboard.press("End")
        page.wait_for_function(
            """([list, before, root]) => {
              if (list.querySelector(`[data-oid="${root}"]`)) return true;
              const text = list.closest('.jp-TeraxHistory')
                .querySelector('.jp-TeraxHistory-summary').textContent;
              return Number(text.replace(/\\D/g, '')) > before;
            }""",
            arg=[listbox.element_handle(), before, root_oid],
            timeout=TIMEOUT_MS,
        )
        check_window(listbox.evaluate(LIST_STATE))
    expect(root_row).to_be_visible()
    expect(root_row).to_have_attribute("data-parents", "0")
    expect(root_row.locator(".jp-TeraxHistory-ref[title='made-elsewhere']")).to_have_count(1)
    assert refused == [409]
    expect(summary).to_have_text(f"{total:,} commits")
    cursors = [url for url in log_requests if "cursor=" in url]
    assert len(cursors) >= total // page_size - 1, log_requests

    state = listbox.evaluate(LIST_STATE)
    window = check_window(state)
    assert window[-1]["index"] == total - 1
    assert window[-1]["oid"] == root_oid
    # Far down the graph still has its lanes, and every row has as many parents as in git.
    for row in window:
        assert row["paths"] > 0, row
        assert row["parents"] == len(parents_of[row["oid"]]), row
    merge = next((row for row in reversed(window) if row["parents"] > 1), None)
    assert merge is not None, "no merge commit near the end of the history"
    assert merge["merges"] > 0, merge
    merge_row = history.locator(f".jp-TeraxHistory-row[data-oid='{merge['oid']}']")
    merge_row.click()
    expect(merge_row).to_have_attribute("aria-selected", "true")
    parent_buttons = history.locator(".jp-TeraxHistory-detail .jp-TeraxHistory-parent")
    expect(parent_buttons).to_have_count(len(parents_of[merge["oid"]]), timeout=TIMEOUT_MS)
    assert [
        parent_buttons.nth(n).get_attribute("title") for n in range(parent_buttons.count())
    ] == parents_of[merge["oid"]]

    # Back up through the middle by setting scrollTop: still a small, aligned window.
    for fraction in (0.5, 0.2):
        listbox.evaluate("(list, f) => { list.scrollTop = f * list.scrollHeight; }", fraction)
        page.wait_for_function(
            """([list, f]) => {
              const want = Math.floor(f * list.scrollHeight / 28);
              return list.querySelector(`.jp-TeraxHistory-row[data-index="${want}"]`);
            }""",
            arg=[listbox.element_handle(), fraction],
            timeout=TIMEOUT_MS,
        )
        check_window(listbox.evaluate(LIST_STATE))
    listbox.evaluate("list => { list.scrollTop = list.scrollHeight; }")
    expect(root_row).to_be_visible(timeout=TIMEOUT_MS)
    print(f"first rows after {first_rows:.2f}s; {presses} End presses; {len(log_requests)} pages")
    page.screenshot(path=artifact_name(request, "-end"))

    # A search from down there shows its newest matches, from the top of the list.
    history.get_by_label("Search commit messages").fill("commit 1")
    expect(rows.first).to_have_attribute("data-index", "0", timeout=TIMEOUT_MS)
    expect(rows.first).to_be_in_viewport()
    assert listbox.evaluate("list => list.scrollTop") == 0


def workspace(lab: LabServer) -> str:
    url = f"{lab.url}lab/api/workspaces/default?token={lab.token}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.dumps(json.loads(response.read().decode("utf-8")))


def test_history_tab_comes_back_after_a_reload(
    page: Page, lab: LabServer, repo: Path, request: pytest.FixtureRequest
) -> None:
    open_repository(page, repo)
    page.keyboard.press("Alt+Shift+H")
    history = page.locator(f"#jp-main-dock-panel {HISTORY}")
    expect(history.locator(".jp-TeraxHistory-row").first).to_be_visible(timeout=TIMEOUT_MS)

    # Lab saves the layout a moment after it changes.
    deadline = time.monotonic() + 10
    while "terax-git-history:" not in workspace(lab):
        assert time.monotonic() < deadline, "the History tab never reached the workspace"
        time.sleep(0.2)

    page.goto(f"{lab.url}lab?token={lab.token}")
    wait_for_reloaded(page, "terax:git-history")
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text=f"History: {repo.name}")
    expect(tab).to_have_count(1, timeout=TIMEOUT_MS)
    expect(history).to_be_visible(timeout=TIMEOUT_MS)
    first = history.locator(".jp-TeraxHistory-row").first
    expect(first).to_have_attribute("data-index", "0", timeout=TIMEOUT_MS)
    expect(first.locator(".jp-TeraxHistory-subject-text")).to_have_text("Merge branch 'feature'")
    expect(history.locator(".jp-TeraxHistory-row[data-parents='2']")).to_have_count(1)
    page.screenshot(path=artifact_name(request, "-restored"))


def test_history_leaves_pull_request_refs_out_until_asked_and_remembers(
    page: Page, lab: LabServer, repo: Path, request: pytest.FixtureRequest
) -> None:
    # A mirror of a hosted repository: refs/pull/N/head for every pull request, on no branch.
    git(repo, "commit", "-q", "-am", "Name the values")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    bases = git(repo, "rev-list", "HEAD").split()
    for number in range(1, 13):
        base = bases[number % len(bases)]
        pull = git(repo, "commit-tree", "-p", base, "-m", f"pull request {number}", tree).strip()
        git(repo, "update-ref", f"refs/pull/{number}/head", pull)
    branches = len(bases)
    open_repository(page, repo)
    page.keyboard.press("Alt+Shift+H")
    history = page.locator(f"#jp-main-dock-panel {HISTORY}")
    summary = history.locator(".jp-TeraxHistory-summary")
    refs = history.locator("select[data-filter='refs']")
    expect(summary).to_have_text(f"{branches} commits", timeout=TIMEOUT_MS)
    expect(refs).to_have_value("branches")
    pulls = history.locator(".jp-TeraxHistory-subject-text", has_text="pull request")
    expect(pulls).to_have_count(0)

    refs.select_option("all")
    expect(summary).to_have_text(f"{branches + 12} commits", timeout=TIMEOUT_MS)
    expect(pulls).to_have_count(12)
    # Each pull request's lane joins the one its parent is on at once: the graph stays a few
    # lanes wide, and every row draws its lanes.
    width = history.locator(".jp-TeraxHistory-graph").first.get_attribute("width")
    assert width is not None
    assert 28 <= int(width) <= 14 * 6
    for row in history.locator(".jp-TeraxHistory-row").all():
        assert row.locator("svg path").count() > 0
    page.screenshot(path=artifact_name(request, "-all-refs"))

    # The choice is remembered: a reload draws every ref again. (Lab saves the layout with
    # the History tab a moment after it opened.)
    deadline = time.monotonic() + 10
    while "terax-git-history:" not in workspace(lab):
        assert time.monotonic() < deadline, "the History tab never reached the workspace"
        time.sleep(0.2)
    page.goto(f"{lab.url}lab?token={lab.token}")
    wait_for_reloaded(page, "terax:git-history")
    expect(history).to_be_visible(timeout=TIMEOUT_MS)
    expect(refs).to_have_value("all", timeout=TIMEOUT_MS)
    expect(summary).to_have_text(f"{branches + 12} commits", timeout=TIMEOUT_MS)
    refs.select_option("local")
    expect(summary).to_have_text(f"{branches} commits", timeout=TIMEOUT_MS)
    refs.select_option("branches")
    expect(summary).to_have_text(f"{branches} commits", timeout=TIMEOUT_MS)
    expect(pulls).to_have_count(0)


# -- repositories that name programs -----------------------------------------------------------


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """The identity for the git helpers of tests/services/git (they use the environment)."""
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def test_browsing_into_an_embedded_bare_repository_runs_nothing(
    page: Page,
    lab: LabServer,
    tmp_path: Path,
    git_identity: None,
    request: pytest.FixtureRequest,
) -> None:
    # A project that commits a bare repository as plain files (docs/payload with HEAD, refs,
    # objects and a config naming fsmonitor), cloned plainly. The Git model follows the
    # file browser even with the Git panel closed: entering docs/payload must run nothing.
    trap = make_trap(tmp_path / "trap")
    name = f"cloned-{uuid.uuid4().hex[:8]}"
    clone = embedded_bare_clone(lab.root, tmp_path / "source", trap, name)
    payload = clone / "docs" / "payload"
    raw_git(payload, "status")
    assert trap.fired(), "plain git in docs/payload runs the payload's fsmonitor"
    trap.reset()

    with page.expect_response(
        lambda r: "/terax/api/git/status" in r.url and r.request.method == "GET",
        timeout=TIMEOUT_MS,
    ) as answer:
        page.evaluate(
            "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })",
            f"{name}/docs/payload/",
        )
    assert answer.value.status == 200
    expect(page.locator(".jp-DirListing-item", has_text="HEAD")).to_be_visible(timeout=TIMEOUT_MS)
    page.screenshot(path=artifact_name(request, "-browsing"))
    assert trap.fired() == []
    # The panel shows the project around the payload, not the payload.
    page.evaluate("() => window.jupyterapp.commands.execute('terax:git-panel')")
    panel = page.locator(PANEL)
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("main", timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxGit-trust")).to_have_count(0)
    info = server_api(lab, f"terax/api/git/repository?path={name}/docs/payload")
    assert info["relative_root"] == name
    page.screenshot(path=artifact_name(request, "-payload"))
    assert trap.fired() == []


def test_the_trust_prompt_decides_whether_hooks_run(
    page: Page, lab: LabServer, repo: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    trap = make_trap(tmp_path / "trap")
    plant_hooks(repo / ".git", trap, ("pre-commit", "post-commit"))
    git(repo, "config", "filter.strip.clean", str(trap.program))
    panel = open_repository(page, repo)
    bar = panel.locator(".jp-TeraxGit-trust")
    expect(bar).to_have_attribute("data-trusted", "false", timeout=TIMEOUT_MS)
    expect(bar).to_contain_text("Restricted mode")
    expect(bar).to_contain_text("the pre-commit hook")
    page.screenshot(path=artifact_name(request, "-restricted"))

    # Untrusted: the commit is made, its hooks do not run, and the panel says so.
    git(repo, "add", "app.py")
    expect(file_row(panel, "staged", "app.py")).to_be_visible(timeout=TIMEOUT_MS)
    message = panel.locator(".jp-TeraxGit-commitInput")
    message.click()
    page.keyboard.type("Commit without hooks")
    page.keyboard.press("Control+Enter")
    expect(message).to_have_value("", timeout=TIMEOUT_MS)
    skipped = panel.locator(".jp-TeraxGit-notice[data-kind='hooks-skipped']")
    expect(skipped).to_contain_text("pre-commit, post-commit", timeout=TIMEOUT_MS)
    assert git(repo, "log", "-1", "--format=%s").strip() == "Commit without hooks"
    assert trap.fired() == []

    # Trust: the dialog says what trusting lets run; cancelling changes nothing.
    bar.get_by_role("button", name="Trust…").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Trust this repository?", timeout=TIMEOUT_MS)
    expect(dialog).to_contain_text("hook: pre-commit")
    expect(dialog).to_contain_text(f"filter.strip.clean = {trap.program}")
    page.screenshot(path=artifact_name(request, "-prompt"))
    dialog.get_by_role("button", name="Keep restricted").click()
    expect(bar).to_have_attribute("data-trusted", "false")
    bar.get_by_role("button", name="Trust…").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Trust", exact=True).click()
    expect(bar).to_have_attribute("data-trusted", "true", timeout=TIMEOUT_MS)
    expect(bar).to_contain_text("Trusted: its hooks and filters run.")
    assert server_api(lab, f"terax/api/git/trust?path={repo.name}")["trusted"] is True
    page.screenshot(path=artifact_name(request, "-trusted"))

    write(repo / "README.md", "# Project\n\nTrusted now.\n")
    git(repo, "add", "README.md")
    expect(file_row(panel, "staged", "README.md")).to_be_visible(timeout=TIMEOUT_MS)
    message.click()
    page.keyboard.type("Commit with hooks")
    page.keyboard.press("Control+Enter")
    expect(message).to_have_value("", timeout=TIMEOUT_MS)
    assert [line.split()[0] for line in trap.fired()] == ["pre-commit", "post-commit"]
    expect(skipped).to_have_count(0)

    bar.get_by_role("button", name="Stop trusting").click()
    expect(bar).to_have_attribute("data-trusted", "false", timeout=TIMEOUT_MS)
    assert server_api(lab, f"terax/api/git/trust?path={repo.name}")["trusted"] is False
