"""The arguments of a tab action, read the same way for the agent's browser tools and the REST
tab actions: which element (a ref, or a role and a name) and which condition to wait for.

The tools' JSON schemas already hold the model to these shapes; a REST body has only this.
"""

from __future__ import annotations

from typing import Any

from terax_jupyter.exceptions import InvalidRequest

WAIT_CONDITIONS = ("url_contains", "title_contains", "text_contains", "selector")
DEFAULT_WAIT_SECONDS = 10
MAX_WAIT_SECONDS = 60


def element_target(values: dict[str, Any], *, reason: str) -> dict[str, str]:
    """``ref``, ``role`` and ``name`` as given (the tab checks that they name one element)."""
    target: dict[str, str] = {key: values[key] for key in ("ref", "role", "name") if key in values}
    if not all(isinstance(value, str) for value in target.values()):
        raise InvalidRequest("ref, role and name are text.", reason=reason)
    return target


def described(target: dict[str, str]) -> str:
    """The element in words: its ref, or "the button 'Delete'"."""
    return target.get("ref") or f"the {target.get('role')} {target.get('name')!r}"


def wait_condition(values: dict[str, Any], *, reason: str) -> tuple[dict[str, str], float]:
    """The one condition to wait for, and the seconds to wait (1 to 60; 10 by default)."""
    condition = {
        key: values[key]
        for key in WAIT_CONDITIONS
        if isinstance(values.get(key), str) and values[key]
    }
    if len(condition) != 1 or any(key in values for key in WAIT_CONDITIONS if key not in condition):
        raise InvalidRequest(
            "Give exactly one of url_contains, title_contains, text_contains, selector (as text).",
            reason=reason,
        )
    timeout = values.get("timeout", DEFAULT_WAIT_SECONDS)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 1 <= timeout <= MAX_WAIT_SECONDS
    ):
        raise InvalidRequest(f"'timeout' is 1 to {MAX_WAIT_SECONDS} seconds.", reason=reason)
    return condition, float(timeout)
