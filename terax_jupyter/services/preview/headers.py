"""Header rules of the preview proxy: what passes each way, and what is rewritten.

Requests: hop-by-hop headers go (and those ``Connection`` names), so do Jupyter's own
credentials (its login cookie, the ``_xsrf`` cookie, a ``token`` Authorization header);
``Host``, ``Origin`` and ``Referer`` are made to look as if the browser had asked the dev
server directly, so frameworks' host and CSRF origin checks pass (a sandboxed page's
``Origin: null`` too, when a capability vouches for it).

Responses are served on Jupyter's host, so every one carries ``preview_policy``: the page
runs without an origin of its own (``SANDBOX``, no ``allow-same-origin``), so it can neither
read Jupyter's cookies nor send them, nor script Lab; and it may be framed by Lab's page only
(``frame_ancestors``: Lab's origin as the request shows it, plus the explicit origins the
operator's own policy lets frame Lab). That policy replaces Jupyter's own, which on a
JupyterHub is ``frame-ancestors 'none'`` and would blank the preview tab. Nothing may act on
the whole host: a redirect to the dev server's own origin, and cookie paths, stay under the
proxy prefix; cookie ``Domain`` goes; ``Strict-Transport-Security``, ``Clear-Site-Data``,
``Alt-Svc``, ``Service-Worker-Allowed`` and ``X-Frame-Options`` are dropped, and so is the
dev server's ``frame-ancestors`` (written for its own origin, it would blank the tab; the
proxy's policy decides who frames the page), the rest of its policy kept. A referrer policy
that would send the page's full address (and so its capability) to other sites is narrowed.
Cross-origin reads by the sandboxed page of its own server are allowed (``cors_headers``):
to the browser, its own server is another origin now.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from terax_jupyter.security.network import HOP_BY_HOP

if TYPE_CHECKING:
    from collections.abc import Iterable

    from tornado.httputil import HTTPHeaders

# Cookies of Jupyter and JupyterHub on the same host, whichever server set them (another
# Jupyter's "username-<host>-<port>", a hub's "jupyterhub-user-<name>", "jupyterhub-session-id"):
# none is the dev server's to see.
JUPYTER_COOKIE_PREFIXES = ("_xsrf", "username-", "jupyterhub-")
# Set by the client library from the request itself.
_REQUEST_OWN = frozenset({"host", "content-length", "expect"})
_WEBSOCKET_OWN = frozenset(
    {"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
     "sec-websocket-protocol"}
)  # fmt: skip
_RESPONSE_DROPPED = frozenset(
    {"strict-transport-security", "clear-site-data", "alt-svc", "service-worker-allowed",
     "content-length", "x-frame-options", "access-control-allow-origin",
     "access-control-allow-credentials", "access-control-expose-headers"}
)  # fmt: skip
# What a previewed page may do: run, submit forms, open windows (which get this policy too),
# show dialogs, download. Never allow-same-origin (Jupyter's origin and its cookies) and
# never allow-top-navigation (navigating Lab away).
SANDBOX = (
    "sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox "
    "allow-modals allow-downloads allow-pointer-lock allow-presentation"
)
# Who may frame a page when nothing better is known (a Host that is no host): the page's own
# origin, which is Lab's (the tab frames a path under Jupyter's base URL).
SELF_ANCESTOR = "frame-ancestors 'self'"
# Referrer policies that would send the page's path (its capability) to other sites.
_LEAKY_REFERRER = frozenset({"unsafe-url", "no-referrer-when-downgrade"})
_LOOPBACK_NAMES = frozenset({"localhost", "0.0.0.0", "::1", "::"})  # noqa: S104 (names, not binds)
_FRAME_ANCESTORS = re.compile(r"(^|;)\s*frame-ancestors[^;]*", re.IGNORECASE)
# A Host header as a browser sends it: a DNS name or IPv4 address, or a bracketed IPv6
# address, and a port. Anything else is not put into a policy.
_HOST_PART = r"(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
_HOST = re.compile(rf"^{_HOST_PART}$")
# An origin an operator's policy names exactly: http(s), a host without wildcards, a port.
_EXACT_ORIGIN = re.compile(rf"^https?://{_HOST_PART}/?$", re.IGNORECASE)


def lab_origin(protocol: str, host: str) -> str | None:
    """The origin of Lab's page as the request shows it (``https://hub.example``), or None for
    a Host that is not one.

    ``protocol`` is what Jupyter knows: behind a proxy that ends TLS (and without
    ``ServerApp.trust_xheaders``) it says ``http``, and an ``http://`` source also matches the
    same host over ``https`` (CSP 3), so the origin the browser really uses is allowed either
    way; ``https`` is named only when Jupyter knows it.
    """
    if not _HOST.match(host):
        return None
    scheme = "https" if protocol == "https" else "http"
    return f"{scheme}://{host.lower()}"


def operator_ancestors(policy: str) -> list[str]:
    """The exact origins the operator's own policy lets frame Jupyter's pages (a portal that
    embeds Lab): the preview's frame has Lab's ancestors too, and every one must be allowed.

    Only ``http(s)://host[:port]`` sources are taken: ``'none'`` and ``'self'`` add nothing
    (``'self'`` is Lab's origin, there already); ``*``, a scheme alone (``https:``) and
    wildcard hosts are never copied, so the preview is never framable by more than named
    sites, whatever Lab is.
    """
    found: list[str] = []
    for directive in policy.split(";"):
        name, *sources = directive.split() or [""]
        if name.lower() != "frame-ancestors":
            continue
        for source in sources:
            if _EXACT_ORIGIN.match(source):
                origin = source.rstrip("/").lower()
                if origin not in found:
                    found.append(origin)
        break  # only a policy's first frame-ancestors counts (CSP 3)
    return found


def frame_ancestors(protocol: str, host: str, operator_policy: str = "") -> str:
    """The preview's ``frame-ancestors``: Lab's origin (``lab_origin``), then the operator's
    exact ancestors (``operator_policy`` is Jupyter's configured Content-Security-Policy, a
    hub's ``frame-ancestors 'none'`` by default, which adds nothing)."""
    origin = lab_origin(protocol, host)
    if origin is None:
        return SELF_ANCESTOR
    sources = [origin, *(o for o in operator_ancestors(operator_policy) if o != origin)]
    return "frame-ancestors " + " ".join(sources)


def preview_policy(ancestors: str) -> str:
    """The policy of every preview answer: ``SANDBOX`` and who may frame it."""
    return f"{SANDBOX}; {ancestors}"


def _connection_listed(headers: HTTPHeaders) -> set[str]:
    listed: set[str] = set()
    for value in headers.get_list("Connection"):
        listed.update(token.strip().lower() for token in value.split(","))
    return listed


def request_headers(
    incoming: HTTPHeaders,
    *,
    host: str,
    own_host: str,
    prefix: str,
    drop_cookies: Iterable[str],
    drop_authorization: bool,
    websocket: bool = False,
    vouched: bool = False,
) -> list[tuple[str, str]]:
    """The headers to send upstream. ``own_host`` is the Host the browser asked Jupyter at
    (``hub.example:443``), ``prefix`` the proxy path of the target (``/user/a/terax/proxy/5173``).

    Origin and Referer are compared by host only: behind a proxy that ends TLS, Jupyter may
    not know the scheme the browser used.
    """
    skipped = HOP_BY_HOP | _REQUEST_OWN | _connection_listed(incoming)
    if websocket:
        skipped |= _WEBSOCKET_OWN
    dropped_cookies = set(drop_cookies)
    upstream_origin = f"http://{host}"
    result: list[tuple[str, str]] = [("Host", host)]
    for name, value in incoming.get_all():
        lower = name.lower()
        if lower in skipped:
            continue
        if lower == "cookie":
            value = _without_cookies(value, dropped_cookies)
            if not value:
                continue
        elif lower == "authorization" and drop_authorization:
            continue
        elif lower == "origin" and (
            _host_of(value) == own_host.lower() or (vouched and value == "null")
        ):
            value = upstream_origin
        elif lower == "referer":
            value = _upstream_referer(value, own_host, prefix, upstream_origin)
        result.append((name, value))
    result.append(("X-Forwarded-Prefix", prefix))
    return result


def _without_cookies(header: str, names: set[str]) -> str:
    kept = []
    for part in header.split(";"):
        name = part.split("=", 1)[0].strip()
        if name and name not in names and not name.lower().startswith(JUPYTER_COOKIE_PREFIXES):
            kept.append(part.strip())
    return "; ".join(kept)


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).netloc.lower()
    except ValueError:
        return ""


def _upstream_referer(value: str, own_host: str, prefix: str, upstream_origin: str) -> str:
    if _host_of(value) != own_host.lower():
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if parts.path != prefix and not parts.path.startswith(prefix + "/"):
        return value
    rest = parts.path[len(prefix) :] or "/"
    return upstream_origin + rest + (f"?{parts.query}" if parts.query else "")


def response_headers(
    upstream: HTTPHeaders,
    *,
    port: int,
    prefix: str,
    keep_length: bool,
    own_host: str = "",
    request_path: str = "",
) -> list[tuple[str, str]]:
    """The headers to send the browser (``Content-Length`` only with ``keep_length``);
    ``own_host`` and ``request_path`` are the Host and path the browser asked Jupyter."""
    skipped = HOP_BY_HOP | _RESPONSE_DROPPED | _connection_listed(upstream)
    result: list[tuple[str, str]] = []
    for name, value in upstream.get_all():
        lower = name.lower()
        if lower in skipped:
            continue
        if lower in ("location", "content-location"):
            value = rewrite_location(
                value, port=port, prefix=prefix, own_host=own_host, request_path=request_path
            )
        elif lower == "set-cookie":
            value = rewrite_cookie(value, prefix=prefix)
        elif lower in ("content-security-policy", "content-security-policy-report-only"):
            value = _without_frame_ancestors(value)
            if not value:
                continue
        elif lower == "referrer-policy":
            value = _narrowed_referrer_policy(value)
        result.append((name, value))
    if keep_length and "Content-Length" in upstream:
        result.append(("Content-Length", upstream["Content-Length"]))
    return result


def cors_headers(upstream: HTTPHeaders) -> list[tuple[str, str]]:
    """For the sandboxed page's own requests (``Origin: null``): its server is another
    origin to the browser now, so reading what it answers must be allowed, headers too."""
    names = sorted(
        {name for name, _ in upstream.get_all()}
        - {"Set-Cookie", "Set-Cookie2"}
        - {n.title() for n in HOP_BY_HOP}
    )
    result = [
        ("Access-Control-Allow-Origin", "null"),
        ("Access-Control-Allow-Credentials", "true"),
        ("Vary", "Origin"),
    ]
    if names:
        result.append(("Access-Control-Expose-Headers", ", ".join(names)))
    return result


def preflight_headers(request: HTTPHeaders) -> list[tuple[str, str]]:
    """The answer to the sandboxed page's CORS preflight (a same-origin request before the
    sandbox, which its dev server never had to answer): whatever it asks for."""
    result = [
        ("Access-Control-Allow-Origin", "null"),
        ("Access-Control-Allow-Credentials", "true"),
        ("Access-Control-Max-Age", "600"),
        ("Vary", "Origin"),
    ]
    method = request.get("Access-Control-Request-Method", "")
    if method and _is_token(method):
        result.append(("Access-Control-Allow-Methods", method))
    asked = request.get("Access-Control-Request-Headers", "")
    names = [n.strip() for n in asked.split(",") if n.strip()]
    if names and all(_is_token(n) for n in names):
        result.append(("Access-Control-Allow-Headers", ", ".join(names)))
    return result


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def _is_token(value: str) -> bool:
    return len(value) <= 256 and _TOKEN.match(value) is not None


def _narrowed_referrer_policy(value: str) -> str:
    policies = [p.strip().lower() for p in value.split(",") if p.strip()]
    if not policies or any(p in _LEAKY_REFERRER for p in policies):
        return "strict-origin-when-cross-origin"
    return value


def rewrite_location(
    value: str, *, port: int, prefix: str, own_host: str = "", request_path: str = ""
) -> str:
    """Where a redirect may send the browser: a place of the dev server stays under
    ``prefix``, and so does anything on Jupyter's own host (``own_host``), however it is
    spelt: a root path, ``../../lab``, ``//<own host>/...``, a backslash, ``%2e%2e``. (A
    redirect out of the prefix would lead the preview's frame to Jupyter's pages, or to
    another port's preview, as a navigation of Lab's own.) Other hosts are left alone.
    ``request_path`` is the path the redirect answers, to resolve relative ones against.
    """
    # As a browser reads an http(s) URL: tabs and newlines removed, a backslash a slash.
    text = _TAB_OR_NEWLINE.sub("", value).replace("\\", "/")
    if text.startswith("#"):
        return value
    target = _resolve(text, request_path or prefix + "/")
    if target is None:
        return value
    authority, path, rest = target
    if authority is not None and not (
        _same_authority(authority, own_host) or _is_dev_server(authority, port)
    ):
        return value  # another site
    if _under(path, prefix):
        # Already under the prefix: a relative reference stays as written.
        return value if authority is None and not text.startswith("/") else path + rest
    return prefix + path + rest


_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _resolve(reference: str, base_path: str) -> tuple[str | None, str, str] | None:
    """``reference`` resolved against a page at ``base_path`` on this host: its authority
    (None for this host), its path without dot segments, and its query and fragment."""
    authority: str | None = None
    if _SCHEME.match(reference):
        try:
            parts = urlsplit(reference)
        except ValueError:
            return None
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
            return None  # javascript:, mailto: ...: not a place on a host
        authority, path = parts.netloc, parts.path or "/"
        rest = (f"?{parts.query}" if parts.query else "") + (
            f"#{parts.fragment}" if parts.fragment else ""
        )
        return authority, _without_dots(path), rest
    if reference.startswith("//"):
        authority, _, remainder = reference[2:].partition("/")
        reference = "/" + remainder
    cut = len(reference)
    for mark in ("?", "#"):
        index = reference.find(mark)
        if index != -1:
            cut = min(cut, index)
    path, rest = reference[:cut], reference[cut:]
    if authority is None and not path.startswith("/"):
        directory = base_path.rsplit("/", 1)[0] + "/"
        path = directory + path if path else base_path
    return authority, _without_dots(path or "/"), rest


def _without_dots(path: str) -> str:
    """Dot segments removed as a browser removes them (``%2e`` is a dot there too)."""
    out: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments[1:], start=1):
        dots = segment.lower().replace("%2e", ".")
        last = index == len(segments) - 1
        if dots == "..":
            if len(out) > 0:
                out.pop()
            if last:
                out.append("")
        elif dots == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def _same_authority(authority: str, own_host: str) -> bool:
    if not own_host:
        return False
    return _plain_authority(authority) == _plain_authority(own_host)


def _plain_authority(authority: str) -> str:
    host = authority.rsplit("@", 1)[-1].lower()
    for default in (":80", ":443"):
        if host.endswith(default):
            return host[: -len(default)]
    return host


def _is_dev_server(authority: str, port: int) -> bool:
    try:
        parts = urlsplit(f"//{authority}")
        target_port = parts.port
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    return target_port == port and (host in _LOOPBACK_NAMES or _is_loopback_v4(host))


def _under(path: str, prefix: str) -> bool:
    bare = path.split("?", 1)[0].split("#", 1)[0]
    return bare == prefix or bare.startswith(prefix + "/")


def _is_loopback_v4(host: str) -> bool:
    pieces = host.split(".")
    return (
        len(pieces) == 4
        and pieces[0] == "127"
        and all(p.isascii() and p.isdigit() and int(p) < 256 for p in pieces)
    )


def rewrite_cookie(value: str, *, prefix: str) -> str:
    """Scope a cookie to the proxy prefix (its path inside it), never to another domain.

    Read as a browser reads it: every attribute after the first ``;``, names without case or
    spaces, the last ``Path`` the one that counts. Every ``Domain`` and ``Path`` goes and one
    ``Path`` is added (a second ``Path=/`` must not put a cookie on Jupyter's whole host; a
    cookie without one would get its request's folder, which for the bare prefix is above it).
    """
    head, *attributes = value.split(";")
    kept: list[str] = []
    path = ""
    for attribute in attributes:
        name, _, attribute_value = attribute.partition("=")
        key = name.strip().lower()
        if key == "domain":
            continue
        if key == "path":
            path = attribute_value.strip()
            continue
        if attribute.strip():
            kept.append(attribute.strip())
    path = path or "/"
    if not path.startswith("/"):
        path = "/" + path
    if not _under(path, prefix):
        path = prefix + path
    return "; ".join([head.strip(), *kept, f"Path={path}"])


def _without_frame_ancestors(policy: str) -> str:
    """The dev server's policy without ``frame-ancestors``: it named the dev server's own
    origin (``'self'`` is ``localhost:5173``) or forbade framing (helmet's default), and the
    preview tab must frame it; the proxy's own policy (beside this one, both apply) decides
    who may. Everything else of it stands. Empty when nothing else was in it."""
    if _FRAME_ANCESTORS.search(policy) is None:
        return policy
    kept = [d.strip() for d in _FRAME_ANCESTORS.sub(r"\1", policy).split(";")]
    return "; ".join(d for d in kept if d)
