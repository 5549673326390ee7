"""Where a browser tab may go: navigation targets and the network policy that keeps a tab on
loopback (dev servers on this machine), with no DNS lookups of its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias
from urllib.parse import urlsplit

from terax_jupyter.exceptions import AccessDenied, InvalidRequest
from terax_jupyter.security.network import AddressClass, classify_address, parse_host_address

NetworkPolicy: TypeAlias = Callable[[str], bool]  # url -> may the page fetch it

LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
WEB_SCHEMES = frozenset({"http", "https", "ws", "wss"})


def is_loopback_host(host: str) -> bool:
    """localhost, *.localhost, or an address in 127.0.0.0/8 or ::1 (IPv4-mapped included).
    No DNS: a name that merely resolves to loopback is not loopback (DNS rebinding)."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = parse_host_address(host)
    return address is not None and classify_address(address) == AddressClass.LOOPBACK


def loopback_only(url: str) -> bool:
    """The default page policy: local dev servers and in-browser URLs, nothing else."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme in LOCAL_SCHEMES:
        return True
    return scheme in WEB_SCHEMES and bool(host) and is_loopback_host(host or "")


def check_navigation(url: str) -> str:
    """The URL if the agent may open it as a page: http(s), or about:blank. Local files,
    browser-internal pages, script and data URLs are refused with AccessDenied."""
    url = url.strip()
    if not url or any(ord(c) < 0x20 or c == "\x7f" for c in url):
        raise InvalidRequest(
            "the URL is empty or contains control characters", reason="invalid_url"
        )
    if url == "about:blank":
        return url
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        raise InvalidRequest(f"{url!r} is not a URL", reason="invalid_url") from None
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "scheme-less"
        raise AccessDenied(
            f"the browser may not open {shown} URLs; only http(s) pages of a local server",
            reason="url_denied",
        )
    return url
