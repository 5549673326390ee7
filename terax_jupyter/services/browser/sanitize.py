"""The one sanitizer everything the browser engine persists goes through (cache and audit).

Typed values never survive (only ``{{placeholder}}`` templates do), script text never does
(a marker and its digest), urls lose user info, query and fragment, and every other string
is scrubbed of the values typed in this flow and redacted by the project's ``Redactor``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.browser.ir import (
    IR_VERSION,
    Click,
    Navigate,
    Recording,
    Type,
    is_identifier,
    placeholder_name,
)
from terax_jupyter.services.browser.policy import Condition, ReplayPolicy
from terax_jupyter.services.browser.types import AXNode, Snapshot

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from terax_jupyter.services.browser.ir import Action

TYPED = "[typed]"
SCRIPT = "[script]"
INVALID_URL = "[invalid url]"
# Shorter typed values are not scrubbed from other text: "a" or "no" would shred everything.
MIN_SCRUB_LENGTH = 3
# Keys of plain audit data whose values are typed text or script, whatever they look like.
TYPED_KEYS = frozenset({"value", "text", "typed", "typed_text", "input_value", "keys"})
SCRIPT_KEYS = frozenset({"script", "expression", "source", "function", "js"})
URL_KEYS = frozenset({"url", "href", "src"})


class StructureKey:
    """Keyed hashes of page structure lines, so that what a page showed is not kept at rest.

    A stored step keeps, of each ``depth:role:name`` line, ``h:`` and the first 128 bits of
    HMAC-SHA256 under the store's private key; only the lines of the targets the recording
    acts on stay in clear (their role and name are in the actions anyway). Drift detection
    compares lines for equality, so it works on the hashes: a fresh snapshot is hashed the same
    way. The key keeps short lines ("Signed in as MALLORY.Q") from being guessed by hashing
    candidates: without it a hash says nothing.
    """

    PREFIX = "h:"

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes) or len(key) < 16:
            raise ValueError("a structure key is at least 16 random bytes")
        self._key = key

    def __repr__(self) -> str:
        return "StructureKey(...)"  # never the key

    def line(self, line: str, clear: Collection[tuple[str, str]] = ()) -> str:
        if line.startswith(self.PREFIX):
            return line  # hashed already (a structure line starts with its depth)
        parts = line.split(":", 2)
        if len(parts) == 3 and (parts[1], parts[2]) in clear:
            return line
        digest = hmac.new(self._key, line.encode("utf-8", "replace"), hashlib.sha256)
        return self.PREFIX + digest.hexdigest()[:32]

    def lines(
        self, lines: Iterable[str], clear: Collection[tuple[str, str]] = ()
    ) -> tuple[str, ...]:
        return tuple(self.line(line, clear) for line in lines)


def action_targets(recording: Recording) -> frozenset[tuple[str, str]]:
    """The (role, name) of every node the recording acts on: the lines kept in clear."""
    return frozenset(
        (step.action.role, step.action.name)
        for step in recording.steps
        if isinstance(step.action, (Click, Type))
    )


class Sanitizer:
    """Turns actions, recordings, policies and audit records into what may be stored.

    ``typed`` are plaintext values of this flow (recorded or replayed inputs): they are
    replaced by ``[typed]`` wherever they appear, before redaction.
    """

    def __init__(self, redactor: Redactor | None = None, *, typed: Iterable[str] = ()) -> None:
        self.redactor = redactor if redactor is not None else Redactor()
        values = {v for v in typed if isinstance(v, str) and len(v) >= MIN_SCRUB_LENGTH}
        self._typed = tuple(sorted(values, key=len, reverse=True))  # longest first

    def with_typed(self, values: Iterable[str]) -> Sanitizer:
        """A sanitizer sharing the redactor that also scrubs ``values``."""
        return Sanitizer(self.redactor, typed=(*self._typed, *values))

    # -- strings ---------------------------------------------------------------------------

    def text(self, value: str) -> str:
        for typed in self._typed:
            value = value.replace(typed, TYPED)
        return self.redactor.redact(value)

    def url(self, url: str) -> str:
        """Scheme, host, port and path only (no user info, query or fragment), redacted."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return INVALID_URL
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = f"{host}:{port}" if port is not None else host
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, "", "")))

    def typed_value(self, value: object) -> str:
        """A ``{{placeholder}}`` template as is; any other typed value as ``[typed]``."""
        return value if isinstance(value, str) and placeholder_name(value) else TYPED

    def script(self, source: object) -> str:
        """A marker and the digest of the script, never its text."""
        data = source if isinstance(source, str) else repr(source)
        digest = hashlib.sha256(data.encode("utf-8", "replace")).hexdigest()
        return f"{SCRIPT} sha256:{digest}"

    def structure(self, lines: Iterable[str]) -> tuple[str, ...]:
        """A page structure (``depth:role:name`` lines) as stored and as compared on replay."""
        return tuple(self.text(line) for line in lines)

    # -- the engine's objects --------------------------------------------------------------

    def action(self, action: Action) -> dict[str, Any]:
        if isinstance(action, Navigate):
            return {"kind": action.kind, "url": self.url(action.url)}
        data = {"kind": action.kind, "role": action.role, "name": self.text(action.name)}
        if isinstance(action, Type):
            data["value"] = self.typed_value(action.value)
        return data

    def recording(self, recording: Recording) -> dict[str, Any]:
        """The JSON of a recording as it may be stored (``Recording.from_json`` reads it)."""
        own = self.with_typed(recording.typed_values)
        return {
            "version": IR_VERSION,
            "inputs": [n for n in recording.inputs if is_identifier(n)],
            "steps": [
                {
                    "action": own.action(step.action),
                    "structure": list(own.structure(step.structure)),
                }
                for step in recording.steps
            ],
            "non_cacheable": [own.text(reason) for reason in recording.non_cacheable],
        }

    def condition(self, condition: Condition) -> dict[str, Any]:
        return {"kind": condition.kind, "value": self.text(condition.value)}

    def policy(self, policy: ReplayPolicy) -> dict[str, Any]:
        """The JSON of a policy as it may be stored (``ReplayPolicy.from_json`` reads it)."""
        data = policy.to_json()
        data["scope_id"] = self.text(policy.scope_id)
        data["preconditions"] = [self.condition(c) for c in policy.preconditions]
        data["postconditions"] = [self.condition(c) for c in policy.postconditions]
        return data

    def snapshot(self, snapshot: Snapshot) -> dict[str, Any]:
        """What an audit may say about a page: where it was and its shape's hash (no nodes)."""
        return {
            "url": self.url(snapshot.url),
            "title": self.text(snapshot.title),
            "structural_hash": snapshot.structural_hash(),
        }

    # -- audit records ---------------------------------------------------------------------

    def record(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A JSON-ready copy of an audit record: the engine's objects by their own rules, and
        plain values by their key (typed values, scripts, urls), then redacted by key."""
        walked = {self.text(str(k)): self._walk(v, str(k)) for k, v in data.items()}
        result: dict[str, Any] = self.redactor.redact_data(walked)
        return result

    def _walk(self, value: Any, key: str) -> Any:
        known = self._known(value)
        if known is not None:
            return known
        lowered = key.lower()
        if lowered in SCRIPT_KEYS:
            return self.script(value)
        if lowered in TYPED_KEYS:
            return self.typed_value(value)
        if lowered == "inputs":
            names = value.keys() if isinstance(value, dict) else value
            if isinstance(names, str) or not hasattr(names, "__iter__"):
                return TYPED
            return sorted(n if is_identifier(n) else TYPED for n in names)
        if isinstance(value, str):
            is_url = lowered in URL_KEYS or lowered.endswith("_url")
            return self.url(value) if is_url else self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [self._walk(item, key) for item in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, (bytes, bytearray)):
            return f"[{len(value)} bytes]"
        return self.text(str(value))

    def _known(self, value: Any) -> dict[str, Any] | None:
        if isinstance(value, (Navigate, Click, Type)):
            return self.action(value)
        if isinstance(value, Recording):
            return self.recording(value)
        if isinstance(value, ReplayPolicy):
            return self.policy(value)
        if isinstance(value, Condition):
            return self.condition(value)
        if isinstance(value, Snapshot):
            return self.snapshot(value)
        if isinstance(value, AXNode):
            return {"role": value.role, "name": self.text(value.name)}
        return None
