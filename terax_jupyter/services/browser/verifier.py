"""Single-use approval tokens for destructive replays, bound to exactly what was approved.

When a destructive replay is proposed, the approval flow calls ``issue`` with what the
replay will do (task, scope, version, policy, the page it starts from, the commands) and keeps
the token with the proposal the person sees; only their approval hands it to the replay. The
replay consumes the token with the same facts as it sees them; any difference, a second use,
or a late use is refused. Only a keyed hash of each token is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from terax_jupyter.exceptions import InvalidRequest, ReplayRefused
from terax_jupyter.services.browser.ir import canonical_json

if TYPE_CHECKING:
    from collections.abc import Callable

DEFAULT_TOKEN_TTL = 120.0
MAX_TOKEN_TTL = 900.0
MAX_TOKEN_LENGTH = 200


@dataclass
class _Grant:
    binding: str  # sha256 of the canonical JSON of the bound fields
    expires_at: float
    used: bool = False
    kept_for: float = 0.0  # how long a spent or expired grant is remembered


class ReplayVerifier:
    """Issues and consumes approval tokens; safe to share between threads and tasks.

    ``clock`` is monotonic by default (tokens never outlive a server). Spent and expired
    grants are kept for one more TTL, so that a late or repeated use is told apart from an
    unknown token; after that they are forgotten.
    """

    def __init__(
        self, *, ttl_seconds: float = DEFAULT_TOKEN_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not 0 < ttl_seconds <= MAX_TOKEN_TTL:
            raise InvalidRequest(
                f"An approval token lives 0 to {MAX_TOKEN_TTL:g} seconds.", reason="invalid_ttl"
            )
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._grants: dict[str, _Grant] = {}
        self._lock = threading.Lock()

    def issue(
        self,
        *,
        task: str,
        scope_id: str,
        workflow_version: int,
        policy_fingerprint: str,
        structural_hash: str,
        command_digest: str,
        ttl_seconds: float | None = None,
    ) -> str:
        """A new single-use token bound to these fields, for the proposal a person approves.

        ``ttl_seconds`` (at most ``MAX_TOKEN_TTL``) gives an approval card time to be read;
        the default is the verifier's TTL."""
        binding = _binding(
            task, scope_id, workflow_version, policy_fingerprint, structural_hash, command_digest
        )
        lifetime = self.ttl_seconds if ttl_seconds is None else ttl_seconds
        if (
            not isinstance(lifetime, (int, float))
            or isinstance(lifetime, bool)
            or not 0 < lifetime <= MAX_TOKEN_TTL
        ):
            raise InvalidRequest(
                f"An approval token lives 0 to {MAX_TOKEN_TTL:g} seconds.", reason="invalid_ttl"
            )
        token = secrets.token_urlsafe(32)
        with self._lock:
            now = self._clock()
            self._prune(now)
            self._grants[self._hash(token)] = _Grant(binding, now + lifetime, kept_for=lifetime)
        return token

    def consume(
        self,
        token: str,
        *,
        task: str,
        scope_id: str,
        workflow_version: int,
        policy_fingerprint: str,
        structural_hash: str,
        command_digest: str,
    ) -> None:
        """Accept ``token`` once, if it was issued for exactly these fields and is not expired.

        Any presentation spends the token, a mismatched one too: a token shown for another
        page or another command cannot be retried until something matches.
        """
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            raise ReplayRefused(
                "The approval token is not one this server issued.", reason="token_unknown"
            )
        binding = _binding(
            task, scope_id, workflow_version, policy_fingerprint, structural_hash, command_digest
        )
        key = self._hash(token)
        with self._lock:
            now = self._clock()
            self._prune(now)
            grant = self._grants.get(key)
            if grant is None:
                raise ReplayRefused(
                    "The approval token is not one this server issued (or it was forgotten); "
                    "ask for approval again.",
                    reason="token_unknown",
                )
            if grant.used:
                raise ReplayRefused(
                    "The approval token was already used; every destructive replay needs its "
                    "own approval.",
                    reason="token_reused",
                )
            grant.used = True
            if now >= grant.expires_at:
                raise ReplayRefused(
                    "The approval token expired; ask for approval again.", reason="token_expired"
                )
            if not hmac.compare_digest(grant.binding, binding):
                raise ReplayRefused(
                    "The approval token was issued for another task, scope, policy, page or "
                    "command sequence; ask for approval of this replay.",
                    reason="token_mismatch",
                )

    def _hash(self, token: str) -> str:
        return hmac.new(self._key, token.encode("utf-8"), hashlib.sha256).hexdigest()

    def _prune(self, now: float) -> None:
        stale = [k for k, g in self._grants.items() if now >= g.expires_at + g.kept_for]
        for key in stale:
            del self._grants[key]


def _binding(
    task: str,
    scope_id: str,
    workflow_version: int,
    policy_fingerprint: str,
    structural_hash: str,
    command_digest: str,
) -> str:
    for name, value in (
        ("task", task),
        ("scope_id", scope_id),
        ("policy_fingerprint", policy_fingerprint),
        ("structural_hash", structural_hash),
        ("command_digest", command_digest),
    ):
        if not isinstance(value, str) or not value:
            raise InvalidRequest(
                f"An approval token binds a non-empty {name}.", reason="invalid_binding"
            )
    if not isinstance(workflow_version, int) or isinstance(workflow_version, bool):
        raise InvalidRequest("workflow_version must be an integer.", reason="invalid_binding")
    fields = {
        "task": task,
        "scope_id": scope_id,
        "workflow_version": workflow_version,
        "policy_fingerprint": policy_fingerprint,
        "structural_hash": structural_hash,
        "command_digest": command_digest,
    }
    return hashlib.sha256(canonical_json(fields).encode("utf-8")).hexdigest()
