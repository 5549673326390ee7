"""Auto-approve rules: opt-in, per session, matched against a proposal, never by guesswork.

A rule names a tool (or ``*``), and optionally a path glob and a command prefix. A command
prefix matches whole words at the start of a command that has no shell control operators,
redirections or substitutions, so ``git status`` never approves ``git status; rm -rf x``.
Nor does it cover words after it that the shell expands (globs, ``$VAR``, ``{a,b}``, a
leading ``~``) or options that write files, run programs or change configuration
(``command_options``): ``git log`` never approves ``git log --output=/elsewhere``. Such a
command asks.

The rules live below the services because two sides match them the same way: the agent's
approvals on the server (``services/ai``) and a notebook's policy (``notebook/policy.py``),
which runs in a kernel and may import no service.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol

from wcmatch import glob as wcglob

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.security.command_options import uncovered

MAX_RULES = 50
_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
_SHELL_OPERATORS = re.compile(r"[;&|<>`\n\r]|\$\(|\$\{")
_RULE_KEYS = {"tool", "path", "command_prefix"}
# Proposals whose command is a shell command that runs (not the one a kill stops).
_RUNS_COMMAND = {"command", "process"}
# Tools whose every proposal is one decision of the user's: a destructive replay (its token is
# bound to the page they saw) and a save that replaces a destructive workflow or lowers a side
# effect. No rule may name them, and none ever covers them.
NEVER_AUTO_APPROVED = frozenset({"browser_run_destructive_workflow", "browser_save_workflow"})
# Nor do rules cover a run of cells marked risky (shell, installs, processes, network) or a
# kernel restart (the kernel's state is lost): each is the user's call, every time.
_NEVER_AUTO_KINDS = frozenset({"replay", "workflow", "risky_cells", "kernel_restart"})


class Proposal(Protocol):
    """What a rule reads of a proposed change: the agent's ``tools.base.Proposal``, or the
    notebook policy's copy of one it received over the wire."""

    @property
    def tool(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def command(self) -> str | None: ...


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
        if rule["tool"] in NEVER_AUTO_APPROVED:
            raise InvalidRequest(
                f"{rule['tool']} cannot be allowed by a rule: each of its calls (a destructive "
                "replay, or replacing a destructive workflow or lowering a side effect) needs "
                "its own approval. Nothing was saved.",
                reason="rule_not_allowed",
            )
        if "command_prefix" in rule and _SHELL_OPERATORS.search(rule["command_prefix"]):
            raise InvalidRequest(
                "A command prefix is plain words, without shell operators.",
                reason="invalid_parameter",
            )
        if "command_prefix" in rule:
            _require_literal_prefix(rule["command_prefix"])
        checked.append(dict(rule))
    return checked


def _require_literal_prefix(prefix: str) -> None:
    """Refuse a prefix that reads like a pattern (``pytest*``): prefixes are compared word
    by word, literally, so such a rule would be saved and never match anything."""
    words = split_words(prefix)
    if not words:
        raise InvalidRequest(
            f"The command prefix {prefix!r} has unbalanced quotes.", reason="invalid_parameter"
        )
    pattern = next((word.text for word in words if word.expands), None)
    if pattern is not None:
        raise InvalidRequest(
            f"The command prefix {prefix!r} is not literal: {pattern!r} reads as a glob, a "
            "variable or a ~, but a prefix is matched as literal whole words, so it would "
            "never match. Write the words themselves, e.g. 'pytest' (which covers "
            "'pytest -q tests'); nothing was saved.",
            reason="invalid_parameter",
        )


def matching_rule(rules: list[dict[str, str]], proposal: Proposal) -> dict[str, str] | None:
    for rule in rules:
        if _matches(rule, proposal):
            return rule
    return None


def _matches(rule: dict[str, str], proposal: Proposal) -> bool:
    if rule["tool"] not in ("*", proposal.tool):
        return False
    if proposal.tool in NEVER_AUTO_APPROVED or proposal.kind in _NEVER_AUTO_KINDS:
        return False  # approved by hand, each time (a rule stored before this check too)
    if "path" in rule and (
        proposal.path is None
        or not wcglob.globmatch(proposal.path, rule["path"], flags=_GLOB_FLAGS)
    ):
        return False
    # A rule with neither a path nor a prefix approves every call of its tool; that is what
    # the user asked for, and the session shows it.
    if "command_prefix" not in rule:
        return True
    if proposal.command is None:
        return False
    if proposal.kind in _RUNS_COMMAND:
        return command_covered(proposal.command, rule["command_prefix"]) is None
    return command_has_prefix(proposal.command, rule["command_prefix"])


class Word(NamedTuple):
    """A shell word with its quotes removed, and whether the shell would expand it."""

    text: str
    expands: bool


def split_words(command: str) -> list[Word] | None:
    """The words of a simple command as bash reads them (quotes, backslashes), or None
    when the quoting is unbalanced. A word ``expands`` when an unquoted glob, ``$``,
    backquote, brace list or leading ``~`` would make the shell change it."""
    words: list[Word] = []
    text: list[str] = []
    bare: list[str] = []  # the unquoted characters of the current word
    expands = in_word = False
    index, length = 0, len(command)
    while index < length:
        char = command[index]
        if char in " \t\n":
            if in_word:
                words.append(Word("".join(text), expands or _braces(bare)))
                text, bare, expands, in_word = [], [], False, False
            index += 1
            continue
        in_word = True
        if char == "\\":
            if index + 1 >= length:
                return None
            text.append(command[index + 1])
            index += 2
        elif char == "'":
            end = command.find("'", index + 1)
            if end < 0:
                return None
            text.append(command[index + 1 : end])
            index = end + 1
        elif char == '"':
            index += 1
            while index < length and command[index] != '"':
                inner = command[index]
                if inner == "\\" and index + 1 < length and command[index + 1] in '"\\$`':
                    inner = command[index + 1]
                    index += 1
                elif inner in "$`":
                    expands = True
                text.append(inner)
                index += 1
            if index >= length:
                return None
            index += 1
        else:
            if char in "*?[$`" or (char == "~" and (not text or text[-1] in "=:")):
                expands = True
            text.append(char)
            bare.append(char)
            index += 1
    if in_word:
        words.append(Word("".join(text), expands or _braces(bare)))
    return words


def _braces(bare: list[str]) -> bool:
    unquoted = "".join(bare)
    return "{" in unquoted and ("," in unquoted or ".." in unquoted)


def command_has_prefix(command: str, prefix: str) -> bool:
    """Whether ``command`` is a simple command whose first words are ``prefix``'s."""
    if _SHELL_OPERATORS.search(command):
        return False
    words, wanted = split_words(command), split_words(prefix)
    if not words or not wanted:
        return False
    return [w.text for w in words[: len(wanted)]] == [w.text for w in wanted]


def command_covered(command: str, prefix: str) -> str | None:
    """None when a rule of ``prefix`` covers ``command``, else why not, for a person."""
    if not command_has_prefix(command, prefix):
        return "The command does not start with the rule's words, or uses shell operators."
    words = split_words(command) or []
    covered = len(split_words(prefix) or [])
    for word in words[covered:]:
        if word.expands:
            return f"{word.text} is expanded by the shell (a glob, a variable or a ~)."
    finding = uncovered([w.text for w in words], covered)
    if finding is not None:
        return f"{finding.message}: a rule for {prefix!r} does not cover it."
    return None
