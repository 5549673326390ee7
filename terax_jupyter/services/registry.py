"""The service areas in one list, and what each declares about itself.

Each ``services/<area>/__init__.py`` holds an ``AREA``: its handler modules (in routing
order), its OpenAPI fragments, and its manager: the class's dotted name (the default of
``TeraxApp.<area>_manager_class``, which an administrator may point at a subclass) and
the factory that builds it. Everything is named by a string and imported when asked for,
so that reading the list costs an idle server nothing: the OpenAPI fragments load on the
document's first request, the agent's and the browser's managers on their first use
(``later=True``).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

from traitlets import TraitError, Type

from terax_jupyter.services.area import Area

if TYPE_CHECKING:
    from types import ModuleType


# The areas, in the order of their routes, of the OpenAPI document's paths and of their
# building at start (a factory sees the areas before it: the preview's, the terminals).
AREA_NAMES = (
    "fs",
    "pty",
    "git",
    "workspace",
    "secrets",
    "kernels",
    "ai",
    "browser",
    "preview",
    "meta",
)


@cache
def areas() -> tuple[Area, ...]:
    """Every area's declaration (imports the area packages, which import nothing heavy)."""
    found = []
    for name in AREA_NAMES:
        area = importlib.import_module(f"terax_jupyter.services.{name}").AREA
        assert area.name == name, f"services/{name}/__init__.py declares {area.name}"
        found.append(area)
    return tuple(found)


def area(name: str) -> Area:
    return next(each for each in areas() if each.name == name)


def handler_modules() -> tuple[ModuleType, ...]:
    return tuple(module for each in areas() for module in each.handler_modules())


def openapi_fragments() -> tuple[ModuleType, ...]:
    return tuple(module for each in areas() for module in each.openapi_fragments())


def managed_areas(*, later: bool) -> tuple[Area, ...]:
    """The areas with a manager built at start (``later=False``) or on first use."""
    return tuple(each for each in areas() if each.build is not None and each.later is later)


class ManagerClass(Type):
    """``TeraxApp.<area>_manager_class``: the area's manager class or a subclass of it.

    The default names the area's own class by its dotted name and stays a name until
    ``resolve`` imports it: jupyter_server reads every trait of an extension at start, and
    the agent's and the browser's classes load with their first use. A configured class (a
    class, or a dotted name) is imported and checked when it is set, at start.
    """

    def __init__(self, area_name: str) -> None:
        declared = area(area_name)
        self.area_name = area_name
        super().__init__(
            default_value=declared.manager_class_name,
            klass=declared.manager_class_name,
            help=declared.help,
        )
        self.tag(config=True)

    def instance_init(self, obj: Any) -> None:
        pass  # traitlets' Type would import both names here, when the app is built

    def validate(self, obj: Any, value: Any) -> Any:
        if value == self.default_value:
            return value  # the area's own class, imported by resolve
        return self._checked(obj, value)

    def resolve(self, obj: Any) -> type:
        """The class ``obj`` has for this trait, imported now if it is still a name."""
        value = getattr(obj, str(self.name))
        return value if isinstance(value, type) else self._checked(obj, value)

    def _checked(self, obj: Any, value: Any) -> type:
        if isinstance(self.klass, str):
            self.klass = self._resolve_string(self.klass)
        checked: type = super().validate(obj, value)
        return checked

    def error(
        self, obj: Any, value: Any, error: Exception | None = None, info: str | None = None
    ) -> NoReturn:
        owner = type(obj).__name__ if obj is not None else "TeraxApp"
        raise TraitError(
            f"{owner}.{self.name} must be {self.info()} (the manager of "
            f"services/{self.area_name}/), not {value!r}"
        )
