"""AgentRuntime: what a run and a plan's apply use of the server, and nothing else.

``AgentRun`` (runner.py) and ``PlanRunner`` (plan.py) are given this object, not the
``AiManager``: the store and its writer thread, the event hub, the approval broker, the
toolbox, the administrator's governance and audit, the providers, one builder of the tools'
context, and ``publish``, the one way the agent's events go out. The manager builds it once
(``AiManager.runtime``); a test can build one over parts of its own. Nothing here imports the
manager, so the runtime's modules do not depend on it: the manager depends on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terax_jupyter.services.ai.tools.base import ToolContext

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.agent_audit import AgentAudit
    from terax_jupyter.services.ai.agents import AgentCatalog
    from terax_jupyter.services.ai.approvals import ApprovalBroker, Decision
    from terax_jupyter.services.ai.events import EventHub
    from terax_jupyter.services.ai.governance import AgentPolicy
    from terax_jupyter.services.ai.ledger import SessionLedger
    from terax_jupyter.services.ai.providers.base import Provider
    from terax_jupyter.services.ai.providers.registry import ModelRegistry
    from terax_jupyter.services.ai.store import AiStore
    from terax_jupyter.services.ai.toolbox import Toolbox
    from terax_jupyter.services.ai.tools.base import Proposal, Tool, ToolResult
    from terax_jupyter.services.ai.tools.processes import ProcessRegistry
    from terax_jupyter.services.ai.wire import AiEvent, ToolEvent
    from terax_jupyter.services.ai.worker import StoreWorker
    from terax_jupyter.services.browser.manager import BrowserManager
    from terax_jupyter.services.fs.grep import GrepSearch
    from terax_jupyter.services.fs.manager import FileManager
    from terax_jupyter.services.fs.search import FileSearch
    from terax_jupyter.services.kernels.runner import KernelRunner
    from terax_jupyter.services.pty.manager import PtyManager


@dataclass(frozen=True)
class RuntimeSettings:
    """The manager's settings a run reads (read again for every run: config can change)."""

    workspace_name: str
    memory_max_bytes: int
    subagent_max_steps: int


@dataclass(frozen=True)
class AgentRuntime:
    security: SecurityLayer
    files: FileManager
    search: FileSearch
    grep: GrepSearch
    pty: PtyManager | None
    kernels: KernelRunner | None
    processes: ProcessRegistry
    toolbox: Toolbox
    worker: StoreWorker
    events: EventHub
    approvals: ApprovalBroker
    agents: AgentCatalog
    models: ModelRegistry
    governance: AgentPolicy
    # Parts the manager opens or builds on first use, asked for when a run needs them.
    store_source: Callable[[], AiStore]
    agent_audit_source: Callable[[], AgentAudit]
    browser_source: Callable[[], BrowserManager | None]
    settings_source: Callable[[], RuntimeSettings]
    ledger: Callable[[str], Awaitable[SessionLedger]]
    provider: Callable[[str], Awaitable[Provider]]
    run_ended: Callable[[Any], None]

    @property
    def store(self) -> AiStore:
        """The agent's store (raises ``Unavailable`` when it could not be opened)."""
        return self.store_source()

    @property
    def agent_audit(self) -> AgentAudit:
        return self.agent_audit_source()

    @property
    def browser(self) -> BrowserManager | None:
        return self.browser_source()

    @property
    def settings(self) -> RuntimeSettings:
        return self.settings_source()

    def publish(
        self,
        session_id: str,
        event: AiEvent,
        *,
        run_id: str | None = None,
        write: Callable[[], object] | None = None,
    ) -> None:
        """The one way the agent's events go out (a run's, a plan's and the manager's).

        The event passes the store's writer thread after ``write`` (the store change it
        reports) and every write queued before it, and is published from there: so events
        keep their order, and whatever a client has seen (streamed text included) is already
        committed to SQLite when it sees it, without the caller waiting on the disk."""
        publish = functools.partial(self.events.publish, session_id, event, run_id=run_id)
        loop = asyncio.get_running_loop()

        def job() -> None:
            try:
                if write is not None:
                    write()
            finally:
                with contextlib.suppress(RuntimeError):  # the loop has closed (shutdown)
                    loop.call_soon_threadsafe(publish)

        self.worker.submit(job)

    async def tool_context(
        self,
        session_id: str,
        user: str | None,
        emit: Callable[[ToolEvent], None],
        *,
        subagents: Callable[[str, str], Awaitable[ToolResult]] | None = None,
        in_plan_mode: Callable[[], Awaitable[bool]] | None = None,
    ) -> ToolContext:
        """The context a tool of ``session_id`` runs or applies in: the one place it is built,
        for a run's calls and a plan's apply alike."""
        return ToolContext(
            session_id=session_id,
            security=self.security,
            files=self.files,
            search=self.search,
            grep=self.grep,
            reads=await self.ledger(session_id),
            processes=self.processes,
            emit=emit,
            pty=self.pty,
            kernels=self.kernels,
            browser=self.browser,
            user=user,
            subagents=subagents,
            in_plan_mode=in_plan_mode,
        )

    async def apply_decided(
        self, tool: Tool, proposal: Proposal, context: ToolContext, decision: Decision | None
    ) -> ToolResult:
        """Make an approved change: the one apply step of a run's call (approved by the user,
        or by a rule: ``decision`` None) and of a plan's item. The hunks the user kept are
        applied, and what they said goes to the model with the result."""
        result = await tool.apply(proposal, context, hunks=decision.hunks if decision else None)
        if decision is not None and decision.message:
            result.content += f"\nThe user said: {decision.message}"
        return result
