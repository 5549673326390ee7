"""``term.view()``: a live xterm.js view of a Terax terminal session in a cell (anywidget).

The page connects to the session's stream WebSocket itself, with its own Jupyter login, so
it shows what runs while the kernel is busy in ``term.run()``, and keys typed there reach
the shell, as in a Lab terminal tab of the same session. xterm.js's ES module is not
loaded from the network: the Lab extension's build copies it into ``static/vendor/``
(``jlpm build:vendor``), and it is sent to the page inside the widget's module.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from terax_jupyter.notebook.widget import STATIC

if TYPE_CHECKING:
    from terax_jupyter.notebook.terminal import Terminal

VENDOR = STATIC / "vendor"

_class: type | None = None


class ViewUnavailable(RuntimeError):
    """The terminal view cannot be shown here (no anywidget, or no bundled xterm.js)."""


def _module() -> tuple[str, str]:
    """The widget's ES module (xterm.js first) and its CSS."""
    xterm, xterm_css = VENDOR / "xterm.mjs", VENDOR / "xterm.css"
    if not xterm.is_file() or not xterm_css.is_file():
        raise ViewUnavailable(
            "The terminal view needs xterm.js, which the Lab extension's build copies into "
            f"{VENDOR}; rebuild it (`jlpm build` in labextension/, or reinstall the package)."
        )
    script = f"const XTERM_SOURCE = {json.dumps(xterm.read_text(encoding='utf-8'))};\n"
    script += (STATIC / "terminal.js").read_text(encoding="utf-8")
    css = xterm_css.read_text(encoding="utf-8") + (STATIC / "terminal.css").read_text(
        encoding="utf-8"
    )
    return script, css


def _widget_class() -> type:
    try:
        import anywidget
        import traitlets
    except ImportError as error:
        raise ViewUnavailable(
            "The terminal view needs anywidget (pip install anywidget)."
        ) from error
    script, css = _module()

    class TerminalWidget(anywidget.AnyWidget):
        _esm = script
        _css = css
        session_id = traitlets.Unicode().tag(sync=True)
        columns = traitlets.Int(100).tag(sync=True)
        rows = traitlets.Int(24).tag(sync=True)

    return TerminalWidget


def terminal_widget(terminal: Terminal, *, rows: int | None = None) -> Any:
    """The widget of ``terminal``, at the session's size (so the Lab tab keeps its layout)."""
    global _class
    if _class is None:
        _class = _widget_class()
    session = terminal.refresh()
    return _class(
        session_id=terminal.id,
        columns=int(session.get("columns") or 100),
        rows=int(rows or session.get("rows") or 24),
    )
