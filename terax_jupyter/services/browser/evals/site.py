"""The local web app the browser evals drive: plain HTML forms, no scripts, on 127.0.0.1.

- ``/login``: a sign-in form (mutating: it starts a session); ``/dashboard`` greets the user.
- ``/search``: a search form; ``/results?q=`` lists matches (read-only).
- ``/items``: items with a Delete button; ``/items/<id>/delete`` asks to confirm; confirming
  deletes (destructive). ``/_reset`` brings the items back.
- ``/settings``: two buttons with the same name, "Save" (replay must refuse: ambiguous).
- ``/_layout?version=2`` changes the dashboard's structure (replay must notice the drift): a
  redesign that keeps only the "Search" link, so a flow's target is still there but the page
  around it is not the one recorded.
"""

from __future__ import annotations

import html
import secrets
import sys
import threading
import urllib.parse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

ITEMS = ("alpha report", "beta notes", "gamma draft")
CATALOG = ("apple pie", "apple tart", "banana bread", "cherry cake", "pear crumble")


def _page(title: str, body: str) -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title></head><body>{body}</body></html>"
    ).encode()


class EvalSite:
    """The app's state (users signed in, items left, layout) and its server."""

    def __init__(self) -> None:
        self.sessions: dict[str, str] = {}
        self.items: list[str] = list(ITEMS)
        self.layout = 1
        self.deleted: list[str] = []
        self.sign_ins: list[str] = []
        self.page_loads: list[str] = []  # the path of every GET, in order
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = cast("tuple[str, int]", self._server.server_address[:2])
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"

    def start(self) -> EvalSite:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_item(self, name: str) -> None:
        """Add an item (a second one of the same name makes its Delete link ambiguous)."""
        with self._lock:
            self.items.append(name)

    def reset(self) -> None:
        with self._lock:
            self.items = list(ITEMS)
            self.layout = 1
            self.deleted.clear()

    def __enter__(self) -> EvalSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pages ---------------------------------------------------------------------------

    def login_page(self) -> bytes:
        return _page(
            "Sign in",
            "<h1>Sign in</h1><form method='post' action='/login'>"
            "<label>Username <input name='username' autocomplete='off'></label>"
            "<label>Password <input name='password' type='password'></label>"
            "<button type='submit'>Sign in</button></form>",
        )

    def dashboard(self, user: str | None) -> bytes:
        if user is None:
            return _page("Sign in needed", "<h1>Sign in needed</h1><a href='/login'>Sign in</a>")
        if self.layout == 1:
            body = (
                f"<h1>Welcome, {html.escape(user)}</h1>"
                "<nav><a href='/search'>Search</a> <a href='/items'>Items</a> "
                "<a href='/settings'>Settings</a></nav>"
            )
        else:  # a redesign: other landmarks, other names
            body = (
                "<header><h2>Home</h2><a href='/search'>Search</a></header>"
                "<main><section><h3>Your account</h3>"
                f"<p>Signed in as {html.escape(user)}</p><ul>"
                + "".join(f"<li><a href='/x{n}'>Shortcut {n}</a></li>" for n in range(12))
                + "</ul></section></main>"
            )
        return _page("Dashboard", body)

    def search_page(self) -> bytes:
        return _page(
            "Search",
            "<h1>Search the catalog</h1><form method='get' action='/results'>"
            "<label>Query <input name='q' autocomplete='off'></label>"
            "<button type='submit'>Search</button></form>",
        )

    def results(self, query: str) -> bytes:
        found = [c for c in CATALOG if query.lower() in c]
        rows = "".join(f"<li>{html.escape(c)}</li>" for c in found) or "<li>No matches</li>"
        return _page(
            "Results",
            f"<h1>Results for {html.escape(query)}</h1><p>{len(found)} found</p><ul>{rows}</ul>",
        )

    def items_page(self) -> bytes:
        rows = "".join(
            f"<li>{html.escape(name)} "
            f"<a href='/items/{n}/delete'>Delete {html.escape(name)}</a></li>"
            for n, name in enumerate(self.items)
        )
        return _page("Items", f"<h1>Items</h1><p>{len(self.items)} items</p><ul>{rows}</ul>")

    def confirm_page(self, index: int) -> bytes:
        if not 0 <= index < len(self.items):
            return _page("Not found", "<h1>No such item</h1>")
        name = html.escape(self.items[index])
        return _page(
            "Confirm",
            f"<h1>Delete {name}?</h1><form method='post' action='/items/{index}/delete'>"
            "<button type='submit'>Confirm delete</button></form><a href='/items'>Cancel</a>",
        )

    def settings_page(self) -> bytes:
        return _page(
            "Settings",
            "<h1>Settings</h1><section><h2>Profile</h2><button>Save</button></section>"
            "<section><h2>Notifications</h2><button>Save</button></section>",
        )


class _QuietServer(ThreadingHTTPServer):
    """The site's server, quiet when the browser drops a connection mid-answer (a tab or its
    browser context closed while a request was served): that is no error of the site."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def _handler_for(site: EvalSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _user(self) -> str | None:
            cookie = self.headers.get("Cookie", "")
            for part in cookie.split(";"):
                name, _, value = part.strip().partition("=")
                if name == "sid":
                    return site.sessions.get(value)
            return None

        def _send(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None):
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _redirect(self, location: str, headers: dict[str, str] | None = None) -> None:
            self._send(b"", HTTPStatus.SEE_OTHER, {"Location": location, **(headers or {})})

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(min(length, 65536)).decode("utf-8", "replace")
            return {k: v[0] for k, v in urllib.parse.parse_qs(data).items()}

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = {k: v[0] for k, v in urllib.parse.parse_qs(url.query).items()}
            path = url.path
            with site._lock:
                site.page_loads.append(path)
                if path in ("/", "/login"):
                    self._send(site.login_page())
                elif path == "/dashboard":
                    self._send(site.dashboard(self._user()))
                elif path == "/search":
                    self._send(site.search_page())
                elif path == "/results":
                    self._send(site.results(query.get("q", "")))
                elif path == "/items":
                    self._send(site.items_page())
                elif path.startswith("/items/") and path.endswith("/delete"):
                    index = path.split("/")[2]
                    self._send(site.confirm_page(int(index) if index.isdigit() else -1))
                elif path == "/settings":
                    self._send(site.settings_page())
                elif path == "/_layout":
                    site.layout = int(query.get("version", "1"))
                    self._send(_page("Layout", f"<p>layout {site.layout}</p>"))
                elif path == "/_reset":
                    site.items = list(ITEMS)
                    site.layout = 1
                    self._send(_page("Reset", "<p>reset</p>"))
                else:
                    self._send(_page("Not found", "<h1>Not found</h1>"), HTTPStatus.NOT_FOUND)

        def do_POST(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            form = self._form()
            with site._lock:
                if path == "/login":
                    user = form.get("username", "").strip()
                    if not user or not form.get("password"):
                        self._send(site.login_page(), HTTPStatus.UNAUTHORIZED)
                        return
                    sid = secrets.token_hex(8)
                    site.sessions[sid] = user
                    site.sign_ins.append(user)
                    self._redirect("/dashboard", {"Set-Cookie": f"sid={sid}; Path=/"})
                elif path.startswith("/items/") and path.endswith("/delete"):
                    index = path.split("/")[2]
                    if index.isdigit() and int(index) < len(site.items):
                        site.deleted.append(site.items.pop(int(index)))
                    self._redirect("/items")
                else:
                    self._send(_page("Not found", "<h1>Not found</h1>"), HTTPStatus.NOT_FOUND)

    return Handler
