"""Drive the Terax agent and terminals from notebook cells.

    import terax_jupyter.notebook as terax

    agent = terax.agent(model="openai/gpt-4.1", agent="coder")
    result = agent.ask("Add a --verbose flag to cli.py")   # streams; approvals inline
    result.text, result.tool_calls, result.files_changed, result.usage

    term = terax.terminal(cwd=".")
    res = term.run("pytest -q", timeout=300)               # exit_code, output, duration

    %load_ext terax_jupyter.notebook                        # then: %%terax in a cell

The server is the one this kernel runs under, found without configuration
(``discovery.py``); ``terax.connect(url=..., token=...)`` names another. Sessions are the
server's: a notebook's session shows in the Lab AI panel, and ``terax.agent(session=id)``
continues one started there. Unattended runs (nbclient, papermill) answer approvals only
through an explicit ``policy=``; what it leaves open is denied with a note, never approved.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from terax_jupyter.client.discovery import DiscoveryError
from terax_jupyter.notebook.agent import Agent, AgentRunError
from terax_jupyter.notebook.connection import Connection, connect, connection_for
from terax_jupyter.notebook.policy import Approval, ApprovalPolicy
from terax_jupyter.notebook.results import AgentResult, ApprovalRecord, ToolCall, Usage
from terax_jupyter.notebook.terminal import (
    CommandFailed,
    CommandResult,
    CommandTimeout,
    Terminal,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.notebook.views import RunView

__all__ = [
    "Agent",
    "AgentResult",
    "AgentRunError",
    "Approval",
    "ApprovalPolicy",
    "ApprovalRecord",
    "CommandFailed",
    "CommandResult",
    "CommandTimeout",
    "Connection",
    "DiscoveryError",
    "Terminal",
    "ToolCall",
    "Usage",
    "agent",
    "connect",
    "current",
    "load_ipython_extension",
    "sessions",
    "terminal",
]

_current_lock = threading.Lock()
_current: Agent | None = None


def agent(
    model: str | None = None,
    *,
    agent: str | None = None,
    provider: str | None = None,
    session: str | Agent | dict[str, Any] | None = None,
    policy: Any = None,
    plan_mode: bool | None = None,
    title: str | None = None,
    display: bool | Callable[[], RunView] = True,
    notebook: bool | str = True,
    url: str | None = None,
    token: str | None = None,
) -> Agent:
    """An agent session: new, or ``session`` (an id from the Lab AI panel, or an Agent)
    continued. ``model`` is ``"provider/model"`` or a model of the default provider;
    ``agent`` one of the server's agents (``coder`` for a new session). ``policy`` answers
    approvals: a list of auto-approve rules, a callable ``(approval) -> "approve" | "deny" |
    None``, or ``"deny"``; what it leaves open waits for a person, or is denied in a
    headless run. ``notebook``: each prompt names the notebook and cell it is asked from
    (True, where the kernel knows them), another notebook (its path), or none (False)."""
    from terax_jupyter.notebook.agent import create_agent

    created = create_agent(
        connection_for(url, token),
        model=model,
        agent=agent,
        provider=provider,
        session=session,
        policy=policy,
        plan_mode=plan_mode,
        title=title,
        display=display,
        notebook=notebook,
    )
    set_current(created)
    return created


def terminal(
    cwd: str | None = None,
    *,
    name: str | None = None,
    shell: str | None = None,
    session: str | Terminal | None = None,
    url: str | None = None,
    token: str | None = None,
) -> Terminal:
    """A new Terax terminal in ``cwd`` (relative to the notebook's folder; by default that
    folder), or the existing terminal ``session`` (a Lab terminal tab's id)."""
    from terax_jupyter.notebook.terminal import open_terminal

    return open_terminal(
        connection_for(url, token), cwd=cwd, name=name, shell=shell, session=session
    )


def sessions(
    query: str | None = None, *, url: str | None = None, token: str | None = None
) -> list[dict[str, Any]]:
    """The server's agent sessions, newest first (the Lab AI panel's list)."""
    answer = connection_for(url, token).call("GET", "ai/sessions", params={"q": query})
    return list(answer["sessions"])


def current() -> Agent | None:
    """The agent ``%%terax`` talks to: the one created or asked last."""
    return _current


def set_current(chosen: Agent) -> None:
    global _current
    with _current_lock:
        _current = chosen


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext terax_jupyter.notebook``: registers the ``%%terax`` cell magic."""
    from terax_jupyter.notebook.magic import register

    register(ipython)
