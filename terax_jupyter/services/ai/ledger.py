"""The read-before-edit ledger of one session, kept in memory and written through to SQLite."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from terax_jupyter.services.ai.store import AiStore


class SessionLedger:
    """Which files a session read, at which etag, for tools running on the event loop.

    Loaded once from the store (by the caller, off the loop: ``AiManager.ledger``), then
    answered from memory; writes go to the store's writer (``persist`` queues them in order
    without blocking the loop).
    """

    def __init__(
        self,
        session_id: str,
        store: AiStore,
        persist: Callable[..., object],
        etags: dict[str, str],
    ) -> None:
        self.session_id = session_id
        self._store = store
        self._persist = persist
        self._etags = dict(etags)

    def record(self, path: str, etag: str) -> None:
        self._etags[path] = etag
        self._persist(self._store.record_read, self.session_id, path, etag)

    def etag(self, path: str) -> str | None:
        return self._etags.get(path)
