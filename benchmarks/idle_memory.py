"""Benchmark: what Terax adds to an idle single-user server (memory and start-up time).

Run from the repository root::

    python benchmarks/idle_memory.py [--runs 5]

Side by side, alternating which goes first: a ``jupyter server`` with JupyterLab (what a hub
spawns for each user) against the same with Terax enabled. Each is started, waited for until
``/api/status`` answers (start-up time, from the launch), then left idle for ``--idle``
seconds, and its resident memory (``VmRSS``) is read; with Terax, ``--terminals`` bash
terminals are then opened and the server's memory with its shells' is read again. Medians
of ``--runs``, after one warm-up start of each (bytecode caches are written and used, as for
an installed package).
Goal (issue 17): under 10 MiB added at idle, start-up within 1.1x.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.jupyter_process import JupyterProcess

# The installed package enables itself (jupyter_server_config.d): the first says no to it.
VARIANTS = {"lab": {"terax_jupyter": False}, "lab+terax": {"terax_jupyter": True}}


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def tree_rss_mib(pid: int) -> float:
    """RSS of ``pid`` and every process below it (a terminal's shell)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            total += rss_mib(current)
        except (OSError, RuntimeError):
            continue
        pending.extend(children.get(current, []))
    return total


def get(server: JupyterProcess, path: str) -> None:
    request = urllib.request.Request(
        f"{server.url}{path}", headers={"Authorization": f"token {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()


# What Lab's panels ask when they first open: the agent's and the browser's areas are built on
# first use, so an idle server has neither.
FIRST_USE = ("/terax/api/ai/sessions", "/terax/api/ai/providers", "/terax/api/browser/workflows")


def open_terminals(server: JupyterProcess, count: int) -> None:
    for _ in range(count):
        request = urllib.request.Request(
            f"{server.url}/terax/api/pty/sessions",
            data=json.dumps({"shell": "bash"}).encode(),
            headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()


@dataclass(frozen=True)
class Reading:
    startup: float  # seconds from the launch to /api/status answering
    idle: float  # MiB, nothing used yet
    in_use: float = 0.0  # MiB, after the panels' first requests (agent and browser built)
    terminals: float = 0.0  # MiB with the terminals open, their shells included


def measure(terax: dict[str, bool], idle: float, terminals: int = 0) -> Reading:
    """One fresh server: idle, then (with Terax and ``terminals``) its areas in use."""
    folder = Path(tempfile.mkdtemp(prefix="terax-idle-"))
    root = folder / "root"
    root.mkdir()
    server = JupyterProcess()
    try:
        started = time.perf_counter()
        # Bytecode caches written and used, as for an installed package (a warm-up writes them).
        server.start(
            root,
            folder,
            env={"PYTHONDONTWRITEBYTECODE": ""},
            extensions={"jupyterlab": True, **terax},
        )
        server.wait_ready(poll=0.02)  # start-up to the nearest 20 ms
        startup = time.perf_counter() - started
        time.sleep(idle)
        idle_rss = rss_mib(server.pid)
        if not terminals:
            return Reading(startup, idle_rss)
        for path in FIRST_USE:
            get(server, path)
        time.sleep(idle)
        in_use = rss_mib(server.pid)
        open_terminals(server, terminals)
        time.sleep(idle)
        return Reading(startup, idle_rss, in_use, tree_rss_mib(server.pid))
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds idle before reading")
    parser.add_argument("--terminals", type=int, default=5, help="terminals opened after idle")
    options = parser.parse_args()
    results: dict[str, list[Reading]] = {name: [] for name in VARIANTS}
    for name in VARIANTS:  # warm-up: bytecode caches, the file system's caches
        measure(VARIANTS[name], 0.0)
    for run in range(options.runs):
        order = list(VARIANTS) if run % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            terminals = options.terminals if name == "lab+terax" else 0
            results[name].append(measure(VARIANTS[name], options.idle, terminals))
    medians = {
        name: (
            statistics.median(r.startup for r in readings),
            statistics.median(r.idle for r in readings),
        )
        for name, readings in results.items()
    }
    for name, (startup, rss) in medians.items():
        rss_values = sorted(r.idle for r in results[name])
        print(
            f"{name:10s} start-up {startup:.2f} s  idle RSS {rss:.1f} MiB "
            f"(min {rss_values[0]:.1f}, max {rss_values[-1]:.1f})"
        )
    (base_start, base_rss), (terax_start, terax_rss) = medians["lab"], medians["lab+terax"]
    print(
        f"Terax adds {terax_rss - base_rss:.1f} MiB at idle; start-up "
        f"{terax_start / base_start:.2f}x of the server without it"
    )
    if options.terminals:
        in_use = statistics.median(r.in_use for r in results["lab+terax"])
        busy = statistics.median(r.terminals for r in results["lab+terax"])
        print(
            f"after the panels' first requests (agent and browser areas built): {in_use:.1f} MiB "
            f"(+{in_use - base_rss:.1f} MiB over Lab alone)"
        )
        print(
            f"with {options.terminals} Terax terminals (bash): {busy:.1f} MiB, the shells "
            f"included ({(busy - in_use) / options.terminals:.1f} MiB per terminal)"
        )


if __name__ == "__main__":
    main()
