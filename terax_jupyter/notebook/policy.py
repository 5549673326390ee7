"""Who answers the agent's approvals in a notebook, and how: never silently.

A policy is given to ``terax.agent(policy=...)``:

- a list of rules, as the server's auto-approve rules (``{"tool": name or "*", "path"?:
  glob, "command_prefix"?: words}``, matched by the server's own ``matching_rule``): a change
  a rule covers is approved, anything else goes on to the next step;
- a callable ``policy(approval) -> "approve" | "deny" | None`` (True/False too; a
  ``(decision, message)`` pair gives the agent a note); None means "not mine to decide";
- ``"deny"``: deny whatever no one else decided.

What the policy leaves undecided waits for a person (the cell's view, or the session in the
Lab AI panel) when one is there, and is denied with a note saying why when the run is
headless (nbclient, papermill: see ``kernel.headless``). A policy that fails denies. Every
decision taken here is shown in the cell and kept in the result with who took it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from terax_jupyter.security.rules import matching_rule, validate_rules

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from terax_jupyter.security.rules import Proposal

Choice = Literal["approve", "deny"]
DecidedBy = Literal["rule", "policy", "headless", "policy_error", "person", "server"]

HEADLESS_NOTE = (
    "Denied: this notebook runs headless (no one can answer) and its approval policy did not "
    "decide this call. Nothing was done. Pass policy=[rules] or policy=callable to "
    "terax.agent() to approve such calls in unattended runs."
)


@dataclass(frozen=True)
class Approval:
    """A change the agent asks to make, as a policy callable sees it."""

    id: str
    tool: str
    kind: str
    summary: str
    path: str | None = None
    command: str | None = None
    diff: str | None = None
    hunks: list[dict[str, Any]] = field(default_factory=list)
    session_id: str = ""
    run_id: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, approval: dict[str, Any]) -> Approval:
        proposal = approval.get("proposal") or {}
        return cls(
            id=approval["id"],
            tool=approval.get("tool") or proposal.get("tool", ""),
            kind=proposal.get("kind", ""),
            summary=proposal.get("summary", ""),
            path=proposal.get("path"),
            command=proposal.get("command"),
            diff=proposal.get("diff"),
            hunks=list(proposal.get("hunks") or []),
            session_id=approval.get("session_id", ""),
            run_id=approval.get("run_id"),
            raw=approval,
        )

    def proposal(self) -> Proposal:
        """What the server's rule matcher reads of a proposal (tool, kind, path, command),
        without importing the tool stack into the kernel."""
        return _Proposed(self.tool, self.kind, self.path, self.command)


@dataclass(frozen=True)
class _Proposed:
    tool: str
    kind: str
    path: str | None
    command: str | None


@dataclass(frozen=True)
class Verdict:
    """What this side decided about an approval: the answer, who gave it, and the note for the
    agent (and the reader of the cell)."""

    decision: Choice
    by: DecidedBy
    message: str | None = None
    rule: dict[str, str] | None = None

    def body(self) -> dict[str, Any]:
        """The body of ``POST /terax/api/ai/approvals/<id>``."""
        body: dict[str, Any] = {"decision": self.decision}
        if self.message:
            body["message"] = self.message[:2000]
        return body


PolicySpec = Any  # rules, a callable, "deny", an ApprovalPolicy, or None


class ApprovalPolicy:
    """A policy's rules or callable, and what to do when nobody decided."""

    def __init__(
        self,
        rules: list[dict[str, str]] | None = None,
        decide: Callable[[Approval], Any] | None = None,
        *,
        deny_rest: bool = False,
    ) -> None:
        self.rules = rules or []
        self.decide = decide
        self.deny_rest = deny_rest

    def __repr__(self) -> str:
        parts = []
        if self.rules:
            parts.append(f"rules={self.rules!r}")
        if self.decide is not None:
            parts.append(f"decide={getattr(self.decide, '__name__', self.decide)!r}")
        if self.deny_rest:
            parts.append("deny the rest")
        return f"ApprovalPolicy({', '.join(parts) or 'ask a person'})"

    @classmethod
    def of(cls, spec: PolicySpec, known_tools: set[str] | None = None) -> ApprovalPolicy:
        """The policy ``terax.agent(policy=spec)`` means (see the module docstring)."""
        if spec is None:
            return cls()
        if isinstance(spec, ApprovalPolicy):
            return spec
        if isinstance(spec, str):
            if spec == "deny":
                return cls(deny_rest=True)
            raise ValueError(
                f"policy={spec!r}: give a list of rules, a callable, or 'deny'. "
                "(There is no 'approve everything': say which tools or paths with rules.)"
            )
        if callable(spec):
            return cls(decide=spec)
        if isinstance(spec, (list, tuple)):
            rules = [dict(rule) if isinstance(rule, dict) else rule for rule in spec]
            return cls(rules=validate_rules(rules, known_tools or _any_tool(rules)))
        raise TypeError("policy is a list of rules, a callable, 'deny' or None.")

    def verdict(
        self,
        approval: Approval,
        *,
        headless: bool,
        resolve: Callable[[Awaitable[Any]], Any] | None = None,
    ) -> Verdict | None:
        """This side's answer, or None: wait for a person. ``resolve`` waits for an async
        callable's answer (``ask()`` runs it on the background loop)."""
        ruled = self.by_rule(approval)
        if ruled is not None or self.decide is None:
            return ruled or self.fallback(headless)
        try:
            answer = self.decide(approval)
            if inspect.isawaitable(answer):
                if resolve is None:
                    close = getattr(answer, "close", None)
                    if close is not None:
                        close()
                    raise TypeError("an async policy needs a loop to run on")
                answer = resolve(answer)
        except Exception as error:  # a failing policy must not approve, nor stop the run
            return _failed(error)
        return _verdict_of(answer) or self.fallback(headless)

    async def averdict(self, approval: Approval, *, headless: bool) -> Verdict | None:
        """``verdict`` for a caller on an event loop: an async callable is awaited there."""
        ruled = self.by_rule(approval)
        if ruled is not None or self.decide is None:
            return ruled or self.fallback(headless)
        try:
            answer = self.decide(approval)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as error:
            return _failed(error)
        return _verdict_of(answer) or self.fallback(headless)

    def by_rule(self, approval: Approval) -> Verdict | None:
        if not self.rules:
            return None
        rule = matching_rule(self.rules, approval.proposal())
        return Verdict("approve", "rule", rule=rule) if rule is not None else None

    def fallback(self, headless: bool) -> Verdict | None:
        """What happens to a call nothing decided: denied by ``deny``, denied with a note when
        no one can answer, else None (a person decides)."""
        if self.deny_rest:
            return Verdict("deny", "policy", "Denied by the notebook's policy. Nothing was done.")
        if headless:
            return Verdict("deny", "headless", HEADLESS_NOTE)
        return None


def _failed(error: Exception) -> Verdict:
    return Verdict(
        "deny",
        "policy_error",
        f"Denied: the notebook's approval policy failed ({type(error).__name__}: {error}). "
        "Nothing was done.",
    )


def _verdict_of(answer: Any) -> Verdict | None:
    message = None
    if isinstance(answer, tuple) and len(answer) == 2:
        answer, message = answer
        message = None if message is None else str(message)
    if answer is None:
        return None
    if answer is True or answer == "approve":
        return Verdict("approve", "policy", message)
    if answer is False or answer == "deny":
        return Verdict("deny", "policy", message or "Denied by the notebook's policy.")
    return Verdict(
        "deny",
        "policy_error",
        f"Denied: the notebook's approval policy answered {answer!r}, which is not 'approve', "
        "'deny' or None. Nothing was done.",
    )


def _any_tool(rules: list[Any]) -> set[str]:
    """Without the server's tool list, accept the tools the rules name (their shape is still
    checked)."""
    return {rule["tool"] for rule in rules if isinstance(rule, dict) and "tool" in rule}
