"""The view a run gets in a cell: the widget when the frontend can show one, else text."""

from __future__ import annotations

from terax_jupyter.notebook.views import RunView, TextView


def best_view() -> RunView:
    """The richest view available here."""
    return TextView()
