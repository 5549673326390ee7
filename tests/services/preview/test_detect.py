"""Finding dev servers in terminal output, and the detector's bookkeeping (no server, no PTY)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from terax_jupyter.services.preview.detect import (
    MAX_SERVERS,
    SCAN_TAIL,
    ServerDetector,
    UrlScanner,
)

# What dev servers print (with their colours).
BANNERS = {
    "python": (
        b"Serving HTTP on 127.0.0.1 port 8000 (http://127.0.0.1:8000/) ...\r\n",
        [(8000, "http://127.0.0.1:8000/")],
    ),
    "vite": (
        b"  \x1b[32m\xe2\x9e\x9c\x1b[39m  \x1b[1mLocal\x1b[22m:   "
        b"\x1b[36mhttp://localhost:\x1b[1m5173\x1b[22m/\x1b[39m\r\n"
        b"  \x1b[32m\xe2\x9e\x9c\x1b[39m  \x1b[1mNetwork\x1b[22m: \x1b[2muse --host\x1b[22m\r\n",
        [(5173, "http://localhost:5173/")],
    ),
    "next": (b"   - Local:        http://localhost:3000\r\n", [(3000, "http://localhost:3000")]),
    "django": (
        b"Starting development server at http://127.0.0.1:8000/\r\nQuit with CONTROL-C.\r\n",
        [(8000, "http://127.0.0.1:8000/")],
    ),
    "flask": (b" * Running on http://127.0.0.1:5000\r\n", [(5000, "http://127.0.0.1:5000")]),
    "all interfaces": (b"Listening on http://0.0.0.0:3000 \r\n", [(3000, "http://0.0.0.0:3000")]),
    "ipv6": (
        b"at http://[::1]:8080/app?x=1, and http://[::]:8081.\r\n",
        [(8080, "http://[::1]:8080/app?x=1"), (8081, "http://[::]:8081")],
    ),
    "jupyter": (
        b"    http://127.0.0.1:8888/lab?token=abc\r\n",
        [(8888, "http://127.0.0.1:8888/lab?token=abc")],
    ),
    "hyperlink": (
        b"\x1b]8;;http://localhost:4000/\x1b\\http://localhost:4000/\x1b]8;;\x1b\\\r\n",
        [(4000, "http://localhost:4000/"), (4000, "http://localhost:4000/")],
    ),
    "upper case": (b"HTTP://LOCALHOST:9000/\n", [(9000, "HTTP://LOCALHOST:9000/")]),
    "https": (b"https://localhost:8443/ ready\n", [(8443, "https://localhost:8443/")]),
}

NOT_SERVERS = [
    b"https://example.com:8000/ and http://10.0.0.5:3000/\n",
    b"http://localhost.example.com:8000/ http://127.0.0.1.nip.io:80/\n",
    b"http://localhost/ (no port) ftp://localhost:21/\n",
    b"file:///tmp/x.html and git@github.com:org/repo.git\n",
    b"http://localhost:99999/ is no port\n",
    b"\x1b]7;file://host/home/me\x07prompt$ \n",
]


@pytest.mark.parametrize("name", list(BANNERS))
def test_banners(name: str) -> None:
    data, expected = BANNERS[name]
    assert UrlScanner().feed(data) == expected


@pytest.mark.parametrize("data", NOT_SERVERS)
def test_not_servers(data: bytes) -> None:
    scanner = UrlScanner()
    assert scanner.feed(data) == []
    assert not scanner.pending


def test_every_split_of_a_banner_finds_it_once() -> None:
    for name in ("python", "vite", "ipv6"):
        data, expected = BANNERS[name]
        for cut in range(1, len(data)):
            scanner = UrlScanner()
            found = scanner.feed(data[:cut]) + scanner.feed(data[cut:])
            assert found == expected, (name, cut)


def test_a_split_into_single_bytes() -> None:
    data, expected = BANNERS["vite"]
    scanner = UrlScanner()
    found = [hit for byte in data for hit in scanner.feed(bytes([byte]))]
    assert found == expected


def test_an_unended_url_waits_for_more_or_for_flush() -> None:
    scanner = UrlScanner()
    assert scanner.feed(b"open http://localhost:30") == []
    assert scanner.pending
    assert scanner.feed(b"00") == []
    assert scanner.flush() == [(3000, "http://localhost:3000")]
    assert not scanner.pending
    assert scanner.flush() == []


def test_an_escape_cut_in_the_middle_is_completed() -> None:
    scanner = UrlScanner()
    assert scanner.feed(b"\x1b[36mhttp://localhost:\x1b[1") == []
    assert scanner.feed(b"m5173\x1b[22m/\x1b[39m\n") == [(5173, "http://localhost:5173/")]


def test_a_url_too_long_is_dropped_not_buffered() -> None:
    scanner = UrlScanner()
    assert scanner.feed(b"http://localhost:5000/" + b"a" * 2000) == []
    assert not scanner.pending


def test_a_flood_is_scanned_only_at_its_end() -> None:
    scanner = UrlScanner()
    head = b"http://localhost:5001/\n"
    filler = b"x" * SCAN_TAIL
    assert scanner.feed(head + filler) == []
    assert scanner.feed(filler + b"http://localhost:5002/\n") == [(5002, "http://localhost:5002/")]


def test_many_urls_in_one_read_are_capped() -> None:
    data = b"".join(b"GET http://localhost:%d/x 200\n" % (6000 + i) for i in range(100))
    found = UrlScanner().feed(data[-SCAN_TAIL:])
    assert 0 < len(found) <= 16


def test_the_common_read_is_cheap() -> None:
    scanner = UrlScanner()
    plain = (b"y" * 1023 + b"\n") * 256
    colons = b"2024-01-01 12:00:00 INFO handled: value=42 path=/a/b\n" * 5000
    for data in (plain, colons):
        started = time.perf_counter()
        for _ in range(200):
            scanner.feed(data)
        per_read = (time.perf_counter() - started) / 200
        assert per_read < 0.0005, (len(data), per_read)  # measured: 1-10 µs


# -- the detector ---------------------------------------------------------------------------------


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.ports: dict[int, tuple[int, str]] = {}
        self.scans = 0

    def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def scan(self, pid: int) -> dict[int, tuple[int, str]]:
        self.scans += 1
        return dict(self.ports)


def detector(recorder: Recorder, **options: Any) -> ServerDetector:
    options.setdefault("settle", 0.01)
    options.setdefault("intervals", (0.02,))
    options.setdefault("flush_after", 0.05)
    return ServerDetector(recorder.emit, 4242, scan=recorder.scan, **options)


async def test_a_printed_server_is_reported_once_then_named_by_its_process() -> None:
    recorder = Recorder()
    servers = detector(recorder)
    servers.feed(b"Local: http://localhost:5173/\r\n")
    servers.feed(b"Local: http://localhost:5173/\r\n")
    assert [e["event"] for e in recorder.events] == ["detected"]
    assert recorder.events[0]["port"] == 5173
    assert recorder.events[0]["sources"] == ["output"]
    recorder.ports = {5173: (77, "node")}
    await asyncio.sleep(0.1)  # the look after a URL shows
    server = servers.servers[5173]
    assert (server.pid, server.process, server.listening) == (77, "node", True)
    assert server.url == "http://localhost:5173/"
    assert sorted(server.sources) == ["listening", "output"]
    assert len(recorder.events) == 1
    servers.close()


async def test_listening_ports_are_polled_while_a_command_runs() -> None:
    recorder = Recorder()
    servers = detector(recorder)
    servers.command_started()
    await asyncio.sleep(0.05)
    recorder.ports = {8000: (10, "python3")}
    await asyncio.sleep(0.1)
    assert [(e["event"], e["port"], e["url"]) for e in recorder.events] == [
        ("detected", 8000, "http://localhost:8000/")
    ]
    recorder.ports = {}
    await asyncio.sleep(0.1)
    assert recorder.events[-1] == {"event": "gone", "port": 8000}
    servers.command_ended()
    scans = recorder.scans
    await asyncio.sleep(0.1)
    after_end = recorder.scans
    await asyncio.sleep(0.3)  # fifteen poll intervals: quiet
    assert recorder.scans == after_end
    # One look after the end (and, on a loaded machine, the one under way as it ended).
    assert 1 <= after_end - scans <= 2
    servers.close()


async def test_on_demand_polls_share_one_look() -> None:
    recorder = Recorder()
    servers = detector(recorder)
    await asyncio.gather(servers.poll(), servers.poll(), servers.poll())
    assert recorder.scans == 1
    await servers.poll(max_age=60)
    assert recorder.scans == 1
    await servers.poll()
    assert recorder.scans == 2
    servers.close()
    await servers.poll()
    assert recorder.scans == 2


async def test_refused_and_system_ports_are_not_reported() -> None:
    recorder = Recorder()
    servers = detector(recorder, accept=lambda port: port != 8888)
    servers.feed(b"http://localhost:80/ http://localhost:8888/ http://localhost:8889/\n")
    assert [e["port"] for e in recorder.events] == [8889]
    servers.close()


async def test_a_cut_url_is_taken_after_a_quiet_spell() -> None:
    recorder = Recorder()
    servers = detector(recorder)
    servers.feed(b"ready at http://127.0.0.1:4321")
    assert recorder.events == []
    await asyncio.sleep(0.15)
    assert [e["port"] for e in recorder.events] == [4321]
    servers.close()


async def test_the_number_of_servers_is_capped() -> None:
    recorder = Recorder()
    servers = detector(recorder)
    for port in range(20000, 20000 + MAX_SERVERS + 10):
        servers.feed(b"http://localhost:%d/\n" % port)
    assert len(servers.servers) == MAX_SERVERS
    servers.close()
