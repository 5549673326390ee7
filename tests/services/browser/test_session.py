"""BrowserSession: its life cycle, a shared browser, and a browser that dies under it."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import BrowserError
from terax_jupyter.services.browser.session import BrowserSession

from .driver_fixtures import (  # noqa: F401 (fixtures)
    chromium_fixture,
    live_group_members,
    site_fixture,
)

if TYPE_CHECKING:
    from terax_jupyter.services.browser.launcher import ChromiumLauncher

    from .driver_fixtures import Site


async def test_a_session_launches_its_own_browser_and_ends_it(site: Site) -> None:
    async with BrowserSession() as browser:
        assert browser.alive
        page = await browser.new_page()
        await page.navigate(site.url("/login"))
        assert await page.text_contains("Not signed in")
        group, profile = browser.launcher.pid, browser.launcher.profile_dir
        assert group is not None
        assert profile is not None
    assert not browser.alive
    assert live_group_members(group) == []
    assert not profile.exists()
    await browser.close()  # twice is fine
    with pytest.raises(BrowserError, match="closed"):
        await browser.new_page()
    with pytest.raises(BrowserError, match="closed"):
        await browser.start()


async def test_killing_the_browser_makes_the_next_call_fail_fast(site: Site) -> None:
    browser = await BrowserSession().start()
    try:
        page = await browser.new_page()
        await page.navigate(site.url("/login"))
        hanging = asyncio.create_task(page.evaluate("new Promise(() => {})", timeout=60))
        await asyncio.sleep(0.1)
        group = browser.launcher.pid
        assert group is not None
        started = time.monotonic()
        os.killpg(group, signal.SIGKILL)

        with pytest.raises(BrowserError):
            await asyncio.wait_for(hanging, 10)
        with pytest.raises(BrowserError):
            await asyncio.wait_for(page.snapshot(), 10)
        with pytest.raises(BrowserError, match="the browser is gone"):
            await browser.new_page()
        assert time.monotonic() - started < 5
        assert not browser.alive
    finally:
        await browser.close()
    assert not browser.launcher.running


async def test_sessions_can_share_a_running_browser(
    chromium: ChromiumLauncher,
    site: Site,
) -> None:
    first = await BrowserSession(chromium).start()
    second = await BrowserSession(chromium).start()
    try:
        one, two = await first.new_page(), await second.new_page()
        await one.navigate(site.url("/login"))
        await two.navigate(site.url("/dupes"))
        assert await one.title() == "Login"
        assert await two.title() == "Two of a kind"
    finally:
        await first.close()
    assert chromium.running  # not owned: left running for the other session
    await two.navigate(site.url("/login"))
    await second.close()
    assert chromium.running


async def test_a_dropped_connection_can_be_reopened_for_new_pages(
    chromium: ChromiumLauncher,
    site: Site,
) -> None:
    async with BrowserSession(chromium) as browser:
        page = await browser.new_page()
        connection = browser.connection
        assert connection is not None
        await connection.close()
        with pytest.raises(BrowserError):
            await page.title()
        await connection.reconnect()
        fresh = await browser.new_page()
        await fresh.navigate(site.url("/dupes"))
        assert await fresh.text_contains("nothing deleted")
