"""What a cell does beyond computing, as marks for its run approval.

A cell that runs shell commands, installs packages, starts programs or opens network
connections is marked on the approval card, and no auto-approve rule covers its run. This is
a reading of the source for the person approving, not a sandbox: code can hide what it does
(``getattr(__import__("o"+"s"), "system")``), which is why runs are approved at all.
"""

from __future__ import annotations

import re

# (mark, pattern); patterns read IPython source: magics, shell escapes and Python calls.
_RISKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("shell escape", re.compile(r"^\s*!|^\s*%%?(?:sx|system)\b|=\s*!", re.MULTILINE)),
    ("installs packages", re.compile(r"^\s*%%?(?:pip|conda|mamba|micromamba|uv)\b", re.M)),
    (
        "runs a script cell",
        re.compile(r"^\s*%%(?:bash|sh|script|perl|ruby|python\d?|pypy|writefile)\b", re.M),
    ),
    (
        "starts processes",
        re.compile(
            r"\b(?:os\.(?:system|popen|exec\w*|spawn\w*|fork|kill)|subprocess\b|"
            r"pty\.spawn|multiprocessing\b|asyncio\.create_subprocess_\w+)"
        ),
    ),
    (
        "network access",
        re.compile(
            r"\b(?:requests|httpx|urllib\d?|aiohttp|socket|http\.client|ftplib|smtplib|"
            r"paramiko|websockets?)\b|\bcurl\b|\bwget\b|https?://"
        ),
    ),
    ("runs dynamic code", re.compile(r"\b(?:exec|eval|compile|__import__)\s*\(")),
)


def cell_risks(source: str) -> list[str]:
    """The marks of ``source``, in a fixed order; empty for plain computation."""
    return [mark for mark, pattern in _RISKS if pattern.search(source)]
