"""Persistence of the replay engine: the SQLite cache and saved workflows, and JSONL audits.

Everything written passes the one ``Sanitizer`` first. All methods are blocking; the
manager calls them from a worker thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from terax_jupyter.exceptions import AlreadyExists, InvalidRequest, NotFound, Unavailable
from terax_jupyter.security.database import (
    PrivateDatabase,
    migrate_schema,
    run_script,
)
from terax_jupyter.security.storage import (
    create_private_append_only,
    private_directory,
    read_or_create_private_file,
)
from terax_jupyter.services.browser.ir import Recording
from terax_jupyter.services.browser.policy import ReplayPolicy
from terax_jupyter.services.browser.sanitize import StructureKey, action_targets

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from terax_jupyter.services.browser.sanitize import Sanitizer

SCHEMA_VERSION = 1
MAX_KEY_LENGTH = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")

_SCHEMA_1 = """
CREATE TABLE cache_entries (
    scope_id TEXT NOT NULL,
    workflow TEXT NOT NULL,
    workflow_version INTEGER NOT NULL,
    policy_fingerprint TEXT NOT NULL,
    command_digest TEXT NOT NULL,
    recording TEXT NOT NULL,
    policy TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (scope_id, workflow, workflow_version, policy_fingerprint)
);
CREATE INDEX cache_entries_by_expiry ON cache_entries (expires_at);

CREATE TABLE workflows (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    inputs TEXT NOT NULL,
    recording TEXT NOT NULL,
    command_digest TEXT NOT NULL,
    policy TEXT NOT NULL,
    policy_fingerprint TEXT NOT NULL,
    workflow_version INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
"""


# The tables with recordings, for hashing structures stored in clear by an older version.
_REHASH = (
    (
        "SELECT rowid AS id, recording FROM cache_entries",
        "UPDATE cache_entries SET recording = ? WHERE rowid = ?",
    ),
    (
        "SELECT rowid AS id, recording FROM workflows",
        "UPDATE workflows SET recording = ? WHERE rowid = ?",
    ),
)


def _to_1(db: sqlite3.Connection) -> None:
    run_script(db, _SCHEMA_1)


# MIGRATIONS[n] takes a database at user_version n to n + 1. Append; never edit one shipped.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_to_1,)
assert len(MIGRATIONS) == SCHEMA_VERSION


def migrate(db: sqlite3.Connection) -> int:
    """Bring the schema to ``SCHEMA_VERSION``; returns the version found."""
    return migrate_schema(db, MIGRATIONS, "The browser replay store")


@dataclass(frozen=True)
class CacheEntry:
    """A cached flow for one task (``workflow``) under one policy, as stored (sanitized)."""

    workflow: str
    recording: Recording
    policy: ReplayPolicy
    policy_fingerprint: str
    command_digest: str
    created_at: float
    # The key the structure lines were hashed with (replay hashes fresh lines with it).
    structure_key: StructureKey | None = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.workflow

    @property
    def expires_at(self) -> float:
        return self.created_at + self.policy.ttl_seconds


@dataclass(frozen=True)
class SavedWorkflow:
    """A named flow a person saved, with its declared inputs, to run again later.

    ``created_at`` is when this version was saved (the policy's TTL counts from it).
    """

    name: str
    description: str
    inputs: tuple[str, ...]
    recording: Recording
    policy: ReplayPolicy
    policy_fingerprint: str
    command_digest: str
    created_at: float
    structure_key: StructureKey | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """A summary for listings (the recording's structures left out)."""
        return {
            "name": self.name,
            "description": self.description,
            "inputs": list(self.inputs),
            "steps": [step.action.to_json() for step in self.recording.steps],
            "policy": self.policy.to_json(),
            "policy_fingerprint": self.policy_fingerprint,
            "command_digest": self.command_digest,
            "created_at": self.created_at,
        }


class ReplayStore(PrivateDatabase):
    """The cache of replayable flows and the saved workflows: SQLite in WAL mode, 0600.

    Page structures are stored as keyed hashes (``StructureKey``) under a private key kept
    in ``<path>.key`` (0600, created once, never written anywhere else): a copy of the
    database alone holds no page text. Rows written before that are hashed when the store
    opens, with ``secure_delete`` so that the old text does not linger in free pages.
    """

    what = "The browser replay store"

    def __init__(self, path: str, *, sanitizer: Sanitizer) -> None:
        self._sanitizer = sanitizer
        super().__init__(path, migrate)
        try:
            self.structure_key = load_structure_key(path + ".key")
            assert self._db is not None  # open: the constructor above raised otherwise
            self._db.execute("PRAGMA secure_delete = ON")
            self._hash_clear_structures()
        except BaseException:
            self.close()
            raise

    # -- the cache -------------------------------------------------------------------------

    def put_entry(
        self,
        workflow: str,
        recording: Recording,
        policy: ReplayPolicy,
        *,
        now: float | None = None,
    ) -> CacheEntry:
        """Cache ``recording`` for ``workflow`` under ``policy`` (replacing an entry with the
        same key). A non-cacheable recording is refused (``non_cacheable``)."""
        recording.require_cacheable()
        key = self._key_text(workflow, "workflow")
        stored_recording, stored_policy = self._sanitized(recording, policy)
        created = time.time() if now is None else now
        entry = CacheEntry(
            key,
            stored_recording,
            stored_policy,
            stored_policy.fingerprint(),
            stored_recording.command_digest(),
            created,
            self.structure_key,
        )
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO cache_entries (scope_id, workflow, workflow_version,"
                " policy_fingerprint, command_digest, recording, policy, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stored_policy.scope_id,
                    key,
                    stored_policy.workflow_version,
                    entry.policy_fingerprint,
                    entry.command_digest,
                    _dumps(stored_recording.to_json()),
                    _dumps(stored_policy.to_json()),
                    created,
                    entry.expires_at,
                ),
            )
        return entry

    def get_entry(self, workflow: str, policy: ReplayPolicy) -> CacheEntry | None:
        """The entry for ``workflow`` under exactly ``policy`` (expired ones too: the replayer
        refuses those with ``ttl_expired``), or None."""
        key = self._key_text(workflow, "workflow")
        stored = ReplayPolicy.from_json(self._sanitizer.policy(policy))
        with self._connection() as db:
            row = db.execute(
                "SELECT * FROM cache_entries WHERE scope_id = ? AND workflow = ?"
                " AND workflow_version = ? AND policy_fingerprint = ?",
                (stored.scope_id, key, stored.workflow_version, stored.fingerprint()),
            ).fetchone()
        return None if row is None else _entry(row, self.structure_key)

    def entries(
        self, *, scope_id: str | None = None, workflow: str | None = None
    ) -> list[CacheEntry]:
        """Cached entries, newest first, optionally of one scope and one workflow."""
        sql, params = "SELECT * FROM cache_entries", []
        clauses = []
        if scope_id is not None:
            clauses.append("scope_id = ?")
            params.append(self._sanitizer.text(scope_id))
        if workflow is not None:
            clauses.append("workflow = ?")
            params.append(self._key_text(workflow, "workflow"))
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        with self._connection() as db:
            rows = db.execute(sql + " ORDER BY created_at DESC", params).fetchall()
        return [_entry(row, self.structure_key) for row in rows]

    def delete_entries(self, *, scope_id: str | None = None, workflow: str | None = None) -> int:
        """Forget cached entries (of one scope and/or workflow; all without either)."""
        sql, params = "DELETE FROM cache_entries", []
        clauses = []
        if scope_id is not None:
            clauses.append("scope_id = ?")
            params.append(self._sanitizer.text(scope_id))
        if workflow is not None:
            clauses.append("workflow = ?")
            params.append(self._key_text(workflow, "workflow"))
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        with self._transaction() as db:
            return db.execute(sql, params).rowcount

    def purge_expired(self, *, now: float | None = None) -> int:
        cutoff = time.time() if now is None else now
        with self._transaction() as db:
            return db.execute("DELETE FROM cache_entries WHERE expires_at <= ?", (cutoff,)).rowcount

    # -- saved workflows -------------------------------------------------------------------

    def save_workflow(
        self,
        name: str,
        recording: Recording,
        policy: ReplayPolicy,
        *,
        inputs: Sequence[str],
        description: str = "",
        overwrite: bool = False,
        now: float | None = None,
    ) -> SavedWorkflow:
        """Store a workflow (the caller validated name and inputs). With ``overwrite`` an
        existing one is replaced; without, an existing name is ``AlreadyExists``."""
        recording.require_cacheable()
        stored_recording, stored_policy = self._sanitized(recording, policy)
        own = self._sanitizer.with_typed(recording.typed_values)
        saved = SavedWorkflow(
            name=name,
            description=own.text(description),
            inputs=tuple(inputs),
            recording=stored_recording,
            policy=stored_policy,
            policy_fingerprint=stored_policy.fingerprint(),
            command_digest=stored_recording.command_digest(),
            created_at=time.time() if now is None else now,
            structure_key=self.structure_key,
        )
        row = (
            saved.name,
            saved.description,
            _dumps(list(saved.inputs)),
            _dumps(stored_recording.to_json()),
            saved.command_digest,
            _dumps(stored_policy.to_json()),
            saved.policy_fingerprint,
            stored_policy.workflow_version,
            saved.created_at,
            saved.created_at,
        )
        with self._transaction() as db:
            exists = db.execute("SELECT 1 FROM workflows WHERE name = ?", (name,)).fetchone()
            if exists and not overwrite:
                raise AlreadyExists(
                    f"A workflow named {name!r} exists; save with overwrite to replace it.",
                    reason="workflow_exists",
                )
            db.execute(
                "INSERT OR REPLACE INTO workflows (name, description, inputs, recording,"
                " command_digest, policy, policy_fingerprint, workflow_version, created_at,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        return saved

    def get_workflow(self, name: str) -> SavedWorkflow:
        with self._connection() as db:
            row = db.execute("SELECT * FROM workflows WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise NotFound(f"No workflow named {name!r}.", reason="workflow_not_found")
        return _workflow(row, self.structure_key)

    def list_workflows(self) -> list[SavedWorkflow]:
        with self._connection() as db:
            rows = db.execute("SELECT * FROM workflows ORDER BY name").fetchall()
        return [_workflow(row, self.structure_key) for row in rows]

    def delete_workflow(self, name: str) -> None:
        with self._transaction() as db:
            if db.execute("DELETE FROM workflows WHERE name = ?", (name,)).rowcount == 0:
                raise NotFound(f"No workflow named {name!r}.", reason="workflow_not_found")

    # -- plumbing --------------------------------------------------------------------------

    def _sanitized(
        self, recording: Recording, policy: ReplayPolicy
    ) -> tuple[Recording, ReplayPolicy]:
        """What is stored, read back through the IR's own validation."""
        own = self._sanitizer.with_typed(recording.typed_values)
        return (
            Recording.from_json(self._hashed(own.recording(recording))),
            ReplayPolicy.from_json(own.policy(policy)),
        )

    def _hashed(self, data: dict[str, Any]) -> dict[str, Any]:
        """Recording JSON with its structure lines hashed (the targets' lines in clear)."""
        clear = action_targets(Recording.from_json(data))
        for step in data.get("steps") or ():
            step["structure"] = list(self.structure_key.lines(step["structure"], clear))
        return data

    def _hash_clear_structures(self) -> None:
        """Hash the structures of rows stored in clear (by an older version), once; then
        checkpoint, so that the old pages leave the WAL too."""
        changed = 0
        with self._transaction() as db:
            for select, update in _REHASH:
                for row in db.execute(select).fetchall():
                    data = json.loads(row["recording"])
                    lines = [line for step in data.get("steps") or () for line in step["structure"]]
                    hashed = self._hashed(data)
                    new = [line for step in hashed.get("steps") or () for line in step["structure"]]
                    if new != lines:
                        db.execute(update, (_dumps(hashed), row["id"]))
                        changed += 1
        if changed:
            with self._connection() as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _key_text(self, value: str, what: str) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_KEY_LENGTH:
            raise InvalidRequest(
                f"A {what} name is 1 to {MAX_KEY_LENGTH} characters.", reason=f"invalid_{what}"
            )
        if _CONTROL.search(value):
            raise InvalidRequest(
                f"A {what} name must not contain control characters.", reason=f"invalid_{what}"
            )
        return self._sanitizer.text(value)


class AuditRun:
    """One run's audit file: JSON lines, each record sanitized, each line one write."""

    def __init__(self, path: str, fd: int, run_id: str, sanitizer: Sanitizer) -> None:
        self.path = path
        self.run_id = run_id
        self._fd: int | None = fd
        self._sanitizer = sanitizer
        self._seq = 0
        self._lock = threading.Lock()

    def record(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one record (sanitized) and return what was written."""
        with self._lock:
            if self._fd is None:
                raise Unavailable("This audit file is closed.", reason="audit_closed")
            self._seq += 1
            now = time.time()
            entry = {
                "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now))
                + f".{int(now % 1 * 1000):03d}Z",
                "seq": self._seq,
                "run_id": self.run_id,
                "event": event,
                **self._sanitizer.record(fields),
            }
            line = (json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
            try:
                os.write(self._fd, line)
            except OSError as error:
                raise Unavailable(
                    f"The replay audit could not be written ({error.strerror}).",
                    reason="audit_failed",
                ) from None
        return entry

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> AuditRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AuditWriter:
    """Creates one new audit file per replay or recorded run in ``directory`` (0700).

    Names are ``<kind>-<UTC time>-<uuid4>.jsonl`` and created with ``O_EXCL`` (0600), so
    that runs in the same second never share or clobber a file.
    """

    def __init__(self, directory: str, *, sanitizer: Sanitizer) -> None:
        self.directory = directory
        self._sanitizer = sanitizer

    def open_run(self, kind: str = "replay", *, typed: Sequence[str] = ()) -> AuditRun:
        """A new audit file; ``typed`` are this run's plaintext inputs, scrubbed everywhere."""
        if not isinstance(kind, str) or _KIND.fullmatch(kind) is None:
            raise InvalidRequest(
                "An audit kind is lower-case letters, digits and '_'.", reason="invalid_kind"
            )
        private_directory(self.directory, "The replay audit folder")
        run_id = uuid.uuid4().hex
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = os.path.join(self.directory, f"{kind}-{stamp}-{run_id}.jsonl")
        fd = create_private_append_only(path)
        return AuditRun(path, fd, run_id, self._sanitizer.with_typed(typed))


def _dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def load_structure_key(path: str) -> StructureKey:
    """The store's private structure key from ``path`` (64 hex digits, 0600), created on first
    use. Two processes creating it at once agree: it is linked into place only if absent."""
    text = read_or_create_private_file(path, lambda: secrets.token_hex(32))
    try:
        key = bytes.fromhex((text or "").strip())
    except ValueError:
        key = b""
    if len(key) != 32:
        raise Unavailable(
            f"The browser replay store's key {path} is not 64 hex digits; remove it and the "
            "store (cached flows and saved workflows cannot be checked without it).",
            reason="invalid_key",
        )
    return StructureKey(key)


def _entry(row: sqlite3.Row, key: StructureKey | None = None) -> CacheEntry:
    return CacheEntry(
        workflow=row["workflow"],
        recording=Recording.from_json(json.loads(row["recording"])),
        policy=ReplayPolicy.from_json(json.loads(row["policy"])),
        policy_fingerprint=row["policy_fingerprint"],
        command_digest=row["command_digest"],
        created_at=float(row["created_at"]),
        structure_key=key,
    )


def _workflow(row: sqlite3.Row, key: StructureKey | None = None) -> SavedWorkflow:
    return SavedWorkflow(
        name=row["name"],
        description=row["description"],
        inputs=tuple(json.loads(row["inputs"])),
        recording=Recording.from_json(json.loads(row["recording"])),
        policy=ReplayPolicy.from_json(json.loads(row["policy"])),
        policy_fingerprint=row["policy_fingerprint"],
        command_digest=row["command_digest"],
        created_at=float(row["created_at"]),
        structure_key=key,
    )
