"""The machine line every benchmark prints: cores, CPU model, Python, and what it compares."""

from __future__ import annotations

import contextlib
import os
import sys


def describe(*versions: str) -> str:
    """``N cores, <CPU model>, Python x.y.z`` and then ``versions`` (e.g. ``tornado 6.5``)."""
    model = "unknown CPU"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return ", ".join(
        [f"{os.cpu_count()} cores", model, f"Python {sys.version.split()[0]}", *versions]
    )
