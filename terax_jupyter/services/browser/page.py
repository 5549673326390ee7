"""One browser tab driven over CDP: navigation, accessibility snapshots, input, and a network
guard that keeps the tab on loopback.

``BrowserPage`` implements ``types.ReplayPage`` (what replay needs: navigate, snapshot, click,
type_text, text_contains, selector_exists) plus what the agent's tools need: url, title,
screenshot, wait_for, and RAW operations (``evaluate``, ``click_at``, ``press_key``) that act
outside the accessibility tree. A RAW operation sets ``raw_used``; the page never clears it: the
recording tab resets it when a recording starts and passes it to its recorder whenever the
recording is read (``Recorder.finish(raw_used=...)``), which marks the recording not cacheable.

The network guard: ``Fetch.enable`` pauses every request of the tab; a request goes on only if
``policy(url)`` is true (default ``loopback_only``: http(s) to localhost, 127.0.0.0/8 or ::1,
plus data:, blob: and about:), and fails with ``BlockedByClient`` otherwise; the blocked URLs
are kept (the last ``BLOCKED_KEPT``) so the agent can be told. The guard sees the tab's own
requests, its frames' navigations included; traffic it cannot see (WebSockets, workers, popups)
meets the launcher's ``lockdown`` proxy. A policy that raises counts as a refusal.

Dialogs (alert, confirm, prompt, beforeunload) would freeze the page; they are answered at once
(alerts and beforeunload accepted, confirm and prompt dismissed) and their text kept in
``dialogs``.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from terax_jupyter.exceptions import (
    AccessDenied,
    BrowserError,
    InvalidRequest,
    Timeout,
    TooLarge,
)
from terax_jupyter.services.browser.axtree import ax_nodes, clipped_text
from terax_jupyter.services.browser.keys import parse_key
from terax_jupyter.services.browser.navigation import (
    NetworkPolicy,
    check_navigation,
    is_loopback_host,
    loopback_only,
)
from terax_jupyter.services.browser.types import AXNode, Snapshot

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from terax_jupyter.services.browser.cdp import CdpConnection, CdpEvent, Subscription

__all__ = [
    "BrowserPage",
    "NetworkPolicy",
    "ax_nodes",
    "check_navigation",
    "is_loopback_host",
    "loopback_only",
]  # the helpers stay importable from here

log = logging.getLogger(__name__)


BLOCKED_KEPT = 100
DIALOGS_KEPT = 50
MAX_SCREENSHOT_BYTES = 10 * 1024 * 1024
MAX_EVALUATE_CHARS = 256 * 1024
DEFAULT_TIMEOUT = 30.0
ERROR_PAGE_WAIT = 2.0
SCREENSHOT_TIMEOUT = 10.0
# How long after a click or key the main frame may start loading and still be waited for.
NAVIGATION_START_WAIT = 0.1
MAX_IN_FLIGHT = 10_000


# --- page scripts --------------------------------------------------------------------------

# Runs on the evaluated object: its JSON if small enough, never more than ``limit`` characters.
_BY_VALUE = """function (limit) {
  let text;
  try { text = JSON.stringify(this); } catch (error) { return {kind: "none"}; }
  if (text === undefined) return {kind: "none"};
  if (text.length > limit) return {kind: "big", size: text.length};
  return {kind: "json", text: text};
}"""


# Runs on the target node with the click point: is the element there the node or inside it
# (its own subtree, shadow trees included), or inside one of its labels (a click there goes
# to the control)? Otherwise, a short description of what is there.
_HIT_TEST = """function (x, y) {
  const root = this.getRootNode();
  const at = (root && root.elementFromPoint ? root : document).elementFromPoint(x, y);
  for (let n = at; n; n = n.parentNode || n.host) { if (n === this) return {hit: true}; }
  if (!at) return {hit: false, by: "nothing (the point is outside the page)"};
  // A control's own label passes the click to it (a styled checkbox drawn over its input).
  for (const label of this.labels || []) { if (label.contains(at)) return {hit: true}; }
  let by = at.localName;
  if (at.id) by += "#" + at.id;
  const role = at.getAttribute("role");
  if (role) by += " role=" + role;
  let frame = "";
  if (at.localName === "iframe" || at.localName === "frame") {
    try { frame = new URL(at.src, document.baseURI).origin; } catch (e) { frame = ""; }
  }
  return {hit: false, by: by, frame: frame};
}"""


def _text_script(needle: str) -> str:
    return (
        "(() => { const body = document.body; if (!body) return false;"
        " return body.innerText.replace(/\\s+/g, ' ').includes("
        f"{json.dumps(needle)}); }})()"
    )


def _selector_script(selector: str) -> str:
    return (
        f"(() => {{ try {{ return document.querySelector({json.dumps(selector)}) !== null; }}"
        " catch (error) { return {invalid: String(error.message || error)}; } })()"
    )


class BrowserPage:
    """One tab on a ``CdpConnection``: ``await BrowserPage.open(connection)``."""

    def __init__(
        self,
        connection: CdpConnection,
        target_id: str,
        session_id: str,
        *,
        policy: NetworkPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.connection = connection
        self.target_id = target_id
        self.session_id = session_id
        self.policy = policy if policy is not None else loopback_only
        self.timeout = timeout
        self.raw_used = False  # set by evaluate, click_at, press_key; never cleared here
        self.blocked_count = 0
        self._blocked: collections.deque[str] = collections.deque(maxlen=BLOCKED_KEPT)
        self._dialogs: collections.deque[str] = collections.deque(maxlen=DIALOGS_KEPT)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._removers: list[Callable[[], None]] = []
        self._gone: str | None = None  # why calls fail now: crashed, detached, closed
        self._closed = False
        self._evaluations = 0
        # Requests of the page (its frames' included) that have not finished, and since when
        # none has been in flight: how replay knows a page is idle (``network_idle_for``).
        self._in_flight: set[str] = set()
        self._network_quiet_since = time.monotonic()
        # Our own checks (hit test, text, selectors, title) run in an isolated world of the
        # document: the page's scripts cannot replace the DOM functions they call there.
        self._world: int | None = None

    @classmethod
    async def open(
        cls,
        connection: CdpConnection,
        *,
        policy: NetworkPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> BrowserPage:
        """Create a tab on about:blank, attach to it and put it under the network guard."""
        created = await connection.send("Target.createTarget", {"url": "about:blank"})
        target_id = created["targetId"]
        try:
            attached = await connection.send(
                "Target.attachToTarget", {"targetId": target_id, "flatten": True}
            )
            page = cls(connection, target_id, attached["sessionId"], policy=policy, timeout=timeout)
            page._listen()
            await asyncio.gather(
                page._call("Page.enable"),
                page._call("Page.setLifecycleEventsEnabled", {"enabled": True}),
                page._call("Fetch.enable", {"patterns": [{"urlPattern": "*"}]}),
                # Events only (no bodies kept): for network_idle_for.
                page._call("Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}),
            )
        except BaseException:
            with contextlib.suppress(BrowserError, Timeout):
                await connection.send("Target.closeTarget", {"targetId": target_id}, timeout=5)
            raise
        return page

    # --- state -----------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._gone is not None or self.connection.closed

    @property
    def blocked(self) -> list[str]:
        """The last URLs the network guard refused, oldest first (``blocked_count`` counts
        them all)."""
        return list(self._blocked)

    def clear_blocked(self) -> None:
        self._blocked.clear()
        self.blocked_count = 0

    @property
    def dialogs(self) -> list[str]:
        """The dialogs the page opened (``"alert: text"``), answered at once."""
        return list(self._dialogs)

    async def close(self) -> None:
        """Close the tab. Safe to call twice, and after the browser died."""
        if self._closed:
            return
        self._closed = True
        self._gone = "the page was closed"
        for remove in self._removers:
            remove()
        self._removers.clear()
        for task in list(self._tasks):
            task.cancel()
        if not self.connection.closed:  # a crashed tab is still a target: close it too
            with contextlib.suppress(BrowserError, Timeout):
                await self.connection.send(
                    "Target.closeTarget", {"targetId": self.target_id}, timeout=5
                )

    # --- events ----------------------------------------------------------------------------

    def _listen(self) -> None:
        on = self.connection.add_listener
        self._removers += [
            on("Fetch.requestPaused", self._on_request, self.session_id),
            on("Page.javascriptDialogOpening", self._on_dialog, self.session_id),
            on("Inspector.targetCrashed", self._on_crash, self.session_id),
            on("Target.detachedFromTarget", self._on_detach),
            on("Network.requestWillBeSent", self._on_request_sent, self.session_id),
            on("Network.loadingFinished", self._on_request_done, self.session_id),
            on("Network.loadingFailed", self._on_request_done, self.session_id),
        ]

    def _on_request_sent(self, event: CdpEvent) -> None:
        request_id = event.params.get("requestId")
        if isinstance(request_id, str) and len(self._in_flight) < MAX_IN_FLIGHT:
            self._in_flight.add(request_id)

    def _on_request_done(self, event: CdpEvent) -> None:
        self._in_flight.discard(str(event.params.get("requestId")))
        if not self._in_flight:
            self._network_quiet_since = time.monotonic()

    def network_idle_for(self) -> float:
        """Seconds since the last request of the page finished with none in flight; 0.0
        while one is (a long poll keeps a page busy: replay then waits its settle time)."""
        if self._in_flight:
            return 0.0
        return time.monotonic() - self._network_quiet_since

    def _on_request(self, event: CdpEvent) -> None:
        request_id = event.params.get("requestId")
        url = str((event.params.get("request") or {}).get("url", ""))
        try:
            allowed = bool(self.policy(url))
        except Exception:
            log.exception("the browser network policy failed on %s; refused", url[:200])
            allowed = False
        if allowed:
            self._spawn(self._call("Fetch.continueRequest", {"requestId": request_id}))
            return
        self.blocked_count += 1
        self._blocked.append(url if len(url) <= 500 else url[:499] + "\u2026")
        self._spawn(
            self._call(
                "Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"}
            )
        )

    def _on_dialog(self, event: CdpEvent) -> None:
        kind = str(event.params.get("type", "dialog"))
        self._dialogs.append(f"{kind}: {clipped_text(event.params.get('message', ''), 300)}")
        accept = kind in ("alert", "beforeunload")
        self._spawn(self._call("Page.handleJavaScriptDialog", {"accept": accept}))

    def _on_crash(self, _event: CdpEvent) -> None:
        self._lose("the page crashed (its renderer died); open a new page")

    def _on_detach(self, event: CdpEvent) -> None:
        if event.params.get("sessionId") == self.session_id:
            self._lose("the page was closed by the browser")

    def _lose(self, reason: str) -> None:
        if self._gone is None:
            self._gone = reason
            self.connection.fail_session(self.session_id, reason)

    def _spawn(self, call: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(call)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # A request that was cancelled or a page that navigated away: nothing to answer.
            log.debug("browser page: %s", task.exception())

    async def _call(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        if self._gone is not None:
            raise BrowserError(f"{method}: {self._gone}")
        return await self.connection.send(
            method,
            params,
            session_id=self.session_id,
            timeout=self.timeout if timeout is None else timeout,
        )

    # --- navigation ------------------------------------------------------------------------

    async def navigate(self, url: str, *, timeout: float | None = None) -> None:
        """Open ``url`` and wait for its load event. ``AccessDenied`` for a URL that is not
        http(s) or that the network policy refuses; ``BrowserError`` with the network error
        when loading fails; ``Timeout`` if the load event does not come in time."""
        url = check_navigation(url)
        if not self._allowed(url):
            self.blocked_count += 1
            self._blocked.append(url[:500])
            raise AccessDenied(
                f"{url} is not on this machine; the browser may only reach local servers"
                " (localhost, 127.0.0.0/8, [::1])",
                reason="address_denied",
            )
        limit = self.timeout if timeout is None else timeout
        blocked_before = self.blocked_count
        # The old document's requests are cancelled by the navigation; a lost "finished"
        # event must not keep the new page busy forever.
        self._in_flight.clear()
        lifecycle = self.connection.subscribe("Page.lifecycleEvent", self.session_id, maxsize=1024)
        try:
            await asyncio.wait_for(self._load(url, lifecycle, limit, blocked_before), limit)
        except asyncio.TimeoutError:
            raise Timeout(f"{url} did not finish loading within {limit:g} s") from None
        finally:
            lifecycle.close()

    async def _load(
        self, url: str, lifecycle: Subscription, limit: float, blocked_before: int
    ) -> None:
        result = await self._call("Page.navigate", {"url": url}, timeout=limit)
        loader, frame = result.get("loaderId"), result.get("frameId")
        error = result.get("errorText")
        if error:
            if loader:
                # Let the error page commit, so that url() and screenshot() see it.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(_until_load(lifecycle, loader, frame), ERROR_PAGE_WAIT)
            raise BrowserError(self._navigation_error(url, error, blocked_before))
        if loader:  # none for a same-document navigation (a fragment)
            await _until_load(lifecycle, loader, frame)

    def _allowed(self, url: str) -> bool:
        if url == "about:blank":
            return True
        try:
            return bool(self.policy(url))
        except Exception:
            log.exception("the browser network policy failed on %s; refused", url[:200])
            return False

    def _navigation_error(self, url: str, error: str, blocked_before: int) -> str:
        text = f"opening {url} failed: {error}"
        if "ERR_BLOCKED_BY_CLIENT" in error and self.blocked_count > blocked_before:
            refused = self._blocked[-1]
            text += f" (the network guard refused {refused}: only local servers may be reached)"
        return text

    async def url(self) -> str:
        """The URL of the document shown (a failed load shows the URL that failed)."""
        info = await self.connection.send(
            "Target.getTargetInfo", {"targetId": self.target_id}, timeout=self.timeout
        )
        return str((info.get("targetInfo") or {}).get("url", ""))

    async def title(self) -> str:
        return str(await self._value("document.title") or "")

    # --- reading the page ------------------------------------------------------------------

    async def snapshot(self) -> Snapshot:
        """The accessibility tree of the main frame (frames inside are not included)."""
        tree = await self._call("Accessibility.getFullAXTree")
        nodes = ax_nodes(tree.get("nodes") or ())
        title = nodes[0].name if nodes and nodes[0].role == "document" else ""
        return Snapshot(url=await self.url(), title=title, nodes=tuple(nodes))

    async def frame_origin(self, node: AXNode) -> str:
        """The origin (scheme://host:port) an ``iframe`` node of a snapshot shows, or ""."""
        if node.backend_node_id is None:
            return ""
        try:
            described = await self._call(
                "DOM.describeNode", {"backendNodeId": node.backend_node_id}
            )
        except BrowserError:
            return ""
        attributes = (described.get("node") or {}).get("attributes") or []
        source = dict(zip(attributes[0::2], attributes[1::2], strict=False)).get("src", "")
        try:
            parts = urlsplit(urljoin(await self.url(), str(source)) if source else "")
            port = parts.port
        except ValueError:
            return ""
        if not parts.scheme or not parts.hostname:
            return ""  # no src, about:blank, srcdoc: nothing to name
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")

    async def text_contains(self, text: str) -> bool:
        """Whether the page's visible text (``innerText``, whitespace collapsed) has ``text``."""
        needle = " ".join(text.split())
        return bool(await self._value(_text_script(needle)))

    async def selector_exists(self, selector: str) -> bool:
        found = await self._value(_selector_script(selector))
        if isinstance(found, dict):
            raise InvalidRequest(
                f"{selector!r} is not a valid CSS selector: {found.get('invalid')}",
                reason="invalid_selector",
            )
        return bool(found)

    async def screenshot(self, *, max_bytes: int = MAX_SCREENSHOT_BYTES) -> bytes:
        """The visible part of the page as PNG bytes; ``TooLarge`` above ``max_bytes``."""
        # A tab in the background may never paint; bring it forward first.
        await self._call("Page.bringToFront", timeout=SCREENSHOT_TIMEOUT)
        try:
            shot = await self._call(
                "Page.captureScreenshot", {"format": "png"}, timeout=SCREENSHOT_TIMEOUT
            )
        except Timeout:
            raise BrowserError(
                f"the page did not paint a screenshot within {SCREENSHOT_TIMEOUT:g} s"
            ) from None
        data = shot.get("data", "")
        if len(data) // 4 * 3 > max_bytes + 2:
            raise TooLarge(f"the screenshot is over the cap of {max_bytes} bytes")
        return base64.b64decode(data)

    async def wait_for(
        self,
        *,
        url_contains: str | None = None,
        title_contains: str | None = None,
        text_contains: str | None = None,
        selector: str | None = None,
        timeout: float = 10.0,
        interval: float = 0.1,
    ) -> None:
        """Poll until every given condition holds; ``Timeout`` naming those that did not."""
        conditions = {
            "url": url_contains,
            "title": title_contains,
            "text": text_contains,
            "selector": selector,
        }
        wanted = {k: v for k, v in conditions.items() if v is not None}
        if not wanted:
            raise InvalidRequest("wait_for needs a condition (url, title, text or selector)")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            missing = await self._unmet(wanted)
            if not missing:
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                where = await self._where()
                raise Timeout(f"waited {timeout:g} s for {' and '.join(missing)}; {where}")
            await asyncio.sleep(min(interval, remaining))

    async def _unmet(self, wanted: dict[str, str]) -> list[str]:
        missing = []
        for kind, expected in wanted.items():
            try:
                if kind == "url":
                    ok = expected in await self.url()
                elif kind == "title":
                    ok = expected in await self.title()
                elif kind == "text":
                    ok = await self.text_contains(expected)
                else:
                    ok = await self.selector_exists(expected)
            except BrowserError:
                if self.closed:
                    raise
                ok = False  # between documents: the context is gone for a moment
            if not ok:
                missing.append(f"{kind} {expected!r}")
        return missing

    async def _in_world(self, method: str, params: dict[str, Any], key: str) -> dict[str, Any]:
        """``method`` in our isolated world of the current document (``key`` names the
        parameter that takes its context id). A world lives as long as its document: when
        the document changed, a new one is made and the call made once more."""
        for attempt in (1, 2):
            if self._world is None:
                made = await self._call(
                    "Page.createIsolatedWorld",
                    {"frameId": self.target_id, "worldName": "terax-checks"},
                )
                self._world = int(made["executionContextId"])
            try:
                return await self._call(method, {**params, key: self._world})
            except BrowserError:
                self._world = None
                if attempt == 2 or self.closed:
                    raise
        raise AssertionError("unreachable")

    async def _where(self) -> str:
        try:
            return f"the page is at {await self.url()} (title {await self.title()!r})"
        except (BrowserError, Timeout):
            return "the page did not answer"

    async def _value(self, expression: str) -> Any:
        """A page-side expression of ours, by value (small results only), run in the
        isolated world, so a page cannot fake what it answers."""
        result = await self._in_world(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}, "contextId"
        )
        details = result.get("exceptionDetails")
        if details:
            raise BrowserError(f"a page script failed: {_exception_text(details)}")
        return (result.get("result") or {}).get("value")

    # --- acting on nodes -------------------------------------------------------------------

    async def click(self, node: AXNode) -> None:
        """Scroll the node into view and click the centre of its box; when the click starts
        a new document (a link, a form), wait until it has loaded.

        The click goes by coordinates (real, trusted input events), so first the page is
        asked which element is at that point: if it is not the node or inside it (an
        overlay, even a transparent one, would take the click) nothing is clicked and
        ``BrowserError`` with reason ``target_covered`` names what covers it."""
        backend = await self._attached(node)
        try:
            await self._call("DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend})
            x, y = await self._centre(backend)
        except BrowserError as error:
            raise BrowserError(_stale(node, error.message)) from None
        await self._require_hit(node, backend, x, y)
        await self._settled(self._mouse_click(x, y))

    async def _require_hit(self, node: AXNode, backend: int, x: float, y: float) -> None:
        """Refuse (``target_covered``) when the element at (x, y) is not ``node`` or inside
        it. Elements with ``pointer-events: none`` do not count: clicks pass through them.
        The test runs in our isolated world: there the function below calls the browser's
        own ``elementFromPoint``, whatever the page did to its prototypes."""
        try:
            resolved = await self._in_world(
                "DOM.resolveNode", {"backendNodeId": backend}, "executionContextId"
            )
            object_id = resolved["object"]["objectId"]
        except (BrowserError, KeyError) as error:
            detail = error.message if isinstance(error, BrowserError) else "no object"
            raise BrowserError(_stale(node, detail)) from None
        try:
            answer = await self._call(
                "Runtime.callFunctionOn",
                {
                    "functionDeclaration": _HIT_TEST,
                    "objectId": object_id,
                    "arguments": [{"value": x}, {"value": y}],
                    "returnByValue": True,
                },
            )
        finally:
            self._spawn(self._call("Runtime.releaseObject", {"objectId": object_id}))
        hit = (answer.get("result") or {}).get("value")
        if isinstance(hit, dict) and hit.get("hit") is True:
            return
        covering = clipped_text(str((hit or {}).get("by") or "nothing"), 120)
        frame = (hit or {}).get("frame")
        where = f" (a frame of {frame})" if isinstance(frame, str) and frame else ""
        raise BrowserError(
            f"cannot click the {node.role} {node.name!r}: another element ({covering}{where})"
            " covers its centre and would take the click; nothing was clicked",
            reason="target_covered",
        )

    async def _settled(self, action: Coroutine[Any, Any, None]) -> None:
        """Run an input action; if the main frame starts loading within a moment (a link, a
        form), wait until it stops (``Timeout`` past the page's timeout)."""
        started = self.connection.subscribe("Page.frameStartedLoading", self.session_id)
        stopped = self.connection.subscribe("Page.frameStoppedLoading", self.session_id)
        try:
            await action
            try:
                await asyncio.wait_for(_frame_event(started, self.target_id), NAVIGATION_START_WAIT)
            except asyncio.TimeoutError:
                return  # it stayed on this document
            try:
                await asyncio.wait_for(_frame_event(stopped, self.target_id), self.timeout)
            except asyncio.TimeoutError:
                raise Timeout(
                    f"the page did not finish loading within {self.timeout:g} s"
                ) from None
        finally:
            started.close()
            stopped.close()

    async def type_text(self, node: AXNode, text: str) -> None:
        """Focus the node, clear it (select all, delete) and insert ``text`` as typed input."""
        backend = await self._attached(node)
        try:
            await self._call("DOM.scrollIntoViewIfNeeded", {"backendNodeId": backend})
            await self._call("DOM.focus", {"backendNodeId": backend})
        except BrowserError as error:
            raise BrowserError(_stale(node, error.message)) from None
        await self._key(2, "a", "KeyA", 65, "", commands=["selectAll"])
        await self._key(0, "Delete", "Delete", 46, "", commands=["deleteForward"])
        if text:
            await self._call("Input.insertText", {"text": text})

    async def _attached(self, node: AXNode) -> int:
        """The node's DOM id once it is proven part of the current document. A node of an
        earlier document still has a box in Chromium, and a click there would land on
        whatever the new document shows at that place."""
        backend = _backend_id(node)
        try:
            resolved = await self._call("DOM.resolveNode", {"backendNodeId": backend})
            object_id = resolved["object"]["objectId"]
        except (BrowserError, KeyError) as error:
            detail = error.message if isinstance(error, BrowserError) else "no object"
            raise BrowserError(_stale(node, detail)) from None
        try:
            connected = await self._call(
                "Runtime.callFunctionOn",
                {
                    "functionDeclaration": "function () { return this.isConnected; }",
                    "objectId": object_id,
                    "returnByValue": True,
                },
            )
        finally:
            self._spawn(self._call("Runtime.releaseObject", {"objectId": object_id}))
        if (connected.get("result") or {}).get("value") is not True:
            raise BrowserError(_stale(node, "it was removed from the document"))
        return backend

    async def _centre(self, backend: int) -> tuple[float, float]:
        with contextlib.suppress(BrowserError):
            quads = (await self._call("DOM.getContentQuads", {"backendNodeId": backend}))["quads"]
            for quad in quads:
                if len(quad) == 8 and _area(quad) > 1:
                    return sum(quad[0::2]) / 4, sum(quad[1::2]) / 4
        model = (await self._call("DOM.getBoxModel", {"backendNodeId": backend}))["model"]
        quad = model["content"]
        if _area(quad) <= 1:
            raise BrowserError("it has no visible box")
        return sum(quad[0::2]) / 4, sum(quad[1::2]) / 4

    async def _mouse_click(self, x: float, y: float) -> None:
        await self._call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            await self._call(
                "Input.dispatchMouseEvent",
                {
                    "type": kind,
                    "x": x,
                    "y": y,
                    "button": "left",
                    "buttons": buttons,
                    "clickCount": 1,
                },
            )

    async def _key(
        self,
        modifiers: int,
        key: str,
        code: str,
        key_code: int,
        text: str,
        *,
        commands: list[str] | None = None,
    ) -> None:
        down: dict[str, Any] = {
            "type": "keyDown" if text else "rawKeyDown",
            "modifiers": modifiers,
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": key_code,
        }
        if text:
            down.update(text=text, unmodifiedText=text)
        if commands:
            down["commands"] = commands
        await self._call("Input.dispatchKeyEvent", down)
        await self._call(
            "Input.dispatchKeyEvent",
            {
                "type": "keyUp",
                "modifiers": modifiers,
                "key": key,
                "code": code,
                "windowsVirtualKeyCode": key_code,
            },
        )

    # --- RAW operations (make a recording non-cacheable) ------------------------------------

    async def evaluate(
        self,
        expression: str,
        *,
        timeout: float = 10.0,
        max_chars: int = MAX_EVALUATE_CHARS,
    ) -> Any:
        """RAW: run JavaScript in the page and return its JSON value (promises are awaited;
        DOM nodes and functions come back as their description). ``TooLarge`` if the JSON is
        over ``max_chars``; ``BrowserError`` if it throws."""
        self.raw_used = True
        self._evaluations += 1
        group = f"terax-evaluate-{self._evaluations}"
        result = await self._call(
            "Runtime.evaluate",
            {
                "expression": expression,
                "returnByValue": False,
                "awaitPromise": True,
                "userGesture": True,
                "objectGroup": group,
                "timeout": int(timeout * 1000),  # ends a busy loop in the page
            },
            timeout=timeout + 5,
        )
        try:
            details = result.get("exceptionDetails")
            if details:
                raise BrowserError(f"the script failed: {_exception_text(details)}")
            return await self._by_value(result.get("result") or {}, max_chars)
        finally:
            with contextlib.suppress(BrowserError, Timeout):
                await self._call("Runtime.releaseObjectGroup", {"objectGroup": group}, timeout=5)

    async def _by_value(self, remote: dict[str, Any], max_chars: int) -> Any:
        if "unserializableValue" in remote:
            return remote["unserializableValue"]  # NaN, Infinity, -0, 12n
        if remote.get("type") == "undefined":
            return None
        if remote.get("subtype") == "node" or remote.get("type") in ("function", "symbol"):
            return remote.get("description")
        object_id = remote.get("objectId")
        if object_id is None:
            value = remote.get("value")
            if isinstance(value, str) and len(value) > max_chars:
                raise TooLarge(f"the result has {len(value)} characters; the cap is {max_chars}")
            return value
        answer = await self._call(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": _BY_VALUE,
                "objectId": object_id,
                "arguments": [{"value": max_chars}],
                "returnByValue": True,
            },
        )
        packed = (answer.get("result") or {}).get("value") or {}
        if packed.get("kind") == "big":
            raise TooLarge(
                f"the result is {packed.get('size')} characters of JSON; the cap is {max_chars}:"
                " return less (a slice, a count, the fields you need)"
            )
        if packed.get("kind") == "json":
            return json.loads(packed["text"])
        return remote.get("description")

    async def click_at(self, x: float, y: float) -> None:
        """RAW: click at viewport coordinates (CSS pixels)."""
        if not all(isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in (x, y)):
            raise InvalidRequest("click_at needs two finite, non-negative coordinates")
        self.raw_used = True
        await self._mouse_click(float(x), float(y))

    async def press_key(self, key: str) -> None:
        """RAW: press and release a key in the focused element: ``"Enter"``, ``"Tab"``,
        ``"a"``, ``"Shift+Tab"``, ``"Control+a"``."""
        modifiers, name, code, key_code, text = parse_key(key)
        self.raw_used = True
        await self._settled(self._key(modifiers, name, code, key_code, text))


async def _frame_event(events: Subscription, frame: str) -> None:
    """Wait for the next event of ``frame`` on the subscription."""
    async for event in events:
        if event.params.get("frameId") == frame:
            return
    raise BrowserError("the page closed while an action ran")


async def _until_load(lifecycle: Subscription, loader: str, frame: str | None) -> None:
    async for event in lifecycle:
        params = event.params
        if (
            params.get("name") == "load"
            and params.get("loaderId") == loader
            and params.get("frameId") == frame
        ):
            return


def _backend_id(node: AXNode) -> int:
    if node.backend_node_id is None:
        raise InvalidRequest(
            f"the {node.role} {node.name!r} has no DOM node to act on", reason="no_dom_node"
        )
    return node.backend_node_id


def _stale(node: AXNode, detail: str) -> str:
    return (
        f"cannot act on the {node.role} {node.name!r} ({detail}); it may have left the page"
        " or be hidden: take a new snapshot"
    )


def _area(quad: list[float]) -> float:
    xs, ys = quad[0::2], quad[1::2]
    return abs(sum(xs[i] * ys[i - 1] - xs[i - 1] * ys[i] for i in range(4))) / 2


def _exception_text(details: dict[str, Any]) -> str:
    exception = details.get("exception") or {}
    text = exception.get("description") or details.get("text") or "an exception"
    return clipped_text(text, 500)
