"""A browser session: one Chromium, its DevTools connection (over the browser's pipe), and the
pages opened on it.

A session can also hand out throw-away browser contexts (``new_context``): Chromium's
incognito-like profiles inside the same process, each with its own cookies, storage and cache,
gone with ``dispose_context``. A long-lived browser then serves one replay after another with
a clean profile each time, without paying a browser launch per replay.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import BrowserError, Timeout
from terax_jupyter.services.browser.cdp import CdpConnection
from terax_jupyter.services.browser.launcher import DEAD_PROXY, ChromiumLauncher
from terax_jupyter.services.browser.page import DEFAULT_TIMEOUT, BrowserPage, loopback_only

if TYPE_CHECKING:
    from types import TracebackType

    from terax_jupyter.services.browser.page import NetworkPolicy

__all__ = ["BrowserSession"]


class BrowserSession:
    """``async with BrowserSession() as browser: page = await browser.new_page()``.

    By default the session launches its own Chromium and ends it on ``close``. Given a
    ``launcher`` it uses that one (starting it if needed) and leaves it running on close unless
    ``owns_launcher`` is true, so tests and a long-lived manager can share one browser process
    between sessions. A browser that crashed or was killed closes the connection; the next call
    on the session or its pages raises ``BrowserError`` at once.
    """

    def __init__(
        self,
        launcher: ChromiumLauncher | None = None,
        *,
        binary: str | None = None,
        policy: NetworkPolicy | None = None,
        owns_launcher: bool | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.launcher = launcher if launcher is not None else ChromiumLauncher(binary)
        self.owns_launcher = launcher is None if owns_launcher is None else owns_launcher
        self.policy = policy if policy is not None else loopback_only
        self.timeout = timeout
        self.connection: CdpConnection | None = None
        self.pages: list[BrowserPage] = []
        self._closed = False

    @property
    def alive(self) -> bool:
        return not self._closed and self.connection is not None and not self.connection.closed

    async def start(self) -> BrowserSession:
        if self._closed:
            raise BrowserError("this browser session was closed; start a new one")
        if self.connection is not None:
            return self
        try:
            pipe = self.launcher.pipe
            if pipe is None or pipe.lost is not None or not self.launcher.running:
                pipe = await self.launcher.start()
            self.connection = await CdpConnection.connect(pipe, timeout=self.timeout)
            # Downloads would write into the profile (or worse); a dev server has no need.
            await self.connection.send("Browser.setDownloadBehavior", {"behavior": "deny"})
        except BaseException:
            await self.close()
            raise
        return self

    async def new_page(
        self, *, policy: NetworkPolicy | None = None, context: str | None = None
    ) -> BrowserPage:
        """A new tab on about:blank under the network guard (this session's policy unless
        another is given), in browser context ``context`` (from ``new_context``) if given,
        else in the browser's default one."""
        connection: Any = self._live()
        if context is not None:
            connection = _InContext(connection, context)
        page = await BrowserPage.open(
            connection, policy=policy if policy is not None else self.policy, timeout=self.timeout
        )
        self.pages.append(page)
        return page

    async def new_context(self) -> str:
        """A fresh browser context (no cookies, storage or cache of any other); its id.

        Under ``lockdown`` the context gets the launcher's dead proxy as well, so that it
        stays off the network even if Chromium gave new contexts a proxy setting of their
        own (loopback is never proxied, so local servers are still reached)."""
        params: dict[str, Any] = {"disposeOnDetach": True}
        if self.launcher.lockdown:
            params["proxyServer"] = DEAD_PROXY
        created = await self._live().send("Target.createBrowserContext", params)
        return str(created["browserContextId"])

    async def dispose_context(self, context: str) -> None:
        """Close browser context ``context`` with every tab in it; its cookies and storage
        are gone. Safe after the browser died."""
        self.pages = [page for page in self.pages if not page.closed]
        if self.connection is None or self.connection.closed:
            return
        with contextlib.suppress(BrowserError, Timeout):
            await self.connection.send(
                "Target.disposeBrowserContext", {"browserContextId": context}, timeout=5
            )

    def _live(self) -> CdpConnection:
        if self._closed:
            raise BrowserError("the browser session is closed")
        if self.connection is None:
            raise BrowserError("the browser session was not started")
        if self.connection.closed:
            # Only here, after the browser went away: a short wait for its exit status.
            code = self.launcher.exit_code(wait=0.5)
            exited = f"; the browser exited with code {code}" if code is not None else ""
            raise BrowserError(f"the browser is gone ({self.connection.close_reason}{exited})")
        return self.connection

    async def close(self) -> None:
        """Close the pages, the connection and (if owned) the browser. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        pages, self.pages = self.pages, []
        for page in pages:
            with contextlib.suppress(BrowserError, Timeout):
                await page.close()
        if self.connection is not None:
            await self.connection.close()
        if self.owns_launcher:
            await self.launcher.close()

    async def __aenter__(self) -> BrowserSession:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


class _InContext:
    """The session's connection, except that the tab ``BrowserPage.open`` creates lands in
    browser context ``context``: everything else is passed through to the connection."""

    def __init__(self, connection: CdpConnection, context: str) -> None:
        self._connection = connection
        self._context = context

    async def send(
        self, method: str, params: dict[str, Any] | None = None, **options: Any
    ) -> dict[str, Any]:
        if method == "Target.createTarget":
            params = {**(params or {}), "browserContextId": self._context}
        return await self._connection.send(method, params, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)
