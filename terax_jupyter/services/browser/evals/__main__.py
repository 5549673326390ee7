"""``python -m terax_jupyter.services.browser.evals``: scripted against warm browser flows,
and every refusal (the model-driven comparison is ``benchmarks/replay_bench.py``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from terax_jupyter.services.browser.evals.cases import RUNS, run_evals


def positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m terax_jupyter.services.browser.evals",
        description="Record browser flows on a local app (a scripted agent, no model), replay "
        "them (warm, no model) in a headless Chromium of their own, and check every refusal. "
        "For the replay against the agent with a model deciding each step: "
        "python benchmarks/replay_bench.py.",
    )
    parser.add_argument("--runs", type=positive, default=RUNS, help="warm runs per case")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    report = run_evals(args.runs)
    report.load_after = os.getloadavg()
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
