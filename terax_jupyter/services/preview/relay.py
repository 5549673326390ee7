"""What the preview proxy's HTTP and WebSocket halves share: target, prefix, capability,
headers, errors.

Two routes lead in. ``/terax/proxy/<target>/`` is Jupyter-authenticated: a token (a tool, not
a browser's ambient cookie) is proxied there; a browser's own navigation is sent on to the
capability route, and nothing else a cookie carries is served. ``/terax/proxy/<target>~<cap>/``
is what a previewed page loads from: the capability is its only credential (a sandboxed page
sends no cookies), checked by ``capability_required`` before anything else.

Errors are a small HTML page for a browser navigation and ``{"message", "reason"}`` JSON
otherwise. The preview tab cannot look into its sandboxed frame, so a navigation's outcome
(path, status, the error) is recorded on its capability for the tab to ask about.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import html
import json
from http.client import responses
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_server.utils import url_path_join
from tornado import httputil, web

from terax_jupyter.base import JsonErrorsMixin
from terax_jupyter.exceptions import AccessDenied, TeraxError
from terax_jupyter.services.preview.capabilities import Navigation
from terax_jupyter.services.preview.headers import (
    frame_ancestors,
    preview_policy,
    request_headers,
)
from terax_jupyter.services.preview.manager import CAPABILITY_SEPARATOR

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.preview.capabilities import Capability
    from terax_jupyter.services.preview.manager import ProxyTarget

AUTH_RESOURCE = "terax.preview"
ERROR_META = "terax-preview-error"
# Our own pages (errors) need no script at all; who may frame them is added per request.
ERROR_PAGE_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'"
_Method = TypeVar("_Method", bound="Callable[..., Any]")
# The connection errors that mean "not on this address": try the next one.
_NOT_HERE = frozenset(
    {errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT, errno.ENETUNREACH}
)


def capability_required(method: _Method) -> _Method:
    """The verb of a capability route: the capability is checked (and the request then counts
    as its use) before the verb runs; refused with 403 ``preview_expired`` or
    ``preview_capability_mismatch``."""

    @functools.wraps(method)
    async def capability_required_inner(
        self: ProxyMixin, port: str, capability: str, path: str
    ) -> Any:
        refuse_same_origin_loads(self.request.headers)
        self.capability = self.terax.preview.capabilities.check(capability, port)
        return await method(self, port, capability, path)

    return capability_required_inner  # type: ignore[return-value]


def refuse_same_origin_loads(headers: httputil.HTTPHeaders) -> None:
    """A previewed page's own requests come from its opaque origin (``cross-site`` to the
    browser); from Jupyter's origin only a navigation opens a preview address. Anything else
    from there (an image in agent output, reached through ``login?next=``, a script of
    another of Lab's pages) is not the page's and is refused."""
    site = headers.get("Sec-Fetch-Site")
    if site in ("same-origin", "same-site") and headers.get("Sec-Fetch-Mode") != "navigate":
        raise AccessDenied(
            "Only the previewed page itself loads from its preview address; Jupyter's own "
            "pages may only open it.",
            reason="preview_not_from_page",
        )


class ProxyMixin(JsonErrorsMixin):
    """What both halves share: the target, the prefix, the local ports, errors for people."""

    request: httputil.HTTPServerRequest
    base_url: str
    capability: Capability | None = None

    def set_default_headers(self) -> None:
        super().set_default_headers()
        # Jupyter's own policy (a hub's frame-ancestors 'none') would blank the preview tab;
        # this one replaces it: framable by Lab's page only, and without Jupyter's origin.
        self.set_header("Content-Security-Policy", preview_policy(self.frame_ancestors()))
        self.clear_header("Access-Control-Allow-Origin")

    def frame_ancestors(self) -> str:
        """Who may frame a preview answer: Lab's page (this request's origin), and the exact
        origins the operator's policy lets frame Lab (``headers.frame_ancestors``)."""
        configured = ""
        settings: dict[str, Any] = self.settings
        for name, value in (settings.get("headers") or {}).items():
            if name.lower() == "content-security-policy" and isinstance(value, str):
                configured = value
        return frame_ancestors(self.request.protocol, self.request.host, configured)

    def proxy_target(self, port: str) -> ProxyTarget:
        return self.terax.preview.target(port, also_own=self._local_ports())

    def _local_ports(self) -> set[int]:
        """The port this request came in on: never proxied, whatever the configuration says."""
        ports: set[int] = set()
        with contextlib.suppress(Exception):
            stream = self.request.connection.stream  # type: ignore[union-attr]
            ports.add(int(stream.socket.getsockname()[1]))
        return ports

    def is_navigation(self) -> bool:
        return self.request.headers.get("Sec-Fetch-Mode") == "navigate"

    def record_navigation(self, status: int, error: dict[str, Any] | None = None) -> None:
        """A frame's page loaded (or failed): the preview tab asks for it after ``load``."""
        if self.capability is None or not self.is_navigation():
            return
        if self.request.headers.get("Sec-Fetch-Dest") not in ("iframe", "frame"):
            return
        self.terax.preview.capabilities.navigated(
            self.capability, Navigation(self.upstream_path(), status, error)
        )

    def proxy_prefix(self) -> str:
        """``<base_url>terax/proxy/<segment>`` as the browser sent it (no trailing slash)."""
        base = url_path_join(self.base_url, "terax/proxy/")
        segment = self.request.path[len(base) :].split("/", 1)[0]
        return base + segment

    def upstream_path(self) -> str:
        """The request's path and query below the prefix, exactly as sent (still encoded),
        without a Jupyter token that came in the query."""
        rest = self.request.path[len(self.proxy_prefix()) :] or "/"
        query = self._forwarded_query()
        return rest + (f"?{query}" if query else "")

    def _forwarded_query(self) -> str:
        query = self.request.query
        if not query or self.capability is not None or not self._token_in_query():
            return query  # on a capability route a "token" is the app's own (Vite's HMR)
        kept = [p for p in query.split("&") if p.split("=", 1)[0] != "token"]
        return "&".join(kept)

    def _token_in_query(self) -> bool:
        """Jupyter authenticated this request by a ``?token=`` (not a header)."""
        return bool(getattr(self, "token_authenticated", False)) and not (
            self.request.headers.get("Authorization", "")
        )

    def forwarded_path(self) -> str:
        """What the dev server is asked for: the path below the prefix, or the whole path for
        a dev server that serves under the prefix itself (``vite --base <prefix>``)."""
        if self.capability is not None and self.capability.mounted:
            query = self._forwarded_query()
            return self.request.path + (f"?{query}" if query else "")
        return self.upstream_path()

    def upstream_headers(self, target: ProxyTarget, *, websocket: bool) -> httputil.HTTPHeaders:
        dropped = {"_xsrf"}
        with contextlib.suppress(Exception):
            dropped.add(self.identity_provider.get_cookie_name(self))
        headers = httputil.HTTPHeaders()
        for name, value in request_headers(
            self.request.headers,
            host=target.host,
            own_host=self.request.host,
            prefix=self.proxy_prefix(),
            drop_cookies=dropped,
            drop_authorization=self._carries_jupyter_token(),
            websocket=websocket,
            vouched=self.capability is not None,
        ):
            headers.add(name, value)
        return headers

    def _carries_jupyter_token(self) -> bool:
        """``Authorization: token ...`` is Jupyter's; so is a bearer token that authenticated
        this request. Other schemes (the dev app's own) pass."""
        scheme = self.request.headers.get("Authorization", "").split(" ", 1)[0].lower()
        return scheme == "token" or (
            scheme == "bearer" and bool(getattr(self, "token_authenticated", False))
        )

    def wants_html(self) -> bool:
        accept = self.request.headers.get("Accept", "")
        return "text/html" in accept and self.request.method in ("GET", "HEAD")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        message, reason = self._describe(status_code, kwargs.get("exc_info"))
        self.record_navigation(
            status_code, {"status": status_code, "reason": reason, "message": message}
        )
        self.set_header("Content-Security-Policy", f"{ERROR_PAGE_POLICY}; {self.frame_ancestors()}")
        if not self.wants_html():
            super().write_error(status_code, **kwargs)
            return
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(error_page(status_code, message, reason))

    def _describe(self, status_code: int, exc_info: Any) -> tuple[str, str]:
        error = exc_info[1] if exc_info else None
        redact = self.terax.security.redactor.redact
        if isinstance(error, TeraxError):
            return redact(error.message), error.reason
        if isinstance(error, web.HTTPError):
            message = (
                error.log_message % error.args
                if error.log_message and error.args
                else error.log_message
            ) or responses.get(status_code, "Error")
            reason = error.reason or responses.get(status_code, "error")
            return redact(message), "_".join(reason.lower().split()) or "error"
        return (
            "The server hit an unexpected error; the server log has the details.",
            "internal_error",
        )


def error_page(status: int, message: str, reason: str) -> str:
    """A plain page for the preview tab (which shows the message in Lab's own theme)."""
    title = f"{status} {responses.get(status, 'Error')}"
    details = json.dumps({"status": status, "reason": reason, "message": message})
    return (
        "<!doctype html>\n<html><head><meta charset='utf-8'>"
        f"<meta name='{ERROR_META}' content='{html.escape(details, quote=True)}'>"
        "<meta name='color-scheme' content='light dark'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:14px/1.5 system-ui,sans-serif;margin:3em auto;max-width:40em;"
        "padding:0 1em}code{font-size:13px}h1{font-size:18px;font-weight:600}</style>"
        f"</head><body><h1>{html.escape(title)}</h1><p>{html.escape(message)}</p>"
        f"<p><code>{html.escape(reason)}</code></p></body></html>\n"
    )


def split_segment(segment: str) -> tuple[str, str | None]:
    """``5173~<token>`` -> ("5173", token); a plain target has none."""
    target, separator, token = segment.partition(CAPABILITY_SEPARATOR)
    return target, (token if separator else None)


def bracketed(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def not_listening_here(error: BaseException | None) -> bool:
    if isinstance(error, OSError) and error.errno in _NOT_HERE:
        return True
    cause = getattr(error, "__cause__", None) or getattr(error, "__context__", None)
    return isinstance(cause, OSError) and cause.errno in _NOT_HERE


def foreign_listener(target: ProxyTarget) -> str:
    return (
        f"Port {target.port} is served by a process of another account on this machine; the "
        "preview only opens servers that your own account runs."
    )


def nothing_listening(target: ProxyTarget) -> str:
    where = " or ".join(target.addresses)
    return (
        f"Nothing is listening on port {target.port} ({where}). Start the server in a "
        "terminal (for example npm run dev, or python -m http.server "
        f"{target.port}), then reload."
    )


def describe_failure(error: BaseException | None) -> str:
    if error is None:
        return "no answer"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    return type(error).__name__
