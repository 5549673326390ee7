"""Preview capabilities: the unguessable path segment that lets a previewed page reach its dev
server, and nothing else.

A previewed page runs in a sandbox without an origin of its own (``Content-Security-Policy:
sandbox`` without ``allow-same-origin``), so the browser sends it no Jupyter cookie, and it
cannot read Jupyter's. Its own requests (scripts, fetches, its hot-reload socket) carry the
capability in their path instead: ``<base>terax/proxy/<target>~<token>/...``. A capability
names one target (``5173``, ``[::1]:8080``); Jupyter's API does not accept it.

One live capability per target: a Jupyter server is one person's (a collaborator a hub
lets in acts with the owner's rights), and the prefix a dev server is told to serve under
(``vite --base``) must stay the same while it is in use. It ends after ``idle`` seconds
without a request, and ``lifetime`` seconds after it was issued whatever happens; both are
configurable, and revoking ends them all. Who asked for it is recorded. Tokens are kept as
SHA-256 digests: the store (0600, in the server's data folder) cannot be replayed from a
copy.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AccessDenied
from terax_jupyter.security.storage import read_private_json, write_private_file

if TYPE_CHECKING:
    from collections.abc import Callable

# How often a capability's last use is written back (a page load is hundreds of requests).
_SAVE_EVERY = 60.0
_FORMAT = 1


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class Navigation:
    """The last page a capability's frame loaded, for the preview tab (which cannot look)."""

    path: str
    status: int
    error: dict[str, Any] | None = None
    count: int = 0


@dataclass
class Capability:
    digest: str
    target: str
    user: str
    issued: float
    last_used: float
    token: str = field(default="", repr=False)  # only while this process knows it
    navigation: Navigation | None = None
    mounted: bool = False  # its dev server serves under the prefix itself (vite --base)

    def public(self, *, prefix: str | None, idle: float, lifetime: float) -> dict[str, Any]:
        """What its user is told: the prefix to load (with the token) and when it ends."""
        return {
            "target": self.target,
            "prefix": prefix,
            "issued": self.issued,
            "expires": min(self.last_used + idle, self.issued + lifetime),
        }


class PreviewCapabilities:
    """The live capabilities of one server, persisted so that a restart keeps dev servers'
    base paths valid."""

    def __init__(
        self,
        path: str | None,
        *,
        idle: float,
        lifetime: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self.idle = idle
        self.lifetime = lifetime
        self._clock = clock
        self._lock = threading.Lock()
        self._by_digest: dict[str, Capability] = {}
        self._saved_at = 0.0
        self._load()

    # -- issuing --------------------------------------------------------------------------

    def issue(self, user: str, target: str) -> tuple[Capability, str]:
        """The live capability for ``target`` and its token (a new one, recorded as asked for
        by ``user``, when there is none or this process no longer knows the old token)."""
        now = self._clock()
        with self._lock:
            self._expire(now)
            for capability in self._by_digest.values():
                if capability.target == target and capability.token:
                    capability.last_used = now
                    return capability, capability.token
            token = secrets.token_urlsafe(24)
            capability = Capability(digest(token), target, user, now, now, token)
            # A capability whose token was lost (a restart) stays valid for the dev servers
            # that were told its prefix; the new one joins it.
            self._by_digest[capability.digest] = capability
            self._save(force=True)
            return capability, token

    def revoke(self) -> int:
        """End every capability; how many there were."""
        with self._lock:
            gone = len(self._by_digest)
            self._by_digest.clear()
            self._save(force=True)
            return gone

    # -- use ------------------------------------------------------------------------------

    def check(self, token: str, target: str) -> Capability:
        """The capability ``token`` names for ``target``, or AccessDenied saying why not."""
        now = self._clock()
        key = digest(token)
        with self._lock:
            self._expire(now)
            capability = self._by_digest.get(key)
            if capability is None:
                raise AccessDenied(
                    "This preview address has expired or was revoked. Open the page again "
                    "from the Terax preview tab (a dev server told to serve under the old "
                    "address needs the new one).",
                    reason="preview_expired",
                )
            if capability.target != target:
                raise AccessDenied(
                    "This preview address belongs to another dev server.",
                    reason="preview_capability_mismatch",
                )
            capability.token = capability.token or token
            capability.last_used = now
            self._save()
            return capability

    def keep_alive(self, capability: Capability) -> None:
        """An open connection (a hot-reload socket) counts as use."""
        with self._lock:
            capability.last_used = self._clock()

    def mount(self, capability: Capability) -> None:
        """Its dev server serves under the capability's prefix: ask it for whole paths."""
        with self._lock:
            if not capability.mounted:
                capability.mounted = True
                self._save(force=True)

    def navigated(self, capability: Capability, navigation: Navigation) -> None:
        with self._lock:
            count = capability.navigation.count if capability.navigation else 0
            navigation.count = count + 1
            capability.navigation = navigation

    def find(self, target: str) -> Capability | None:
        with self._lock:
            self._expire(self._clock())
            live = [c for c in self._by_digest.values() if c.target == target]
        return max(live, key=lambda c: c.last_used) if live else None

    # -- persistence ----------------------------------------------------------------------

    def _expire(self, now: float) -> None:
        dead = [
            key
            for key, c in self._by_digest.items()
            if now - c.last_used > self.idle or now - c.issued > self.lifetime
        ]
        for key in dead:
            del self._by_digest[key]
        if dead:
            self._save(force=True)

    def _load(self) -> None:
        if self.path is None:
            return
        data = read_private_json(self.path)  # None: no file, or not JSON; nothing to restore
        if data is None:
            return
        try:
            entries = data["capabilities"] if data.get("format") == _FORMAT else []
            if not isinstance(entries, list):
                raise TypeError("capabilities is not a list")
            for entry in entries:
                capability = Capability(
                    str(entry["digest"]),
                    str(entry["target"]),
                    str(entry["user"]),
                    float(entry["issued"]),
                    float(entry["last_used"]),
                    mounted=entry.get("mounted") is True,
                )
                self._by_digest[capability.digest] = capability
        except (ValueError, KeyError, TypeError, AttributeError):
            self._by_digest.clear()  # an unreadable store ends every capability: safe
        self._expire(self._clock())

    def _save(self, *, force: bool = False) -> None:
        if self.path is None:
            return
        now = self._clock()
        if not force and now - self._saved_at < _SAVE_EVERY:
            return
        self._saved_at = now
        entries = [
            {k: v for k, v in asdict(c).items() if k not in ("token", "navigation")}
            for c in self._by_digest.values()
        ]
        write_private_file(self.path, json.dumps({"format": _FORMAT, "capabilities": entries}))
