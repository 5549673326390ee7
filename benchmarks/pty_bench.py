"""Benchmark: Terax's terminal stream against jupyter_server_terminals (terminado) and a plain PTY.

Run from the repository root::

    python benchmarks/pty_bench.py [--quick] [--runs 5] [--only throughput,echo,interrupt,paused]

One ``jupyter server`` subprocess runs with both extensions (token auth, 127.0.0.1, its own
config, data, runtime and home folders; both start ``/bin/bash`` with the prompt ``PROMPT> ``).
The WebSocket clients are tornado's, in this process: Terax's stream as the Lab view opens it
(``?acks=1``, each frame acknowledged once read), the same without acks (paced by the
transport alone), and terminado's JSON messages. Measured side by side in one run:

1. throughput: a base64 flood and a 100 MB mixed text file (code, prose, ANSI colours, long
   lines, unicode) printed with ``cat``; MB/s at the client against a plain PTY read loop in
   this process (the same command, no server) and against a bare forwarder (a process that
   only reads the PTY and writes to a loopback socket read here), and the server's CPU per MB;
2. keystroke echo latency (one key at a time to ``cat``, waiting for each echo);
3. Ctrl-C during an endless flood, with a client that reads at about 5 MB/s: time until the
   prompt shows, and the bytes that arrive after the Ctrl-C;
4. a program that writes as fast as it can while its client stops reading for 5 s: the
   program's own progress and the server's memory during the pause, then the stream resuming.

The mixed file is generated once under ``benchmarks/.data/`` (ignored by git) and reused.
``--quick`` uses smaller outputs and fewer keys, for a check that everything works.
"""

from __future__ import annotations

import abc
import argparse
import asyncio
import fcntl
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from bench_machine import describe
from ptyprocess import PtyProcess
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.jupyter_process import JupyterProcess  # noqa: E402

DATA = Path(__file__).resolve().parent / ".data"
SEED = 1129
GENERATOR_VERSION = 1
MB = 1_000_000
BASH = "/bin/bash"
PROMPT = b"PROMPT> "
DONE = b"__DONE__"
# Typed as two quoted halves, so that the shell's echo of the command line never matches DONE.
ECHO_DONE = 'echo __DO""NE__'
BASHRC = """\
PS1='PROMPT> '
PS2='> '
unset PROMPT_COMMAND
HISTFILE=/dev/null
"""
# Writes as fast as it can; a thread records the bytes written so far every 100 ms, so a
# producer blocked in write() shows as a flat line rather than as missing samples.
PRODUCER = """\
import os, sys, threading, time
written = 0
def record():
    with open(sys.argv[1], "a") as progress:
        while True:
            progress.write(f"{time.monotonic():.3f} {written}\\n")
            progress.flush()
            time.sleep(0.1)
threading.Thread(target=record, daemon=True).start()
line = b"producer output: the quick brown fox jumps over the lazy dog 0123456789\\n"
chunk = line * (65536 // len(line))
while True:
    written += os.write(1, chunk)
"""
COLUMNS, ROWS = 120, 40
RECENT = 400  # bytes of recent output a client keeps for error messages


# -- the mixed text file -----------------------------------------------------------------------

_WORD_TEXT = (
    "account agent alert archive asset buffer build cache channel check client cluster command "
    "config context cursor data debug device document driver editor engine error event export "
    "feature field filter format frame graph handler header history index input kernel layout "
    "limit loader manager message metric module monitor notebook output package parser patch "
    "pipeline plugin policy query queue reader record region render report request resource "
    "result router runner schema search server service session signal snapshot socket source "
    "stream table task template terminal thread token trace transport tree user value version "
    "view widget worker"
)
_WORDS = tuple(_WORD_TEXT.split())
_UNICODE = (
    "café",
    "naïve",
    "façade",
    "Größe",
    "żółć",
    "日本語",
    "中文字符",
    "한국어",
    "Ελληνικά",
    "русский",
    "עברית",
    "العربية",
    "emoji 🚀",
    "✓ done",
    "→ next",
    "λ-calculus",
    "∑ total",
    "🙂",
    "box ─│┌┐└┘",
)


def _line_bank(rng: random.Random) -> list[str]:
    """A few thousand lines of what terminals print: code, prose, logs, colours, long lines."""

    def word() -> str:
        return rng.choice(_WORDS)

    def ident() -> str:
        return "_".join(rng.sample(_WORDS, rng.choice((1, 2, 3))))

    def prose(low: int = 5, high: int = 16) -> str:
        words = [rng.choice(_UNICODE) if rng.random() < 0.15 else word() for _ in range(high)]
        return " ".join(words[: rng.randint(low, high)])

    def sgr() -> str:
        return rng.choice(
            (
                f"\x1b[{rng.choice((31, 32, 33, 34, 35, 36))}m",
                f"\x1b[1;{rng.choice((31, 32, 33))}m",
                f"\x1b[38;5;{rng.randint(16, 231)}m",
                f"\x1b[38;2;{rng.randint(0, 255)};{rng.randint(0, 255)};{rng.randint(0, 255)}m",
                "\x1b[2m",
                "\x1b[4m",
            )
        )

    makers = [
        # code
        lambda: f"def {ident()}(self, {ident()}: {word().title()}) -> {word().title()} | None:",
        lambda: f"    {ident()} = self.{ident()}.get({ident()!r}, {rng.randint(0, 999)})",
        lambda: f"        return {word().title()}({ident()}={ident()}, {ident()}=True)",
        lambda: f"  const {ident()} = await {ident()}.{ident()}({ident()}); // {prose(2, 6)}",
        lambda: f"\tif err := s.{word()}.{word().title()}(ctx); err != nil {{ return err }}",
        lambda: f"static int {ident()}(struct {word()} *{word()}, size_t n) {{",
        lambda: "",
        lambda: "}",
        # prose
        lambda: prose().capitalize() + ".",
        lambda: f"## {prose(2, 6).title()}",
        lambda: f"- {prose()} ({rng.choice(_UNICODE)})",
        # logs and coloured output
        lambda: (
            f"\x1b[2m2026-11-29T10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z\x1b[0m "
            f"{sgr()}{rng.choice(('INFO', 'WARN', 'ERROR', 'DEBUG'))}\x1b[0m "
            f"{ident()}: {prose(3, 10)}"
        ),
        lambda: f"\x1b[32m✓\x1b[0m test_{ident()} \x1b[2m({rng.randint(1, 900)} ms)\x1b[0m",
        lambda: f"\x1b[1;31merror\x1b[0m\x1b[1m[E0{rng.randint(100, 999)}]\x1b[0m: {prose(3, 8)}",
        lambda: f"{sgr()}{ident()}\x1b[0m  {sgr()}{ident()}\x1b[0m  {sgr()}{ident()}/\x1b[0m",
        lambda: (
            f"\x1b[2K\r{word():>10} [{'#' * (n := rng.randint(0, 40))}{' ' * (40 - n)}] "
            f"{n * 5 // 2:3d}%"
        ),
        lambda: f"diff --git a/{ident()}.py b/{ident()}.py\n\x1b[31m-{prose(3, 8)}\x1b[0m",
        lambda: f"\x1b[32m+    {ident()} = {ident()}({ident()})\x1b[0m",
    ]
    bank = [rng.choice(makers)() for _ in range(20_000)]
    # Long lines: minified code, a long log line, a line of unicode.
    for _ in range(300):
        parts = [f"{ident()}:function({word()}){{return {word()}+{rng.randint(0, 99)}}}"]
        bank.append(",".join(parts * rng.randint(20, 120)))
        bank.append(" ".join(prose() for _ in range(rng.randint(10, 60))))
        bank.append("".join(rng.choice(_UNICODE) for _ in range(rng.randint(100, 600))))
    return bank


def mixed_file(size: int) -> Path:
    """A text file of ``size`` bytes (UTF-8, whole lines), generated once and reused."""
    path = DATA / f"pty-mixed-{size // MB}mb-v{GENERATOR_VERSION}.txt"
    if path.exists() and path.stat().st_size == size:
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    print(f"Generating {path} ...", flush=True)
    rng = random.Random(SEED)
    bank = [line.encode() + b"\n" for line in _line_bank(rng)]
    written = 0
    partial = path.with_suffix(".partial")
    with open(partial, "wb") as handle:
        while written < size:
            block = b"".join(rng.choices(bank, k=20_000))
            if written + len(block) >= size:
                cut = block.rfind(b"\n", 0, size - written - 1) + 1
                # Pad the last line with ASCII to the exact size.
                block = block[:cut] + b"x" * (size - written - cut - 1) + b"\n"
            handle.write(block)
            written += len(block)
    partial.rename(path)
    return path


# -- the server --------------------------------------------------------------------------------


class Server:
    """``jupyter server`` with Terax and jupyter_server_terminals, in a subprocess."""

    def __init__(self, state: Path, extra: list[str] | None = None) -> None:
        self.jupyter = JupyterProcess()
        self.token = self.jupyter.token
        home, root = state / "home", state / "root"
        for folder in (home, root):
            folder.mkdir()
        rcfile = home / ".bashrc"
        rcfile.write_text(BASHRC)
        self.jupyter.start(
            root,
            state,
            [
                f"--PtyManager.shell_command={BASH}",
                "--PtyManager.login_shell=never",
                f"--ServerApp.terminado_settings={{'shell_command': ['{BASH}', '--rcfile', "
                f"'{rcfile}']}}",
                *(extra or []),
            ],
            env={"HOME": str(home), "SHELL": BASH},
            extensions=("terax_jupyter", "jupyter_server_terminals"),
        )
        self.port = self.jupyter.port
        self.psutil = psutil.Process(self.jupyter.pid)
        self.jupyter.wait_ready()
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        payload = json.dumps(body) if body is not None else None
        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        self.connection.request(method, path, body=payload, headers=headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    async def websocket(self, path: str) -> WebSocketClientConnection:
        request = HTTPRequest(
            f"ws://127.0.0.1:{self.port}{path}",
            headers={"Authorization": f"token {self.token}"},
        )
        connection = await websocket_connect(request, max_message_size=256 * MB)
        # As browsers do: small messages (keys, acks) must not wait for Nagle's algorithm.
        connection.protocol.stream.set_nodelay(True)  # type: ignore[union-attr]
        return connection

    def cpu(self) -> float:
        """CPU seconds (user + system) the server process has used."""
        return self.jupyter.cpu_seconds()

    def rss(self) -> int:
        return self.psutil.memory_info().rss

    def stop(self) -> None:
        self.connection.close()
        self.jupyter.stop(15)


# -- clients -----------------------------------------------------------------------------------


class Client(abc.ABC):
    """One terminal over its WebSocket: send keystrokes, read output bytes."""

    name = ""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connection: WebSocketClientConnection | None = None
        self._leftover = b""
        self.recent = b""  # the last output received, for a message when a wait times out

    @abc.abstractmethod
    async def open(self) -> None: ...

    @abc.abstractmethod
    async def send(self, data: bytes) -> None: ...

    async def read(self) -> bytes | None:
        """The next output (control messages skipped); None once the socket closed."""
        if self._leftover:
            data, self._leftover = self._leftover, b""
            return data
        data = await self._receive()
        if data:
            self.recent = (self.recent + data[-RECENT:])[-RECENT:]
        return data

    @abc.abstractmethod
    async def _receive(self) -> bytes | None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    async def read_until(
        self, marker: bytes, *, rate: float | None = None, timeout: float = 120
    ) -> int:
        """Read until ``marker`` shows; the bytes read up to its end (what follows it is kept
        for the next read). ``rate``: read at most that many bytes per second."""
        return await asyncio.wait_for(self._read_until(marker, rate), timeout)

    async def _read_until(self, marker: bytes, rate: float | None) -> int:
        keep = len(marker) - 1
        tail = b""
        total = 0
        started = time.perf_counter()
        while True:
            data = await self.read()
            if data is None:
                raise ConnectionError(f"{self.name}: the socket closed")
            end = -1
            if tail:
                found = (tail + data[:keep]).find(marker)
                if found != -1:
                    end = found + len(marker) - len(tail)
            if end == -1:
                found = data.find(marker)
                if found != -1:
                    end = found + len(marker)
            if end != -1:
                self._leftover = data[end:]
                return total + end
            total += len(data)
            tail = data[-keep:] if len(data) >= keep else (tail + data)[-keep:]
            if rate:
                await _pace(started, total, rate)

    def buffered(self) -> int:
        """Bytes that reached this side but were not read yet: the socket's receive queue,
        tornado's read buffer and message queue (frame headers and JSON included)."""
        assert self.connection is not None
        stream = self.connection.protocol.stream  # type: ignore[union-attr]
        queued = struct.unpack(
            "i", fcntl.ioctl(stream.socket.fileno(), termios.FIONREAD, b"\0\0\0\0")
        )[0]
        queued += getattr(stream, "_read_buffer_size", 0) + len(self._leftover)
        messages = getattr(self.connection.read_queue, "_queue", ())
        return queued + sum(len(message) for message in messages if message)

    async def drain(self, quiet: float = 0.3) -> int:
        """Read until nothing has come for ``quiet`` seconds; the bytes read."""
        total = 0
        while True:
            try:
                data = await asyncio.wait_for(self.read(), quiet)
            except asyncio.TimeoutError:
                return total
            if data is None:
                return total
            total += len(data)


async def _pace(started: float, total: int, rate: float) -> None:
    ahead = started + total / rate - time.perf_counter()
    if ahead > 0:
        await asyncio.sleep(ahead)


class TeraxClient(Client):
    """Terax's stream as the Lab view uses it: with ``?acks=1``, each output frame is
    acknowledged once the client is done with it (when it asks for the next one)."""

    name = "Terax"
    acks = True

    async def open(self) -> None:
        self._unacknowledged = 0
        status, body = self.server.request(
            "POST", "/terax/api/pty/sessions", {"columns": COLUMNS, "rows": ROWS}
        )
        assert status == 201, body
        self.session = json.loads(body)["id"]
        acks = "&acks=1" if self.acks else ""
        self.connection = await self.server.websocket(
            f"/terax/api/pty/{self.session}/stream?columns={COLUMNS}&rows={ROWS}{acks}"
        )

    async def send(self, data: bytes) -> None:
        assert self.connection is not None
        await self.connection.write_message(data, binary=True)

    async def _receive(self) -> bytes | None:
        assert self.connection is not None
        if self._unacknowledged:
            ack = {"type": "ack", "bytes": self._unacknowledged}
            self.connection.write_message(json.dumps(ack))
            self._unacknowledged = 0
        while True:
            message = await self.connection.read_message()
            if message is None or isinstance(message, bytes):
                if message and self.acks:
                    self._unacknowledged = len(message)
                return message

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.server.request("DELETE", f"/terax/api/pty/sessions/{self.session}")


class TeraxNoAcksClient(TeraxClient):
    """Terax's stream read by a client that sends no acks: paced by the transport alone."""

    name = "Terax, no acks"
    acks = False


class TerminadoClient(Client):
    name = "terminado"

    async def open(self) -> None:
        status, body = self.server.request("POST", "/api/terminals")
        assert status == 200, body
        self.terminal = json.loads(body)["name"]
        self.connection = await self.server.websocket(f"/terminals/websocket/{self.terminal}")
        await self.connection.write_message(json.dumps(["set_size", ROWS, COLUMNS]))

    async def send(self, data: bytes) -> None:
        assert self.connection is not None
        await self.connection.write_message(json.dumps(["stdin", data.decode()]))

    async def _receive(self) -> bytes | None:
        assert self.connection is not None
        while True:
            message = await self.connection.read_message()
            if message is None:
                return None
            kind, *rest = json.loads(message)
            if kind == "stdout":
                return rest[0].encode()
            if kind == "disconnect":
                return None

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.server.request("DELETE", f"/api/terminals/{self.terminal}")


SERVER_PATHS: tuple[type[Client], ...] = (TeraxClient, TeraxNoAcksClient, TerminadoClient)


async def open_client(kind: type[Client], server: Server) -> Client:
    client = kind(server)
    await client.open()
    await client.read_until(PROMPT, timeout=30)
    await client.drain()
    return client


# -- the report --------------------------------------------------------------------------------


@dataclass
class Section:
    title: str
    header: list[str]
    load: str = ""
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Report:
    sections: list[Section] = field(default_factory=list)
    goals: list[tuple[str, bool, str]] = field(default_factory=list)

    def section(self, title: str, header: list[str]) -> Section:
        load = os.getloadavg()
        section = Section(title, header, f"load average {load[0]:.2f} at start")
        self.sections.append(section)
        print(f"\n{title} [{section.load}]", flush=True)
        return section

    def row(self, section: Section, *cells: str) -> None:
        section.rows.append(list(cells))
        print("  " + " | ".join(cells), flush=True)

    def goal(self, text: str, met: bool, detail: str) -> None:
        self.goals.append((text, met, detail))

    def markdown(self) -> str:
        lines: list[str] = []
        for section in self.sections:
            lines += ["", f"### {section.title}", "", f"({section.load})", ""]
            lines.append("| " + " | ".join(section.header) + " |")
            lines.append("|---|" + "---:|" * (len(section.header) - 1))
            lines += ["| " + " | ".join(row) + " |" for row in section.rows]
            if section.notes:
                lines += ["", *section.notes]
        if self.goals:
            lines += ["", "### Goals", "", "| Goal | Met | Measured |", "|---|---|---|"]
            for text, met, detail in self.goals:
                lines.append(f"| {text} | {'yes' if met else 'no'} | {detail} |")
        return "\n".join(lines)


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else ""


FORWARDER_PATH = "bare forwarder"

# -- 1. throughput -----------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    size: int
    cpu: float  # server CPU seconds (the plain loop: this process's)
    client_cpu: float = 0.0  # this process's CPU seconds: the WebSocket client

    @property
    def rate(self) -> float:
        return self.size / self.seconds / MB

    @property
    def cpu_per_mb(self) -> float:
        return self.cpu / (self.size / MB)

    @property
    def client_cpu_per_mb(self) -> float:
        return self.client_cpu / (self.size / MB)


def plain_pty(command: str, env: dict[str, str]) -> Run:
    """The same command on a PTY, read by an ``os.read`` loop in this process."""
    cpu = time.process_time()
    started = time.perf_counter()
    process = PtyProcess.spawn([BASH, "-c", command], env=env, dimensions=(ROWS, COLUMNS))
    size = 0
    while True:
        try:
            data = os.read(process.fd, 65536)
        except OSError:
            break
        if not data:
            break
        size += len(data)
    elapsed = time.perf_counter() - started
    process.close(force=True)
    return Run(elapsed, size, time.process_time() - cpu)


# The thinnest forwarder there is: a process that reads the PTY with blocking reads and writes
# each read to a loopback socket, nothing else. Like the servers, it hands the bytes to another
# process (this one), so it shows what that hand-over alone costs on this machine.
FORWARDER = """\
import os, resource, socket, sys
from ptyprocess import PtyProcess
port, command, columns, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sock = socket.create_connection(("127.0.0.1", int(port)))
process = PtyProcess.spawn(["/bin/bash", "-c", command], dimensions=(rows, columns))
while True:
    try:
        data = os.read(process.fd, 65536)
    except OSError:
        break
    if not data:
        break
    sock.sendall(data)
sock.close()
process.close(force=True)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime)
"""


def bare_forwarder(command: str, env: dict[str, str]) -> Run:
    """The command on a PTY in a forwarder process, its output received here from a socket."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        started = time.perf_counter()
        forwarder = subprocess.Popen(
            [sys.executable, "-c", FORWARDER, str(port), command, str(COLUMNS), str(ROWS)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        connection, _ = listener.accept()
    cpu = time.process_time()
    size = 0
    with connection:
        while data := connection.recv(1 << 20):
            size += len(data)
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    out, _ = forwarder.communicate(timeout=60)
    return Run(elapsed, size, float(out.strip() or 0), client_cpu)


async def through_server(client: Client, command: str) -> Run:
    server = client.server
    cpu, own = server.cpu(), time.process_time()
    started = time.perf_counter()
    await client.send(f"{command}; {ECHO_DONE}\r".encode())
    size = await client.read_until(DONE, timeout=600)
    elapsed = time.perf_counter() - started
    run = Run(elapsed, size, server.cpu() - cpu, time.process_time() - own)
    await client.read_until(PROMPT)
    await client.drain(0.2)
    return run


async def bench_throughput(
    report: Report, server: Server, workloads: list[tuple[str, str]], runs: int, env: dict[str, str]
) -> dict[str, dict[str, Run]]:
    section = report.section(
        "Throughput (median of runs)",
        [
            "Workload",
            "Path",
            "MB/s",
            "vs. plain PTY",
            "vs. terminado",
            "server CPU per MB",
            "CPU vs. terminado",
            "client CPU per MB",
            "MB",
        ],
    )
    clients = [await open_client(kind, server) for kind in SERVER_PATHS]
    samples: dict[str, dict[str, list[Run]]] = {
        name: {"plain": [], FORWARDER_PATH: [], **{client.name: [] for client in clients}}
        for name, _ in workloads
    }
    try:
        for number in range(runs):
            for name, command in workloads:
                # Round-robin: a busy moment on the machine slows every path alike.
                samples[name]["plain"].append(plain_pty(command, env))
                samples[name][FORWARDER_PATH].append(bare_forwarder(command, env))
                for client in clients:
                    samples[name][client.name].append(await through_server(client, command))
                line = ", ".join(
                    f"{path} {runs_[-1].rate:.1f} MB/s" for path, runs_ in samples[name].items()
                )
                print(f"  run {number + 1} {name}: {line}", flush=True)
    finally:
        for client in clients:
            client.close()
    medians: dict[str, dict[str, Run]] = {}
    for name, _ in workloads:
        medians[name] = {}
        for path, values in samples[name].items():
            medians[name][path] = Run(
                statistics.median(r.seconds for r in values),
                int(statistics.median(r.size for r in values)),
                statistics.median(r.cpu for r in values),
                statistics.median(r.client_cpu for r in values),
            )
        plain, terax, terminado = (medians[name][p] for p in ("plain", "Terax", "terminado"))
        forwarder = medians[name][FORWARDER_PATH]
        for path, run in medians[name].items():
            label = "plain PTY read loop (no server)" if path == "plain" else path
            cpu_note = {"plain": "this process", FORWARDER_PATH: "forwarder"}.get(path, "server")
            report.row(
                section,
                name,
                label,
                f"{run.rate:.1f}",
                "1.00x" if path == "plain" else ratio(run.rate, plain.rate),
                "" if path == "plain" else ratio(run.rate, terminado.rate),
                f"{run.cpu_per_mb * 1000:.1f} ms ({cpu_note})",
                "" if path == "plain" else ratio(run.cpu_per_mb, terminado.cpu_per_mb),
                "" if path == "plain" else f"{run.client_cpu_per_mb * 1000:.1f} ms",
                f"{run.size / MB:.1f}",
            )
        report.goal(
            f"{name}: Terax >= 0.9x the plain PTY read rate",
            terax.rate >= 0.9 * plain.rate,
            f"{terax.rate / plain.rate:.2f}x ({terax.rate:.1f} / {plain.rate:.1f} MB/s; "
            f"the bare forwarder {forwarder.rate / plain.rate:.2f}x)",
        )
        report.goal(
            f"{name}: Terax >= 2.5x terminado",
            terax.rate >= 2.5 * terminado.rate,
            f"{terax.rate / terminado.rate:.2f}x",
        )
        report.goal(
            f"{name}: Terax server CPU per MB <= 1/3 of terminado's",
            terax.cpu_per_mb <= terminado.cpu_per_mb / 3,
            f"{terax.cpu_per_mb / terminado.cpu_per_mb:.2f}x "
            f"({terax.cpu_per_mb * 1000:.1f} / {terminado.cpu_per_mb * 1000:.1f} ms per MB; "
            f"the plain loop alone {plain.cpu_per_mb * 1000:.1f})",
        )
    section.notes.append(
        f"MB = 10^6 bytes as the client received them; {runs} run(s) per path, round-robin. "
        "Time from sending the command line to the end marker printed after it. The "
        f"{FORWARDER_PATH} reads the PTY with blocking reads and writes each read to a loopback "
        "socket that this process reads with a plain recv loop: the least a server can do to "
        "hand the bytes to another process."
    )
    return medians


# -- 2. echo -----------------------------------------------------------------------------------


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


async def bench_echo(report: Report, server: Server, keys: int) -> None:
    section = report.section(
        "Keystroke echo (one key at a time to `cat`)",
        ["Path", "p50 ms", "p90 ms", "p99 ms", "max ms", "server CPU ms per key", "keys"],
    )
    clients = [await open_client(TeraxClient, server), await open_client(TerminadoClient, server)]
    latencies: dict[str, list[float]] = {c.name: [] for c in clients}
    cpu: dict[str, float] = {c.name: 0.0 for c in clients}
    rng = random.Random(SEED)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    try:
        for client in clients:
            await client.send(b"cat >/dev/null\r")
            try:
                await client.read_until(b"/dev/null\r\n", timeout=30)
            except asyncio.TimeoutError:
                raise RuntimeError(
                    f"{client.name}: the command line was not echoed in 30 s; the last "
                    f"output was {client.recent!r}"
                ) from None
            await asyncio.sleep(0.3)
            await client.drain(0.3)
        block = 20
        for start in range(0, keys, block):
            # Blocks of keys, alternating, so that both see the same moments of the machine.
            for client in clients:
                before = server.cpu()
                for index in range(start, min(keys, start + block)):
                    key = letters[index % len(letters) : index % len(letters) + 1]
                    await asyncio.sleep(rng.uniform(0.01, 0.03))
                    started = time.perf_counter()
                    await client.send(key)
                    data = await asyncio.wait_for(client.read(), 10)
                    latencies[client.name].append((time.perf_counter() - started) * 1000)
                    assert data is not None, f"{client.name}: the socket closed"
                    assert key in data, (client.name, key, data)
                cpu[client.name] += server.cpu() - before
        for client in clients:
            await client.send(b"\x03")
            await client.read_until(PROMPT)
    finally:
        for client in clients:
            client.close()
    for name, values in latencies.items():
        report.row(
            section,
            name,
            f"{percentile(values, 0.5):.2f}",
            f"{percentile(values, 0.9):.2f}",
            f"{percentile(values, 0.99):.2f}",
            f"{max(values):.2f}",
            f"{cpu[name] / len(values) * 1000:.2f}",
            str(len(values)),
        )
    terax, terminado = (percentile(latencies[n], 0.99) for n in ("Terax", "terminado"))
    report.goal(
        "Echo p99: Terax no worse than terminado",
        terax <= terminado * 1.05,
        f"{terax:.2f} ms / {terminado:.2f} ms",
    )
    section.notes.append(
        "Keys 10-30 ms apart; the echo comes from the PTY's line discipline. "
        "Server CPU includes the idle gaps between keys."
    )


# -- 3. Ctrl-C under a slow client -------------------------------------------------------------


async def bench_interrupt(report: Report, server: Server, rate: float, runs: int) -> None:
    section = report.section(
        f"Ctrl-C during `base64 /dev/urandom`, client reading at {rate / MB:.0f} MB/s",
        [
            "Path",
            "Ctrl-C to prompt s",
            "MB after Ctrl-C",
            "of which already on the client's side",
            "the rest (server's side)",
            "runs",
        ],
    )
    results: dict[str, list[tuple[float, int, int]]] = {}
    for _ in range(runs):
        for kind in SERVER_PATHS:
            client = await open_client(kind, server)
            try:
                results.setdefault(client.name, []).append(await interrupt_once(client, rate))
            finally:
                client.close()
            await asyncio.sleep(0.5)
    for name, values in results.items():
        seconds = statistics.median(v[0] for v in values)
        after = statistics.median(v[1] for v in values)
        on_client = statistics.median(v[2] for v in values)
        server_side = statistics.median(v[1] - v[2] for v in values)
        report.row(
            section,
            name,
            f"{seconds:.3f}",
            f"{after / MB:.2f}",
            f"{on_client / MB:.2f}",
            f"{server_side / MB:.2f}",
            str(len(values)),
        )
    medians = {
        name: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for name, values in results.items()
    }
    others = "; ".join(
        f"{name} {seconds:.2f} s, {after / MB:.2f} MB"
        for name, (seconds, after) in medians.items()
        if name != "Terax"
    )
    seconds, after = medians["Terax"]
    report.goal(
        "Ctrl-C to prompt under 0.5 s (client at 5 MB/s)", seconds < 0.5, f"{seconds:.3f} s"
    )
    report.goal("Under 1 MB after Ctrl-C", after < MB, f"{after / MB:.2f} MB ({others})")
    held = [v[2] for values in results.values() for v in values]
    low, high = min(held), max(held)
    section.notes.append(
        "The flood runs for 2 s before Ctrl-C (sent as a keystroke, as a terminal sends it); "
        "the client paces its reads to the rate above throughout. Medians of the runs. "
        "The client's side is what its kernel had queued (its receive buffer grows by "
        "autotuning) and what tornado had read ahead at the moment of the Ctrl-C: "
        f"{low / MB:.2f}-{high / MB:.2f} MB in these runs; the server cannot take it back."
    )


async def interrupt_once(client: Client, rate: float, flood: float = 2.0) -> tuple[float, int, int]:
    """Seconds from Ctrl-C to the prompt, bytes read meanwhile, and of those the bytes that
    were already on the client's side (its socket's receive queue, its library's buffers)."""
    await client.send(b"base64 /dev/urandom\r")
    started = time.perf_counter()
    total = 0
    while time.perf_counter() - started < flood:
        data = await client.read()
        assert data is not None
        total += len(data)
        await _pace(started, total, rate)
    on_client = client.buffered()
    interrupted = time.perf_counter()
    await client.send(b"\x03")
    # Keep the same pace: the client still reads at ``rate`` from where it is.
    after = await client.read_until(PROMPT, rate=rate, timeout=300)
    return time.perf_counter() - interrupted, after, on_client


# -- 4. a paused client ------------------------------------------------------------------------


def progress_at(path: Path, moment: float) -> int:
    """Bytes the producer had written by ``moment`` (its last record at or before it)."""
    written = 0
    try:
        lines = path.read_text().split("\n")[:-1]  # the last line may be half written
    except FileNotFoundError:
        return 0
    for line in lines:
        stamp, _, count = line.partition(" ")
        if float(stamp) > moment:
            break
        written = int(count)
    return written


async def bench_paused(report: Report, server: Server, state: Path, pause: float) -> None:
    section = report.section(
        f"A client that stops reading for {pause:.0f} s while a program writes flat out",
        [
            "Path",
            "producer MB/s before",
            "producer MB, pause 0-1 s",
            "producer MB, pause 1-5 s",
            "server RSS growth MB",
            "server RSS peak growth MB",
            "MB/s after resuming",
            "producer MB after resuming",
        ],
    )
    producer = state / "producer.py"
    producer.write_text(PRODUCER)
    results: dict[str, dict[str, float]] = {}
    for number, kind in enumerate(SERVER_PATHS):
        client = await open_client(kind, server)
        progress = state / f"progress-{number}.txt"
        progress.unlink(missing_ok=True)
        try:
            await client.send(f"{sys.executable} {producer} {progress}\r".encode())
            # Read freely for two seconds (the second one measures the producer's pace).
            started = time.monotonic()
            while time.monotonic() - started < 2.0:
                assert await client.read() is not None
            # Stop reading.
            rss_before = server.rss()
            peak = rss_before
            paused = time.monotonic()
            while time.monotonic() - paused < pause:
                await asyncio.sleep(0.1)
                peak = max(peak, server.rss())
            rss_after = server.rss()
            # Read again for 2 s.
            resumed = time.monotonic()
            received = 0
            while time.monotonic() - resumed < 2.0:
                data = await client.read()
                assert data is not None, "the stream did not resume"
                received += len(data)
            ended = time.monotonic()
            await asyncio.sleep(0.25)  # the producer's records up to now
            moments = (started + 1, paused, paused + 1, resumed, ended)
            at = [progress_at(progress, moment) for moment in moments]
            results[client.name] = {
                "before": (at[1] - at[0]) / (paused - started - 1) / MB,
                "first": (at[2] - at[1]) / MB,
                "during": (at[3] - at[2]) / MB,
                "rss": (rss_after - rss_before) / MB,
                "peak": (peak - rss_before) / MB,
                "resumed": received / (ended - resumed) / MB,
                "progress_after": (at[4] - at[3]) / MB,
            }
            await client.send(b"\x03")
        finally:
            client.close()
        await asyncio.sleep(1.0)
        values = results[client.name]
        report.row(
            section,
            client.name,
            f"{values['before']:.1f}",
            f"{values['first']:.2f}",
            f"{values['during']:.2f}",
            f"{values['rss']:.1f}",
            f"{values['peak']:.1f}",
            f"{values['resumed']:.1f}",
            f"{values['progress_after']:.1f}",
        )
    terax, terminado = results["Terax"], results["terminado"]
    report.goal(
        "A paused client stalls the producer",
        terax["during"] < 0.1,
        f"{terax['first']:.2f} MB written in the pause's first second (buffers filling), "
        f"{terax['during']:.2f} MB in the other {pause - 1:.0f} s (terminado "
        f"{terminado['first'] + terminado['during']:.0f} MB in all)",
    )
    report.goal(
        "Server memory bounded while paused",
        terax["peak"] < 16,
        f"+{terax['peak']:.1f} MB RSS (terminado +{terminado['peak']:.0f} MB)",
    )
    report.goal(
        "The stream continues after the pause",
        terax["resumed"] > 1 and terax["progress_after"] > 1,
        f"{terax['resumed']:.1f} MB/s received in the 2 s after",
    )
    section.notes.append(
        "The producer records the bytes it has written every 100 ms from a thread, so a write "
        "that blocks shows as no progress. RSS of the server process (psutil)."
    )


# -- main --------------------------------------------------------------------------------------


def machine() -> str:
    import jupyter_server_terminals
    import terminado
    import tornado

    return describe(
        f"tornado {tornado.version}",
        f"jupyter_server_terminals {jupyter_server_terminals.__version__}",
        f"terminado {terminado.__version__}",
    )


async def run(options: argparse.Namespace, report: Report, state: Path) -> None:
    sections = set(options.only.split(","))
    flood_bytes = 15_000_000 if options.quick else 60_000_000
    mixed_bytes = 100 * MB
    server = Server(state, options.server_arg)
    env = {**os.environ, "HOME": str(state / "home"), "TERM": "xterm-256color"}
    try:
        if "throughput" in sections:
            path = mixed_file(mixed_bytes)
            mixed = f"head -c {25 * MB} {path}" if options.quick else f"cat {path}"
            workloads = [
                (f"base64 flood ({flood_bytes // MB} MB random)", f"head -c {flood_bytes} "
                 "/dev/urandom | base64"),
                (f"mixed text ({(25 if options.quick else 100)} MB file)", mixed),
            ]  # fmt: skip
            await bench_throughput(
                report, server, workloads, 1 if options.quick else options.runs, env
            )
        if "echo" in sections:
            await bench_echo(report, server, 100 if options.quick else options.keys)
        if "interrupt" in sections:
            await bench_interrupt(report, server, 5 * MB, 1 if options.quick else options.runs)
        if "paused" in sections:
            await bench_paused(report, server, state, 5.0)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller outputs, one run")
    parser.add_argument("--runs", type=int, default=5, help="runs per throughput path (median)")
    parser.add_argument("--keys", type=int, default=400, help="keystrokes per path")
    parser.add_argument("--only", default="throughput,echo,interrupt,paused")
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="an extra server option, e.g. --server-arg=--PtyManager.high_water=1048576",
    )
    options = parser.parse_args()
    print(f"Machine: {machine()}")
    state = Path(tempfile.mkdtemp(prefix="pty-bench-"))
    report = Report()
    try:
        asyncio.run(run(options, report, state))
    except BaseException:
        print(f"Failed; the server's log is in {state / 'server.log'}", file=sys.stderr)
        raise
    shutil.rmtree(state, ignore_errors=True)
    print(report.markdown())


if __name__ == "__main__":
    main()
