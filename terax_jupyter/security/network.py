"""Outbound HTTP with an SSRF guard: resolve once, classify every address, pin the connection.

Every request a guarded client sends, the first one and every redirect hop alike, passes
``GuardedTransport.handle_async_request``, which

1. checks the URL (http/https only, no userinfo, no control bytes) and the headers (no CR, LF
   or NUL; no hop-by-hop headers; no ``Host`` that differs from the URL);
2. resolves the host once (IP literals and the legacy numeric IPv4 spellings such as
   ``2130706433`` or ``0x7f.1`` are read, never looked up) and classifies every address:
   ``public < private < loopback < denied < metadata``; the worst class wins;
3. allows public addresses, private and loopback ones only when the host is configured as a
   local provider (``OutboundPolicy.local_hosts``), and never denied or metadata ones;
4. connects to the vetted addresses only. The pin lives in a context variable read by
   ``PinnedBackend``, the httpcore network backend of the transport's connection pool: its
   ``connect_tcp`` is asked for the *name* (the pool is keyed by scheme, name and port) and
   connects to the vetted IP instead, so no second lookup happens anywhere. TLS is started by
   httpcore on that stream with ``server_hostname`` = the name from the URL, so SNI and the
   certificate check still use the name. Rewriting the URL to the IP plus the ``sni_hostname``
   extension was rejected: the pool would key connections by IP and could hand a TLS connection
   verified for one name to a request for another name on the same address.

httpx 0.28 has no public parameter for the network backend (encode/httpx#3749), so the
transport replaces the pool it builds with one that uses ``PinnedBackend``; the backend refuses
any connection without a pin, so a change in httpx fails closed, and the tests prove the pin.

Redirects: ``guarded_client`` does not follow them; ``follow_redirects`` sends each hop through
the same transport (so every hop is checked again) and refuses cross-origin hops by default,
because httpx keeps custom key headers (``x-api-key``, ``api-key``) across origins.
"""

from __future__ import annotations

import abc
import asyncio
import contextvars
import dataclasses
import enum
import inspect
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpcore
import httpx

from terax_jupyter.exceptions import AccessDenied, InvalidRequest

if TYPE_CHECKING:
    import ssl
    from collections.abc import Awaitable, Callable, Iterable, Sequence

__all__ = [
    "AddressClass",
    "CallableResolver",
    "GuardedTransport",
    "LocalHost",
    "OutboundPolicy",
    "PinnedBackend",
    "Resolver",
    "SystemResolver",
    "Vetted",
    "check_headers",
    "check_url",
    "classify_address",
    "follow_redirects",
    "guarded_client",
    "parse_host_address",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressClass(enum.IntEnum):
    """How far an address is from the public internet; a larger value is worse."""

    PUBLIC = 0
    PRIVATE = 1
    LOOPBACK = 2
    DENIED = 3  # unspecified, multicast, reserved, documentation, ...: never reachable
    METADATA = 4  # cloud instance metadata and all link-local: never reachable


# Cloud metadata services. All of link-local (169.254/16, fe80::/10) counts as metadata too.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (classic)
        "168.63.129.16",  # Azure wire server (a public address that answers only inside Azure)
    )
)
METADATA_NAMES = frozenset(
    {
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network
LINK_LOCAL = (_V4("169.254.0.0/16"), _V6("fe80::/10"))
UNSPECIFIED = (_V4("0.0.0.0/8"), _V6("::/128"))
LOOPBACK = (_V4("127.0.0.0/8"), _V6("::1/128"))
PRIVATE = (
    _V4("10.0.0.0/8"),
    _V4("172.16.0.0/12"),
    _V4("192.168.0.0/16"),
    _V4("100.64.0.0/10"),  # carrier-grade NAT, Tailscale
    _V4("198.18.0.0/15"),  # benchmarking
    _V6("fc00::/7"),  # unique local
    _V6("fec0::/10"),  # site-local (deprecated)
    _V6("64:ff9b:1::/48"),  # local-use NAT64
)
DENIED = (
    _V4("192.0.0.0/24"),  # IETF protocol assignments
    _V4("192.0.2.0/24"),  # documentation
    _V4("198.51.100.0/24"),
    _V4("203.0.113.0/24"),
    _V4("192.88.99.0/24"),  # 6to4 relay anycast
    _V4("224.0.0.0/4"),  # multicast
    _V4("240.0.0.0/4"),  # reserved, and 255.255.255.255
    _V6("::/96"),  # IPv4-compatible (deprecated)
    _V6("100::/64"),  # discard-only
    _V6("2001::/32"),  # Teredo: the client address is obfuscated, so it cannot be classified
    _V6("2001:db8::/32"),  # documentation
    _V6("3fff::/20"),
    _V6("ff00::/8"),  # multicast
)
NAT64 = _V6("64:ff9b::/96")


def classify_address(address: IPAddress) -> AddressClass:
    """The class of one address; IPv4 embedded in IPv6 (mapped, NAT64, 6to4) counts as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(address.packed)  # drop a %scope
        embedded = address.ipv4_mapped
        if embedded is None and address in NAT64:
            embedded = ipaddress.IPv4Address(address.packed[-4:])
        if embedded is not None:
            return classify_address(embedded)
        if address.sixtofour is not None:
            return max(AddressClass.PUBLIC, classify_address(address.sixtofour))
    if address in METADATA_ADDRESSES or _within(address, LINK_LOCAL):
        return AddressClass.METADATA
    if _within(address, UNSPECIFIED):
        return AddressClass.DENIED
    if _within(address, LOOPBACK):
        return AddressClass.LOOPBACK
    if _within(address, PRIVATE):
        return AddressClass.PRIVATE
    if _within(address, DENIED) or not address.is_global:
        return AddressClass.DENIED
    return AddressClass.PUBLIC


def _within(address: IPAddress, networks: Iterable[ipaddress.IPv4Network | _V6]) -> bool:
    return any(address.version == n.version and address in n for n in networks)


_NUMERIC_PART = re.compile(r"^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$")
_ENDS_IN_NUMBER = re.compile(r"^([0-9]+|0x[0-9a-f]*)$")


def parse_host_address(host: str) -> IPAddress | None:
    """The address a host names without DNS: an IP literal, or an IPv4 in any spelling
    ``inet_aton`` accepts (``2130706433``, ``0177.0.0.1``, ``0x7f.1``, ``127.1``); else None."""
    host = host.strip("[]").rstrip(".").lower()
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_NUMERIC_PART.match(p) for p in parts):
        return None
    values = []
    for part in parts:
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif part.startswith("0") and len(part) > 1:
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(head):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _normal_host(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


def check_url(url: str | httpx.URL) -> httpx.URL:
    """The URL if its form is acceptable: http(s), a host, no userinfo, no control bytes."""
    if isinstance(url, str):
        if any(c in url for c in "\r\n\0"):
            raise InvalidRequest("the URL contains a line break or NUL", reason="invalid_url")
        try:
            url = httpx.URL(url)
        except (httpx.InvalidURL, UnicodeError) as error:
            raise InvalidRequest(f"not a usable URL: {error}", reason="invalid_url") from None
    if url.scheme not in SCHEMES:
        raise AccessDenied(
            f"only http and https URLs may be fetched, not {url.scheme or 'no'} scheme",
            reason="scheme_denied",
        )
    if url.userinfo:
        raise AccessDenied(
            "a URL with a user name or password is refused; send credentials in headers",
            reason="userinfo_denied",
        )
    try:
        # An "xn--" label that is no valid punycode fails only when decoded (idna's errors
        # are UnicodeErrors): a host nobody can name, refused as such.
        host = url.host
    except UnicodeError as error:
        raise InvalidRequest(
            f"the URL's host is not a valid name: {error}", reason="invalid_url"
        ) from None
    if not host:
        raise InvalidRequest("the URL has no host", reason="invalid_url")
    raw = url.raw_host + url.raw_path
    if any(b in raw for b in (b"\r", b"\n", b"\0")):
        raise InvalidRequest("the URL contains a line break or NUL", reason="invalid_url")
    return url


# --- resolvers -------------------------------------------------------------------------------


class Resolver(abc.ABC):
    """Turns a host name into the addresses to vet. One call per request, never more."""

    @abc.abstractmethod
    async def resolve(self, host: str, port: int) -> Sequence[str]: ...


class SystemResolver(Resolver):
    """``getaddrinfo`` through the event loop, which runs it in a worker thread."""

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
        return [str(info[4][0]) for info in infos]


class CallableResolver(Resolver):
    """A resolver from a function ``(host, port) -> addresses`` (sync or async); for tests."""

    def __init__(
        self, function: Callable[[str, int], Sequence[str] | Awaitable[Sequence[str]]]
    ) -> None:
        self.function = function
        self.calls: list[tuple[str, int]] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        result = self.function(host, port)
        if inspect.isawaitable(result):
            result = await result
        return result


# --- policy ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalHost:
    """A host configured as a local provider: ``host``, ``host:port`` or ``scheme://host:port``."""

    host: str
    port: int | None = None
    scheme: str | None = None

    @classmethod
    def parse(cls, entry: str) -> LocalHost:
        text = entry.strip(" ")
        if not text or any(c in text for c in "\r\n\0\t "):
            raise InvalidRequest(f"not a host: {entry!r}", reason="invalid_local_host")
        try:
            parts = urlsplit(text if "://" in text else f"//{text}")
            port = parts.port
        except ValueError:
            raise InvalidRequest(f"not a host: {entry!r}", reason="invalid_local_host") from None
        scheme = parts.scheme.lower() or None
        if not parts.hostname or parts.username is not None or scheme not in (None, *SCHEMES):
            raise InvalidRequest(f"not a host: {entry!r}", reason="invalid_local_host")
        return cls(_normal_host(parts.hostname), port, scheme)

    def matches(self, scheme: str, host: str, port: int) -> bool:
        return (
            self.host == host
            and (self.port is None or self.port == port)
            and (self.scheme is None or self.scheme == scheme)
        )

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        text = f"{host}:{self.port}" if self.port is not None else host
        return f"{self.scheme}://{text}" if self.scheme else text


@dataclass(frozen=True)
class Vetted:
    """The verdict on one origin: where the connection may go."""

    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]
    klass: AddressClass


SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class OutboundPolicy:
    """Which origins may be reached. Public addresses always; private and loopback ones only
    for ``local_hosts``; metadata and other special addresses never."""

    local_hosts: tuple[LocalHost, ...] = ()
    resolver: Resolver = field(default_factory=SystemResolver, compare=False)

    @classmethod
    def build(
        cls, local_hosts: Iterable[str] = (), *, resolver: Resolver | None = None
    ) -> OutboundPolicy:
        return cls(
            tuple(LocalHost.parse(h) for h in local_hosts),
            resolver if resolver is not None else SystemResolver(),
        )

    def allowing_local(self, *entries: str) -> OutboundPolicy:
        """This policy plus hosts a user configured as local (a local provider's base URL)."""
        added = tuple(LocalHost.parse(e) for e in entries)
        return dataclasses.replace(self, local_hosts=(*self.local_hosts, *added))

    def is_local(self, scheme: str, host: str, port: int) -> bool:
        host = _normal_host(host)
        return any(entry.matches(scheme, host, port) for entry in self.local_hosts)

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """The URL if its form is acceptable (see ``check_url``); no DNS here."""
        return check_url(url)

    async def vet(self, url: httpx.URL, *, timeout: float | None = None) -> Vetted:
        """Resolve the host once, classify every address, and decide; raise if refused."""
        url = self.check_url(url)
        scheme = url.scheme
        host = _normal_host(url.raw_host.decode("ascii"))
        port = url.port or DEFAULT_PORTS[scheme]
        origin = _origin_text(scheme, host, port)
        if host in METADATA_NAMES:
            raise AccessDenied(f"{origin} is a cloud metadata service", reason="address_denied")
        literal = parse_host_address(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        elif _ENDS_IN_NUMBER.match(host.rsplit(".", 1)[-1]):
            # What a browser refuses too: a numeric last label that is no valid IPv4.
            raise InvalidRequest(f"{origin} is not a valid address", reason="invalid_url")
        else:
            addresses = await self._resolve(host, port, timeout)
        klass = max(classify_address(a) for a in addresses)
        if host == "localhost" or host.endswith(".localhost"):
            klass = max(klass, AddressClass.LOOPBACK)
        allowed = klass == AddressClass.PUBLIC or (
            klass in (AddressClass.PRIVATE, AddressClass.LOOPBACK)
            and self.is_local(scheme, host, port)
        )
        if not allowed:
            raise AccessDenied(_refusal(origin, klass), reason="address_denied")
        return Vetted(scheme, host, port, tuple(str(a) for a in addresses), klass)

    async def _resolve(self, host: str, port: int, timeout: float | None) -> list[IPAddress]:
        try:
            found = await asyncio.wait_for(self.resolver.resolve(host, port), timeout)
        except (OSError, UnicodeError) as error:
            raise httpx.ConnectError(f"cannot resolve {host}: {error}") from None
        except asyncio.TimeoutError:
            raise httpx.ConnectTimeout(f"resolving {host} took too long") from None
        addresses: list[IPAddress] = []
        for text in found:
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                raise AccessDenied(
                    f"{host} resolved to something that is not an address",
                    reason="address_denied",
                ) from None
            if address not in addresses:
                addresses.append(address)
        if not addresses:
            raise httpx.ConnectError(f"cannot resolve {host}: no addresses")
        return addresses

    def transport(self, **options: object) -> GuardedTransport:
        return GuardedTransport(self, **options)  # type: ignore[arg-type]


def _origin_text(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def _refusal(origin: str, klass: AddressClass) -> str:
    if klass == AddressClass.METADATA:
        return f"{origin} is a cloud metadata or link-local address"
    if klass == AddressClass.DENIED:
        return f"{origin} is a special-purpose address (unspecified, multicast, reserved, ...)"
    where = "this machine" if klass == AddressClass.LOOPBACK else "a private network"
    return (
        f"{origin} is on {where}; only a provider configured as local may be reached there"
        " (TeraxApp.local_model_hosts)"
    )


# --- headers ---------------------------------------------------------------------------------

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


def check_headers(request: httpx.Request) -> None:
    """Refuse control bytes, hop-by-hop headers and a Host that is not the URL's."""
    hosts = []
    for raw_name, raw_value in request.headers.raw:
        if any(b in raw_name + raw_value for b in (b"\r", b"\n", b"\0")):
            raise InvalidRequest(
                "a request header contains a line break or NUL", reason="invalid_header"
            )
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1").strip().lower()
        if name == "host":
            hosts.append(value)
        elif name == "connection" and value == "keep-alive":
            continue  # httpx's own default
        elif (
            name == "transfer-encoding"
            and value == "chunked"
            and ("content-length" not in request.headers)
        ):
            continue  # httpx's framing of a streamed body
        elif name in HOP_BY_HOP or name.startswith("proxy-"):
            raise AccessDenied(
                f"the hop-by-hop header {name} may not be sent", reason="header_denied"
            )
    expected = request.url.netloc.decode("ascii").lower()
    if len(hosts) > 1 or (hosts and hosts[0] != expected):
        raise AccessDenied("the Host header must name the URL's host", reason="header_denied")


# --- transport -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pin:
    host: str
    port: int
    addresses: tuple[str, ...]


_PIN: contextvars.ContextVar[_Pin | None] = contextvars.ContextVar(
    "terax_network_pin", default=None
)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the addresses the transport vetted for this request, whatever host it is
    asked for; with no vetted addresses for that host it refuses (fails closed)."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pin = _PIN.get()
        if pin is None or pin.host != _normal_host(host) or pin.port != port:
            raise AccessDenied(
                f"a connection to {host}:{port} was not vetted", reason="address_denied"
            )
        error: Exception | None = None
        for address in pin.addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as failure:
                error = failure
        assert error is not None
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AccessDenied("unix sockets are not reachable", reason="address_denied")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """An httpx transport that checks, resolves once, classifies and pins every request."""

    def __init__(
        self,
        policy: OutboundPolicy,
        *,
        verify: ssl.SSLContext | str | bool = True,
        http2: bool = False,
        limits: httpx.Limits = DEFAULT_LIMITS,
        retries: int = 0,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False, http2=http2, limits=limits)
        self.policy = policy
        self.backend = PinnedBackend(network_backend)
        # httpx has no public way to pass a network backend (encode/httpx#3749): replace the
        # pool it built with one that connects only through the pinning backend.
        assert isinstance(self._pool, httpcore.AsyncConnectionPool)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=http2,
            retries=retries,
            network_backend=self.backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.policy.check_url(request.url)
        check_headers(request)
        if "sni_hostname" in request.extensions:
            raise AccessDenied("the TLS name is always the URL's host", reason="header_denied")
        timeout = request.extensions.get("timeout", {}).get("connect")
        vetted = await self.policy.vet(request.url, timeout=timeout)
        token = _PIN.set(_Pin(vetted.host, vetted.port, vetted.addresses))
        try:
            return await super().handle_async_request(request)
        finally:
            _PIN.reset(token)


def guarded_client(
    policy: OutboundPolicy,
    *,
    base_url: str | httpx.URL = "",
    headers: dict[str, str] | None = None,
    timeout: httpx.Timeout | float | None = 30.0,
    verify: ssl.SSLContext | str | bool = True,
    transport: GuardedTransport | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every request passes the guard; it ignores proxy
    environment variables and does not follow redirects (use ``follow_redirects``)."""
    if base_url:
        policy.check_url(base_url)
    return httpx.AsyncClient(
        base_url=base_url,
        headers=headers,
        timeout=timeout,
        transport=transport if transport is not None else GuardedTransport(policy, verify=verify),
        follow_redirects=False,
        trust_env=False,
    )


# Headers that carry credentials; dropped when a redirect is allowed to leave the origin.
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie|session|signature", re.IGNORECASE)


async def follow_redirects(
    client: httpx.AsyncClient,
    request: httpx.Request,
    *,
    max_redirects: int = 5,
    allow_cross_origin: bool = False,
    stream: bool = False,
) -> httpx.Response:
    """Send ``request``, then follow at most ``max_redirects`` redirects, each hop checked
    again by the client's transport. A hop to another origin is refused unless
    ``allow_cross_origin``, and then credential headers are not carried over."""
    response = await client.send(request, stream=stream, follow_redirects=False)
    hops = 0
    while response.next_request is not None:
        following = response.next_request
        await response.aclose()
        hops += 1
        if hops > max_redirects:
            raise httpx.TooManyRedirects(f"more than {max_redirects} redirects", request=following)
        source = _url_origin(response.request.url)
        try:
            check_url(following.url)
        except (AccessDenied, InvalidRequest) as error:
            raise AccessDenied(
                f"redirect from {source} refused: {error.message}", reason="redirect_denied"
            ) from None
        if _url_origin(following.url) != source:
            if not allow_cross_origin:
                raise AccessDenied(
                    f"redirect from {source} to {_url_origin(following.url)} refused:"
                    " another origin",
                    reason="redirect_denied",
                )
            for name in list(following.headers):
                if _CREDENTIAL_HEADER.search(name):
                    del following.headers[name]
        try:
            response = await client.send(following, stream=stream, follow_redirects=False)
        except AccessDenied as error:
            raise AccessDenied(
                f"redirect from {source} refused: {error.message}", reason="redirect_denied"
            ) from None
    return response


def _url_origin(url: httpx.URL) -> str:
    scheme = url.scheme
    port = url.port or DEFAULT_PORTS.get(scheme, 0)
    return _origin_text(scheme, _normal_host(url.raw_host.decode("ascii")), port)
