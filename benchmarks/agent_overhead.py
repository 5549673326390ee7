"""Benchmark: what a run through the agent adds to the model calls it makes.

Run from the repository root::

    python benchmarks/agent_overhead.py [--runs 5] [--steps 10] [--quick]

The model is the stub of ``terax_jupyter.testing.model_stub``, serving scripted OpenAI
answers from a thread of this process. A real ``jupyter server`` subprocess with Terax
(token auth, 127.0.0.1, its own root, config, data and runtime folders) has one local
provider pointed at it. Side by side, alternating which goes first, medians of ``--runs``:

- time to first token: ``POST .../runs`` to the first ``text_delta`` on the session's events
  WebSocket (opened beforehand, as the Lab panel has it), against a direct streamed ``POST
  {stub}/chat/completions`` with httpx, sending the very body the server sent for that
  answer, to its first content delta;
- per step: a run of ``--steps`` steps (``read_file`` of a small file in every step but the
  last, which answers in text), from the POST to the ``finish`` event, against the sum of
  the same number of direct calls, each with the body the server sent for that step and the
  same scripted answer. The difference divided by the steps is what the server adds per step:
  its store writes, events, the tool itself, and its HTTP handling.

The events carry the server's clock (``time``), which gives the timeline inside the server.
Goal (issue): under 5 ms added per step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import tornado
from bench_machine import describe
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.jupyter_process import JupyterProcess  # noqa: E402
from terax_jupyter.testing import model_stub as turns  # noqa: E402  (the checkout, not a copy)
from terax_jupyter.testing.model_stub import ModelStub, Turn  # noqa: E402

GOAL_MS_PER_STEP = 5.0
# The text answer, streamed 16 characters at a time (the stub's default).
ANSWER = "The file lists twenty settings; the one you asked about is retries = 3. " * 5 + "Done."


def notes(lines: int) -> str:
    """The file the tool steps read: ``setting_NN = value`` lines."""
    return "".join(f"setting_{n:02d} = {n * 7 % 13}\n" for n in range(lines))


def ms(seconds: float) -> float:
    return seconds * 1000


# -- a real server ---------------------------------------------------------------------------


class Server:
    """``jupyter server`` with Terax and a provider ``stub`` at ``model_url``, in a subprocess."""

    def __init__(self, root: Path, state: Path, model_url: str, extra: list[str]) -> None:
        self.jupyter = JupyterProcess()
        self.token = self.jupyter.token
        (state / "home").mkdir()
        provider = {"kind": "openai", "label": "Stub", "base_url": model_url, "local": True}
        self.jupyter.start(
            root,
            state,
            [
                "--SecretsManager.backend=file",
                f"--AiManager.providers={ {'stub': provider}!r}",
                "--AiManager.default_provider=stub",
                "--AiManager.default_model=stub-model",
                *extra,
            ],
            env={"HOME": str(state / "home")},
        )
        self.port = self.jupyter.port
        self.http = httpx.AsyncClient(
            base_url=self.jupyter.url,
            headers={"Authorization": f"token {self.token}"},
            timeout=60,
        )

    async def ready(self) -> None:
        await self.jupyter.wait_ready_async()

    async def api(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.http.request(method, f"/terax/api/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json()

    async def websocket(self, path: str) -> WebSocketClientConnection:
        request = HTTPRequest(
            f"ws://127.0.0.1:{self.port}/terax/api/{path}",
            headers={"Authorization": f"token {self.token}"},
        )
        connection = await websocket_connect(request)
        connection.protocol.stream.set_nodelay(True)  # type: ignore[union-attr]
        return connection

    def cpu(self) -> float:
        """CPU seconds (user + system) the server process has used."""
        return self.jupyter.cpu_seconds()

    async def stop(self) -> None:
        await self.http.aclose()
        self.jupyter.stop(15)


# -- the two paths ---------------------------------------------------------------------------


@dataclass
class Call:
    """One direct model call: seconds to the first content delta (None without text) and to
    the end of the stream."""

    first: float | None
    total: float


async def direct_call(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> Call:
    """A streamed chat completion read as a client of the API would: every event parsed."""
    started = time.perf_counter()
    first = None
    async with client.stream("POST", url, json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                continue  # read on to the end of the stream, as the server's client does
            chunk = json.loads(data)
            if first is None:
                for choice in chunk.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        first = time.perf_counter() - started
    return Call(first, time.perf_counter() - started)


async def direct_run(
    client: httpx.AsyncClient, stub: ModelStub, bodies: list[dict[str, Any]], script: list[Turn]
) -> list[Call]:
    """The model calls of a run, made directly one after the other."""
    calls = []
    for body, turn in zip(bodies, script, strict=True):
        stub.script([turn])
        calls.append(await direct_call(client, f"{stub.url}/chat/completions", body))
    return calls


@dataclass
class Run:
    """One run through the server, timed from just before its POST."""

    first: float | None  # first text_delta received
    total: float  # finish event received
    cpu: float  # server CPU seconds from the POST to the finish
    started_wall: float  # time.time() at the POST, to place the events' own ``time``
    events: list[dict[str, Any]] = field(default_factory=list)

    def at(self, kind: str, nth: int = 0) -> float:
        """Seconds from the POST to the server publishing the ``nth`` event of ``kind``."""
        found = [e for e in self.events if e["type"] == kind]
        return float(found[nth]["time"]) - self.started_wall


async def server_run(server: Server, stub: ModelStub, script: list[Turn], prompt: str) -> Run:
    stub.script(script)
    session = await server.api("POST", "ai/sessions", {})
    session_id = session["id"]
    ws = await server.websocket(f"ai/sessions/{session_id}/events?after={session['last_seq']}")
    events: list[dict[str, Any]] = []
    first = None
    try:
        cpu = server.cpu()
        started_wall = time.time()
        started = time.perf_counter()
        post = asyncio.ensure_future(
            server.api("POST", f"ai/sessions/{session_id}/runs", {"prompt": prompt})
        )
        while True:
            message = await asyncio.wait_for(ws.read_message(), 60)
            now = time.perf_counter()
            if message is None:
                raise RuntimeError("the events stream closed before the run finished")
            event = json.loads(message)
            events.append(event)
            if event["type"] == "text_delta" and first is None:
                first = now - started
            elif event["type"] == "error":
                raise RuntimeError(f"the run failed: {event}")
            elif event["type"] == "finish":
                total = now - started
                break
        cpu = server.cpu() - cpu
        await post
    finally:
        ws.close()
    if stub.pending:
        raise RuntimeError(f"the run left {stub.pending} scripted answers unused")
    return Run(first, total, cpu, started_wall, events)


# -- the benchmark ---------------------------------------------------------------------------


def answer_script() -> list[Turn]:
    return [turns.text(ANSWER)]


def steps_script(steps: int) -> list[Turn]:
    read = [turns.tool_call("read_file", {"path": "notes.txt"}) for _ in range(steps - 1)]
    return [*read, turns.text(ANSWER)]


@dataclass
class Samples:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, seconds: float) -> None:
        self.values.setdefault(name, []).append(seconds)

    def ms(self, name: str) -> float:
        return ms(statistics.median(self.values[name]))

    def spread(self, name: str) -> str:
        values = self.values[name]
        return f"{ms(min(values)):.2f}-{ms(max(values)):.2f}"


def phases(run: Run, calls: list[Call], steps: int) -> dict[str, float]:
    """Seconds inside the server, from the events' own times. Per step: the model phase
    (``step`` to ``tool_call_started``, or to ``finish`` in the last step), and how much
    longer it took than the direct call of that step; the tool (``tool_call_started`` to
    ``tool_call_finished``); the rest (``tool_call_finished`` to the next ``step``). Once per
    run: the POST to ``step`` 1, and ``finish`` published to received."""
    model = tool = rest = 0.0
    for index in range(steps):
        begin = run.at("step", index)
        if index < steps - 1:
            called = run.at("tool_call_started", index)
            done = run.at("tool_call_finished", index)
            model += called - begin
            tool += done - called
            rest += run.at("step", index + 1) - done
        else:
            model += run.at("finish") - begin
    direct = sum(c.total for c in calls)
    return {
        "model phase": model / steps,
        "model phase beyond the direct call": (model - direct) / steps,
        "tool": tool / (steps - 1),
        "after the tool": rest / (steps - 1),
        "POST to step 1": run.at("step"),
        "finish published to received": run.total - run.at("finish"),
    }


class Bench:
    """Both paths against one stub and one server; samples in seconds, by name."""

    def __init__(self, server: Server, stub: ModelStub, client: httpx.AsyncClient, steps: int):
        self.server, self.stub, self.client, self.steps = server, stub, client, steps
        self.samples = Samples()
        self.breakdown = Samples()
        self.answer_body: dict[str, Any] = {}
        self.step_bodies: list[dict[str, Any]] = []

    async def warm_up(self) -> None:
        """One run of each kind through the server, recording the bodies it sends, then the
        same calls directly."""
        stub = self.stub
        stub.reset()
        await server_run(self.server, stub, answer_script(), "What does notes.txt set?")
        self.answer_body = stub.requests[0].body
        stub.reset()
        await server_run(self.server, stub, steps_script(self.steps), "Read notes.txt, please.")
        self.step_bodies = [r.body for r in stub.requests]
        if len(self.step_bodies) != self.steps:
            raise RuntimeError(f"{len(self.step_bodies)} model calls for {self.steps} steps")
        await self.direct()
        self.samples, self.breakdown = Samples(), Samples()  # the warm-up does not count

    async def direct(self) -> list[Call]:
        self.stub.script(answer_script())
        call = await direct_call(self.client, f"{self.stub.url}/chat/completions", self.answer_body)
        assert call.first is not None
        self.samples.add("direct first", call.first)
        self.samples.add("direct answer", call.total)
        calls = await direct_run(self.client, self.stub, self.step_bodies, steps_script(self.steps))
        self.samples.add("direct steps", sum(c.total for c in calls))
        return calls

    async def through_server(self) -> Run:
        one = await server_run(self.server, self.stub, answer_script(), "What does notes.txt set?")
        assert one.first is not None
        self.samples.add("server first", one.first)
        self.samples.add("server answer", one.total)
        self.breakdown.add("run_started published", one.at("run_started"))
        self.breakdown.add("step 1 published", one.at("step"))
        self.breakdown.add("first text_delta published", one.at("text_delta"))
        self.breakdown.add("first text_delta received", one.first)
        many = await server_run(
            self.server, self.stub, steps_script(self.steps), "Read notes.txt, please."
        )
        self.samples.add("server steps", many.total)
        self.samples.add("server cpu per step", many.cpu / self.steps)
        return many

    async def round(self, direct_first: bool) -> None:
        if direct_first:
            calls = await self.direct()
            run = await self.through_server()
        else:
            run = await self.through_server()
            calls = await self.direct()
        for name, seconds in phases(run, calls, self.steps).items():
            self.breakdown.add(name, seconds)


async def bench(options: argparse.Namespace, root: Path, state: Path) -> str:
    runs, steps = options.runs, options.steps
    load = os.getloadavg()
    extra = [f"--AiManager.max_steps={max(steps, 24)}", *options.server_arg]
    with ModelStub() as stub:
        server = Server(root, state, stub.url, extra)
        try:
            await server.ready()
            memory = [rss_mib(server.jupyter.pid)]
            async with httpx.AsyncClient(timeout=60) as client:
                bench = Bench(server, stub, client, steps)
                await bench.warm_up()
                for number in range(runs):
                    print(f"run {number + 1} of {runs}", flush=True)
                    await bench.round(direct_first=number % 2 == 0)
            memory.append(rss_mib(server.jupyter.pid))
        finally:
            await server.stop()
    return report(bench, runs, load) + (
        f"\nServer memory (RSS): {memory[0]:.1f} MiB before the first run, {memory[1]:.1f} MiB "
        f"after {runs} rounds of runs ({memory[1] - memory[0]:+.1f} MiB)."
    )


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def report(bench: Bench, runs: int, load: tuple[float, float, float]) -> str:
    samples, breakdown, steps = bench.samples, bench.breakdown, bench.steps
    body_size = len(json.dumps(bench.answer_body))
    direct_first, server_first = samples.ms("direct first"), samples.ms("server first")
    direct_answer, server_answer = samples.ms("direct answer"), samples.ms("server answer")
    direct_step = samples.ms("direct steps") / steps
    server_step = samples.ms("server steps") / steps
    added = server_step - direct_step
    lines = [
        f"(load average {load[0]:.2f} at start; {runs} runs, medians; min-max in brackets)",
        "",
        "| Measurement | direct ms | through the server ms | added ms | ratio |",
        "|---|---:|---:|---:|---:|",
        f"| Time to first token | {direct_first:.2f} ({samples.spread('direct first')}) "
        f"| {server_first:.2f} ({samples.spread('server first')}) "
        f"| {server_first - direct_first:.2f} | {server_first / direct_first:.2f}x |",
        f"| Whole answer, 1 step ({len(ANSWER)} characters, {-(-len(ANSWER) // 16)} deltas) "
        f"| {direct_answer:.2f} "
        f"| {server_answer:.2f} | {server_answer - direct_answer:.2f} "
        f"| {server_answer / direct_answer:.2f}x |",
        f"| Per step, {steps}-step run ({steps - 1} x `read_file`, then the answer) "
        f"| {direct_step:.2f} | {server_step:.2f} | {added:.2f} "
        f"| {server_step / direct_step:.2f}x |",
        "",
        f"Whole {steps}-step run: direct {samples.ms('direct steps'):.1f} ms "
        f"({samples.spread('direct steps')}), through the server "
        f"{samples.ms('server steps'):.1f} ms ({samples.spread('server steps')}); server CPU "
        f"{samples.ms('server cpu per step'):.1f} ms per step. The first request body is "
        f"{body_size / 1024:.1f} KiB (system prompt and tool list).",
        "",
        "Inside the server, time to first token (ms from the POST, by the events' own clock):",
        "",
        "| Moment | ms |",
        "|---|---:|",
        *(
            f"| {name} | {breakdown.ms(name):.2f} |"
            for name in (
                "run_started published",
                "step 1 published",
                "first text_delta published",
                "first text_delta received",
            )
        ),
        "",
        f"Inside the server, the {steps}-step run (ms):",
        "",
        "| Phase | ms |",
        "|---|---:|",
        *(
            f"| {name}{' (per step)' if index < 4 else ' (once per run)'} "
            f"| {breakdown.ms(name):.2f} |"
            for index, name in enumerate(
                (
                    "model phase",
                    "model phase beyond the direct call",
                    "tool",
                    "after the tool",
                    "POST to step 1",
                    "finish published to received",
                )
            )
        ),
        "",
        f"Goal: under {GOAL_MS_PER_STEP:.0f} ms added per step: "
        f"{'met' if added < GOAL_MS_PER_STEP else 'NOT met'} ({added:.2f} ms).",
    ]
    return "\n".join(lines)


def machine() -> str:
    return describe(f"httpx {httpx.__version__}", f"tornado {tornado.version}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="rounds of both paths (median)")
    parser.add_argument("--steps", type=int, default=10, help="steps of the multi-step run")
    parser.add_argument(
        "--file-lines", type=int, default=20, help="lines of the file read_file reads"
    )
    parser.add_argument("--quick", action="store_true", help="2 runs of 5 steps, for a check")
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        help="an extra server option, e.g. --server-arg=--AiManager.max_steps=50",
    )
    options = parser.parse_args()
    if options.quick:
        options.runs, options.steps = 2, 5
    if options.steps < 2:
        parser.error("--steps is at least 2 (tool calls, then the answer)")
    state = Path(tempfile.mkdtemp(prefix="agent-bench-"))
    root = state / "root"
    root.mkdir()
    (root / "notes.txt").write_text(notes(options.file_lines))
    print(f"Machine: {machine()}", flush=True)
    try:
        table = asyncio.run(bench(options, root, state))
    except BaseException:
        print(f"Failed; the server's log is in {state / 'server.log'}", file=sys.stderr)
        raise
    shutil.rmtree(state, ignore_errors=True)
    print(table)


if __name__ == "__main__":
    main()
