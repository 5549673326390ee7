"""The preview's port policy and target parsing (no server)."""

from __future__ import annotations

from typing import Any

import pytest

from terax_jupyter.exceptions import AccessDenied, InvalidRequest
from terax_jupyter.services.preview.manager import PreviewManager


class NoSessions:
    sessions: dict[str, Any] = {}


def manager(**traits: Any) -> PreviewManager:
    return PreviewManager(
        NoSessions(),  # type: ignore[arg-type]
        base_url="/user/alice/",
        own_ports=lambda: {8888},
        **traits,
    )


@pytest.mark.parametrize(
    ("spec", "addresses", "host"),
    [
        ("5173", ("127.0.0.1", "::1"), "localhost:5173"),
        ("localhost:5173", ("127.0.0.1", "::1"), "localhost:5173"),
        ("LocalHost:1024", ("127.0.0.1", "::1"), "localhost:1024"),
        ("127.0.0.1:65535", ("127.0.0.1",), "127.0.0.1:65535"),
        ("127.1.2.3:8000", ("127.1.2.3",), "127.1.2.3:8000"),
        ("[::1]:8000", ("::1",), "[::1]:8000"),
    ],
)
def test_targets(spec: str, addresses: tuple[str, ...], host: str) -> None:
    target = manager().target(spec)
    assert (target.addresses, target.host, target.segment) == (addresses, host, spec)
    assert target.port == int(spec.rsplit(":", 1)[-1])


@pytest.mark.parametrize(
    ("spec", "error", "reason"),
    [
        ("", InvalidRequest, "invalid_port"),
        ("0", InvalidRequest, "invalid_port"),
        ("65536", InvalidRequest, "invalid_port"),
        ("123456", InvalidRequest, "invalid_port"),
        ("٣٠٠٠", InvalidRequest, "invalid_port"),  # digits, but not ASCII
        ("+8000", InvalidRequest, "invalid_port"),
        (" 8000", InvalidRequest, "invalid_port"),
        ("8000 ", InvalidRequest, "invalid_port"),
        ("localhost:", InvalidRequest, "invalid_port"),
        ("1023", AccessDenied, "privileged_port"),
        ("22", AccessDenied, "privileged_port"),
        ("8888", AccessDenied, "own_port"),
        ("localhost:8888", AccessDenied, "own_port"),
        ("example.com:8000", AccessDenied, "not_loopback"),
        ("localhost.:8000", AccessDenied, "not_loopback"),
        ("127.0.0.01:8000", AccessDenied, "not_loopback"),
        ("127.1:8000", AccessDenied, "not_loopback"),
        ("0x7f000001:8000", AccessDenied, "not_loopback"),
        ("::1:8000", AccessDenied, "not_loopback"),
        ("[::ffff:127.0.0.1]:8000", AccessDenied, "not_loopback"),
        ("10.1.2.3:8000", AccessDenied, "not_loopback"),
        ("169.254.169.254:8000", AccessDenied, "not_loopback"),
        ("x" * 500 + ":8000", AccessDenied, "not_loopback"),
    ],
)
def test_refusals(spec: str, error: type[Exception], reason: str) -> None:
    with pytest.raises(error) as caught:
        manager().target(spec)
    assert caught.value.reason == reason  # type: ignore[attr-defined]
    assert len(caught.value.message) < 300  # type: ignore[attr-defined]


def test_the_port_a_request_came_in_on_is_refused_too() -> None:
    with pytest.raises(AccessDenied):
        manager().target("9999", also_own={9999})
    assert manager().target("9999").port == 9999


def test_denied_ports_and_offers() -> None:
    preview = manager(denied_ports=[6000])
    with pytest.raises(AccessDenied) as caught:
        preview.target("6000")
    assert caught.value.reason == "port_denied"
    assert [
        port for port in (80, 1023, 1024, 6000, 8888, 65535, 65536) if preview.offers(port)
    ] == [
        1024,
        65535,
    ]


def test_proxy_paths_carry_the_base_url() -> None:
    assert manager().proxy_path(5173) == "/user/alice/terax/proxy/5173/"
    root = PreviewManager(NoSessions(), base_url="/")  # type: ignore[arg-type]
    assert root.proxy_path(5173) == "/terax/proxy/5173/"
