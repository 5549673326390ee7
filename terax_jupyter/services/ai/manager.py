"""AiManager: sessions, runs, approvals and plans of the agent, and the provider settings.

One manager per server. Notebook cells and the Lab panel use the same one (through the same
REST and WebSocket API), so a session started in one place continues in the other. At most
one run per session at a time; runs of different sessions are independent.
"""

from __future__ import annotations

import asyncio
import getpass
import os
from typing import TYPE_CHECKING, Any

import httpx
from traitlets import Dict, Float, Int, Unicode
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import Conflict, InvalidRequest, TeraxError, Unavailable
from terax_jupyter.security.rules import validate_rules
from terax_jupyter.services.ai.agent_audit import AgentAudit
from terax_jupyter.services.ai.agents import ALL_TOOLS, AgentCatalog
from terax_jupyter.services.ai.approvals import ApprovalBroker, parse_decision
from terax_jupyter.services.ai.completion import CompletionService
from terax_jupyter.services.ai.events import EventHub
from terax_jupyter.services.ai.governance import AgentPolicy
from terax_jupyter.services.ai.ledger import SessionLedger
from terax_jupyter.services.ai.plan import PlanRunner
from terax_jupyter.services.ai.prompts import MEMORY_CAP_BYTES
from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
from terax_jupyter.services.ai.providers.factory import ProviderFactory
from terax_jupyter.services.ai.providers.registry import ModelRegistry
from terax_jupyter.services.ai.replays import parse_replay
from terax_jupyter.services.ai.runner import AgentRun, RunSpec, new_call_id
from terax_jupyter.services.ai.runtime import AgentRuntime, RuntimeSettings
from terax_jupyter.services.ai.store import AiStore
from terax_jupyter.services.ai.tool_requests import parse_tool_request
from terax_jupyter.services.ai.toolbox import Toolbox
from terax_jupyter.services.ai.tools.processes import ProcessRegistry
from terax_jupyter.services.ai.worker import StoreWorker

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.services.ai.providers.base import Provider
    from terax_jupyter.services.ai.providers.registry import ModelInfo
    from terax_jupyter.services.browser.manager import BrowserManager
    from terax_jupyter.services.fs.grep import GrepSearch
    from terax_jupyter.services.fs.manager import FileManager
    from terax_jupyter.services.fs.search import FileSearch
    from terax_jupyter.services.kernels.runner import KernelRunner
    from terax_jupyter.services.pty.manager import PtyManager
    from terax_jupyter.services.secrets.manager import SecretsManager

MAX_PROMPT_CHARS = 200_000
MAX_TITLE_CHARS = 200
SESSION_FIELDS = {"title", "agent", "provider", "model", "plan_mode"}
MODEL_FIELDS = {
    "provider",
    "id",
    "label",
    "context_window",
    "max_output_tokens",
    "tools",
    "reasoning",
    "vision",
    "source",
    "input_price",
    "output_price",
}


class AiManager(LoggingConfigurable):
    max_steps = Int(24, help="Most model calls (steps) in one agent run.").tag(config=True)
    subagent_max_steps = Int(12, help="Most steps of one sub-agent run.").tag(config=True)
    max_output_tokens = Int(8192, help="Most tokens a model may write in one step.").tag(
        config=True
    )
    max_output_tokens_ceiling = Int(
        65536,
        help="Most tokens a run may ask a model to write in one step with its own "
        'max_output_tokens ("continue with a higher limit"); a known model\'s maximum '
        "caps it further.",
    ).tag(config=True)
    memory_max_bytes = Int(
        MEMORY_CAP_BYTES, help="How much of the project's TERAX.md joins the system prompt."
    ).tag(config=True)
    default_provider = Unicode("", help="Provider of new sessions (e.g. 'openai', 'ollama').").tag(
        config=True
    )
    default_model = Unicode("", help="Model of new sessions (e.g. 'gpt-4.1', 'llama3.2').").tag(
        config=True
    )
    completion_provider = Unicode(
        "",
        help="Provider of inline completions; empty: the chat's (the newest session that names "
        "a provider and model), else default_provider.",
    ).tag(config=True)
    completion_model = Unicode(
        "",
        help="Model of inline completions (a small, fast one); empty: the chat's, else "
        "default_model.",
    ).tag(config=True)
    completion_max_tokens = Int(128, help="Most tokens of one inline completion.").tag(config=True)
    connection_test_timeout = Float(
        6.0,
        help="Seconds a connection test or a provider's model list may take before it says "
        "the provider does not answer (a person is waiting on it).",
    ).tag(config=True)
    read_timeout = Float(
        120.0,
        help="Seconds to wait for the next piece of a model's answer before giving up (local "
        "models on slow machines may need more).",
    ).tag(config=True)
    providers = Dict(
        help=(
            "Providers an administrator adds or adjusts, by id: {'kind': 'openai'|'anthropic', "
            "'label', 'base_url', 'key_name', 'local': bool, 'product'}. Read-only for users."
        )
    ).tag(config=True)

    def __init__(
        self,
        security: SecurityLayer,
        state_dir: str,
        *,
        files: FileManager,
        search: FileSearch,
        grep: GrepSearch,
        pty: PtyManager | None,
        secrets: SecretsManager,
        browser_source: Callable[[], BrowserManager | None] | None = None,
        kernels: KernelRunner | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.security = security
        self.files, self.search, self.grep, self.pty = files, search, grep, pty
        self.kernels = kernels
        # The headless browser is built when a browser tool or replay first needs it.
        self._browser_source = browser_source or (lambda: None)
        self.secrets = secrets
        # A store that cannot be opened (a damaged or insecure file) takes the agent out of
        # service, with the reason on every call, and leaves the rest of Terax running.
        self._store: AiStore | None = None
        self._store_problem: TeraxError | None = None
        try:
            self._store = AiStore(os.path.join(state_dir, "ai.sqlite3"), redactor=security.redactor)
            self._store.interrupt_unfinished()
        except TeraxError as problem:
            self.log.error("The agent is unavailable: %s", problem.message)
            self._store_problem = problem
        self.worker = StoreWorker()
        self.events = EventHub()
        self.approvals = ApprovalBroker()
        self.agents = AgentCatalog(os.path.join(state_dir, "ai-agents.json"), security.audit)
        self.catalog = ProviderCatalog(
            dict(self.providers), os.path.join(state_dir, "ai-providers.json"), security.audit
        )
        self.models = ModelRegistry(os.path.join(state_dir, "ai-models.json"))
        timeout = httpx.Timeout(connect=10.0, read=self.read_timeout, write=30.0, pool=10.0)
        self.factory = ProviderFactory(
            security,
            secrets,
            self.catalog,
            timeout=timeout,
            probe_timeout=self.connection_test_timeout,
        )
        self.processes = ProcessRegistry(
            security,
            secret_names=secrets.environment_names,
            command_guard=secrets.command_guard.check,
        )
        self.toolbox = Toolbox()
        self.completion = CompletionService(self)
        self.runs: dict[str, AgentRun] = {}
        self._ledgers: dict[str, SessionLedger] = {}
        # The administrator's policy as the agent applies it, and their audit log.
        self.governance = AgentPolicy(security, set(ALL_TOOLS))
        # What runs and plans use of all this (runtime.py): they get no more of the manager.
        self.runtime = AgentRuntime(
            security=security,
            files=files,
            search=search,
            grep=grep,
            pty=pty,
            kernels=kernels,
            processes=self.processes,
            toolbox=self.toolbox,
            worker=self.worker,
            events=self.events,
            approvals=self.approvals,
            agents=self.agents,
            models=self.models,
            governance=self.governance,
            store_source=lambda: self.store,
            agent_audit_source=lambda: self.agent_audit,
            browser_source=lambda: self.browser,
            settings_source=self._runtime_settings,
            ledger=self.ledger,
            provider=self.provider,
            run_ended=self.run_ended,
        )
        self.plans = PlanRunner(self.runtime, self.plan_of)
        self._agent_audit: AgentAudit | None = None
        self._starting: set[str] = set()  # sessions between the last checks and their run
        self.agent_audit  # noqa: B018 - opened at start, so a bad path is in the log at once

    @property
    def browser(self) -> BrowserManager | None:
        return self._browser_source()

    def _runtime_settings(self) -> RuntimeSettings:
        return RuntimeSettings(
            workspace_name=self.workspace_name,
            memory_max_bytes=self.memory_max_bytes,
            subagent_max_steps=self.subagent_max_steps,
        )

    @property
    def agent_audit(self) -> AgentAudit:
        """The policy's audit sink, opened once (again if the policy names another)."""
        target = self.security.policy.audit_log
        current = self._agent_audit
        if current is None or current.target != target:
            if current is not None:
                current.close()
            current = self._agent_audit = AgentAudit(
                target, self.security.redactor, server_user=_server_user()
            )
        return current

    def _check_model(self, provider_id: str | None, model: str | None) -> None:
        """Refuse a provider or model the administrator does not allow."""
        if provider_id:
            self.governance.check_model(self.catalog.get(provider_id), model)

    def _runs_at_once(self) -> int:
        return len(self.runs) + len(self._starting - set(self.runs))

    def defaults(self) -> tuple[str, str]:
        """The provider and model of new sessions (the administrator's policy first)."""
        return self.governance.defaults(self.default_provider, self.default_model)

    @property
    def store(self) -> AiStore:
        if self._store is None:
            assert self._store_problem is not None
            raise self._store_problem
        return self._store

    @property
    def workspace_name(self) -> str:
        return self.security.roots.server_root

    async def provider(self, provider_id: str) -> Provider:
        return await self.factory.provider(provider_id)

    async def ledger(self, session_id: str) -> SessionLedger:
        """The session's read-before-edit ledger, loaded from the store once, off the loop."""
        ledger = self._ledgers.get(session_id)
        if ledger is None:
            etags = await self.worker.call(self.store.read_etags, session_id)
            ledger = self._ledgers.setdefault(
                session_id, SessionLedger(session_id, self.store, self.worker.submit, etags)
            )
        return ledger

    # -- sessions -------------------------------------------------------------------------

    async def create_session(self, fields: dict[str, Any], *, user: str | None) -> dict[str, Any]:
        self.security.policy.require("agent")
        self.agent_audit.require()
        values = self._session_fields(fields)
        default_provider, default_model = self.defaults()
        values.setdefault("provider", default_provider or None)
        values.setdefault("model", default_model or None)
        self._check_model(values["provider"], values["model"])
        plan_mode = values.pop("plan_mode", False)
        session = await self.worker.call(self.store.create_session, user=user, **values)
        if plan_mode:
            session = await self.worker.call(
                self.store.update_session, session["id"], plan_mode=True
            )
        return await self._describe(session)

    async def list_sessions(
        self, *, query: str | None, limit: int, offset: int
    ) -> list[dict[str, Any]]:
        sessions = await self.worker.call(
            self.store.list_sessions, query=query, limit=limit, offset=offset
        )
        return [self._summary(session) for session in sessions]

    async def get_session(self, session_id: str) -> dict[str, Any]:
        session = await self.worker.call(self.store.get_session, session_id)
        return await self._describe(session)

    async def update_session(
        self, session_id: str, fields: dict[str, Any], *, user: str | None
    ) -> dict[str, Any]:
        values = self._session_fields(fields)
        if not values:
            raise InvalidRequest(
                f"Nothing to change; fields: {', '.join(sorted(SESSION_FIELDS))}.",
                reason="invalid_parameter",
            )
        if session_id in self.runs and {"agent", "provider", "model"} & set(values):
            raise Conflict(
                "Wait for the run to end before changing its agent or model.", reason="run_active"
            )
        if {"provider", "model"} & set(values):
            stored = await self.worker.call(self.store.get_session, session_id)
            self._check_model(
                values.get("provider", stored["provider"]), values.get("model", stored["model"])
            )
        session = await self.worker.call(self.store.update_session, session_id, **values)
        return await self._describe(session)

    async def delete_session(self, session_id: str, *, user: str | None) -> None:
        await self.worker.call(self.store.get_session, session_id)
        await self.cancel_run(session_id, missing_ok=True)
        await asyncio.to_thread(self.processes.close_session, session_id)
        await self.worker.call(self.store.delete_session, session_id)
        self._ledgers.pop(session_id, None)
        self.events.forget(session_id)
        self.security.audit.record("ai.session.delete", user=user, session=session_id)

    async def messages(self, session_id: str) -> list[dict[str, Any]]:
        await self.worker.call(self.store.get_session, session_id)
        return await self.worker.call(self.store.messages, session_id)

    async def tool_calls(self, session_id: str) -> list[dict[str, Any]]:
        await self.worker.call(self.store.get_session, session_id)
        return await self.worker.call(self.store.tool_calls, session_id)

    async def set_rules(self, session_id: str, rules: Any, *, user: str | None) -> dict[str, Any]:
        checked = validate_rules(rules, set(ALL_TOOLS))
        self.governance.check_rules_change(checked)
        session = await self.worker.call(self.store.update_session, session_id, rules=checked)
        self.security.audit.record("ai.rules.set", user=user, session=session_id, rules=checked)
        self.agent_audit.record("rules.set", user=user, session=session_id, rules=checked)
        self.runtime.publish(session_id, {"type": "rules", "rules": checked})
        return await self._describe(session)

    def _session_fields(self, fields: Any) -> dict[str, Any]:
        if not isinstance(fields, dict):
            raise InvalidRequest("The body is a JSON object.", reason="invalid_parameter")
        unknown = set(fields) - SESSION_FIELDS
        if unknown:
            raise InvalidRequest(
                f"Unknown fields: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
            )
        values: dict[str, Any] = {}
        if "title" in fields:
            title = fields["title"]
            if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS:
                raise InvalidRequest(
                    f"'title' is text of at most {MAX_TITLE_CHARS} characters.",
                    reason="invalid_parameter",
                )
            values["title"] = " ".join(title.split())
        if "agent" in fields:
            if not isinstance(fields["agent"], str):
                raise InvalidRequest("'agent' is an agent's name.", reason="invalid_parameter")
            self.agents.get(fields["agent"])
            values["agent"] = fields["agent"]
        for name in ("provider", "model"):
            if name in fields:
                value = fields[name]
                if value is not None and (not isinstance(value, str) or not 0 < len(value) <= 200):
                    raise InvalidRequest(f"'{name}' is a name or null.", reason="invalid_parameter")
                values[name] = value
        if "provider" in values and values["provider"] is not None:
            self.catalog.get(values["provider"])
        if "plan_mode" in fields:
            if not isinstance(fields["plan_mode"], bool):
                raise InvalidRequest("'plan_mode' is true or false.", reason="invalid_parameter")
            values["plan_mode"] = fields["plan_mode"]
        return values

    def _summary(self, session: dict[str, Any]) -> dict[str, Any]:
        run = self.runs.get(session["id"])
        return {**session, "running": run is not None}

    async def _describe(self, session: dict[str, Any]) -> dict[str, Any]:
        session_id = session["id"]
        pending = await self.worker.call(
            self.store.approvals, session_id, status=["pending", "queued"]
        )
        usage = await self.worker.call(self.store.usage_totals, session_id)
        run = self.runs.get(session_id)
        return {
            **session,
            "running": run is not None,
            "run": run.describe() if run else None,
            "pending_approvals": [a for a in pending if a["status"] == "pending"],
            "plan": [a for a in pending if a["status"] == "queued"],
            "usage": {**usage, "cost": self._session_cost(session, usage)},
            "last_seq": self.events.last_seq(session_id),
            # Which rules apply: the session's own ("user"), only the administrator's, or
            # none ("always"); see governance.py.
            "approvals": {
                "mode": self.governance.approvals,
                "admin_rules": self.governance.admin_rules(),
            },
        }

    def _session_cost(self, session: dict[str, Any], usage: dict[str, Any]) -> float | None:
        """The session's cost at its current model's prices (None when it has none)."""
        if not session.get("provider") or not session.get("model"):
            return None
        model = self.models.lookup(session["provider"], session["model"])
        return model.cost(usage["input_tokens"], usage["output_tokens"])

    # -- runs -----------------------------------------------------------------------------

    async def start_run(self, session_id: str, body: Any, *, user: str | None) -> dict[str, Any]:
        self.security.policy.require("agent")
        self.agent_audit.require()
        if not isinstance(body, dict):
            raise InvalidRequest("The body is a JSON object.", reason="invalid_parameter")
        replay = parse_replay(body["replay"]) if "replay" in body else None
        tool_request = parse_tool_request(body["tool"]) if "tool" in body else None
        if len([key for key in ("prompt", "replay", "tool") if key in body]) > 1:
            raise InvalidRequest(
                "A run has a 'prompt', a 'replay' or a 'tool', one of them.",
                reason="invalid_parameter",
            )
        if replay is not None:
            prompt: object = replay.prompt
        elif tool_request is not None:
            prompt = tool_request.prompt
        else:
            prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
            raise InvalidRequest(
                f"'prompt' is required text of at most {MAX_PROMPT_CHARS} characters.",
                reason="invalid_parameter",
            )
        run_fields = {"prompt", "max_output_tokens", "replay", "tool"}
        unknown = set(body) - run_fields - {"agent", "provider", "model", "plan_mode"}
        if unknown:
            raise InvalidRequest(
                f"Unknown fields: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
            )
        wanted = body.get("max_output_tokens")
        if wanted is not None and (
            not isinstance(wanted, int) or isinstance(wanted, bool) or wanted < 1
        ):
            raise InvalidRequest(
                "'max_output_tokens' is a whole number of tokens.", reason="invalid_parameter"
            )
        overrides = self._session_fields({k: v for k, v in body.items() if k not in run_fields})
        if session_id in self.runs:
            raise Conflict(
                "This session is already running; wait or cancel it.", reason="run_active"
            )
        session = await self.worker.call(self.store.get_session, session_id)
        settings = {**session, **overrides}
        direct = None
        if replay is not None:
            # Read now so that a missing workflow is a clear 404 and no run starts.
            if self.browser is None:
                raise Unavailable(
                    "The headless browser is not available on this server.", reason="no_browser"
                )
            workflow = await self.browser.get_workflow(replay.workflow)
            direct = replay.call(workflow.policy.side_effect, new_call_id())
            # No model is asked: a session without one may replay too.
            settings["provider"] = settings.get("provider") or ""
            settings["model"] = settings.get("model") or "replay"
        if tool_request is not None:
            direct = tool_request.call(new_call_id())
            settings["provider"] = settings.get("provider") or ""  # no model is asked
            settings["model"] = settings.get("model") or "external"
        if settings.get("provider") is None or settings.get("model") is None:
            raise InvalidRequest(
                "Choose a provider and a model for this session first.", reason="no_model"
            )
        try:
            if direct is None:  # a replay asks no model
                # Also a session stored before the policy with a model it no longer allows.
                self._check_model(settings["provider"], settings["model"])
            self.governance.check_run_start(self._runs_at_once())
            if self.governance.daily_limits:
                await self.worker.call(self.governance.check_daily, self.store, self.models)
        except TeraxError as refusal:
            self.agent_audit.record(
                "run.refused",
                user=user,
                session=session_id,
                provider=settings["provider"],
                model=settings["model"],
                reason=refusal.reason,
                message=refusal.message,
            )
            raise
        agent = self.agents.get(settings["agent"] or "coder")
        if agent.subagent:
            raise InvalidRequest(
                f"{agent.name!r} runs only as a sub-agent.", reason="invalid_parameter"
            )
        if tool_request is not None and tool_request.name not in agent.tools:
            raise InvalidRequest(
                f"The session's agent {agent.name!r} has no tool {tool_request.name}.",
                reason="invalid_parameter",
            )
        local = self.catalog.get(settings["provider"]).local if settings["provider"] else True
        model = self.models.lookup(settings["provider"], settings["model"], local=local)
        ceiling = self.output_ceiling(model)
        if wanted is not None and wanted > ceiling:
            raise InvalidRequest(
                f"'max_output_tokens' is at most {ceiling} for {model.id}.",
                reason="invalid_parameter",
            )
        if session_id in self.runs or session_id in self._starting:  # the awaits let others in
            raise Conflict(
                "This session is already running; wait or cancel it.", reason="run_active"
            )
        self.governance.check_run_start(self._runs_at_once())  # again, for the same reason
        max_steps, steps_by_policy = self.governance.step_cap(self.max_steps)
        # Counted as running from here on: the awaits below let other starts in.
        self._starting.add(session_id)
        try:
            updates = {k: v for k, v in overrides.items() if k != "plan_mode"}
            if not session["title"]:
                updates["title"] = _title_from(prompt)
            if updates:
                await self.worker.call(self.store.update_session, session_id, **updates)
            run_id = await self.worker.call(
                self.store.add_run,
                session_id,
                agent=agent.name,
                provider=settings["provider"],
                model=model.id,
                prompt=prompt,
            )
            run = AgentRun(
                self.runtime,
                RunSpec(
                    session_id=session_id,
                    run_id=run_id,
                    agent=agent,
                    provider_id=settings["provider"],
                    model=model,
                    plan_mode=bool(settings.get("plan_mode")),
                    max_steps=max_steps,
                    steps_by_policy=steps_by_policy,
                    user=user,
                    max_output_tokens=wanted
                    or min(self.max_output_tokens, model.max_output_tokens),
                    output_ceiling=ceiling,
                ),
            )
            self.runs[session_id] = run
        finally:
            self._starting.discard(session_id)
        run.task = asyncio.create_task(
            run.execute(prompt, direct=direct), name=f"terax-ai-run-{run_id}"
        )
        described = run.describe()
        if tool_request is not None and direct is not None:
            described["tool_call_id"] = direct.id  # follow it in the session's tool calls
        return described

    def output_ceiling(self, model: ModelInfo) -> int:
        """The most output tokens a run of ``model`` may ask for: the configured ceiling, and
        the model's own maximum when it is known (an unknown model's is only a guess)."""
        if model.source == "default":
            return max(self.max_output_tokens_ceiling, 1)
        return max(min(self.max_output_tokens_ceiling, model.max_output_tokens), 1)

    def run_ended(self, run: AgentRun) -> None:
        if self.runs.get(run.spec.session_id) is run:
            del self.runs[run.spec.session_id]

    async def cancel_run(self, session_id: str, *, missing_ok: bool = False) -> bool:
        run = self.runs.get(session_id)
        if run is None or run.task is None:
            if missing_ok:
                return False
            await self.worker.call(self.store.get_session, session_id)
            raise Conflict("This session has no run to cancel.", reason="no_run")
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)
        return True

    async def wait_run(self, session_id: str) -> None:
        run = self.runs.get(session_id)
        if run is not None and run.task is not None:
            await asyncio.gather(run.task, return_exceptions=True)

    # -- approvals ------------------------------------------------------------------------

    async def approvals_of(self, session_id: str, *, status: str | None) -> list[dict[str, Any]]:
        await self.worker.call(self.store.get_session, session_id)
        return await self.worker.call(self.store.approvals, session_id, status=status)

    async def approval(self, approval_id: str) -> dict[str, Any]:
        return await self.worker.call(self.store.get_approval, approval_id)

    async def decide(self, approval_id: str, body: Any, *, user: str | None) -> dict[str, Any]:
        approval = await self.worker.call(self.store.get_approval, approval_id)
        if approval["status"] == "queued":
            raise Conflict(
                "This change is part of a plan; apply or discard the plan.", reason="queued_in_plan"
            )
        decision = parse_decision(body, approval["proposal"])
        decided = await self.worker.call(
            self.store.decide_approval,
            approval_id,
            status=decision.status,
            decision=decision.to_json(),
            user=user,
        )
        self.security.audit.record(
            "ai.approval",
            user=user,
            session=approval["session_id"],
            tool=approval["tool"],
            status=decision.status,
            hunks=decision.hunks,
        )
        self.agent_audit.record(
            "approval.decided",
            user=user,
            session=approval["session_id"],
            approval=approval_id,
            call_id=approval.get("call_id"),
            tool=approval["tool"],
            decision=decision.status,
            hunks=decision.hunks,
            subject=self.toolbox.audit_subject(approval["tool"], approval["proposal"]),
        )
        woke = self.approvals.resolve(approval_id, decision)
        self.runtime.publish(
            approval["session_id"], {"type": "approval_resolved", "approval": decided}
        )
        return {**decided, "delivered": woke}

    # -- plans ----------------------------------------------------------------------------

    async def plan_of(self, session_id: str) -> list[dict[str, Any]]:
        return await self.approvals_of(session_id, status="queued")

    async def apply_plan(self, session_id: str, body: Any, *, user: str | None) -> dict[str, Any]:
        if session_id in self.runs:
            raise Conflict("Wait for the run to end before applying its plan.", reason="run_active")
        return await self.plans.apply(session_id, body, user=user)

    async def discard_plan(self, session_id: str, *, user: str | None) -> dict[str, Any]:
        if session_id in self.runs:
            raise Conflict(
                "Wait for the run to end before discarding its plan.", reason="run_active"
            )
        return await self.plans.discard(session_id, user=user)

    # -- providers and models -------------------------------------------------------------

    async def provider_list(self) -> list[dict[str, Any]]:
        # A provider the administrator does not allow is not offered at all.
        governance = self.governance
        configs = [c for c in self.catalog.list() if governance.provider_allowed(c)]

        def key_state() -> list[dict[str, Any]]:
            rows = []
            for config in configs:
                data = config.to_json()
                # Set means: a key this provider would send (the administrator's key of a
                # moved or user-defined provider is not).
                data["key_set"] = self.factory.usable_key(config) is not None
                allowed = governance.allowed_models(config.id)
                data["allowed_models"] = list(allowed) if allowed is not None else None
                data["locked"] = governance.policy.providers is not None
                rows.append(data)
            return rows

        return await asyncio.to_thread(key_state)

    def model_list(self, provider: str | None) -> list[dict[str, Any]]:
        return [model.to_json() for model in self.models.list(provider) if self._offered(model)]

    def _offered(self, model: ModelInfo) -> bool:
        """Whether the administrator's policy allows ``model`` (an unknown provider: no)."""
        try:
            config = self.catalog.get(model.provider)
        except TeraxError:
            return False
        governance = self.governance
        return governance.provider_allowed(config) and governance.model_allowed(
            model.provider, model.id
        )

    def add_model(self, fields: dict[str, Any], *, user: str | None) -> dict[str, Any]:
        unknown = set(fields) - MODEL_FIELDS
        if unknown:
            raise InvalidRequest(
                f"Unknown fields: {', '.join(sorted(unknown))}.", reason="invalid_parameter"
            )
        provider, model_id = fields.get("provider"), fields.get("id")
        if not isinstance(provider, str) or not isinstance(model_id, str):
            raise InvalidRequest("'provider' and 'id' name the model.", reason="invalid_parameter")
        self._check_model(provider, model_id)
        window = fields.get("context_window")
        if not isinstance(window, int) or isinstance(window, bool):
            raise InvalidRequest(
                "'context_window' is a number of tokens.", reason="invalid_parameter"
            )
        options = {
            k: fields[k]
            for k in (
                "label",
                "max_output_tokens",
                "tools",
                "reasoning",
                "vision",
                "input_price",
                "output_price",
            )
            if k in fields
        }
        model = self.models.add(provider, model_id, context_window=window, **options)
        self.security.audit.record(
            "ai.model.add", user=user, provider=model.provider, model=model.id
        )
        return model.to_json()

    def remove_model(self, provider: str, model: str, *, user: str | None) -> None:
        self.models.remove(provider, model)
        self.security.audit.record("ai.model.remove", user=user, provider=provider, model=model)

    async def provider_models(self, provider_id: str) -> list[dict[str, Any]]:
        self._check_model(provider_id, None)
        listed = await self.factory.list_models(provider_id)
        return [m for m in listed if self.governance.model_allowed(provider_id, str(m["id"]))]

    async def test_connection(self, provider_id: str, model: str | None) -> dict[str, Any]:
        self._check_model(provider_id, model)
        return await self.factory.test_connection(provider_id, model)

    def put_provider(self, provider_id: str, fields: Any, *, user: str | None) -> dict[str, Any]:
        self.governance.check_configurable(provider_id)
        return self.catalog.put(provider_id, fields, user=user).to_json()

    async def complete(self, body: Any) -> dict[str, Any]:
        self.security.policy.require("agent")
        self.agent_audit.require()
        # Completions are not counted (they have no session), but the day's spent budget
        # stops them too.
        if self.governance.daily_limits:
            await self.worker.call(self.governance.check_daily, self.store, self.models)
        return await self.completion.complete(body)

    # -- lifecycle ------------------------------------------------------------------------

    async def close(self) -> None:
        for session_id in list(self.runs):
            await self.cancel_run(session_id, missing_ok=True)
        await asyncio.to_thread(self.processes.close_all)
        await self.factory.aclose()
        self.worker.close()
        if self._agent_audit is not None:
            self._agent_audit.close()
        if self._store is not None:
            self._store.close()


def _server_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a uid without a name (containers)
        return str(os.getuid())


def _title_from(prompt: str) -> str:
    words = " ".join(prompt.split())
    return words if len(words) <= 60 else words[:57].rstrip() + "..."
