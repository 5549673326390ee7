"""An append-only JSON-lines record of security-relevant actions (roots added, approvals, ...)."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from terax_jupyter.security.redact import Redactor


class AuditLog:
    """Writes one redacted JSON object per line; each write is a single ``O_APPEND`` write."""

    def __init__(self, path: str, redactor: Redactor) -> None:
        self.path = path
        self._redactor = redactor
        self._lock = threading.Lock()

    def record(self, action: str, *, user: str | None, **details: Any) -> dict[str, Any]:
        entry: dict[str, Any] = self._redactor.redact_data(
            {
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "action": action,
                "user": user,
                **details,
            }
        )
        line = json.dumps(entry, sort_keys=True) + "\n"
        with self._lock:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
        return entry

    def entries(self) -> list[dict[str, Any]]:
        """Every entry, oldest first (for the API and tests; the file is small by nature).

        A line that is not a JSON object (a write cut short by a crash) is passed over
        rather than making the whole record unreadable.
        """
        entries = []
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(entry, dict):
                        entries.append(entry)
        except FileNotFoundError:
            return []
        return entries
