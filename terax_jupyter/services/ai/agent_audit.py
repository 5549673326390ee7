"""The administrator's audit log of agent actions: one JSON line per action, for log shippers.

``audit_log`` in the policy names the sink: ``"stdout"`` (the server's standard output, which
JupyterHub's spawners and Kubernetes collect as the server's log; the user cannot change what
was written there) or an absolute path. A path is opened once, at start, append-only, never
through a symbolic link, and must be a regular file; otherwise the audit does not start and
the agent stays off (``problem``): an administrator who asked for a record gets one or none
of the agent. The folder should be one the user cannot write (then the file cannot be
deleted or replaced); see docs/security.md.

Each line (``AUDIT_FORMAT``) is written with one ``write`` call, so lines of several threads
never mix. Values pass the redactor; tool arguments are only a SHA-256 digest.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Unavailable

if TYPE_CHECKING:
    from terax_jupyter.security.redact import Redactor

log = logging.getLogger(__name__)

AUDIT_FORMAT = 1  # the "v" of every line; raised when a field changes meaning
SOURCE = "terax.agent"


def arguments_digest(arguments: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of a tool call's arguments."""
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class AgentAudit:
    """Where agent actions go when the policy names an ``audit_log``; a no-op otherwise."""

    def __init__(self, target: str | None, redactor: Redactor, *, server_user: str) -> None:
        self.target = target
        self.problem: str | None = None
        self._redactor = redactor
        self._server_user = server_user
        self._lock = threading.Lock()
        self._fd: int | None = None
        if target is None or target == "stdout":
            return
        try:
            self._fd = _open_append(target)
        except OSError as error:
            self.problem = f"The audit log {target} cannot be opened: {error.strerror or error}."
        except ValueError as error:
            self.problem = f"The audit log {target} is refused: {error}"
        if self.problem is not None:
            log.error("%s The agent is off until it is fixed.", self.problem)
        elif os.access(os.path.dirname(target), os.W_OK) and os.geteuid() != 0:
            log.warning(
                "The audit log's folder %s is writable by this server's user, who could "
                "delete the log; use a folder only the administrator can write.",
                os.path.dirname(target),
            )

    @property
    def enabled(self) -> bool:
        return self.target is not None

    def require(self) -> None:
        """Refuse agent work when the administrator's audit log could not be opened."""
        if self.problem is not None:
            raise Unavailable(
                f"The agent is off: {self.problem} Ask the administrator.",
                reason="audit_unavailable",
            )

    def record(
        self, event: str, *, user: str | None, session: str | None, **fields: Any
    ) -> dict[str, Any] | None:
        """Write one line; returns the entry (None without a sink)."""
        if self.target is None or self.problem is not None:
            return None
        now = time.time()
        entry = self._redactor.redact_data(
            {
                "v": AUDIT_FORMAT,
                "source": SOURCE,
                "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
                + f".{int(now % 1 * 1000):03d}Z",
                "event": event,
                "user": user or self._server_user,
                "session": session,
                **fields,
            }
        )
        line = (json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:
                if self._fd is not None:
                    os.write(self._fd, line)
                else:
                    stream = sys.stdout
                    stream.write(line.decode("utf-8"))
                    stream.flush()
            except (OSError, ValueError) as error:  # a full disk, a closed stream
                log.error("The agent audit line was not written (%s): %s", error, line[:200])
        return entry

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _open_append(path: str) -> int:
    """An append-only descriptor of the regular file ``path`` (created 0600 if missing),
    never followed through a symbolic link (``O_NOFOLLOW``: ELOOP for one)."""
    if not os.path.isabs(path):
        raise ValueError("it is not an absolute path.")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_NONBLOCK, 0o600)  # a FIFO must not block the start
    except OSError as error:
        if os.path.islink(path):
            raise ValueError("it is a symbolic link.") from None
        raise error
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ValueError("it is not a regular file.")
    os.set_blocking(fd, True)
    return fd
