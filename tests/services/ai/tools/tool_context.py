"""The tool context the tool tests run in: the real security layer and fs services, an
in-memory read ledger, and the events a tool emits kept on ``context.emitted``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from terax_jupyter.services.ai.tools.base import ToolContext
from terax_jupyter.services.fs.grep import GrepSearch
from terax_jupyter.services.fs.manager import FileManager
from terax_jupyter.services.fs.search import FileSearch

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer


class Ledger:
    """The read-before-edit ledger, in memory."""

    def __init__(self) -> None:
        self.etags: dict[str, str] = {}

    def record(self, path: str, etag: str) -> None:
        self.etags[path] = etag

    def etag(self, path: str) -> str | None:
        return self.etags.get(path)


def make_context(security: SecurityLayer) -> ToolContext:
    emitted: list[dict[str, Any]] = []
    context = ToolContext(
        session_id="s1",
        security=security,
        files=FileManager(security),
        search=FileSearch(security),
        grep=GrepSearch(security),
        reads=Ledger(),
        processes=None,  # type: ignore[arg-type]  # no tool here starts processes
        emit=emitted.append,
    )
    context.emitted = emitted  # type: ignore[attr-defined]
    return context


def server_context(serverapp: Any) -> ToolContext:
    """A tool context over a test server's own security layer, files and kernels (the ones
    Lab uses), for the notebook tools that need kernel specs or kernels."""
    from terax_jupyter.base import SETTINGS_KEY

    terax = serverapp.web_app.settings[SETTINGS_KEY]
    context = make_context(terax.security)
    context.files = terax.files
    context.kernels = terax.kernels
    return context
