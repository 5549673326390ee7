"""Fixtures of the tests that drive a real Chromium with Playwright's sync API (``tests/ui``
and the hub's ``tests/hub/test_preview_chromium.py``).

``playwright_instance`` and ``browser`` are registered once, in the root ``tests/conftest.py``:
one Chromium serves the whole session, and two live sync Playwrights in one thread would
refuse to start. ``jp_asyncio_loop`` and ``jp_server_cleanup`` replace pytest-jupyter's
autouse fixtures of the same names with no-ops; only a module or conftest whose servers all run
in subprocesses imports them, since Playwright's sync API owns the thread's event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(autouse=True)
def jp_asyncio_loop() -> None:
    """No in-process server here: Playwright's sync API owns this thread's event loop."""
    return None


@pytest.fixture(autouse=True)
def jp_server_cleanup() -> None:
    """The servers run in subprocesses (a lab, a hub's): nothing in-process to clean up."""
    return None


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    # Imported here: the root conftest loads this module for every test run.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the whole session."""
    browser = playwright_instance.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
    )
    try:
        yield browser
    finally:
        browser.close()
