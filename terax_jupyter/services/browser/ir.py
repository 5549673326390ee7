"""The semantic action IR of recorded browser flows: actions, recordings, and the recorder.

An action names its target by ARIA role and accessible name, never by a ref or coordinates,
so a replay can re-resolve it in a fresh snapshot. Typed text is always a ``{{placeholder}}``:
a recording that typed literal text, sent raw input events, clicked coordinates or evaluated
script is marked non-cacheable and can never be stored or replayed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from terax_jupyter.exceptions import InvalidRequest, ReplayRefused

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from terax_jupyter.services.browser.types import AXNode, Snapshot

IR_VERSION = 1
MAX_URL_LENGTH = 2048
MAX_NAME_LENGTH = 1000
MAX_STEPS = 500
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
PLACEHOLDER = re.compile(r"\{\{(" + IDENTIFIER.pattern + r")\}\}")
_ROLE = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def placeholder_name(value: str) -> str | None:
    """``"username"`` for exactly ``"{{username}}"``; None for anything else."""
    match = PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def is_identifier(value: object) -> bool:
    return isinstance(value, str) and IDENTIFIER.fullmatch(value) is not None


def check_url(url: object) -> str:
    """``url`` if a replay may load it: http(s), a host, no user info, no query, no fragment.

    Messages never repeat the url: a refused one may carry a token in its query.
    """
    if not isinstance(url, str) or not url:
        raise InvalidRequest("A navigate action needs a url.", reason="invalid_url")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidRequest(
            f"A replayed url may be at most {MAX_URL_LENGTH} characters.", reason="invalid_url"
        )
    if _CONTROL.search(url) or any(c.isspace() for c in url) or "\\" in url:
        raise InvalidRequest(
            "A replayed url must not contain spaces, control characters or backslashes.",
            reason="invalid_url",
        )
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidRequest("A replayed url must be http or https.", reason="invalid_url")
    if "@" in parts.netloc:
        raise InvalidRequest(
            "A replayed url must not carry a user name or password; sign in with typed "
            "{{placeholder}} inputs instead.",
            reason="invalid_url",
        )
    if not parts.hostname:
        raise InvalidRequest("A replayed url needs a host.", reason="invalid_url")
    try:
        parts.port  # noqa: B018 (validates the port)
    except ValueError:
        raise InvalidRequest("A replayed url has an invalid port.", reason="invalid_url") from None
    if "?" in url:
        raise InvalidRequest(
            "A replayed url must not have a query string: it could carry typed values or "
            "tokens. Reach the page by navigating and typing {{placeholder}} inputs.",
            reason="invalid_url",
        )
    if "#" in url:
        raise InvalidRequest(
            "A replayed url must not have a fragment ('#...').", reason="invalid_url"
        )
    return url


def _check_role(role: object) -> str:
    if not isinstance(role, str) or _ROLE.fullmatch(role) is None:
        raise InvalidRequest(
            "An action's role must be a lower-case ARIA role ('button', 'textbox', ...).",
            reason="invalid_action",
        )
    return role


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidRequest(
            "An action's target needs an accessible name: replay resolves targets by exact "
            "role and name.",
            reason="invalid_action",
        )
    if len(name) > MAX_NAME_LENGTH or _CONTROL.search(name):
        raise InvalidRequest(
            f"An accessible name must be at most {MAX_NAME_LENGTH} characters without control "
            "characters.",
            reason="invalid_action",
        )
    return name


@dataclass(frozen=True)
class Navigate:
    """Load a url (http(s), no user info, no query, no fragment)."""

    url: str
    kind: ClassVar[str] = "navigate"

    def __post_init__(self) -> None:
        check_url(self.url)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "url": self.url}


@dataclass(frozen=True)
class Click:
    """Click the one node with exactly this role and accessible name."""

    role: str
    name: str
    kind: ClassVar[str] = "click"

    def __post_init__(self) -> None:
        _check_role(self.role)
        _check_name(self.name)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "role": self.role, "name": self.name}


@dataclass(frozen=True)
class Type:
    """Type an input into the one node with this role and name; ``value`` is ``{{input}}``."""

    role: str
    name: str
    value: str
    kind: ClassVar[str] = "type"

    def __post_init__(self) -> None:
        _check_role(self.role)
        _check_name(self.name)
        if placeholder_name(self.value) is None:
            raise InvalidRequest(
                "A typed value must be exactly one {{placeholder}} (a name of letters, digits "
                "and '_'); literal text cannot be recorded for replay.",
                reason="invalid_action",
            )

    @property
    def placeholder(self) -> str:
        name = placeholder_name(self.value)
        assert name is not None
        return name

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "role": self.role, "name": self.name, "value": self.value}


Action = Navigate | Click | Type
_KINDS: dict[str, type[Navigate] | type[Click] | type[Type]] = {
    "navigate": Navigate,
    "click": Click,
    "type": Type,
}


def action_from_json(data: object) -> Action:
    if not isinstance(data, dict) or data.get("kind") not in _KINDS:
        raise InvalidRequest(
            "An action must be an object with kind navigate, click or type.",
            reason="invalid_action",
        )
    cls = _KINDS[data["kind"]]
    fields = {k: v for k, v in data.items() if k != "kind"}
    expected = {"navigate": {"url"}, "click": {"role", "name"}, "type": {"role", "name", "value"}}
    if set(fields) != expected[data["kind"]]:
        raise InvalidRequest(
            f"A {data['kind']} action takes exactly {sorted(expected[data['kind']])}.",
            reason="invalid_action",
        )
    return cls(**fields)


def canonical_json(data: Any) -> str:
    """The one serialization digests are taken over: sorted keys, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def command_digest(actions: Iterable[Action]) -> str:
    """sha256 of the canonical JSON of the actions (and the IR version)."""
    payload = {"version": IR_VERSION, "actions": [a.to_json() for a in actions]}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class RecordedStep:
    """One action and the page's structure just before it (for the replay's drift guard)."""

    action: Action
    structure: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action.to_json(), "structure": list(self.structure)}


@dataclass(frozen=True)
class Recording:
    """A recorded flow: its steps, declared inputs, and why it may not be cached (if so).

    ``typed_values`` are the texts the agent really typed while recording; they live only in
    memory, so that the sanitizer can scrub them from anything persisted.
    """

    steps: tuple[RecordedStep, ...]
    inputs: tuple[str, ...] = ()
    non_cacheable: tuple[str, ...] = ()
    typed_values: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.steps) > MAX_STEPS:
            raise InvalidRequest(
                f"A recording may have at most {MAX_STEPS} steps.", reason="invalid_recording"
            )
        for name in self.inputs:
            if not is_identifier(name):
                raise InvalidRequest(
                    "Input names are letters, digits and '_' (not starting with a digit).",
                    reason="invalid_input_name",
                )
        if len(set(self.inputs)) != len(self.inputs):
            raise InvalidRequest("An input is declared twice.", reason="invalid_input_name")
        undeclared = sorted(self.placeholders() - set(self.inputs))
        if undeclared:
            raise InvalidRequest(
                f"The recording types inputs it does not declare: {', '.join(undeclared)}.",
                reason="undeclared_input",
            )

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(step.action for step in self.steps)

    @property
    def cacheable(self) -> bool:
        return not self.non_cacheable

    def placeholders(self) -> set[str]:
        return {s.action.placeholder for s in self.steps if isinstance(s.action, Type)}

    def command_digest(self) -> str:
        return command_digest(self.actions)

    def require_cacheable(self) -> None:
        """Refuse (``non_cacheable``) a recording that may not be stored or replayed."""
        if self.non_cacheable:
            raise ReplayRefused(
                "This recording cannot be cached or replayed: "
                + "; ".join(self.non_cacheable)
                + ".",
                reason="non_cacheable",
            )
        if not self.steps:
            raise ReplayRefused("An empty recording cannot be replayed.", reason="non_cacheable")

    def to_json(self) -> dict[str, Any]:
        return {
            "version": IR_VERSION,
            "inputs": list(self.inputs),
            "steps": [step.to_json() for step in self.steps],
            "non_cacheable": list(self.non_cacheable),
        }

    @classmethod
    def from_json(cls, data: object) -> Recording:
        if not isinstance(data, dict):
            raise InvalidRequest("A recording must be a JSON object.", reason="invalid_recording")
        if data.get("version") != IR_VERSION:
            raise InvalidRequest(
                f"Unknown recording version {data.get('version')!r} (this one reads {IR_VERSION}).",
                reason="invalid_recording",
            )
        steps_data, inputs, reasons = (
            data.get("steps"),
            data.get("inputs"),
            data.get("non_cacheable"),
        )
        if not isinstance(steps_data, list) or not isinstance(inputs, list):
            raise InvalidRequest(
                "A recording needs 'steps' and 'inputs' lists.", reason="invalid_recording"
            )
        if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
            raise InvalidRequest(
                "'non_cacheable' must be a list of strings.", reason="invalid_recording"
            )
        steps = []
        for item in steps_data:
            if not isinstance(item, dict) or not isinstance(item.get("structure"), list):
                raise InvalidRequest(
                    "A step needs an 'action' and a 'structure' list.", reason="invalid_recording"
                )
            structure = item["structure"]
            if not all(isinstance(line, str) for line in structure):
                raise InvalidRequest(
                    "A step's structure is a list of strings.", reason="invalid_recording"
                )
            steps.append(RecordedStep(action_from_json(item.get("action")), tuple(structure)))
        return cls(tuple(steps), tuple(inputs), tuple(reasons))


class Recorder:
    """Builds a ``Recording`` as the agent's browser tools succeed (call after each success)."""

    def __init__(self, *, inputs: Iterable[str] = ()) -> None:
        self._steps: list[RecordedStep] = []
        self._inputs: list[str] = []
        self._reasons: list[str] = []
        self._typed: set[str] = set()
        self._raw = False  # a raw operation was recorded (its own reason says which)
        for name in inputs:
            self.declare_input(name)

    @property
    def cacheable(self) -> bool:
        return not self._reasons

    def declare_input(self, name: str) -> None:
        if not is_identifier(name):
            raise InvalidRequest(
                "Input names are letters, digits and '_' (not starting with a digit).",
                reason="invalid_input_name",
            )
        if name not in self._inputs:
            self._inputs.append(name)

    def mark_non_cacheable(self, why: str) -> None:
        """The flow did something replay cannot reproduce safely; it will never be stored."""
        self._reasons.append(why)

    def navigate(self, url: str) -> Navigate | None:
        try:
            action = Navigate(url)
        except InvalidRequest as error:
            self.mark_non_cacheable(f"navigated to a url replay refuses ({error.message})")
            return None
        self._steps.append(RecordedStep(action))
        return action

    def click(self, node: AXNode, *, before: Snapshot) -> Click | None:
        action = self._targeted(node, before, lambda: Click(node.role, node.name))
        return action if isinstance(action, Click) else None

    def type(
        self, node: AXNode, value: str, *, before: Snapshot, typed: str | None = None
    ) -> Type | None:
        """Record typing ``value`` (a ``{{placeholder}}``) into ``node``; ``typed`` is the text
        the agent really typed for it. A literal ``value`` makes the recording non-cacheable
        and is kept only in memory, for scrubbing."""
        if placeholder_name(value) is None:
            if isinstance(value, str) and value:
                self._typed.add(value)
            self.mark_non_cacheable(
                f"typed literal text into {node.role} {node.name!r} "
                "instead of a {{placeholder}}"
            )
            return None
        if typed:
            self._typed.add(typed)
        action = self._targeted(node, before, lambda: Type(node.role, node.name, value))
        return action if isinstance(action, Type) else None

    def raw_input(self, what: str = "raw input events") -> None:
        self._raw = True
        self.mark_non_cacheable(f"sent {what}")

    def coordinate_click(self, x: float, y: float) -> None:
        self._raw = True
        self.mark_non_cacheable(f"clicked at coordinates ({x:g}, {y:g})")

    def evaluate(self, script: str) -> None:
        """Arbitrary script cannot be replayed; only its digest is ever kept."""
        self._raw = True
        digest = hashlib.sha256(script.encode("utf-8", "replace")).hexdigest()
        self.mark_non_cacheable(f"evaluated script (sha256 {digest[:16]})")

    def finish(self, *, raw_used: bool = False) -> Recording:
        """The recording so far. ``raw_used`` is the page's flag (``BrowserPage.raw_used``):
        a raw operation that did not come through this recorder (a caller that used the
        page directly) still makes the recording non-cacheable."""
        reasons = list(self._reasons)
        if raw_used and not self._raw:
            reasons.append(
                "the page was driven by a raw operation (script, coordinate click or raw "
                "key) that replay cannot reproduce"
            )
        return Recording(
            tuple(self._steps),
            tuple(self._inputs),
            tuple(reasons),
            typed_values=frozenset(self._typed),
        )

    def _targeted(
        self, node: AXNode, before: Snapshot, build: Callable[[], Action]
    ) -> Action | None:
        try:
            action = build()
        except InvalidRequest as error:
            self.mark_non_cacheable(f"acted on a target replay cannot name ({error.message})")
            return None
        matches = len(before.find(node.role, node.name))
        if matches != 1:
            self.mark_non_cacheable(
                f"the target {node.role} {node.name!r} is "
                + ("not in the snapshot" if matches == 0 else f"one of {matches} alike")
            )
            return None
        self._steps.append(RecordedStep(action, tuple(before.structure())))
        return action


def declared_inputs(recording: Recording, inputs: Sequence[str]) -> tuple[str, ...]:
    """``inputs`` if they are exactly the recording's placeholders (for saving a workflow)."""
    for name in inputs:
        if not is_identifier(name):
            raise InvalidRequest(
                "Input names are letters, digits and '_' (not starting with a digit).",
                reason="invalid_input_name",
            )
    declared, used = set(inputs), recording.placeholders()
    if len(declared) != len(inputs) or declared != used:
        missing, unused = sorted(used - declared), sorted(declared - used)
        detail = []
        if missing:
            detail.append(f"not declared: {', '.join(missing)}")
        if unused:
            detail.append(f"not used: {', '.join(unused)}")
        raise InvalidRequest(
            "The declared inputs must be exactly the recording's placeholders"
            + (f" ({'; '.join(detail)})" if detail else " (one is declared twice)")
            + ".",
            reason="input_mismatch",
        )
    return tuple(inputs)
