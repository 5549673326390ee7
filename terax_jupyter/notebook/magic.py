"""The ``%%terax`` cell magic: the cell is a prompt to the current agent session.

    %%terax
    Explain what src/cli.py does.

    %%terax --session 3f2c... --model openai/gpt-4.1 --policy deny --quiet
    ...

``--session`` continues that session (and makes it current); without a current session a
new ``coder`` session is created. The result is kept in the ``_terax`` variable.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from terax_jupyter.notebook.results import AgentResult

RESULT_VARIABLE = "_terax"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(f"%%terax: {message}\n{self.format_usage()}")


def parser() -> argparse.ArgumentParser:
    options = _Parser(prog="%%terax", add_help=False)
    options.add_argument("--session", help="continue this session (an id)")
    options.add_argument("--model", help="provider/model for this session")
    options.add_argument("--agent", help="the agent (coder, ask, plan, ...)")
    options.add_argument("--policy", choices=["deny"], help="deny what no person answers")
    options.add_argument("--new", action="store_true", help="start a new session")
    options.add_argument("--quiet", action="store_true", help="do not stream the run")
    options.add_argument("--timeout", type=float, help="cancel the run after this many seconds")
    return options


def terax_cell(line: str, cell: str, user_ns: dict[str, Any] | None = None) -> AgentResult:
    import terax_jupyter.notebook as terax

    arguments = parser().parse_args(shlex.split(line))
    prompt = cell.strip()
    if not prompt:
        raise ValueError("%%terax: the cell is the prompt; it is empty.")
    chosen = terax.current()
    fields = {"model": arguments.model, "agent": arguments.agent, "policy": arguments.policy}
    if arguments.session or arguments.new or chosen is None:
        chosen = terax.agent(session=arguments.session, **fields)
    elif arguments.model or arguments.agent or arguments.policy:
        fields["policy"] = arguments.policy or chosen.policy  # the session keeps its policy
        chosen = terax.agent(session=chosen, **fields)
    result = chosen.ask(prompt, display=not arguments.quiet, timeout=arguments.timeout)
    if user_ns is not None:
        user_ns[RESULT_VARIABLE] = result
    return result


def register(ipython: Any) -> None:
    def terax(line: str, cell: str) -> None:
        terax_cell(line, cell, ipython.user_ns)

    terax.__doc__ = __doc__
    ipython.register_magic_function(terax, magic_kind="cell", magic_name="terax")
