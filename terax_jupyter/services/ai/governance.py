"""The administrator's policy as the agent applies it: providers and models, approvals, limits.

``security.policy`` (``terax_jupyter.security.policy``) says what the operator set; this
module turns it into the agent's answers, read afresh on every call (so a policy put on the
security layer later applies at once):

- providers and models: only the listed providers (in their built-in or administrator's
  definition: a user's own entry for a listed id could send the work elsewhere) and, for a
  provider with a model list, only those models. Every way to a model asks here: a session's
  settings, a run's, a completion, a connection test, a model list.
- approvals: ``user`` (the session's own rules), ``admin_rules`` (only the administrator's
  rules auto-approve) or ``always`` (every gated call asks; no rule applies).
- limits: steps per run, runs at once, tokens and cost per UTC day.

Refusals are ``AccessDenied`` (403, reason ``model_not_allowed`` or ``disabled_by_policy``)
and ``TooLarge`` (413, reason ``policy_limit``), each saying what the administrator allows.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AccessDenied, TeraxError, TooLarge
from terax_jupyter.security.policy import LIMITS
from terax_jupyter.security.rules import validate_rules
from terax_jupyter.services.ai.store import utc_day

if TYPE_CHECKING:
    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.security.policy import Policy
    from terax_jupyter.services.ai.providers.base import ProviderConfig
    from terax_jupyter.services.ai.providers.registry import ModelRegistry

log = logging.getLogger(__name__)

# An administrator's rule, written as text in the policy file:
#   "TOOL"                 every call of TOOL ("*": of every tool)
#   "TOOL: WORDS"          TOOL's calls whose command starts with WORDS (``bash_run: git status``)
#   "TOOL @ GLOB"          TOOL's calls on paths matching GLOB (``edit @ docs/**``)
_ADMIN_RULE = re.compile(r"\s*(?P<tool>\*|[a-z][a-z0-9_]*)\s*(?:(?P<sep>[:@])\s*(?P<rest>.*))?")


def parse_admin_rule(text: str) -> dict[str, str]:
    """The rule object of one ``ai.admin_rules`` entry (``ValueError`` when unreadable)."""
    match = _ADMIN_RULE.fullmatch(text)
    if match is None or (match["sep"] and not match["rest"].strip()):
        raise ValueError(f"{text!r} is not 'TOOL', 'TOOL: command words' or 'TOOL @ path glob'")
    rule = {"tool": match["tool"]}
    if match["sep"] == ":":
        rule["command_prefix"] = match["rest"].strip()
    elif match["sep"] == "@":
        rule["path"] = match["rest"].strip()
    return rule


class AgentPolicy:
    """The agent's view of the administrator's policy (see the module docstring)."""

    def __init__(self, security: SecurityLayer, known_tools: set[str]) -> None:
        self.security = security
        self._known_tools = known_tools
        self._parsed: tuple[tuple[str, ...], list[dict[str, str]]] | None = None

    @property
    def policy(self) -> Policy:
        return self.security.policy

    # -- providers and models -------------------------------------------------------------

    def provider_allowed(self, config: ProviderConfig) -> bool:
        providers = self.policy.providers
        if providers is None:
            return True
        return config.id in providers and config.source != "user"

    def allowed_models(self, provider_id: str) -> tuple[str, ...] | None:
        """The models the administrator allows at ``provider_id`` (None: any)."""
        return self.policy.models.get(provider_id)

    def model_allowed(self, provider_id: str, model: str) -> bool:
        listed = self.allowed_models(provider_id)
        return listed is None or model in listed

    def check_provider(self, config: ProviderConfig) -> None:
        if self.provider_allowed(config):
            return
        providers = self.policy.providers or ()
        if config.id in providers:  # listed, but the user's own definition of it
            raise AccessDenied(
                f"Your own settings of {config.label} (its address) are not used here: the "
                f"administrator allows {config.id} only as they configured it. Remove your "
                "settings of it in the AI settings.",
                reason="model_not_allowed",
            )
        allowed = ", ".join(providers) if providers else "none"
        raise AccessDenied(
            f"The administrator does not allow the provider {config.id} (allowed: {allowed}).",
            reason="model_not_allowed",
        )

    def check_model(self, config: ProviderConfig, model: str | None) -> None:
        """Refuse a provider or model the administrator does not allow."""
        self.check_provider(config)
        if model is None or self.model_allowed(config.id, model):
            return
        listed = ", ".join(self.allowed_models(config.id) or ()) or "none"
        raise AccessDenied(
            f"The administrator does not allow the model {model} at {config.id} "
            f"(allowed: {listed}).",
            reason="model_not_allowed",
        )

    def check_configurable(self, provider_id: str) -> None:
        """Refuse changing a provider's settings when the administrator chose the providers
        (a changed address would send the work somewhere they did not choose)."""
        if self.policy.providers is not None:
            raise AccessDenied(
                f"The administrator chose the providers of this server; {provider_id} cannot "
                "be added or changed here.",
                reason="provider_locked",
            )

    def defaults(self, provider: str, model: str) -> tuple[str, str]:
        """The defaults of new sessions: the administrator's win over the configured ones;
        a configured default the policy does not allow is dropped ("")."""
        policy = self.policy
        if policy.default_provider:
            if provider != policy.default_provider:
                listed = policy.models.get(policy.default_provider)
                model = listed[0] if listed and not policy.default_model else ""
            provider = policy.default_provider
        if policy.default_model:
            model = policy.default_model
        if policy.providers is not None and provider and provider not in policy.providers:
            provider, model = "", ""
        if provider and model and not self.model_allowed(provider, model):
            model = ""
        return provider, model

    def describe(self) -> dict[str, Any]:
        """What the settings API shows of the policy."""
        policy = self.policy
        return {
            "providers": list(policy.providers) if policy.providers is not None else None,
            "models": {name: list(models) for name, models in policy.models.items()},
            "default_provider": policy.default_provider,
            "default_model": policy.default_model,
            "approvals": self.approvals,
            "admin_rules": self.admin_rules(),
            "limits": {name: policy.limits[name] for name in LIMITS if name in policy.limits},
        }

    # -- approvals ------------------------------------------------------------------------

    @property
    def approvals(self) -> str:
        policy = self.policy
        if policy.error is not None:
            return "always"
        return policy.approvals or "user"

    def admin_rules(self) -> list[dict[str, str]]:
        """The administrator's rules, parsed once per policy; a rule that cannot be read
        is left out (it would approve nothing for certain) and said in the log."""
        texts = self.policy.admin_rules
        if self._parsed is None or self._parsed[0] != texts:
            rules: list[dict[str, str]] = []
            for text in texts:
                try:
                    rules.extend(validate_rules([parse_admin_rule(text)], self._known_tools))
                except (ValueError, TeraxError) as problem:
                    message = getattr(problem, "message", str(problem))
                    log.error("The policy's ai.admin_rules entry %r is ignored: %s", text, message)
            self._parsed = (texts, rules)
        return list(self._parsed[1])

    def effective_rules(self, session_rules: list[dict[str, str]]) -> list[dict[str, str]]:
        """The rules that may auto-approve a call of a session with ``session_rules``."""
        mode = self.approvals
        if mode == "always":
            return []
        if mode == "admin_rules":
            return self.admin_rules()
        return session_rules

    def check_rules_change(self, rules: list[dict[str, str]]) -> None:
        """Refuse saving auto-approve rules when the administrator's mode ignores them
        (clearing them is fine)."""
        if not rules or self.approvals == "user":
            return
        if self.approvals == "admin_rules":
            raise AccessDenied(
                "The administrator's policy allows only their own auto-approve rules; yours "
                "are not used, so none was saved.",
                reason="disabled_by_policy",
            )
        raise AccessDenied(
            "The administrator's policy asks for your approval of every change and command; "
            "auto-approve rules are off, so none was saved.",
            reason="disabled_by_policy",
        )

    # -- limits ---------------------------------------------------------------------------

    def step_cap(self, configured: int) -> tuple[int, bool]:
        """The steps a run may take, and whether the administrator's limit set it."""
        cap = self.policy.limit("agent_steps_per_run")
        if cap is not None and cap < configured:
            return int(cap), True
        return configured, False

    def check_run_start(self, running: int) -> None:
        """Refuse a new run at the step limit 0 or with the limit of runs at once reached."""
        self.policy.check_limit("agent_steps_per_run", 0)
        self.policy.check_limit("concurrent_runs", running)

    @property
    def daily_limits(self) -> bool:
        """Whether a per-day limit is set (else ``check_daily`` need not be asked)."""
        limits = self.policy.limits
        return "tokens_per_day" in limits or "cost_per_day" in limits

    def check_daily(self, store: Any, models: ModelRegistry) -> None:
        """Refuse (413 ``policy_limit``) when today's (UTC) tokens or cost reached a limit."""
        policy = self.policy
        tokens_cap = policy.limit("tokens_per_day")
        cost_cap = policy.limit("cost_per_day")
        if tokens_cap is None and cost_cap is None:
            return
        rows = store.usage_on(utc_day())
        if tokens_cap is not None:
            tokens = sum(row["input_tokens"] + row["output_tokens"] for row in rows)
            if tokens >= tokens_cap:
                raise TooLarge(
                    f"The administrator allows at most {_number(tokens_cap)} model tokens per "
                    f"day; today's runs used {tokens}. It resets at midnight UTC.",
                    reason="policy_limit",
                )
        if cost_cap is not None:
            cost = 0.0
            for row in rows:
                price = models.lookup(row["provider"] or "", row["model"] or "").cost(
                    row["input_tokens"], row["output_tokens"]
                )
                cost += price or 0.0
            if cost >= cost_cap:
                raise TooLarge(
                    f"The administrator allows at most {_number(cost_cap)} USD of model use "
                    f"per day; today's runs cost {cost:.4f} USD. It resets at midnight UTC.",
                    reason="policy_limit",
                )


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
