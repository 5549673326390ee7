"""What counts as this server's activity for JupyterHub's idle culler.

jupyter_server's ``ServerApp.web_app.last_activity()``, which jupyterhub-singleuser reports to
the hub and jupyterhub-idle-culler reads there, is the newest of: the server's start, its
kernels' activity, its API requests (``api_last_activity``, set when a request finishes),
``last_activity_times``, and every web app setting whose name ends in ``_last_activity``. Lab's
terminals count through ``terminal_last_activity``. Terax's terminal WebSocket traffic and its
agent runs are none of those (a WebSocket message is not an API request; a run goes on after its
request finished), so Terax records them in ``terax_last_activity``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jupyter_server._tz import utcnow
from tornado.ioloop import PeriodicCallback

if TYPE_CHECKING:
    from collections.abc import Callable, MutableMapping

SETTING = "terax_last_activity"
# How often work in progress (an agent run) is recorded: well under the hub's report interval
# (300 s by default), so a long run never looks idle to the culler.
BUSY_EVERY_SECONDS = 5.0


def mark(settings: MutableMapping[str, Any]) -> None:
    """Record activity now in the web app's ``settings`` (a handler's ``self.settings``)."""
    settings[SETTING] = utcnow()


def mark_while_busy(
    settings: Callable[[], MutableMapping[str, Any] | None], busy: Callable[[], bool]
) -> PeriodicCallback:
    """Record activity every ``BUSY_EVERY_SECONDS`` while ``busy()``; the started callback.

    ``settings`` returns the web app's settings (None before the web app exists)."""

    def tick() -> None:
        target = settings()
        if target is not None and busy():
            mark(target)

    callback = PeriodicCallback(tick, BUSY_EVERY_SECONDS * 1000)
    callback.start()
    return callback
