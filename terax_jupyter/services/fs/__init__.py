"""File-system service: read, write, list, search, grep, glob and watch inside workspace roots."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    import os

    from terax_jupyter.services.fs.grep import GrepSearch
    from terax_jupyter.services.fs.search import FileSearch
    from terax_jupyter.services.fs.watch import WatchService

    security, parent = parts.security, setup.parent
    search = FileSearch(security, parent=parent)
    watch = WatchService(security, parent=parent)
    files = setup.manager_class(security, parent=parent)
    # Changes made through Terax, and changes a watch sees, make the file index stale.
    for source in (watch, files):
        source.listeners.append(lambda kind, path: search.invalidate(os.path.dirname(path)))
    grep = GrepSearch(security, parent=parent)
    return {"files": files, "search": search, "grep": grep, "watch": watch}


AREA = Area(
    "fs",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="manager.FileManager",
    build=_build,
    help="The class of the file manager (reads and writes in the workspace roots).",
)
