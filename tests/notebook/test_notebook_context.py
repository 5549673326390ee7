"""What a prompt from a notebook cell says of where it was asked: the notebook the kernel's
session is for and the cell of the current execute request, in the Lab panel's form."""

from __future__ import annotations

from typing import Any

from terax_jupyter.notebook.kernel import notebook_cell, with_notebook_context


class Kernel:
    """The part of ipykernel's kernel the lookup reads: the current shell request."""

    def __init__(self, parent: Any) -> None:
        self.parent = parent

    def get_parent(self, channel: str) -> Any:
        assert channel == "shell"
        return self.parent


LAB_REQUEST = {"metadata": {"cellId": "c-1"}, "content": {"code": "terax.agent().ask('why?')"}}


def test_the_notebook_and_cell_come_from_the_session_and_the_request() -> None:
    environ = {"JPY_SESSION_NAME": "work/sales.ipynb"}
    assert notebook_cell(environ, Kernel(LAB_REQUEST)) == (
        "work/sales.ipynb",
        "c-1",
        "terax.agent().ask('why?')",
    )
    # nbclient sends no cell id; a console's kernel has no notebook; a script has no kernel.
    no_id = {"metadata": {}, "content": {"code": "x"}}
    assert notebook_cell(environ, Kernel(no_id)) == ("work/sales.ipynb", None, "x")
    assert notebook_cell({"JPY_SESSION_NAME": "console-1"}, Kernel(LAB_REQUEST))[0] is None
    assert notebook_cell({}, Kernel(None)) == (None, None, None)


def test_the_context_has_the_panels_form() -> None:
    assert with_notebook_context("Why?", None, None, None) == "Why?"
    assert with_notebook_context("Why?", "a.ipynb", None, None) == (
        "Why?\n\nAttached files (read them as needed):\n- a.ipynb"
    )
    code = "print('```')"
    assert with_notebook_context("Why?", "a.ipynb", "c-1", code) == (
        "Why?\n\nNotebook cell a.ipynb#c-1 (notebook_read shows it with its outputs):\n"
        "````python\nprint('```')\n````"
    )
    # %%terax: the cell is the prompt, so it is not sent twice.
    magic = with_notebook_context("Say hi.", "a.ipynb", "c-2", "%%terax\nSay hi.")
    assert magic.endswith(
        "#c-2 (notebook_read shows it with its outputs):\n(the cell holds this prompt)"
    )
    assert magic.count("Say hi.") == 1
