"""Benchmark: what Terax adds to an idle single-user server (memory and start-up time).

Run from the repository root::

    python benchmarks/idle_memory.py [--runs 5]

Side by side, alternating which goes first: a ``jupyter server`` with JupyterLab (what a hub
spawns for each user) against the same with Terax enabled. Each is started, waited for until
``/api/status`` answers (start-up time, from the launch), then left idle for ``--idle``
seconds, and its resident memory (``VmRSS``) is read. Medians of ``--runs``, after one
warm-up start of each (bytecode caches are written and used, as for an installed package).
Goal (issue 17): under 10 MiB added at idle, start-up within 1.1x.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
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


def measure(terax: dict[str, bool], idle: float) -> tuple[float, float]:
    """(start-up seconds, idle RSS MiB) of one fresh server."""
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
        server.wait_ready()
        startup = time.perf_counter() - started
        time.sleep(idle)
        return startup, rss_mib(server.pid)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds idle before reading")
    options = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for name in VARIANTS:  # warm-up: bytecode caches, the file system's caches
        measure(VARIANTS[name], 0)
    for run in range(options.runs):
        order = list(VARIANTS) if run % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            results[name].append(measure(VARIANTS[name], options.idle))
    medians = {
        name: (
            statistics.median(s for s, _ in values),
            statistics.median(r for _, r in values),
        )
        for name, values in results.items()
    }
    for name, (startup, rss) in medians.items():
        rss_values = sorted(r for _, r in results[name])
        print(
            f"{name:10s} start-up {startup:.2f} s  idle RSS {rss:.1f} MiB "
            f"(min {rss_values[0]:.1f}, max {rss_values[-1]:.1f})"
        )
    (base_start, base_rss), (terax_start, terax_rss) = medians["lab"], medians["lab+terax"]
    print(
        f"Terax adds {terax_rss - base_rss:.1f} MiB at idle; start-up "
        f"{terax_start / base_start:.2f}x of the server without it"
    )


if __name__ == "__main__":
    main()
