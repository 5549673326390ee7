"""The guarded network layer against real HTTP(S) servers on 127.0.0.1 and a scripted resolver."""

from __future__ import annotations

import ipaddress
import shutil
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpcore
import httpx
import pytest

from terax_jupyter.app import TeraxApp
from terax_jupyter.exceptions import AccessDenied, InvalidRequest
from terax_jupyter.security import SecurityLayer
from terax_jupyter.security.network import (
    AddressClass,
    CallableResolver,
    GuardedTransport,
    LocalHost,
    OutboundPolicy,
    PinnedBackend,
    check_url,
    classify_address,
    follow_redirects,
    guarded_client,
    parse_host_address,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

PUBLIC_IP = "93.184.216.34"


# --- test servers ----------------------------------------------------------------------------


@dataclass
class Server:
    """A real HTTP(S) server on 127.0.0.1 that records what reached it."""

    port: int
    seen: list[dict[str, Any]] = field(default_factory=list)


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.seen.append({"path": self.path, "headers": dict(self.headers.items())})
            query = parse_qs(urlsplit(self.path).query)
            if self.path.startswith("/redirect"):
                self.send_response(302)
                self.send_header("Location", query["to"][0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = f"ok {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def _serve(context: ssl.SSLContext | None = None) -> Iterator[Server]:
    record = Server(port=0)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(record))
    httpd.daemon_threads = True
    if context is not None:
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    record.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield record
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _serve()


@dataclass
class Certificates:
    ca: Path
    cert: Path
    key: Path


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    """A test CA and a server certificate it signed for ``model.test`` (openssl CLI)."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "the TLS tests need the openssl CLI (.ci/run installs it)"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=tmp_path, check=True, capture_output=True)

    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=Terax Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=model.test")
    (tmp_path / "ext.cnf").write_text(
        "subjectAltName=DNS:model.test\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")  # fmt: skip
    return Certificates(tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key")


@pytest.fixture
def tls_server(certificates: Certificates) -> Iterator[Server]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates.cert, certificates.key)
    yield from _serve(context)


def resolver(table: dict[str, Sequence[str]]) -> CallableResolver:
    """A resolver answering from ``table``; unknown names fail like NXDOMAIN."""

    def lookup(host: str, port: int) -> Sequence[str]:
        if host not in table:
            raise OSError(f"unknown host {host}")
        return table[host]

    return CallableResolver(lookup)


def policy(*local: str, table: dict[str, Sequence[str]] | None = None) -> OutboundPolicy:
    return OutboundPolicy.build(local, resolver=resolver(table or {}))


def calls(p: OutboundPolicy) -> list[tuple[str, int]]:
    assert isinstance(p.resolver, CallableResolver)
    return p.resolver.calls


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Records where connections go; answers every one with a canned HTTP response."""

    def __init__(self) -> None:
        self.connects: list[tuple[str, int]] = []
        self.mock = httpcore.AsyncMockBackend(
            [b"HTTP/1.1 200 OK\r\n", b"Content-Length: 6\r\n\r\n", b"public"]
        )

    async def connect_tcp(self, host: str, port: int, **_: Any) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        return await self.mock.connect_tcp(host, port)

    async def sleep(self, seconds: float) -> None:
        pass


# --- classification --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("8.8.8.8", AddressClass.PUBLIC),
        ("2606:4700:4700::1111", AddressClass.PUBLIC),
        ("127.0.0.1", AddressClass.LOOPBACK),
        ("127.255.0.9", AddressClass.LOOPBACK),
        ("::1", AddressClass.LOOPBACK),
        ("10.1.2.3", AddressClass.PRIVATE),
        ("172.16.0.1", AddressClass.PRIVATE),
        ("192.168.1.1", AddressClass.PRIVATE),
        ("100.64.0.1", AddressClass.PRIVATE),
        ("198.18.0.1", AddressClass.PRIVATE),
        ("198.19.255.255", AddressClass.PRIVATE),
        ("fc00::1", AddressClass.PRIVATE),
        ("fd12:3456::1", AddressClass.PRIVATE),
        ("169.254.169.254", AddressClass.METADATA),
        ("169.254.1.1", AddressClass.METADATA),
        ("fd00:ec2::254", AddressClass.METADATA),
        ("100.100.100.200", AddressClass.METADATA),
        ("fe80::1", AddressClass.METADATA),
        ("fe80::1%eth0", AddressClass.METADATA),
        ("0.0.0.0", AddressClass.DENIED),
        ("0.1.2.3", AddressClass.DENIED),
        ("::", AddressClass.DENIED),
        ("224.0.0.1", AddressClass.DENIED),
        ("ff02::1", AddressClass.DENIED),
        ("240.0.0.1", AddressClass.DENIED),
        ("255.255.255.255", AddressClass.DENIED),
        ("192.0.2.1", AddressClass.DENIED),
        ("198.51.100.7", AddressClass.DENIED),
        ("203.0.113.9", AddressClass.DENIED),
        ("2001:db8::1", AddressClass.DENIED),
        ("::127.0.0.1", AddressClass.DENIED),  # IPv4-compatible
        ("2001:0:4136:e378::1", AddressClass.DENIED),  # Teredo
        # IPv4 inside IPv6 is judged as the IPv4 it carries.
        ("::ffff:127.0.0.1", AddressClass.LOOPBACK),
        ("::ffff:10.0.0.1", AddressClass.PRIVATE),
        ("::ffff:169.254.169.254", AddressClass.METADATA),
        ("::ffff:8.8.8.8", AddressClass.PUBLIC),
        ("64:ff9b::7f00:1", AddressClass.LOOPBACK),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", AddressClass.METADATA),  # NAT64 of 169.254.169.254
        ("64:ff9b::808:808", AddressClass.PUBLIC),
        ("2002:a9fe:a9fe::1", AddressClass.METADATA),  # 6to4 of 169.254.169.254
        ("2002:c0a8:101::1", AddressClass.PRIVATE),  # 6to4 of 192.168.1.1
    ],
)
def test_address_classes(address: str, expected: AddressClass) -> None:
    assert classify_address(ipaddress.ip_address(address)) == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("169.254.43518", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::ffff:7f00:1]", "::ffff:7f00:1"),
        ("example.com", None),
        ("256.1.1.1", None),
        ("1.2.3.4.5", None),
        ("08.1.1.1", None),
    ],
)
def test_numeric_host_spellings_are_read_without_dns(host: str, expected: str | None) -> None:
    found = parse_host_address(host)
    assert (str(found) if found is not None else None) == expected


# --- URL and header form ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "scheme_denied"),
        ("ftp://example.com/", "scheme_denied"),
        ("gopher://127.0.0.1:6379/_", "scheme_denied"),
        ("http://user:pass@example.com/", "userinfo_denied"),
        ("https://token@example.com/", "userinfo_denied"),
        ("http://example.com/a\r\nHost: evil", "invalid_url"),
        ("http://example.com/\x00", "invalid_url"),
        ("http://example.com\n/", "invalid_url"),
        ("http:///nohost", "invalid_url"),
        # "xn--" labels that are no valid punycode: idna's errors, said as a bad URL.
        ("https://xn--api-openai.com/v1", "invalid_url"),
        ("https://xn--.example.com/", "invalid_url"),
        ("https://ex\u05cf.com/", "invalid_url"),
    ],
)
def test_url_form_is_checked(url: str, reason: str) -> None:
    with pytest.raises((AccessDenied, InvalidRequest)) as caught:
        check_url(url)
    assert caught.value.reason == reason


async def test_userinfo_is_refused_before_any_lookup(server: Server) -> None:
    p = policy("127.0.0.1", table={"model.test": ["127.0.0.1"]})
    async with guarded_client(p) as client:
        with pytest.raises(AccessDenied) as caught:
            await client.get(f"http://me:secret@model.test:{server.port}/")
    assert caught.value.reason == "userinfo_denied"
    assert "secret" not in caught.value.message
    assert calls(p) == []
    assert server.seen == []


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Evil": "a\r\nInjected: 1"},
        {"X-Evil": "a\nb"},
        {"X-Evil": "a\x00b"},
    ],
)
async def test_control_bytes_in_headers_are_refused(
    server: Server, headers: dict[str, str]
) -> None:
    p = policy(f"127.0.0.1:{server.port}")
    async with guarded_client(p) as client:
        with pytest.raises(InvalidRequest) as caught:
            await client.get(f"http://127.0.0.1:{server.port}/", headers=headers)
    assert caught.value.reason == "invalid_header"
    assert server.seen == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Connection": "close, X-Api-Key"},
        {"Connection": "upgrade"},
        {"Keep-Alive": "timeout=5"},
        {"Proxy-Authorization": "Basic abc"},
        {"Proxy-Connection": "keep-alive"},
        {"Proxy-Anything": "1"},
        {"TE": "trailers"},
        {"Trailer": "X-Foo"},
        {"Transfer-Encoding": "gzip, chunked"},
        {"Upgrade": "websocket"},
        {"Host": "169.254.169.254"},
        {"Host": "other.test"},
    ],
)
async def test_hop_by_hop_and_host_override_headers_are_refused(
    server: Server, headers: dict[str, str]
) -> None:
    p = policy(f"127.0.0.1:{server.port}")
    async with guarded_client(p) as client:
        with pytest.raises(AccessDenied) as caught:
            await client.get(f"http://127.0.0.1:{server.port}/", headers=headers)
    assert caught.value.reason == "header_denied"
    assert server.seen == []


async def test_httpx_defaults_and_streamed_bodies_pass(server: Server) -> None:
    """httpx's own ``Connection: keep-alive`` and chunked framing are not refused."""

    async def body() -> Any:
        yield b"chunk"

    p = policy(f"127.0.0.1:{server.port}")
    transport = GuardedTransport(p)
    request = httpx.Request("POST", f"http://127.0.0.1:{server.port}/", content=body())
    assert request.headers["Transfer-Encoding"] == "chunked"
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        assert client.headers["Connection"] == "keep-alive"
        response = await client.get(f"http://127.0.0.1:{server.port}/x")
    assert response.status_code == 200


# --- address policy --------------------------------------------------------------------------


async def test_loopback_is_refused_unless_configured_local(server: Server) -> None:
    url = f"http://127.0.0.1:{server.port}/hello"
    async with guarded_client(policy()) as client:
        with pytest.raises(AccessDenied) as caught:
            await client.get(url)
    assert caught.value.reason == "address_denied"
    assert "local_model_hosts" in caught.value.message
    # Another port of the same host is not the configured provider.
    async with guarded_client(policy("127.0.0.1:1")) as client:
        with pytest.raises(AccessDenied):
            await client.get(url)
    assert server.seen == []
    async with guarded_client(policy(f"127.0.0.1:{server.port}")) as client:
        response = await client.get(url)
    assert (response.status_code, response.text) == (200, "ok /hello")


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f.1", "0x7f.0.0.1", "127.1", "[::ffff:127.0.0.1]", "0"]
)
async def test_numeric_spellings_of_loopback_are_refused(server: Server, host: str) -> None:
    p = policy()
    async with guarded_client(p) as client:
        with pytest.raises(AccessDenied) as caught:
            await client.get(f"http://{host}:{server.port}/")
    assert caught.value.reason == "address_denied"
    assert calls(p) == []  # read, not looked up
    assert server.seen == []


async def test_decimal_spelling_reaches_a_local_provider_through_the_pin(server: Server) -> None:
    p = policy(f"2130706433:{server.port}")
    async with guarded_client(p) as client:
        response = await client.get(f"http://2130706433:{server.port}/n")
    assert response.text == "ok /n"
    assert calls(p) == []


async def test_localhost_is_loopback_even_if_dns_says_otherwise(server: Server) -> None:
    p = policy(table={"localhost": [PUBLIC_IP], "api.localhost": [PUBLIC_IP]})
    async with guarded_client(p) as client:
        for host in ("localhost", "api.localhost"):
            with pytest.raises(AccessDenied) as caught:
                await client.get(f"http://{host}:{server.port}/")
            assert caught.value.reason == "address_denied"


@pytest.mark.parametrize(
    ("host", "answers"),
    [
        ("169.254.169.254", None),
        ("[fd00:ec2::254]", None),
        ("100.100.100.200", None),
        ("[fe80::1]", None),
        ("0xa9fea9fe", None),
        ("[::ffff:169.254.169.254]", None),
        ("metadata.google.internal", None),
        ("Metadata.Google.Internal.", None),
        ("meta.test", ["169.254.169.254"]),
        ("meta.test", ["10.0.0.5", "169.254.170.2"]),
    ],
)
async def test_metadata_is_refused_even_for_a_local_provider(
    host: str, answers: list[str] | None
) -> None:
    backend = RecordingBackend()
    p = policy(host, table={"meta.test": answers or []})
    transport = GuardedTransport(p, network_backend=backend)
    async with guarded_client(p, transport=transport) as client:
        with pytest.raises(AccessDenied) as caught:
            await client.get(f"http://{host}/latest/meta-data/")
    assert caught.value.reason == "address_denied"
    assert backend.connects == []
    if answers is None:
        assert calls(p) == []


async def test_worst_class_wins() -> None:
    backend = RecordingBackend()
    p = policy(table={"mixed.test": [PUBLIC_IP, "127.0.0.1"], "half.test": [PUBLIC_IP, "10.0.0.1"]})
    transport = GuardedTransport(p, network_backend=backend)
    async with guarded_client(p, transport=transport) as client:
        for host in ("mixed.test", "half.test"):
            with pytest.raises(AccessDenied) as caught:
                await client.get(f"http://{host}/")
            assert caught.value.reason == "address_denied"
    assert backend.connects == []


async def test_dns_rebinding_cannot_move_the_connection() -> None:
    """The name resolves to a public address, then (to a second lookup) to 127.0.0.1. The
    connection goes to the vetted address, and the second lookup never happens."""
    answers = iter([[PUBLIC_IP], ["127.0.0.1"], ["127.0.0.1"]])
    p = OutboundPolicy.build(resolver=CallableResolver(lambda host, port: next(answers)))
    backend = RecordingBackend()
    transport = GuardedTransport(p, network_backend=backend)
    async with guarded_client(p, transport=transport) as client:
        response = await client.get("http://rebind.test/")
        assert response.text == "public"
        assert calls(p) == [("rebind.test", 80)]
        assert backend.connects == [(PUBLIC_IP, 80)]
        # The next request looks up again, sees loopback, and is refused before connecting.
        with pytest.raises(AccessDenied) as caught:
            await client.get("http://rebind.test/again")
    assert caught.value.reason == "address_denied"
    assert backend.connects == [(PUBLIC_IP, 80)]


async def test_the_pin_is_used_for_a_real_connection(server: Server) -> None:
    """``model.test`` is in no DNS: the request reaches the server only through the pin."""
    p = policy("model.test", table={"model.test": ["127.0.0.1"]})
    async with guarded_client(p) as client:
        response = await client.get(f"http://model.test:{server.port}/v1/models")
    assert response.text == "ok /v1/models"
    assert calls(p) == [("model.test", server.port)]
    assert server.seen[0]["headers"]["Host"] == f"model.test:{server.port}"


async def test_an_unresolvable_name_is_a_connect_error() -> None:
    async with guarded_client(policy()) as client:
        with pytest.raises(httpx.ConnectError, match=r"cannot resolve nowhere\.test"):
            await client.get("http://nowhere.test/")


async def test_a_connection_without_a_pin_is_refused() -> None:
    with pytest.raises(AccessDenied) as caught:
        await PinnedBackend(RecordingBackend()).connect_tcp("example.com", 443)
    assert caught.value.reason == "address_denied"


async def test_proxy_environment_does_not_bypass_the_guard(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:1")
    p = policy(f"127.0.0.1:{server.port}")
    async with guarded_client(p) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/direct")
        assert response.text == "ok /direct"
        with pytest.raises(AccessDenied):
            await client.get("http://169.254.169.254/")


# --- redirects -------------------------------------------------------------------------------


@pytest.fixture
def redirecting(server: Server) -> tuple[OutboundPolicy, Callable[[str], str]]:
    """A policy where the test server (as 127.0.0.1:port) is the only local provider."""
    p = policy(f"127.0.0.1:{server.port}", table={"localhost": ["127.0.0.1"]})

    def to(target: str) -> str:
        return f"http://127.0.0.1:{server.port}/redirect?to={target}"

    return p, to


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://localhost:{port}/",
        "http://0x7f.1:{port}/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/",
        "http://u:p@127.0.0.1:{port}/",
    ],
)
async def test_redirects_to_forbidden_places_are_refused(
    server: Server, redirecting: tuple[OutboundPolicy, Callable[[str], str]], target: str
) -> None:
    p, to = redirecting
    target = target.format(port=server.port)
    async with guarded_client(p) as client:
        request = client.build_request("GET", to(target))
        with pytest.raises(AccessDenied) as caught:
            await follow_redirects(client, request, allow_cross_origin=True)
        assert caught.value.reason == "redirect_denied"
        # httpx's own redirect following sends every hop through the transport too.
        with pytest.raises((AccessDenied, InvalidRequest)):
            await client.get(to(target), follow_redirects=True)
    assert [s["path"].startswith("/redirect") for s in server.seen] == [True, True]


async def test_same_origin_redirects_are_followed_and_capped(
    server: Server, redirecting: tuple[OutboundPolicy, Callable[[str], str]]
) -> None:
    p, to = redirecting
    async with guarded_client(p) as client:
        response = await follow_redirects(client, client.build_request("GET", to("/final")))
        assert response.text == "ok /final"
        loop = to(to(to("/final")).replace("?", "%3F").replace("=", "%3D"))
        with pytest.raises(httpx.TooManyRedirects):
            await follow_redirects(client, client.build_request("GET", loop), max_redirects=1)


async def test_cross_origin_redirects_are_refused_or_lose_their_keys(server: Server) -> None:
    p = policy(f"127.0.0.1:{server.port}", "model.test", table={"model.test": ["127.0.0.1"]})
    start = f"http://127.0.0.1:{server.port}/redirect?to=http://model.test:{server.port}/next"
    headers = {"x-api-key": "sk-test-1234", "Authorization": "Bearer sk-test-1234", "X-Ok": "1"}
    async with guarded_client(p) as client:
        with pytest.raises(AccessDenied) as caught:
            await follow_redirects(client, client.build_request("GET", start, headers=headers))
        assert caught.value.reason == "redirect_denied"
        response = await follow_redirects(
            client, client.build_request("GET", start, headers=headers), allow_cross_origin=True
        )
    assert response.text == "ok /next"
    first, *_, last = server.seen
    assert first["headers"]["x-api-key"] == "sk-test-1234"
    assert "x-api-key" not in last["headers"]
    assert "Authorization" not in last["headers"]
    assert last["headers"]["X-Ok"] == "1"


# --- TLS with pinning ------------------------------------------------------------------------


async def test_tls_verifies_the_name_while_connecting_to_the_pinned_address(
    tls_server: Server, certificates: Certificates
) -> None:
    trust = ssl.create_default_context(cafile=str(certificates.ca))
    table = {"model.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]}
    p = policy("model.test", "other.test", "127.0.0.1", table=table)
    async with guarded_client(p, verify=trust) as client:
        response = await client.get(f"https://model.test:{tls_server.port}/secure")
        assert response.text == "ok /secure"
        # Same address, a name the certificate does not cover: the handshake fails.
        with pytest.raises(httpx.ConnectError, match=r"Hostname mismatch.*'other\.test'"):
            await client.get(f"https://other.test:{tls_server.port}/")
        with pytest.raises(httpx.ConnectError, match="IP address mismatch"):
            await client.get(f"https://127.0.0.1:{tls_server.port}/")
        # Nobody may choose the TLS name apart from the URL.
        with pytest.raises(AccessDenied):
            await client.get(
                f"https://other.test:{tls_server.port}/",
                extensions={"sni_hostname": "model.test"},
            )
    assert [s["path"] for s in tls_server.seen] == ["/secure"]


async def test_an_untrusted_certificate_fails(tls_server: Server) -> None:
    p = policy("model.test", table={"model.test": ["127.0.0.1"]})
    async with guarded_client(p) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"https://model.test:{tls_server.port}/")


# --- policy and wiring -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("127.0.0.1:11434", LocalHost("127.0.0.1", 11434)),
        ("localhost:1234", LocalHost("localhost", 1234)),
        ("LocalHost.", LocalHost("localhost")),
        ("[::1]:8080", LocalHost("::1", 8080)),
        ("http://gpu-box.lan:8000/v1", LocalHost("gpu-box.lan", 8000, "http")),
    ],
)
def test_local_host_entries(entry: str, expected: LocalHost) -> None:
    assert LocalHost.parse(entry) == expected


@pytest.mark.parametrize(
    "entry", ["", " ", "host:99999", "ftp://host", "user@host", "http://", "a b", "h\n"]
)
def test_bad_local_host_entries_are_refused(entry: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        LocalHost.parse(entry)
    assert caught.value.reason == "invalid_local_host"


def test_local_matching_honours_port_and_scheme() -> None:
    p = OutboundPolicy.build(["localhost:1234", "https://gpu.lan"]).allowing_local("10.0.0.9")
    assert p.is_local("http", "LOCALHOST", 1234)
    assert not p.is_local("http", "localhost", 1235)
    assert p.is_local("https", "gpu.lan", 8443)
    assert not p.is_local("http", "gpu.lan", 80)
    assert p.is_local("http", "10.0.0.9", 80)


def test_security_layer_and_app_carry_the_local_hosts(
    terax_security: Callable[..., SecurityLayer], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    state = str(tmp_path / "state")
    security = SecurityLayer.build(str(root), state, extra_local_hosts=["127.0.0.1:11434"])
    assert security.network.is_local("http", "127.0.0.1", 11434)
    assert not terax_security(root).network.local_hosts
    assert TeraxApp.class_traits()["local_model_hosts"].metadata.get("config") is True
