"""Writes the settings reference of docs/configuration.md from the configurable traits.

Every module of the package is imported and every ``Configurable`` subclass defined in it
that has ``.tag(config=True)`` traits of its own gets a table (name, type, default, help), so a
new class or trait appears without a hand-kept list. Only the text between the two markers is
generated; the prose around it is written by hand. ``--check`` fails with a diff when the file
is not what this module writes (the test suite runs the same comparison).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import sys
from typing import TYPE_CHECKING, TypeVar

from traitlets import Enum, HasTraits, Type
from traitlets.config import Configurable

import terax_jupyter
from terax_jupyter.security import fileio
from terax_jupyter.security.denylist import DenyList
from terax_jupyter.security.paths import Access, PathGuard
from terax_jupyter.security.workspace import WorkspaceRoots

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from traitlets import TraitType

BEGIN = "<!-- generated: python -m terax_jupyter.devtools.config_docs -->"
END = "<!-- end generated -->"
PACKAGE = terax_jupyter.__name__
REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(terax_jupyter.__file__)))
DEFAULT_PATH = os.path.join(REPOSITORY, "docs", "configuration.md")
MAX_BYTES = 1024 * 1024
_T = TypeVar("_T")


def configurable_classes() -> list[type[Configurable]]:
    """Every configurable class of the package with config traits of its own, app first."""
    for module in pkgutil.walk_packages(terax_jupyter.__path__, f"{PACKAGE}."):
        # A __main__ module runs its program when imported (``jupyter terax``, the evals).
        if module.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(module.name)
    found = {
        cls
        for cls in _subclasses(Configurable)
        if cls.__module__.split(".")[0] == PACKAGE and cls.class_own_traits(config=True)
    }
    return sorted(
        found, key=lambda cls: (cls.__module__ != f"{PACKAGE}.app", cls.__module__, cls.__name__)
    )


def _subclasses(cls: type[_T]) -> Iterator[type[_T]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def render_reference(classes: Iterable[type[Configurable]] | None = None) -> str:
    """The generated part: one section per class, one table row per trait."""
    parts: list[str] = []
    for cls in configurable_classes() if classes is None else classes:
        parts.append(f"### `{cls.__name__}`\n")
        parts.append(f"`{cls.__module__}`. {_first_line(cls.__doc__)}".rstrip() + "\n")
        parents = [
            base.__name__
            for base in cls.__mro__[1:]
            if base.__module__.split(".")[0] == PACKAGE
            and issubclass(base, HasTraits)
            and base.class_own_traits(config=True)
        ]
        if parents:
            parts.append(f"Also the settings of {', '.join(f'`{p}`' for p in parents)}.\n")
        parts.append("| setting | type | default | help |\n| --- | --- | --- | --- |")
        for name, trait in sorted(cls.class_own_traits(config=True).items()):
            default = _default(cls, name, trait)
            parts.append(f"| `{name}` | {_type(trait)} | {default} | {_cell(trait.help or '')} |")
        parts.append("")
    return "\n".join(parts)


def _first_line(doc: str | None) -> str:
    lines = (doc or "").strip().splitlines()
    return _cell(lines[0]) if lines else ""


def _type(trait: TraitType) -> str:
    if isinstance(trait, Enum):
        return "`Enum`: " + ", ".join(f"`{value}`" for value in trait.values or ())
    if isinstance(trait, Type):
        klass = trait.klass if isinstance(trait.klass, str) else trait.klass.__qualname__
        return f"`Type`: a subclass of `{klass.rsplit('.', 1)[-1]}`"
    return f"`{type(trait).__name__}`"


def _default(cls: type[Configurable], name: str, trait: TraitType) -> str:
    # A default a @default method computes depends on the machine: say so instead of a value.
    generators = (vars(base).get("_trait_default_generators", {}) for base in cls.__mro__)
    if any(name in found for found in generators) or hasattr(cls, f"_{name}_default"):
        return "computed at start (see help)"
    return f"`{_stable(trait.default_value_repr())}`"


def _stable(text: str) -> str:
    """Machine-specific paths in a default replaced by what they stand for."""
    replacements = {
        os.path.expanduser("~"): "~",
        sys.prefix: "<sys.prefix>",
        REPOSITORY: "<checkout>",
    }
    for value, placeholder in sorted(replacements.items(), key=lambda item: -len(item[0])):
        if len(value) > 1:
            text = text.replace(value, placeholder)
    return text


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rewrite(document: str, reference: str) -> str:
    """``document`` with the text between the markers replaced by ``reference``."""
    start = document.find(BEGIN)
    end = document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the markers {BEGIN!r} and {END!r} are missing or out of order")
    return f"{document[: start + len(BEGIN)]}\n\n{reference.rstrip()}\n\n{document[end:]}"


def _guard(path: str) -> PathGuard:
    deny = DenyList()
    return PathGuard(WorkspaceRoots(os.path.dirname(os.path.abspath(path)), deny), deny)


def read_document(path: str = DEFAULT_PATH) -> str:
    checked = _guard(path).check(os.path.abspath(path), Access.READ)
    data, _info = fileio.read_bytes(checked, MAX_BYTES)
    return data.decode("utf-8")


def expected_document(path: str = DEFAULT_PATH) -> str:
    return rewrite(read_document(path), render_reference())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m terax_jupyter.devtools.config_docs")
    parser.add_argument("--check", action="store_true", help="fail with a diff if stale")
    parser.add_argument("--path", default=DEFAULT_PATH, help="the file (docs/configuration.md)")
    options = parser.parse_args(argv)
    current = read_document(options.path)
    expected = rewrite(current, render_reference())
    if options.check:
        if current == expected:
            return 0
        diff = difflib.unified_diff(
            current.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            fromfile=options.path,
            tofile=f"{options.path} (generated)",
        )
        sys.stdout.writelines(diff)
        print(f"\n{options.path} is stale: run python -m {__spec__.name}", file=sys.stderr)
        return 1
    if current != expected:
        checked = _guard(options.path).check(os.path.abspath(options.path), Access.WRITE)
        fileio.write_atomic(checked, expected.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
