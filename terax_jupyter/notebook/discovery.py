"""Find the Terax server a kernel runs under, with no configuration.

In order (see ``terax_jupyter.client.discovery``): ``url``/``token`` arguments or
``TERAX_URL``/``TERAX_TOKEN`` (then nothing else); the server whose pid is the kernel's
``JPY_PARENT_PID`` (the one that started it: Lab's kernels); ``JUPYTER_SERVER_URL`` with
``JUPYTER_TOKEN``; JupyterHub's environment; the running servers whose root holds the
kernel's folder, then the others, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from terax_jupyter.client.discovery import DiscoveryError, ServerTarget, discover, probe
from terax_jupyter.notebook import kernel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from terax_jupyter.client.discovery import Candidate

HINT = (
    "run this notebook in JupyterLab started with `jupyter terax` (or a Jupyter server with "
    "the Terax extension), or say which server to use: "
    "terax.connect(url='http://127.0.0.1:8888/', token='...'), or set TERAX_URL and TERAX_TOKEN"
)

__all__ = ["HINT", "DiscoveryError", "ServerTarget", "find_server"]


def find_server(
    url: str | None = None,
    token: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    folders: Iterable[str] | None = None,
    running: Iterable[Mapping[str, Any]] | None = None,
    check: Callable[[Candidate], dict[str, Any]] = probe,
) -> ServerTarget:
    """The server to use, or DiscoveryError saying what was tried and what to pass."""
    return discover(
        url,
        token,
        environ=environ,
        folders=folders,
        running=running,
        check=check,
        parent_pid=kernel.parent_pid(environ),
        hint=HINT,
    )
