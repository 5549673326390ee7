"""Cell runs in notebooks' live kernels (the agent's notebook_run), and the Lab pages that
take their outputs into the notebooks they have open."""

from __future__ import annotations

from typing import Any

from terax_jupyter.services.area import Area, Setup


def _build(setup: Setup, parts: Any) -> dict[str, Any]:
    serverapp = setup.serverapp
    runner = setup.manager_class(
        parts.security,
        parts.files,
        kernel_manager=serverapp.kernel_manager,
        session_manager=serverapp.session_manager,
        parent=setup.parent,
    )
    return {"kernels": runner}


AREA = Area(
    "kernels",
    handlers=("handlers",),
    openapi=("openapi",),
    manager="runner.KernelRunner",
    build=_build,
    help="The class that runs notebook cells in their kernels for the agent.",
)
