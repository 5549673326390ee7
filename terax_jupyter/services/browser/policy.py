"""The policy a replay runs under: its scope, version, side effect, TTL and page conditions.

Every field takes part in the fingerprint, and the fingerprint in cache matching: an entry
recorded under one policy never replays under a changed one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import InvalidRequest, ReadOnlyMode
from terax_jupyter.services.browser.ir import canonical_json

if TYPE_CHECKING:
    from terax_jupyter.services.browser.manager import BrowserManager

POLICY_VERSION = 1
CONDITION_KINDS = ("url_contains", "title_contains", "text_contains", "selector_exists")
SIDE_EFFECTS = ("read_only", "mutating", "destructive")
MAX_TTL_SECONDS = 90 * 24 * 3600
DEFAULT_TTL = 30 * 24 * 3600
MAX_CONDITIONS = 20
MAX_VALUE_LENGTH = 1000
MAX_SCOPE_LENGTH = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Condition:
    """Something that must hold on the page: ``kind`` and the text or selector it checks."""

    kind: str
    value: str

    def __post_init__(self) -> None:
        if self.kind not in CONDITION_KINDS:
            raise InvalidRequest(
                f"A condition's kind is one of {', '.join(CONDITION_KINDS)}.",
                reason="invalid_policy",
            )
        if not isinstance(self.value, str) or not self.value:
            raise InvalidRequest("A condition needs a non-empty value.", reason="invalid_policy")
        if len(self.value) > MAX_VALUE_LENGTH or _CONTROL.search(self.value):
            raise InvalidRequest(
                f"A condition's value is at most {MAX_VALUE_LENGTH} characters without control "
                "characters.",
                reason="invalid_policy",
            )

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}

    @classmethod
    def from_json(cls, data: object) -> Condition:
        if not isinstance(data, dict) or set(data) != {"kind", "value"}:
            raise InvalidRequest(
                "A condition is an object with 'kind' and 'value'.", reason="invalid_policy"
            )
        return cls(data["kind"], data["value"])


@dataclass(frozen=True)
class ReplayPolicy:
    """Where and how a recorded flow may be replayed.

    ``scope_id`` names the scope the recording belongs to (for example the origin and the
    task's scope); ``workflow_version`` changes when the flow's meaning changes;
    ``side_effect`` says what a replay does (``destructive`` needs an approval token);
    ``ttl_seconds`` bounds how long after recording a replay is still trusted.
    """

    scope_id: str
    workflow_version: int
    side_effect: str
    ttl_seconds: int
    preconditions: tuple[Condition, ...] = ()
    postconditions: tuple[Condition, ...] = ()

    def __post_init__(self) -> None:
        scope = self.scope_id
        if not isinstance(scope, str) or not scope.strip() or len(scope) > MAX_SCOPE_LENGTH:
            raise InvalidRequest(
                f"A policy needs a scope_id of 1 to {MAX_SCOPE_LENGTH} characters.",
                reason="invalid_policy",
            )
        if _CONTROL.search(scope):
            raise InvalidRequest(
                "A scope_id must not contain control characters.", reason="invalid_policy"
            )
        version = self.workflow_version
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise InvalidRequest(
                "workflow_version must be an integer of 1 or more.", reason="invalid_policy"
            )
        if self.side_effect not in SIDE_EFFECTS:
            raise InvalidRequest(
                f"side_effect is one of {', '.join(SIDE_EFFECTS)}.", reason="invalid_policy"
            )
        ttl = self.ttl_seconds
        if not isinstance(ttl, int) or isinstance(ttl, bool) or not 1 <= ttl <= MAX_TTL_SECONDS:
            raise InvalidRequest(
                f"ttl_seconds must be an integer from 1 to {MAX_TTL_SECONDS}.",
                reason="invalid_policy",
            )
        for key in ("preconditions", "postconditions"):
            conditions = getattr(self, key)
            if isinstance(conditions, list):
                conditions = tuple(conditions)
                object.__setattr__(self, key, conditions)  # frozen: normalize once, here
            if not isinstance(conditions, tuple) or not all(
                isinstance(c, Condition) for c in conditions
            ):
                raise InvalidRequest(
                    "Pre- and postconditions are tuples of Condition.", reason="invalid_policy"
                )
            if len(conditions) > MAX_CONDITIONS:
                raise InvalidRequest(
                    f"At most {MAX_CONDITIONS} pre- or postconditions.", reason="invalid_policy"
                )

    @property
    def destructive(self) -> bool:
        return self.side_effect == "destructive"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": POLICY_VERSION,
            "scope_id": self.scope_id,
            "workflow_version": self.workflow_version,
            "side_effect": self.side_effect,
            "ttl_seconds": self.ttl_seconds,
            "preconditions": [c.to_json() for c in self.preconditions],
            "postconditions": [c.to_json() for c in self.postconditions],
        }

    @classmethod
    def from_json(cls, data: object) -> ReplayPolicy:
        if not isinstance(data, dict):
            raise InvalidRequest("A policy must be a JSON object.", reason="invalid_policy")
        if data.get("version") != POLICY_VERSION:
            raise InvalidRequest(
                f"Unknown policy version {data.get('version')!r} (this one reads "
                f"{POLICY_VERSION}).",
                reason="invalid_policy",
            )
        expected = {
            "version",
            "scope_id",
            "workflow_version",
            "side_effect",
            "ttl_seconds",
            "preconditions",
            "postconditions",
        }
        if set(data) != expected:
            raise InvalidRequest(
                f"A policy has exactly the fields {sorted(expected)}.", reason="invalid_policy"
            )
        for key in ("preconditions", "postconditions"):
            if not isinstance(data[key], list):
                raise InvalidRequest(f"'{key}' must be a list.", reason="invalid_policy")
        return cls(
            scope_id=data["scope_id"],
            workflow_version=data["workflow_version"],
            side_effect=data["side_effect"],
            ttl_seconds=data["ttl_seconds"],
            preconditions=tuple(Condition.from_json(c) for c in data["preconditions"]),
            postconditions=tuple(Condition.from_json(c) for c in data["postconditions"]),
        )

    def fingerprint(self) -> str:
        """sha256 of the canonical JSON of the whole policy."""
        return hashlib.sha256(canonical_json(self.to_json()).encode("utf-8")).hexdigest()


async def read_only_replay(browser: BrowserManager, name: str, pinned: str | None) -> str:
    """On a read-only server only a workflow that looks may replay: refuse any other with
    ``read_only``; the answer pins the run to "read_only", so one replaced meanwhile is refused
    too."""
    side_effect = pinned or (await browser.get_workflow(name)).policy.side_effect
    if side_effect != "read_only":
        raise ReadOnlyMode(
            f"The server is read-only: the {side_effect} workflow {name!r} cannot be replayed "
            "(only read_only workflows can)."
        )
    return "read_only"
