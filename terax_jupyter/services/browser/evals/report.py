"""What the evals measured and checked, as a table or as JSON."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any

# "scripted": the cold path here is a script that knows every target, not a model deciding
# each step; benchmarks/replay_bench.py measures the replay against the agent with a model.
COLUMNS = (
    "case",
    "scripted ms",
    "warm ms",
    "scripted/warm",
    "hit",
    "commands replayed",
    "model calls",
    "refusals",
    "ok",
)


@dataclass
class CaseResult:
    """One case: its cold run, its warm runs, the refusals seen and the failed expectations."""

    name: str
    expected_refusals: list[str] = field(default_factory=list)
    cold_ms: float | None = None
    warm_ms: list[float] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    steps: int = 0
    model_calls: int = 0
    timings: list[dict[str, Any]] = field(default_factory=list)  # the replayer's own
    refusals: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    checks: int = 0

    def check(self, ok: bool, what: str) -> bool:
        self.checks += 1
        if not ok:
            self.failures.append(what)
        return ok

    def fail(self, what: str) -> None:
        self.check(False, what)

    def finish(self, runs: int) -> None:
        """The expectations every case shares."""
        self.check(self.model_calls == 0, "no model call during replay")
        self.check(len(self.warm_ms) == runs, f"{runs} warm runs finished")
        self.check(self.hit, "every warm run was a hit")
        self.check(
            self.refusals == self.expected_refusals,
            f"refusals {self.expected_refusals} (saw {self.refusals})",
        )

    @property
    def hit(self) -> bool:
        return bool(self.hits) and all(self.hits)

    @property
    def warm_median(self) -> float | None:
        return round(statistics.median(self.warm_ms), 1) if self.warm_ms else None

    @property
    def speedup(self) -> float | None:
        warm = self.warm_median
        return round(self.cold_ms / warm, 2) if self.cold_ms and warm else None

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {
            "case": self.name,
            "cold_ms": self.cold_ms,
            "warm_ms": self.warm_median,
            "warm_runs_ms": self.warm_ms,
            "replay_timings_ms": self.timings,
            "speedup": self.speedup,
            "hit": self.hit,
            "commands_replayed": self.steps,
            "model_calls": self.model_calls,
            "refusals": self.refusals,
            "checks": self.checks,
            "failures": self.failures,
            "ok": self.ok,
        }


@dataclass
class Report:
    runs: int
    browser: str = ""
    load_before: tuple[float, ...] = field(default_factory=os.getloadavg)
    load_after: tuple[float, ...] = ()
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.cases) and all(case.ok for case in self.cases)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "browser": self.browser,
            "load_before": list(self.load_before),
            "load_after": list(self.load_after or os.getloadavg()),
            "ok": self.ok,
            "cases": [case.to_json() for case in self.cases],
        }

    def table(self) -> str:
        """A Markdown table, then the failed expectations."""
        rows = [COLUMNS, tuple("---:" if i in (1, 2, 3, 5, 6) else "---" for i in range(9))]
        for case in self.cases:
            rows.append(
                (
                    case.name,
                    _number(case.cold_ms),
                    _number(case.warm_median),
                    f"{case.speedup:.1f}x" if case.speedup else "-",
                    str(case.hit).lower(),
                    str(case.steps),
                    str(case.model_calls),
                    ", ".join(case.refusals) or "-",
                    "ok" if case.ok else "FAILED",
                )
            )
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
        lines.append(
            f"{self.runs} warm runs per case (median); {self.browser}; load average "
            f"{self.load_before[0]:.2f} before, {(self.load_after or os.getloadavg())[0]:.2f} "
            "after"
        )
        lines.append(
            "The cold path here is scripted (no model): it measures the replay's browser work"
            " and its refusals, not what a replay saves; for the replay against the agent with a"
            " model deciding each step run benchmarks/replay_bench.py."
        )
        for case in self.cases:
            lines.extend(f"FAILED {case.name}: {failure}" for failure in case.failures)
        return "\n".join(lines)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
