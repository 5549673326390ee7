"""What a service area declares about itself (its ``AREA``), in plain data.

Kept apart from the registry (``registry.py``, which reads these and defines the manager
class traits with traitlets) so that importing an area package needs nothing but the
standard library: a key file is read at start by ``secrets/startup.py`` run by the system's
Python as another user, where no Jupyter package is installed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from traitlets.config import Configurable


@dataclass(frozen=True)
class Setup:
    """What a manager factory gets besides the parts built before it."""

    manager_class: type  # the value of TeraxApp.<area>_manager_class
    parent: Configurable  # the app: managers read their configuration through it
    state_dir: str
    serverapp: Any  # jupyter_server's ServerApp (its base URL and port)


@dataclass(frozen=True)
class Area:
    name: str
    handlers: tuple[str, ...] = ()  # modules with ``default_handlers``, relative to the area
    openapi: tuple[str, ...] = ()  # modules with ``PATHS`` and ``SCHEMAS``
    manager: str = ""  # "module.Class" relative to the area; "" for an area without one
    # ``build(setup, parts)``: the context's entries for this area, from ``parts`` (the
    # security layer and the entries of the areas built before it, by attribute).
    build: Callable[[Setup, Any], dict[str, Any]] | None = None
    later: bool = False  # built on first use (TeraxContext), not at start
    help: str = ""  # of the manager class trait

    @property
    def package(self) -> str:
        return f"terax_jupyter.services.{self.name}"

    @property
    def manager_class_name(self) -> str:
        return f"{self.package}.{self.manager}"

    @property
    def manager_trait(self) -> str:
        return f"{self.name}_manager_class"

    def make(self, setup: Setup, parts: Any) -> dict[str, Any]:
        """The context's entries for this area (its ``build``)."""
        assert self.build is not None, f"services/{self.name}/ has no manager"
        return self.build(setup, parts)

    def handler_modules(self) -> list[ModuleType]:
        return [importlib.import_module(f"{self.package}.{name}") for name in self.handlers]

    def openapi_fragments(self) -> list[ModuleType]:
        return [importlib.import_module(f"{self.package}.{name}") for name in self.openapi]
