"""What the client knows about the process it runs in: a kernel or not, who started it, and
whether a person is there to answer."""

from __future__ import annotations

import os
import re
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


def notebook_cell(
    environ: Mapping[str, str] | None = None, kernel: Any = None
) -> tuple[str | None, str | None, str | None]:
    """(notebook path, cell id, cell source) of the cell running now, as far as known.

    The path is the one the server started this kernel's session for (``JPY_SESSION_NAME``,
    relative to the server's root); the cell id and source come from the current execute
    request (JupyterLab sends ``cellId`` in its metadata). Unknown parts are None: a script,
    nbclient, a console."""
    environ = os.environ if environ is None else environ
    path = environ.get("JPY_SESSION_NAME") or None
    if path is not None and not path.lower().endswith(".ipynb"):
        path = None  # a console's or a file's kernel
    kernel = ipython_kernel() if kernel is None else kernel
    parent: Any = None
    if kernel is not None:
        try:
            parent = kernel.get_parent("shell")
        except Exception:  # an older ipykernel, or no request
            parent = getattr(kernel, "_parent_header", None)
    parent = parent if isinstance(parent, dict) else {}
    cell_id = (parent.get("metadata") or {}).get("cellId")
    code = (parent.get("content") or {}).get("code")
    return (
        path,
        cell_id if isinstance(cell_id, str) and cell_id else None,
        code if isinstance(code, str) else None,
    )


def with_notebook_context(
    prompt: str, path: str | None, cell_id: str | None, code: str | None
) -> str:
    """The prompt with the notebook it was asked from, in the form the Lab panel's
    attachments have (so the panel shows it apart from what was typed)."""
    if path is None:
        return prompt
    if cell_id is None or code is None:
        return f"{prompt.strip()}\n\nAttached files (read them as needed):\n- {path}"
    heading = f"Notebook cell {path}#{cell_id} (notebook_read shows it with its outputs):"
    if prompt.strip() and prompt.strip() in code:  # %%terax: the cell is the prompt
        return f"{prompt.strip()}\n\n{heading}\n(the cell holds this prompt)"
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{prompt.strip()}\n\n{heading}\n{fence}python\n{code}\n{fence}"
