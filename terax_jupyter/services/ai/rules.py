"""Auto-approve rules: opt-in, per session, matched against a proposal, never by guesswork.

A rule names a tool (or ``*``), and optionally a path glob and a command prefix. A command
prefix matches whole words at the start of a command that has no shell control operators,
redirections or substitutions, so ``git status`` never approves ``git status; rm -rf x``.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

from wcmatch import glob as wcglob

from terax_jupyter.exceptions import InvalidRequest

if TYPE_CHECKING:
    from terax_jupyter.services.ai.tools.base import Proposal

MAX_RULES = 50
_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
_SHELL_OPERATORS = re.compile(r"[;&|<>`\n\r]|\$\(|\$\{")
_RULE_KEYS = {"tool", "path", "command_prefix"}


def validate_rules(rules: Any, known_tools: set[str]) -> list[dict[str, str]]:
    if not isinstance(rules, list) or len(rules) > MAX_RULES:
        raise InvalidRequest(
            f"'rules' is a list of at most {MAX_RULES} rules.", reason="invalid_parameter"
        )
    checked = []
    for rule in rules:
        if not isinstance(rule, dict) or set(rule) - _RULE_KEYS or "tool" not in rule:
            raise InvalidRequest(
                "A rule is {'tool': name or '*', 'path'?: glob, 'command_prefix'?: words}.",
                reason="invalid_parameter",
            )
        if not all(isinstance(value, str) and 0 < len(value) <= 500 for value in rule.values()):
            raise InvalidRequest("Rule fields are non-empty text.", reason="invalid_parameter")
        if rule["tool"] != "*" and rule["tool"] not in known_tools:
            raise InvalidRequest(
                f"Unknown tool {rule['tool']!r} in a rule.", reason="invalid_parameter"
            )
        if "command_prefix" in rule and _SHELL_OPERATORS.search(rule["command_prefix"]):
            raise InvalidRequest(
                "A command prefix is plain words, without shell operators.",
                reason="invalid_parameter",
            )
        checked.append(dict(rule))
    return checked


def matching_rule(rules: list[dict[str, str]], proposal: Proposal) -> dict[str, str] | None:
    for rule in rules:
        if _matches(rule, proposal):
            return rule
    return None


def _matches(rule: dict[str, str], proposal: Proposal) -> bool:
    if rule["tool"] not in ("*", proposal.tool):
        return False
    if rule["tool"] == "*" and proposal.kind == "replay":
        return False  # a destructive replay is approved by name or by hand, never by "*"
    if "path" in rule and (
        proposal.path is None
        or not wcglob.globmatch(proposal.path, rule["path"], flags=_GLOB_FLAGS)
    ):
        return False
    # A rule with neither a path nor a prefix approves every call of its tool; that is what
    # the user asked for, and the session shows it.
    return "command_prefix" not in rule or (
        proposal.command is not None
        and command_has_prefix(proposal.command, rule["command_prefix"])
    )


def command_has_prefix(command: str, prefix: str) -> bool:
    if _SHELL_OPERATORS.search(command):
        return False
    try:
        words, wanted = shlex.split(command), shlex.split(prefix)
    except ValueError:
        return False
    return bool(wanted) and words[: len(wanted)] == wanted
