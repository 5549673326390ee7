"""AiStore: the AI sessions, messages, runs, tool calls, approvals and usage, in one SQLite file."""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound
from terax_jupyter.security.database import (
    PrivateDatabase,
    database_unavailable,
    migrate_schema,
    run_script,
)
from terax_jupyter.services.ai.providers.base import Message, ToolCall
from terax_jupyter.services.ai.statuses import (
    APPROVAL_STATUSES,
    MESSAGE_STATUSES,
    RUN_STATUSES,
    TOOL_CALL_STATUSES,
)
from terax_jupyter.services.ai.typed_values import (
    restored_proposal,
    stored_arguments,
    stored_call,
    stored_proposal,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from terax_jupyter.exceptions import TeraxError
    from terax_jupyter.security.redact import Redactor

SCHEMA_VERSION = 2
MAX_LIST_LIMIT = 500

_OPEN_APPROVALS = ("pending", "queued")
_DECISIONS = ("approved", "partially_approved", "denied", "expired", "discarded")
_INTERRUPTED_CALL = "The server stopped before this call finished."


def _checks(column: str, values: Iterable[str]) -> str:
    return f"CHECK ({column} IN ({', '.join(repr(v) for v in values)}))"


_SCHEMA_1 = f"""
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    agent TEXT NOT NULL,
    provider TEXT,
    model TEXT,
    plan_mode INTEGER NOT NULL DEFAULT 0,
    rules TEXT NOT NULL DEFAULT '[]',
    todos TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    user TEXT
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC);

CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    status TEXT NOT NULL {_checks("status", RUN_STATUSES)},
    agent TEXT,
    provider TEXT,
    model TEXT,
    prompt TEXT NOT NULL DEFAULT '',
    steps INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    started_at REAL NOT NULL,
    ended_at REAL
);
CREATE INDEX runs_by_session ON runs (session_id, started_at);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id TEXT REFERENCES runs (id) ON DELETE SET NULL,
    role TEXT NOT NULL {_checks("role", ("system", "user", "assistant", "tool"))},
    content TEXT NOT NULL DEFAULT '',
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    name TEXT,
    reasoning TEXT NOT NULL DEFAULT '',
    is_error INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL {_checks("status", MESSAGE_STATUSES)},
    created_at REAL NOT NULL
);
CREATE INDEX messages_by_session ON messages (session_id, id);

CREATE TABLE tool_calls (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id TEXT REFERENCES runs (id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL DEFAULT '{{}}',
    status TEXT NOT NULL {_checks("status", TOOL_CALL_STATUSES)},
    result TEXT,
    data TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    ended_at REAL,
    duration_ms REAL
);
CREATE INDEX tool_calls_by_session ON tool_calls (session_id, started_at);

CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id TEXT REFERENCES runs (id) ON DELETE CASCADE,
    call_id TEXT,
    tool TEXT NOT NULL,
    proposal TEXT NOT NULL,
    status TEXT NOT NULL {_checks("status", APPROVAL_STATUSES)},
    decision TEXT,
    decided_by TEXT,
    created_at REAL NOT NULL,
    decided_at REAL,
    auto_rule TEXT
);
CREATE INDEX approvals_by_session ON approvals (session_id, status, created_at);

CREATE TABLE usage (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id TEXT,
    provider TEXT,
    model TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX usage_by_session ON usage (session_id);

CREATE TABLE file_reads (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    etag TEXT NOT NULL,
    PRIMARY KEY (session_id, path)
);
"""


def _to_1(db: sqlite3.Connection) -> None:
    run_script(db, _SCHEMA_1)


# Each UTC day's usage by model, kept apart from the sessions: deleting a session must not
# give back the day's tokens and cost (the administrator's per-day limits count them).
_SCHEMA_2 = """
CREATE TABLE usage_days (
    day TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, provider, model)
);
INSERT INTO usage_days (day, provider, model, input_tokens, output_tokens, cached_tokens)
    SELECT strftime('%Y-%m-%d', created_at, 'unixepoch'), COALESCE(provider, ''),
        COALESCE(model, ''), SUM(input_tokens), SUM(output_tokens), SUM(cached_tokens)
    FROM usage GROUP BY 1, 2, 3;
"""


def _to_2(db: sqlite3.Connection) -> None:
    run_script(db, _SCHEMA_2)


# MIGRATIONS[n] takes a database at user_version n to n + 1. Append; never edit one shipped.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_to_1, _to_2)
assert len(MIGRATIONS) == SCHEMA_VERSION


def migrate(db: sqlite3.Connection) -> int:
    """Bring the schema to ``SCHEMA_VERSION``; returns the version found."""
    return migrate_schema(db, MIGRATIONS, "The AI session store")


class AiStore(PrivateDatabase):
    """The AI layer's persistent state: one SQLite database in WAL mode, file mode 0600.

    One connection shared by threads behind a lock; every method is synchronous and meant
    to be called from a worker thread. Text that goes into messages, tool results and run
    errors passes through ``redactor`` when one is given (a key value must never be stored);
    tool arguments and proposals are kept exactly, because applying a proposal replays them.
    """

    what = "The AI session store"

    def __init__(self, path: str, *, redactor: Redactor | None = None) -> None:
        self._redactor = redactor
        # The typed inputs of open approvals (stored as placeholders), by approval id, until
        # the approval is decided: see ``typed_values``.
        self._typed_inputs: dict[str, dict[str, Any]] = {}
        super().__init__(path, migrate, foreign_keys=True)

    # -- sessions -------------------------------------------------------------------------

    def create_session(
        self,
        *,
        title: str = "",
        agent: str = "coder",
        provider: str | None = None,
        model: str | None = None,
        user: str | None = None,
    ) -> dict[str, Any]:
        _require_text("title", title)
        _require_text("agent", agent)
        session_id = uuid.uuid4().hex
        now = time.time()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO sessions (id, title, agent, provider, model, created_at, updated_at,"
                " user) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, title, agent, provider, model, now, now, user),
            )
        return self.get_session(session_id)

    def get_session(self, session_id: str) -> dict[str, Any]:
        with self._connection() as db:
            row = db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise _no_session(session_id)
        return _session(row)

    def list_sessions(
        self, *, query: str | None = None, limit: int = 50, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Newest activity first; ``query`` matches titles and message text (case-insensitive,
        literally: ``%`` and ``_`` are not wildcards)."""
        if (
            not isinstance(limit, int)
            or isinstance(limit, bool)
            or not 1 <= limit <= MAX_LIST_LIMIT
        ):
            raise InvalidRequest(f"'limit' must be 1 to {MAX_LIST_LIMIT}.", reason="invalid_limit")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise InvalidRequest("'offset' must be 0 or more.", reason="invalid_offset")
        sql = "SELECT * FROM sessions"
        params: list[Any] = []
        if query:
            pattern = f"%{_escape_like(query)}%"
            sql += (
                " WHERE title LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM messages m"
                " WHERE m.session_id = sessions.id AND m.content LIKE ? ESCAPE '\\')"
            )
            params += [pattern, pattern]
        sql += " ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?"
        params += [limit, offset]
        with self._connection() as db:
            return [_session(row) for row in db.execute(sql, params)]

    def update_session(self, session_id: str, **fields: Any) -> dict[str, Any]:
        """Change ``title agent provider model plan_mode rules todos``; returns the session."""
        columns: dict[str, Any] = {}
        for name, value in fields.items():
            columns[name] = _session_field(name, value)
        if columns:
            # Column names come from _session_field's fixed set, never from the caller.
            assignments = ", ".join(f"{name} = ?" for name in columns)
            with self._transaction() as db:
                cursor = db.execute(
                    f"UPDATE sessions SET {assignments}, updated_at = ? WHERE id = ?",  # noqa: S608
                    (*columns.values(), time.time(), session_id),
                )
                if cursor.rowcount == 0:
                    raise _no_session(session_id)
        return self.get_session(session_id)

    def delete_session(self, session_id: str) -> None:
        """Delete a session and everything of it (messages, runs, calls, approvals, ...)."""
        with self._transaction() as db:
            if db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 0:
                raise _no_session(session_id)

    def touch(self, session_id: str) -> None:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id)
            )
            if cursor.rowcount == 0:
                raise _no_session(session_id)

    # -- messages -------------------------------------------------------------------------

    def add_message(
        self,
        session_id: str,
        message: Message,
        *,
        run_id: str | None = None,
        status: str = "complete",
        redacted: bool = False,
    ) -> int:
        """``redacted``: the caller already passed the text through the same redactor (a
        tool result the runtime redacted once for both the browser and the store)."""
        _require_choice("status", status, MESSAGE_STATUSES)
        now = time.time()
        redact = _unchanged if redacted else self._redact
        with self._transaction() as db:
            self._require_session(db, session_id, run_id)
            cursor = db.execute(
                "INSERT INTO messages (session_id, run_id, role, content, tool_calls, tool_call_id,"
                " name, reasoning, is_error, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    run_id,
                    message.role,
                    redact(message.content),
                    _dump([stored_call(call.to_json()) for call in message.tool_calls]),
                    message.tool_call_id,
                    message.name,
                    redact(message.reasoning),
                    int(message.is_error),
                    status,
                    now,
                ),
            )
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
            return int(cursor.lastrowid or 0)

    def append_message(self, message_id: int, *, text: str = "", reasoning: str = "") -> None:
        """Add streamed text to a message, in SQL, so a crash loses nothing already streamed."""
        if not text and not reasoning:
            return
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE messages SET content = content || ?, reasoning = reasoning || ?"
                " WHERE id = ?",
                (self._redact(text), self._redact(reasoning), message_id),
            )
            if cursor.rowcount == 0:
                raise _no_message(message_id)

    def finish_message(
        self,
        message_id: int,
        *,
        tool_calls: Iterable[ToolCall | dict[str, Any]] | None = None,
        status: str = "complete",
    ) -> None:
        _require_choice("status", status, MESSAGE_STATUSES)
        with self._transaction() as db:
            row = db.execute(
                "SELECT role, content, reasoning, tool_calls FROM messages WHERE id = ?",
                (message_id,),
            ).fetchone()
            if row is None:
                raise _no_message(message_id)
            # Redacting each delta misses a secret split across two deltas; the whole text
            # is redacted once more now that it is complete.
            content, reasoning = self._redact(row["content"]), self._redact(row["reasoning"])
            calls = None
            if tool_calls is not None:
                calls = [
                    stored_call(c.to_json() if isinstance(c, ToolCall) else dict(c))
                    for c in tool_calls
                ]
            has_calls = bool(calls) if calls is not None else bool(_load(row["tool_calls"]))
            if row["role"] == "assistant" and not has_calls and not (content + reasoning).strip():
                # An answer of nothing (a step that failed before its first word) is no turn:
                # kept, it would be sent back, and strict providers (Mistral) refuse an empty
                # assistant message in every later request.
                db.execute("DELETE FROM messages WHERE id = ?", (message_id,))
                return
            if calls is None:
                db.execute(
                    "UPDATE messages SET status = ?, content = ?, reasoning = ? WHERE id = ?",
                    (status, content, reasoning, message_id),
                )
            else:
                db.execute(
                    "UPDATE messages SET status = ?, content = ?, reasoning = ?, tool_calls = ?"
                    " WHERE id = ?",
                    (status, content, reasoning, _dump(calls), message_id),
                )

    def replace_message_content(self, message_id: int, content: str) -> None:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE messages SET content = ? WHERE id = ?", (self._redact(content), message_id)
            )
            if cursor.rowcount == 0:
                raise _no_message(message_id)

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """Every message, in order: ``id run_id status created_at`` + ``Message.to_json()``."""
        with self._connection() as db:
            self._require_session(db, session_id)
            rows = db.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        return [
            {
                "id": row["id"],
                "run_id": row["run_id"],
                "status": row["status"],
                "created_at": row["created_at"],
                **_message(row).to_json(),
            }
            for row in rows
        ]

    def conversation(self, session_id: str) -> list[Message]:
        """The messages to send to the model: complete and cut ones, in order, without
        assistant messages that say nothing (stored by older versions; see ``sendable``)."""
        with self._connection() as db:
            self._require_session(db, session_id)
            rows = db.execute(
                "SELECT * FROM messages WHERE session_id = ? AND status IN ('complete', 'cut')"
                " ORDER BY id",
                (session_id,),
            ).fetchall()
        return sendable([_message(row) for row in rows])

    # -- runs -----------------------------------------------------------------------------

    def add_run(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        prompt: str = "",
    ) -> str:
        run_id = uuid.uuid4().hex
        with self._transaction() as db:
            self._require_session(db, session_id)
            db.execute(
                "INSERT INTO runs (id, session_id, status, agent, provider, model, prompt,"
                " started_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
                (run_id, session_id, agent, provider, model, self._redact(prompt), time.time()),
            )
        return run_id

    def finish_run(
        self, run_id: str, status: str, *, steps: int, error: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        _require_choice("status", status, RUN_STATUSES)
        stored_error = _dump(self._redact_data(error)) if error is not None else None
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE runs SET status = ?, steps = ?, error = ?, ended_at = ? WHERE id = ?",
                (status, int(steps), stored_error, time.time(), run_id),
            )
            if cursor.rowcount == 0:
                raise _no_run(run_id)
        return self.get_run(run_id)

    def get_run(self, run_id: str) -> dict[str, Any]:
        with self._connection() as db:
            row = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise _no_run(run_id)
        return _run(row)

    def runs(self, session_id: str) -> list[dict[str, Any]]:
        with self._connection() as db:
            self._require_session(db, session_id)
            rows = db.execute(
                "SELECT * FROM runs WHERE session_id = ? ORDER BY started_at, rowid",
                (session_id,),
            ).fetchall()
        return [_run(row) for row in rows]

    def interrupt_unfinished(self) -> int:
        """At startup, close what a previous server left open; returns the runs interrupted.

        Running runs become ``interrupted``, pending approvals ``expired`` (queued ones are a
        plan and stay), streaming messages ``cut``, and calls still running or waiting for
        approval ``error`` (nothing will finish them now).
        """
        now = time.time()
        with self._transaction() as db:
            runs = db.execute(
                "UPDATE runs SET status = 'interrupted', ended_at = ? WHERE status = 'running'",
                (now,),
            ).rowcount
            db.execute(
                "UPDATE approvals SET status = 'expired', decided_at = ? WHERE status = 'pending'",
                (now,),
            )
            db.execute(
                "DELETE FROM messages WHERE status = 'streaming' AND role = 'assistant'"
                " AND trim(content || reasoning, ' ' || char(9, 10, 13)) = ''"
                " AND tool_calls IN ('', '[]')"
            )
            db.execute("UPDATE messages SET status = 'cut' WHERE status = 'streaming'")
            db.execute(
                "UPDATE tool_calls SET status = 'error', is_error = 1, result = ?, ended_at = ?"
                " WHERE status IN ('running', 'pending_approval')",
                (_INTERRUPTED_CALL, now),
            )
        return runs

    # -- tool calls -----------------------------------------------------------------------

    def add_tool_call(
        self,
        session_id: str,
        run_id: str | None,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        message_id: int | None = None,
        status: str = "running",
    ) -> dict[str, Any]:
        """Record a call by the model's call id (which must be unique across the store)."""
        _require_choice("status", status, TOOL_CALL_STATUSES)
        with self._transaction() as db:
            self._require_session(db, session_id, run_id)
            try:
                db.execute(
                    "INSERT INTO tool_calls (id, session_id, run_id, message_id, name, arguments,"
                    " status, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        call_id,
                        session_id,
                        run_id,
                        message_id,
                        name,
                        _dump(stored_arguments(name, arguments)),
                        status,
                        time.time(),
                    ),
                )
            except sqlite3.IntegrityError as error:
                if "UNIQUE" in str(error) or "PRIMARY KEY" in str(error):
                    raise Conflict(
                        f"A tool call with id {call_id} is already recorded.",
                        reason="duplicate_call_id",
                    ) from None
                raise
        return self._tool_call(call_id)

    def finish_tool_call(
        self,
        call_id: str,
        *,
        status: str,
        result: str,
        data: dict[str, Any] | None = None,
        is_error: bool = False,
        duration_ms: float,
        redacted: bool = False,
    ) -> dict[str, Any]:
        _require_choice("status", status, TOOL_CALL_STATUSES)
        redact = _unchanged if redacted else self._redact
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE tool_calls SET status = ?, result = ?, data = ?, is_error = ?,"
                " ended_at = ?, duration_ms = ? WHERE id = ?",
                (
                    status,
                    redact(result),
                    _dump(self._redact_data(data)) if data is not None else None,
                    int(is_error),
                    time.time(),
                    float(duration_ms),
                    call_id,
                ),
            )
            if cursor.rowcount == 0:
                raise _no_call(call_id)
        return self._tool_call(call_id)

    def set_tool_call_status(self, call_id: str, status: str) -> None:
        _require_choice("status", status, TOOL_CALL_STATUSES)
        with self._transaction() as db:
            cursor = db.execute("UPDATE tool_calls SET status = ? WHERE id = ?", (status, call_id))
            if cursor.rowcount == 0:
                raise _no_call(call_id)

    def tool_calls(self, session_id: str) -> list[dict[str, Any]]:
        with self._connection() as db:
            self._require_session(db, session_id)
            rows = db.execute(
                "SELECT * FROM tool_calls WHERE session_id = ? ORDER BY started_at, rowid",
                (session_id,),
            ).fetchall()
        return [_call(row) for row in rows]

    def _tool_call(self, call_id: str) -> dict[str, Any]:
        with self._connection() as db:
            row = db.execute("SELECT * FROM tool_calls WHERE id = ?", (call_id,)).fetchone()
        if row is None:
            raise _no_call(call_id)
        return _call(row)

    # -- approvals ------------------------------------------------------------------------

    def add_approval(
        self,
        session_id: str,
        run_id: str | None,
        call_id: str | None,
        tool: str,
        proposal: dict[str, Any],
        *,
        status: str = "pending",
        auto_rule: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        _require_choice("status", status, APPROVAL_STATUSES)
        approval_id = uuid.uuid4().hex
        proposal, typed = stored_proposal(tool, proposal)
        with self._transaction() as db:
            self._require_session(db, session_id, run_id)
            db.execute(
                "INSERT INTO approvals (id, session_id, run_id, call_id, tool, proposal, status,"
                " created_at, auto_rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    approval_id,
                    session_id,
                    run_id,
                    call_id,
                    tool,
                    _dump(proposal),
                    status,
                    time.time(),
                    _dump(auto_rule) if auto_rule is not None else None,
                ),
            )
            if typed is not None and status in _OPEN_APPROVALS:
                # Kept only while it can still be applied from here (pending or queued).
                self._typed_inputs[approval_id] = typed
        return self.get_approval(approval_id)

    def get_approval(self, approval_id: str) -> dict[str, Any]:
        with self._connection() as db:
            row = db.execute("SELECT * FROM approvals WHERE id = ?", (approval_id,)).fetchone()
        if row is None:
            raise NotFound(f"No approval {approval_id}", reason="approval_not_found")
        return self._with_inputs(_approval(row))

    def approvals(
        self, session_id: str, *, status: str | list[str] | tuple[str, ...] | None = None
    ) -> list[dict[str, Any]]:
        statuses = [status] if isinstance(status, str) else list(status or [])
        for value in statuses:
            _require_choice("status", value, APPROVAL_STATUSES)
        sql = "SELECT * FROM approvals WHERE session_id = ?"
        params: list[Any] = [session_id]
        if statuses:
            sql += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params += statuses
        with self._connection() as db:
            self._require_session(db, session_id)
            rows = db.execute(sql + " ORDER BY created_at, rowid", params).fetchall()
        return [self._with_inputs(_approval(row)) for row in rows]

    def _with_inputs(self, approval: dict[str, Any]) -> dict[str, Any]:
        """The approval with its proposal's typed inputs back, while they are in memory."""
        typed = self._typed_inputs.get(approval["id"])
        if typed is not None and isinstance(approval.get("proposal"), dict):
            approval["proposal"] = restored_proposal(approval["proposal"], typed)
        return approval

    def decide_approval(
        self, approval_id: str, *, status: str, decision: dict[str, Any] | None, user: str | None
    ) -> dict[str, Any]:
        """Decide a pending or queued approval, once: a second decision is 409
        ``already_decided`` (two clicks, two tabs, a decision racing the expiry)."""
        _require_choice("status", status, _DECISIONS)
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE approvals SET status = ?, decision = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND status IN ('pending', 'queued')",
                (
                    status,
                    _dump(decision) if decision is not None else None,
                    user,
                    time.time(),
                    approval_id,
                ),
            )
            if cursor.rowcount == 0:
                row = db.execute(
                    "SELECT status FROM approvals WHERE id = ?", (approval_id,)
                ).fetchone()
                if row is None:
                    raise NotFound(f"No approval {approval_id}", reason="approval_not_found")
                raise Conflict(
                    f"This approval was already decided ({row['status']}).",
                    reason="already_decided",
                )
        decided = self.get_approval(approval_id)
        # Decided: the inputs were used (an approved call runs from its proposal in memory,
        # a plan item is decided after it was applied) or will not be.
        self._typed_inputs.pop(approval_id, None)
        return decided

    # -- usage ----------------------------------------------------------------------------

    def add_usage(
        self,
        session_id: str,
        run_id: str | None,
        provider: str | None,
        model: str | None,
        input_tokens: int,
        output_tokens: int,
        cached_tokens: int = 0,
    ) -> None:
        now = time.time()
        with self._transaction() as db:
            self._require_session(db, session_id)
            db.execute(
                "INSERT INTO usage (session_id, run_id, provider, model, input_tokens,"
                " output_tokens, cached_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    run_id,
                    provider,
                    model,
                    int(input_tokens),
                    int(output_tokens),
                    int(cached_tokens),
                    now,
                ),
            )
            db.execute(
                "INSERT INTO usage_days (day, provider, model, input_tokens, output_tokens,"
                " cached_tokens) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (day, provider, model)"
                " DO UPDATE SET input_tokens = input_tokens + excluded.input_tokens,"
                " output_tokens = output_tokens + excluded.output_tokens,"
                " cached_tokens = cached_tokens + excluded.cached_tokens",
                (
                    utc_day(now),
                    provider or "",
                    model or "",
                    int(input_tokens),
                    int(output_tokens),
                    int(cached_tokens),
                ),
            )

    def usage_on(self, day: str) -> list[dict[str, Any]]:
        """The usage of one UTC day (``utc_day``) by provider and model, of every session,
        deleted ones included."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT provider, model, input_tokens, output_tokens, cached_tokens"
                " FROM usage_days WHERE day = ?",
                (day,),
            ).fetchall()
        return [
            {
                "provider": row[0],
                "model": row[1],
                "input_tokens": int(row[2]),
                "output_tokens": int(row[3]),
                "cached_tokens": int(row[4]),
            }
            for row in rows
        ]

    def usage_totals(self, session_id: str) -> dict[str, int]:
        with self._connection() as db:
            self._require_session(db, session_id)
            row = db.execute(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),"
                " COALESCE(SUM(cached_tokens), 0) FROM usage WHERE session_id = ?",
                (session_id,),
            ).fetchone()
        return {
            "input_tokens": int(row[0]),
            "output_tokens": int(row[1]),
            "cached_tokens": int(row[2]),
        }

    # -- the read-before-edit ledger ------------------------------------------------------

    def record_read(self, session_id: str, path: str, etag: str) -> None:
        with self._transaction() as db:
            self._require_session(db, session_id)
            db.execute(
                "INSERT INTO file_reads (session_id, path, etag) VALUES (?, ?, ?)"
                " ON CONFLICT (session_id, path) DO UPDATE SET etag = excluded.etag",
                (session_id, path, etag),
            )

    def read_etags(self, session_id: str) -> dict[str, str]:
        """Every file the session read, with the etag it had (to load a ledger at once)."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT path, etag FROM file_reads WHERE session_id = ?", (session_id,)
            ).fetchall()
        return {str(row["path"]): str(row["etag"]) for row in rows}

    # -- plumbing -------------------------------------------------------------------------

    def _refusal(self, error: sqlite3.Error) -> TeraxError | None:
        if isinstance(error, sqlite3.IntegrityError):
            # What the checks before each write did not catch: a reference to a message that
            # does not exist, a value a CHECK constraint refuses.
            return InvalidRequest(
                f"The AI session store refused the change ({error}).",
                reason="constraint_failed",
            )
        if isinstance(error, sqlite3.OperationalError):
            return database_unavailable(self.path, self.what, error)
        return None

    def _require_session(
        self, db: sqlite3.Connection, session_id: str, run_id: str | None = None
    ) -> None:
        if db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise _no_session(session_id)
        if (
            run_id is not None
            and db.execute(
                "SELECT 1 FROM runs WHERE id = ? AND session_id = ?", (run_id, session_id)
            ).fetchone()
            is None
        ):
            raise _no_run(run_id)

    def _redact(self, text: str) -> str:
        return self._redactor.redact(text) if self._redactor is not None and text else text

    def _redact_data(self, value: Any) -> Any:
        return self._redactor.redact_data(value) if self._redactor is not None else value


# -- the file -------------------------------------------------------------------------------


# -- rows -----------------------------------------------------------------------------------


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _row(
    row: sqlite3.Row, *, json: tuple[str, ...] = (), flags: tuple[str, ...] = ()
) -> dict[str, Any]:
    data = dict(zip(row.keys(), tuple(row), strict=True))
    for name in json:
        data[name] = _load(data[name])
    for name in flags:
        data[name] = bool(data[name])
    return data


def _session(row: sqlite3.Row) -> dict[str, Any]:
    return _row(row, json=("rules", "todos"), flags=("plan_mode",))


def _run(row: sqlite3.Row) -> dict[str, Any]:
    return _row(row, json=("error",))


def _call(row: sqlite3.Row) -> dict[str, Any]:
    return _row(row, json=("arguments", "data"), flags=("is_error",))


def _approval(row: sqlite3.Row) -> dict[str, Any]:
    return _row(row, json=("proposal", "decision", "auto_rule"))


def sendable(messages: list[Message]) -> list[Message]:
    """``messages`` without assistant messages that have neither text nor tool calls: no
    provider needs them, and strict ones (Mistral) answer 400 to a request holding one.
    Reasoning alone does not count, since most adapters do not send it back."""
    return [m for m in messages if m.role != "assistant" or m.tool_calls or m.content.strip()]


def _message(row: sqlite3.Row) -> Message:
    return Message(
        role=row["role"],
        content=row["content"],
        tool_calls=[ToolCall.from_json(call) for call in _load(row["tool_calls"]) or []],
        tool_call_id=row["tool_call_id"],
        name=row["name"],
        reasoning=row["reasoning"],
        is_error=bool(row["is_error"]),
    )


# -- validation -----------------------------------------------------------------------------


def _session_field(name: str, value: Any) -> Any:
    """The column value for one ``update_session`` field, validated."""
    if name in ("title", "agent"):
        _require_text(name, value)
        return value
    if name in ("provider", "model"):
        if value is not None:
            _require_text(name, value)
        return value
    if name == "plan_mode":
        if not isinstance(value, bool):
            raise InvalidRequest("'plan_mode' must be true or false.", reason="invalid_field")
        return int(value)
    if name in ("rules", "todos"):
        if not isinstance(value, list):
            raise InvalidRequest(f"'{name}' must be a list.", reason="invalid_field")
        return _dump(value)
    raise InvalidRequest(f"A session has no field '{name}'.", reason="unknown_field")


def _require_text(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise InvalidRequest(f"'{name}' must be a string.", reason="invalid_field")


def _require_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InvalidRequest(
            f"'{name}' must be one of {', '.join(choices)}.", reason="invalid_status"
        )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _no_session(session_id: str) -> NotFound:
    return NotFound(f"No AI session {session_id}", reason="session_not_found")


def _no_run(run_id: str) -> NotFound:
    return NotFound(f"No AI run {run_id}", reason="run_not_found")


def _no_message(message_id: int) -> NotFound:
    return NotFound(f"No message {message_id}", reason="message_not_found")


def _no_call(call_id: str) -> NotFound:
    return NotFound(f"No tool call {call_id}", reason="tool_call_not_found")


def _unchanged(text: str) -> str:
    return text


def utc_day(when: float | None = None) -> str:
    """``YYYY-MM-DD`` of the UTC day of ``when`` (epoch seconds; default now)."""
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if when is None else when))
