"""Benchmark: a browser flow done by the agent with a model deciding each step (cold) against
the replay of the saved flow (warm), as a user pays each.

Run from the repository root::

    python benchmarks/replay_bench.py [--runs 5] [--json] [--latency 0.8]
                                      [--replay-browser-idle SECONDS]

One run, one real ``jupyter server`` subprocess with Terax (token auth, 127.0.0.1, its own
root, config, data and runtime folders), one headless Chromium of the product, the eval site
of ``terax_jupyter.services.browser.evals.site`` (plain HTML forms on 127.0.0.1) and the model
stub of ``terax_jupyter.testing.model_stub``, a real HTTP server on 127.0.0.1 in a thread of
this process that answers every model call ``--latency`` seconds after it arrives.

- **Cold**: a new AI session and one run of the real agent (the runner, its real browser
  tools, the approval path where a tool needs one). The stub answers each model call with
  the tool call a model would make after reading the snapshot the last tool returned
  (``browser_open``, ``browser_type`` by ref, ``browser_click``, ``browser_wait``, ...) and
  ends with a text answer. Timed from ``POST .../runs`` to the run's ``finish`` event. The
  agent's tab browser is already running (a tab kept open for the whole benchmark), so the
  cold path does not pay a browser launch: the comparison favours it.
- **Warm**: the saved workflow replayed as a user pays it. For ``login``, ``search`` and the
  saved ``workflow``: ``POST browser/workflows/<name>/run`` (what the MCP server and the REST
  API call; no model). For the destructive ``delete``: the user's ``/replay delete`` in an
  AI session (``POST ai/sessions/<id>/runs {"replay": ...}``, no model), which takes the
  agent's approval path: the proposal (the start page opened and the token issued for the
  approval card), the approval (``POST ai/approvals/<id>`` at once, no thinking time) and the
  apply (token checked, replay). The parts are reported from the server's event clock.

Every replay pays for its browser as the product has it: with ``--replay-browser-idle 0``
each replay launches a Chromium of its own (the behaviour before the warm replay browser);
with the default (300 s, the product's default) the first replay of a user launches the
replay browser and later ones reuse it, each in a fresh browser context. The first replay of
the benchmark (a login, before the cases) is reported on its own as ``first replay (pays the
launch)``; the cases' warm medians then run on the running browser, and the report says so.

Per case: medians of ``--runs`` cold and warm runs (alternating, each with other inputs),
ratio warm/cold, model calls of each, and a check that the site did what the flow does
(the user signed in, the item deleted). Goal (issue 15): warm at most 0.1x of cold.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.agent_overhead import Server  # noqa: E402
from terax_jupyter.services.browser.evals.site import EvalSite  # noqa: E402
from terax_jupyter.testing import model_stub as turns  # noqa: E402
from terax_jupyter.testing.model_stub import ModelStub, Turn  # noqa: E402

GOAL = 0.1
LATENCY = 0.8
USERS = ("bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory")
QUERIES = ("pie", "cake", "bread", "tart", "pear", "apple", "crumble", "cherry", "banana")
EVENT_TIMEOUT = 120.0


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


# -- the model ---------------------------------------------------------------------------------


class SlowModel(ModelStub):
    """The model stub, answering each call ``latency`` seconds after it arrived; it keeps
    when each call arrived and when its answer began (the handler's own thread)."""

    def __init__(self, latency: float) -> None:
        super().__init__()
        self.latency = latency
        self.calls: list[tuple[float, float]] = []
        self._calls_lock = threading.Lock()

    def _next_turn(self) -> Turn | None:
        arrived = time.perf_counter()
        self._stopping.wait(self.latency)
        with self._calls_lock:
            self.calls.append((arrived, time.perf_counter()))
        return super()._next_turn()

    def waits_between(self, start: float, end: float) -> tuple[int, float]:
        """The model calls that arrived in [start, end] and the seconds they were waited for."""
        with self._calls_lock:
            inside = [(a, b) for a, b in self.calls if start <= a <= end]
        return len(inside), sum(b - a for a, b in inside)


# -- the server's API ----------------------------------------------------------------------------


def ref(page: dict[str, Any] | str, what: str) -> str:
    """The ref of the snapshot line holding ``what`` (as a model reads it off the snapshot)."""
    text = page if isinstance(page, str) else page["text"]
    for line in text.splitlines():
        if what in line and "[ref=" in line:
            return line.rsplit("[ref=", 1)[1].split("]", 1)[0]
    raise RuntimeError(f"{what!r} not in the snapshot:\n{text}")


@dataclass
class Refs:
    """Where the site's elements are in its snapshots, read once through the REST tab API."""

    username: str = ""
    password: str = ""
    query: str = ""
    search_link: str = ""
    delete_link: str = ""
    confirm: str = ""


class Agent:
    """Runs of the real agent through the server: a session, its events WebSocket, a run."""

    def __init__(self, server: Server, model: SlowModel) -> None:
        self.server, self.model = server, model

    async def run(
        self,
        script: list[Turn],
        prompt: str,
        *,
        approve: bool = False,
        replay: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One run; seconds from the POST to ``finish``, model calls and their waits, and for
        an approved run the moments around the approval. ``replay``: a ``/replay`` run (the
        user names a saved workflow; no model is asked) instead of ``prompt``."""
        model, server = self.model, self.server
        model.script(script)
        session = await server.api("POST", "ai/sessions", {})
        session_id = session["id"]
        ws = await server.websocket(f"ai/sessions/{session_id}/events?after={session['last_seq']}")
        marks: dict[str, float] = {}
        server_marks: dict[str, float] = {}  # first event of each type, the server's clock
        results: list[dict[str, Any]] = []
        try:
            started_wall = time.time()
            started = time.perf_counter()
            post = asyncio.ensure_future(
                server.api(
                    "POST",
                    f"ai/sessions/{session_id}/runs",
                    {"replay": replay} if replay is not None else {"prompt": prompt},
                )
            )
            while True:
                message = await asyncio.wait_for(ws.read_message(), EVENT_TIMEOUT)
                if message is None:
                    raise RuntimeError("the events stream closed before the run finished")
                event = json.loads(message)
                kind = event["type"]
                if "time" in event:
                    server_marks.setdefault(kind, float(event["time"]) - started_wall)
                if kind == "error":
                    raise RuntimeError(f"the run failed: {event}")
                if kind == "tool_call_finished":
                    results.append(event)
                if kind == "approval_requested":
                    marks["approval requested"] = time.perf_counter()
                    if not approve:
                        raise RuntimeError(f"an approval was asked for: {event}")
                    marks["decision sent"] = time.perf_counter()
                    await server.api(
                        "POST", f"ai/approvals/{event['approval']['id']}", {"decision": "approve"}
                    )
                    marks["approved"] = time.perf_counter()
                if kind == "finish":
                    finished = time.perf_counter()
                    break
            await post
        finally:
            ws.close()
        if model.pending:
            raise RuntimeError(f"the run left {model.pending} scripted answers unused")
        calls, waited = model.waits_between(started, finished)
        failed = [r for r in results if r.get("status") not in (None, "done")]
        if failed:
            raise RuntimeError(f"a tool call failed: {failed[0]}")
        with_tab = await server.api("GET", "browser/tabs")
        if any(tab["id"] == session_id for tab in with_tab["tabs"]):
            await server.http.delete(f"/terax/api/browser/tabs/{session_id}")  # max_tabs: not timed
        return {
            "seconds": finished - started,
            "model_calls": calls,
            "model_wait": waited,
            "marks": {k: v - started for k, v in marks.items()},
            "server_marks": server_marks,
            "session": session_id,
        }


# -- the cases ------------------------------------------------------------------------------------


def login_turns(site: EvalSite, refs: Refs, user: str, password: str) -> list[Turn]:
    return [
        turns.tool_call("browser_open", {"url": site.url("/login")}),
        turns.tool_call("browser_type", {"ref": refs.username, "text": user}),
        turns.tool_call("browser_type", {"ref": refs.password, "text": password}),
        turns.tool_call("browser_click", {"role": "button", "name": "Sign in"}),
        turns.tool_call("browser_wait", {"title_contains": "Dashboard"}),
    ]


def search_turns(refs: Refs, term: str) -> list[Turn]:
    return [
        turns.tool_call("browser_type", {"ref": refs.query, "text": term}),
        turns.tool_call("browser_click", {"role": "button", "name": "Search"}),
        turns.tool_call("browser_wait", {"title_contains": "Results"}),
    ]


@dataclass
class Case:
    name: str
    side_effect: str
    cold: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    warm_no_model: list[float] = field(default_factory=list)
    cold_calls: list[int] = field(default_factory=list)
    warm_calls: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    parts: dict[str, list[float]] = field(default_factory=dict)

    def part(self, name: str, seconds: float) -> None:
        self.parts.setdefault(name, []).append(seconds)

    def row(self) -> dict[str, Any]:
        cold = statistics.median(self.cold) if self.cold else None
        warm = statistics.median(self.warm) if self.warm else None
        row: dict[str, Any] = {
            "case": self.name,
            "side_effect": self.side_effect,
            "cold_ms": ms(cold) if cold is not None else None,
            "warm_ms": ms(warm) if warm is not None else None,
            "ratio": round(warm / cold, 3) if cold and warm is not None else None,
            "cold_model_calls": max(self.cold_calls) if self.cold_calls else None,
            "warm_model_calls": max(self.warm_calls) if self.warm_calls else None,
            "cold_spread_ms": [ms(min(self.cold)), ms(max(self.cold))] if self.cold else None,
            "warm_spread_ms": [ms(min(self.warm)), ms(max(self.warm))] if self.warm else None,
            "failures": self.failures,
        }
        if self.warm_no_model:
            bare = statistics.median(self.warm_no_model)
            row["warm_without_model_ms"] = ms(bare)
            row["ratio_without_model"] = round(bare / cold, 3) if cold else None
        if self.parts:
            row["warm_parts_ms"] = {k: ms(statistics.median(v)) for k, v in self.parts.items()}
        return row


class Bench:
    def __init__(self, server: Server, model: SlowModel, site: EvalSite, runs: int) -> None:
        self.server, self.model, self.site, self.runs = server, model, site, runs
        self.agent = Agent(server, model)
        self.refs = Refs()
        self.first_replay: float | None = None

    async def api(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.server.http.request(method, f"/terax/api/{path}", json=body)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json() if response.content else None

    async def tab(self, tab: str, action: str, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.api("POST", f"browser/tabs/{tab}/{action}", body)
        return result

    async def record(self) -> None:
        """Record and save the four workflows through the REST tab API (no model; not timed),
        reading the refs a model would read off the same snapshots."""
        site, refs = self.site, self.refs
        page = await self.tab("rec-login", "open", {"url": site.url("/login")})
        refs.username = ref(page, 'textbox "Username"')
        refs.password = ref(page, 'textbox "Password"')
        await self.tab(
            "rec-login", "type", {"ref": refs.username, "text": "alice", "input": "username"}
        )
        await self.tab(
            "rec-login", "type", {"ref": refs.password, "text": "pw-0", "input": "password"}
        )
        await self.tab("rec-login", "click", {"role": "button", "name": "Sign in"})
        await self.tab("rec-login", "wait", {"title_contains": "Dashboard"})
        await self.save("rec-login", "login", "mutating", "title_contains", "Dashboard")

        page = await self.tab("rec-search", "open", {"url": site.url("/search")})
        refs.query = ref(page, 'textbox "Query"')
        await self.tab("rec-search", "type", {"ref": refs.query, "text": "pie", "input": "query"})
        await self.tab("rec-search", "click", {"role": "button", "name": "Search"})
        await self.tab("rec-search", "wait", {"title_contains": "Results"})
        await self.save("rec-search", "search", "read_only", "title_contains", "Results")

        page = await self.tab("rec-delete", "open", {"url": site.url("/items")})
        refs.delete_link = ref(page, 'link "Delete alpha report"')
        page = await self.tab("rec-delete", "click", {"ref": refs.delete_link})
        refs.confirm = ref(page, 'button "Confirm delete"')
        await self.tab("rec-delete", "click", {"ref": refs.confirm})
        await self.save("rec-delete", "delete", "destructive", "text_contains", "2 items")
        site.reset()

        tab = "rec-flow"
        page = await self.tab(tab, "open", {"url": site.url("/login")})
        await self.tab(tab, "type", {"ref": refs.username, "text": "alice", "input": "username"})
        await self.tab(tab, "type", {"ref": refs.password, "text": "pw-0", "input": "password"})
        await self.tab(tab, "click", {"role": "button", "name": "Sign in"})
        page = await self.tab(tab, "wait", {"title_contains": "Dashboard"})
        refs.search_link = ref(page, 'link "Search"')
        await self.tab(tab, "click", {"ref": refs.search_link})
        await self.tab(tab, "wait", {"title_contains": "Search"})
        await self.tab(tab, "type", {"ref": refs.query, "text": "pie", "input": "query"})
        await self.tab(tab, "click", {"role": "button", "name": "Search"})
        await self.tab(tab, "wait", {"title_contains": "Results"})
        await self.save(tab, "workflow", "mutating", "title_contains", "Results")
        for name in ("rec-login", "rec-search", "rec-delete"):
            await self.api("DELETE", f"browser/tabs/{name}")
        # The agent's tab browser stays up for the whole benchmark (cold pays no launch).
        await self.tab(tab, "open", {"url": site.url("/")})

    async def save(self, tab: str, name: str, side_effect: str, kind: str, value: str) -> None:
        await self.tab(
            tab,
            "save",
            {
                "name": name,
                "side_effect": side_effect,
                "postconditions": [{"kind": kind, "value": value}],
            },
        )

    async def replay(self, name: str, inputs: dict[str, str], case: Case | None = None) -> float:
        started = time.perf_counter()
        result = await self.api("POST", f"browser/workflows/{name}/run", {"inputs": inputs})
        seconds = time.perf_counter() - started
        if result.get("steps_replayed", 0) < 1:
            raise RuntimeError(f"{name}: nothing replayed: {result}")
        if case is not None:
            # The replayer's own clock, and what the request cost around it: the browser
            # context and tab, the start page, the store, HTTP.
            timings = result.get("timings_ms") or {}
            replayer = float(timings.get("total", 0.0)) / 1000
            case.part("replayer total", replayer)
            case.part("replayer checks", float(timings.get("checks", 0.0)) / 1000)
            steps = timings.get("steps") or []
            case.part("replayer steps", sum(float(s) for s in steps) / 1000 if steps else 0.0)
            case.part("around the replayer (tab, start page, store, HTTP)", seconds - replayer)
        return seconds

    async def warm_first(self) -> None:
        """The benchmark's first replay: it pays the replay browser's launch."""
        self.first_replay = await self.replay("login", {"username": "first", "password": "pw"})

    # Each case: one cold and one warm run with the inputs of run ``i``.

    async def login(self, case: Case, i: int, cold_first: bool) -> None:
        who, password = f"{USERS[i % len(USERS)]}-{i}", f"pw-{i}"

        async def cold() -> None:
            run = await self.agent.run(
                [
                    *login_turns(self.site, self.refs, who + "-c", password),
                    turns.text("Signed in."),
                ],
                f"Sign in as {who}-c",
            )
            case.cold.append(run["seconds"])
            case.cold_calls.append(run["model_calls"])
            self.expect(case, self.site.sign_ins[-1] == who + "-c", "cold: not signed in")

        async def warm() -> None:
            case.warm.append(
                await self.replay("login", {"username": who, "password": password}, case)
            )
            case.warm_calls.append(0)
            self.expect(case, self.site.sign_ins[-1] == who, "warm: not signed in")

        await self.pair(cold, warm, cold_first)

    async def search(self, case: Case, i: int, cold_first: bool) -> None:
        term = QUERIES[i % len(QUERIES)]

        async def cold() -> None:
            script = [
                turns.tool_call("browser_open", {"url": self.site.url("/search")}),
                *search_turns(self.refs, term),
                turns.text(f"Found the {term} results."),
            ]
            run = await self.agent.run(script, f"Search the catalog for {term}")
            case.cold.append(run["seconds"])
            case.cold_calls.append(run["model_calls"])

        async def warm() -> None:
            case.warm.append(await self.replay("search", {"query": term}, case))
            case.warm_calls.append(0)

        await self.pair(cold, warm, cold_first)

    async def delete(self, case: Case, i: int, cold_first: bool) -> None:
        async def cold() -> None:
            script = [
                turns.tool_call("browser_open", {"url": self.site.url("/items")}),
                turns.tool_call("browser_click", {"ref": self.refs.delete_link}),
                turns.tool_call("browser_click", {"ref": self.refs.confirm}),
                turns.text("Deleted the alpha report."),
            ]
            run = await self.agent.run(script, "Delete the alpha report")
            case.cold.append(run["seconds"])
            case.cold_calls.append(run["model_calls"])
            self.expect(case, self.site.deleted == ["alpha report"], "cold: not deleted")
            self.site.reset()

        async def warm() -> None:
            # The user's `/replay delete` in the AI panel: the same approval card and path
            # as the agent's tool, and no model call.
            run = await self.agent.run([], "", approve=True, replay={"workflow": "delete"})
            case.warm.append(run["seconds"])
            case.warm_calls.append(run["model_calls"])
            marks, at = run["marks"], run["server_marks"]
            if "approval requested" in marks and "tool_call_started" in at:
                # The server's clock: the tool call's start to the approval card (propose:
                # the start page opened, the token issued, the proposal stored); the decision
                # sent to the tool's result (apply: the checks and the replay).
                case.part("POST to the tool call", at["tool_call_started"])
                case.part("propose", at["approval_requested"] - at["tool_call_started"])
                case.part("approve round trip", marks["approved"] - marks["decision sent"])
                case.part("apply", at["tool_call_finished"] - marks["decision sent"])
                case.part("tool result to finish", run["seconds"] - at["tool_call_finished"])
            self.expect(case, self.site.deleted == ["alpha report"], "warm: not deleted")
            self.site.reset()

        await self.pair(cold, warm, cold_first)

    async def workflow(self, case: Case, i: int, cold_first: bool) -> None:
        who, password, term = f"{USERS[i % len(USERS)]}-w{i}", f"pw-w{i}", QUERIES[i % len(QUERIES)]

        async def cold() -> None:
            script = [
                *login_turns(self.site, self.refs, who + "-c", password),
                turns.tool_call("browser_click", {"ref": self.refs.search_link}),
                turns.tool_call("browser_wait", {"title_contains": "Search"}),
                *search_turns(self.refs, term),
                turns.text(f"Signed in and found the {term} results."),
            ]
            run = await self.agent.run(script, f"Sign in as {who}-c and search for {term}")
            case.cold.append(run["seconds"])
            case.cold_calls.append(run["model_calls"])
            self.expect(case, self.site.sign_ins[-1] == who + "-c", "cold: not signed in")

        async def warm() -> None:
            inputs = {"username": who, "password": password, "query": term}
            case.warm.append(await self.replay("workflow", inputs, case))
            case.warm_calls.append(0)
            self.expect(case, self.site.sign_ins[-1] == who, "warm: not signed in")

        await self.pair(cold, warm, cold_first)

    @staticmethod
    async def pair(cold: Any, warm: Any, cold_first: bool) -> None:
        for step in (cold, warm) if cold_first else (warm, cold):
            await step()

    @staticmethod
    def expect(case: Case, condition: bool, what: str) -> None:
        if not condition and what not in case.failures:
            case.failures.append(what)


# -- main ----------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    chromium = shutil.which("chromium") or ""
    version = ""
    if chromium:
        version = subprocess.run(
            [chromium, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "chromium": version,
        "load_start": os.getloadavg(),
    }


async def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    info = machine()
    root, state = tmp / "root", tmp / "state"
    with EvalSite() as site:
        model = SlowModel(args.latency)
        model.start()
        extra = [f"--BrowserManager.replay_browser_idle={args.replay_browser_idle}"]
        server = Server(root, state, f"{model.url}", extra)
        try:
            await server.ready()
            b = Bench(server, model, site, args.runs)
            await b.record()
            await b.warm_first()
            cases = [
                (Case("login", "mutating"), b.login),
                (Case("search", "read-only"), b.search),
                (Case("delete (approved)", "destructive"), b.delete),
                (Case("saved workflow (sign in + search)", "mutating"), b.workflow),
            ]
            for i in range(args.runs):
                for case, run in cases:
                    await run(case, i, cold_first=i % 2 == 0)
            browsers = await replay_browsers(server)
        finally:
            await server.stop()
            model.stop()
    info["load_end"] = os.getloadavg()
    rows = [case.row() for case, _ in cases]
    colds = sum(statistics.median(c.cold) for c, _ in cases)
    warms = sum(statistics.median(c.warm) for c, _ in cases)
    return {
        "machine": info,
        "runs": args.runs,
        "latency_s": args.latency,
        "replay_browser_idle_s": args.replay_browser_idle,
        "replay_browser": (
            "a Chromium launched for every replay"
            if args.replay_browser_idle <= 0
            else "one warm replay browser (launched by the first replay, reused by the rest;"
            " a fresh browser context per replay)"
        ),
        "first_replay_ms": ms(b.first_replay or 0.0),
        "cases": rows,
        "overall_ratio": round(warms / colds, 3),
        "goal": GOAL,
        "replay_browsers_at_end": browsers,
    }


async def replay_browsers(server: Server) -> Any:
    return None  # the REST API does not list them; kept for the JSON shape


def report(result: dict[str, Any]) -> str:
    lines = [
        f"Replay benchmark: {result['runs']} runs, model latency {result['latency_s']} s per call,"
        f" {result['replay_browser']}.",
        f"Machine: {result['machine']['cpus']} cpus, Python {result['machine']['python']},"
        f" {result['machine']['chromium']}; load {result['machine']['load_start'][0]:.2f}"
        f" at start, {result['machine']['load_end'][0]:.2f} at the end.",
        f"First replay (pays the replay browser's launch): {result['first_replay_ms']} ms.",
        "",
        "| Case | Side effect | cold ms | warm ms | warm/cold | model calls cold | warm |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in result["cases"]:
        lines.append(
            f"| {row['case']} | {row['side_effect']} | {row['cold_ms']} | {row['warm_ms']} |"
            f" {row['ratio']}x | {row['cold_model_calls']} | {row['warm_model_calls']} |"
        )
    lines.append("")
    for row in result["cases"]:
        if "warm_without_model_ms" in row:
            lines.append(
                f"{row['case']}: warm without the model's waits {row['warm_without_model_ms']} ms"
                f" ({row['ratio_without_model']}x of cold)"
            )
        if row.get("warm_parts_ms"):
            lines.append(f"{row['case']}: warm parts (medians, ms): {row['warm_parts_ms']}")
        if row["failures"]:
            lines.append(f"{row['case']}: FAILED {row['failures']}")
    lines.append(
        f"Overall (sum of medians) warm/cold: {result['overall_ratio']}x; goal <= {GOAL}x."
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--latency", type=float, default=LATENCY, help="seconds per model call")
    parser.add_argument(
        "--replay-browser-idle",
        type=float,
        default=300.0,
        help="BrowserManager.replay_browser_idle for the server (0: a browser per replay)",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs is at least 1")
    with tempfile.TemporaryDirectory(prefix="terax-replay-bench-") as tmp:
        (Path(tmp) / "root").mkdir()
        (Path(tmp) / "state").mkdir()
        result = asyncio.run(bench(args, Path(tmp)))
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 1 if any(row["failures"] for row in result["cases"]) else 0


if __name__ == "__main__":
    sys.exit(main())
