"""What the client knows about the process it runs in: a kernel or not, who started it, and
whether a person is there to answer."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

# "1" forces headless behaviour (no one answers approvals), "0" forces interactive.
HEADLESS_VARIABLE = "TERAX_HEADLESS"


def ipython_kernel() -> Any | None:
    """The running IPython kernel (ipykernel), or None in a plain interpreter or a terminal
    IPython."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def parent_pid(environ: Mapping[str, str] | None = None) -> int | None:
    """The pid of the process that launched this kernel (``jupyter_client`` sets
    ``JPY_PARENT_PID``); on Windows it is a handle, not a pid, so None there."""
    environ = os.environ if environ is None else environ
    value = environ.get("JPY_PARENT_PID", "")
    if sys.platform == "win32" or not value.isdigit():
        return None
    return int(value)


def headless(environ: Mapping[str, str] | None = None, kernel: Any = None) -> bool:
    """Whether no person can answer an approval from here.

    ``TERAX_HEADLESS=1``/``0`` decides when set. In a kernel, the current execute request
    says: nbclient and papermill send ``allow_stdin: false`` (nobody is at a frontend to
    type), JupyterLab and Notebook send true. Outside a kernel (a script), headless."""
    environ = os.environ if environ is None else environ
    forced = environ.get(HEADLESS_VARIABLE, "").strip().lower()
    if forced in ("1", "true", "yes"):
        return True
    if forced in ("0", "false", "no"):
        return False
    kernel = ipython_kernel() if kernel is None else kernel
    if kernel is None:
        return True
    return not bool(getattr(kernel, "_allow_stdin", False))
