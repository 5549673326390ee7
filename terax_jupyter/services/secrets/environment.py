"""Environments for processes the server starts, without the server's provider keys.

One function for every such process: the agent's commands (which drop more on top of it)
and the user's terminals. A key the server got from its environment or configuration is
the administrator's, bound to one provider's address; a child process would carry it
anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


def without_keys(
    environ: Mapping[str, str], names: Iterable[str], values: Iterable[str] = ()
) -> dict[str, str]:
    """A copy of ``environ`` without the variables ``names`` names (in any case) and without
    any variable whose value is one of ``values`` (a key under a name we do not know)."""
    hidden_names = {name.upper() for name in names}
    hidden_values = {value for value in values if value}
    return {
        name: value
        for name, value in environ.items()
        if name.upper() not in hidden_names and value not in hidden_values
    }
