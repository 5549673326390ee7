"""What the tests that drive a real Chromium with Playwright's sync API share (``tests/ui``
and the hub's ``tests/hub/test_preview_chromium.py``).

``chromium()`` starts the browser (each suite holds it for the scope it needs).
``jp_asyncio_loop`` and ``jp_server_cleanup`` replace pytest-jupyter's autouse fixtures of the
same names with no-ops; only a module or conftest whose servers all run in subprocesses imports
them, since Playwright's sync API owns the thread's event loop.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser

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


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium under a sync Playwright of its own, both stopped on exit.

    The UI suite holds one for the session (it runs last); the hub's Chromium test holds one
    for its module, stopped before anything else runs: a sync Playwright left running owns
    the thread's event loop, and every in-process server test after it fails."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()
