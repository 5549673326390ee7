"""The warm replay browser: workflow runs reuse one Chromium per user (each run in a fresh
browser context, so no cookies carry over), it closes after ``replay_browser_idle``, a crashed
one is replaced, one user's runs never land in another user's browser, and 0 keeps the old
one-browser-per-run behaviour. Real Chromium, the eval site on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import ReplayRefused
from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.browser.evals.site import EvalSite
from terax_jupyter.services.browser.manager import SPARE_TABS, BrowserManager

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator
    from pathlib import Path

SIGNED_OUT = [{"kind": "text_contains", "value": "Sign in needed"}]
DASHBOARD = [{"kind": "title_contains", "value": "Dashboard"}]


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


@contextlib.asynccontextmanager
async def recorded(tmp_path: Path, site: EvalSite) -> AsyncIterator[BrowserManager]:
    """A manager with two saved workflows: "dashboard" and "sign-in"."""
    browser = BrowserManager(str(tmp_path), redactor=Redactor(), chromium_sandbox=False)
    # "dashboard" first, while the recording tabs are signed out: it asserts a clean profile.
    async with browser.using("rec") as tab:
        await tab.open(site.url("/dashboard"))
    await browser.save_workflow(
        "rec", "dashboard", side_effect="read_only", postconditions=SIGNED_OUT
    )
    async with browser.using("rec") as tab:
        snap = await tab.open(site.url("/login"))
        await tab.type(snap.find("textbox", "Username")[0].ref, "alice", input_name="username")
        await tab.type(None, "pw-1", input_name="password", role="textbox", name="Password")
        await tab.click(role="button", name="Sign in")
        await tab.wait(title_contains="Dashboard")
    await browser.save_workflow("rec", "sign-in", side_effect="mutating", postconditions=DASHBOARD)
    await browser.close_tab("rec")
    try:
        yield browser
    finally:
        await browser.close()


async def sign_in(manager: BrowserManager, who: str, *, user: str | None = None) -> None:
    inputs = {"username": who, "password": "pw-2"}
    await manager.run_workflow("sign-in", inputs, task="t", user=user)


def pids(manager: BrowserManager) -> dict[str, int | None]:
    return {b["user"]: b["pid"] for b in manager.replay_browsers()}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: the launcher reaps its leader, so this is brief.
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


async def test_runs_reuse_one_browser_with_a_clean_profile_each(
    tmp_path: Path, site: EvalSite
) -> None:
    async with recorded(tmp_path, site) as manager:
        await sign_in(manager, "bob", user="alice")
        first = pids(manager)
        assert list(first) == ["alice"]
        assert first["alice"] is not None
        # The same browser, yet the sign-in's cookie is gone: the dashboard says sign in.
        await manager.run_workflow("dashboard", {}, task="t", user="alice")
        await sign_in(manager, "carol", user="alice")
        assert pids(manager) == first
        assert site.sign_ins == ["alice", "bob", "carol"]
        [state] = manager.replay_browsers()
        assert state["busy"] == 0
        # The approval's start page is shown in it too.
        start = await manager.start_page("dashboard", user="alice")
        assert start["title"] == "Sign in needed"
        assert pids(manager) == first


async def test_a_second_user_gets_a_browser_of_their_own(tmp_path: Path, site: EvalSite) -> None:
    async with recorded(tmp_path, site) as manager:
        manager.max_replay_browsers = 1
        await sign_in(manager, "bob", user="alice")
        alices = pids(manager)["alice"]
        assert alices is not None
        # Mallory's run neither reuses Alice's browser nor sees Alice's sign-in.
        await manager.run_workflow("dashboard", {}, task="t", user="mallory")
        mallorys = pids(manager)
        assert list(mallorys) == ["mallory"]  # over the limit: Alice's idle one was closed
        assert mallorys["mallory"] not in (None, alices)
        assert not alive(alices)
        manager.max_replay_browsers = 2
        await sign_in(manager, "dave", user="alice")
        both = pids(manager)
        assert set(both) == {"mallory", "alice"}
        assert both["alice"] not in (alices, both["mallory"])


async def test_an_idle_replay_browser_is_closed(tmp_path: Path, site: EvalSite) -> None:
    async with recorded(tmp_path, site) as manager:
        manager.replay_browser_idle = 0.3
        await sign_in(manager, "bob")
        [state] = manager.replay_browsers()
        pid = state["pid"]
        for _ in range(100):
            if not manager.replay_browsers():
                break
            await asyncio.sleep(0.1)
        assert manager.replay_browsers() == []
        assert not alive(pid)
        await sign_in(manager, "carol")  # and the next run starts one again
        assert pids(manager)[""] not in (None, pid)


async def test_a_crashed_replay_browser_is_replaced(tmp_path: Path, site: EvalSite) -> None:
    async with recorded(tmp_path, site) as manager:
        await sign_in(manager, "bob")
        pid = pids(manager)[""]
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)
        for _ in range(100):
            if not manager._warm[""].session.alive:
                break
            await asyncio.sleep(0.05)
        await sign_in(manager, "carol")
        assert pids(manager)[""] not in (None, pid)
        assert site.sign_ins[-1] == "carol"


async def test_zero_idle_starts_a_browser_per_run(tmp_path: Path, site: EvalSite) -> None:
    async with recorded(tmp_path, site) as manager:
        manager.replay_browser_idle = 0
        await sign_in(manager, "bob")
        assert manager.replay_browsers() == []
        await manager.run_workflow("dashboard", {}, task="t")
        assert site.sign_ins == ["alice", "bob"]


async def test_a_refused_run_leaves_the_browser_usable(tmp_path: Path, site: EvalSite) -> None:
    async with recorded(tmp_path, site) as manager:
        await sign_in(manager, "bob")
        pid = pids(manager)[""]
        with pytest.raises(ReplayRefused):
            await manager.run_workflow("sign-in", {"username": "x"}, task="t")  # no password
        await sign_in(manager, "carol")
        assert pids(manager)[""] == pid
        assert manager.replay_browsers()[0]["busy"] == 0


async def spare_pages(manager: BrowserManager) -> list[Any]:
    """The clean tabs made ready in the replay browser, once all of them are."""
    for _ in range(200):
        if manager.replay_browsers()[0]["spares_ready"] == SPARE_TABS:
            break
        await asyncio.sleep(0.05)
    return [task.result()[1] for task in manager._warm[""].spares]


async def test_the_next_run_takes_a_clean_tab_made_ready_after_the_last(
    tmp_path: Path, site: EvalSite
) -> None:
    async with recorded(tmp_path, site) as manager:
        await sign_in(manager, "bob")
        ready = await spare_pages(manager)
        assert len(ready) == SPARE_TABS
        assert not any(page.closed for page in ready)
        # A ready tab is a fresh context: the dashboard in it says sign in.
        await manager.run_workflow("dashboard", {}, task="t")
        for _ in range(100):  # used, then thrown away with its context (in the background)
            if ready[0].closed:
                break
            await asyncio.sleep(0.05)
        assert ready[0].closed
        assert not ready[1].closed  # still ready for the next run
        # Ready tabs that died meanwhile are not used; the run gets a new one.
        dead = await spare_pages(manager)
        assert ready[0] not in dead
        for page in dead:
            await page.close()
        await sign_in(manager, "carol")
        assert site.sign_ins == ["alice", "bob", "carol"]
        assert all(page.closed for page in dead)


async def test_a_crashed_tab_browser_closes_the_recording_audits_of_its_tabs(
    tmp_path: Path, site: EvalSite
) -> None:
    manager = BrowserManager(str(tmp_path), redactor=Redactor(), chromium_sandbox=False)
    try:
        async with manager.using("rec") as tab:
            await tab.open(site.url("/login"))
        audit = manager._tabs["rec"].audit
        assert audit is not None
        assert audit._fd is not None
        session = manager._browser
        assert session is not None
        assert session.launcher.pid is not None
        os.killpg(session.launcher.pid, signal.SIGKILL)
        for _ in range(100):
            if not session.alive:
                break
            await asyncio.sleep(0.05)
        async with manager.using("next") as tab:  # a new browser; the dead one's tabs dropped
            await tab.open(site.url("/login"))
        assert "rec" not in manager._tabs
        assert audit._fd is None  # its file was closed, not left open until the server ends
    finally:
        await manager.close()
