"""The server's own SQLite stores (AI sessions, browser replays): created 0600 before SQLite
opens them, WAL, zeroed deletions, schema migrations in one transaction, one way of saying
a store cannot be used, and ``PrivateDatabase``, the plumbing every such store shares."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from typing import TYPE_CHECKING, ClassVar

from terax_jupyter.exceptions import TeraxError, Unavailable
from terax_jupyter.security.storage import create_private_store

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from typing_extensions import Self

    # Takes a database at user_version n to n + 1.
    Migration = Callable[[sqlite3.Connection], None]

BUSY_TIMEOUT_MS = 5000


def open_private_database(
    path: str,
    what: str,
    migrate: Callable[[sqlite3.Connection], object],
    *,
    foreign_keys: bool = False,
) -> tuple[sqlite3.Connection, str]:
    """Open (creating it 0600) the store at ``path`` and bring its schema up to date; the
    connection (autocommit, rows by name, usable from any thread under the caller's lock)
    and its journal mode. ``what`` names it in errors ("The AI session store")."""
    create_private_store(path, what)
    try:
        db = sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except sqlite3.Error as error:
        raise database_unavailable(path, what, error) from None
    try:
        db.row_factory = sqlite3.Row
        mode = str(db.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        # NORMAL in WAL mode: a commit survives a crash of the process, and only the last
        # commits may be lost to a power cut, without an fsync per write.
        db.execute("PRAGMA synchronous=NORMAL")
        if foreign_keys:
            db.execute("PRAGMA foreign_keys=ON")
        # Deleted and rewritten content is zeroed in the file rather than left in free pages.
        db.execute("PRAGMA secure_delete=ON")
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS:d}")
        migrate(db)
    except BaseException as error:
        db.close()
        if isinstance(error, sqlite3.Error):
            raise database_unavailable(path, what, error) from None
        raise
    return db, mode


def database_unavailable(path: str, what: str, error: sqlite3.Error) -> Unavailable:
    """A damaged store is left as it is, with what to do; other failures say what failed."""
    text = str(error)
    if isinstance(error, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "disk image" in text
    ):
        return Unavailable(
            f"{what} {path} is damaged ({text}). It was left as it is: move it aside (or "
            "restore a backup) and restart the server to begin a new one.",
            reason="store_corrupt",
        )
    return Unavailable(f"{what} failed: {text}.", reason="store_failed")


def run_script(db: sqlite3.Connection, script: str) -> None:
    """The statements of ``script`` one at a time: ``executescript()`` would COMMIT the open
    transaction, and a migration and its user_version bump must be atomic."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def migrate_schema(db: sqlite3.Connection, migrations: Sequence[Migration], what: str) -> int:
    """Bring the schema to ``len(migrations)`` in one transaction (``migrations[n]`` takes
    user_version n to n + 1); returns the version found. A store written by a newer Terax is
    refused, untouched."""
    latest = len(migrations)
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if found > latest:
        raise Unavailable(
            f"{what} was written by a newer Terax (schema {found}, this one knows {latest}); "
            "upgrade terax-jupyter to open it.",
            reason="store_too_new",
        )
    if found == latest:
        return found
    db.execute("BEGIN IMMEDIATE")
    try:
        for version in range(found, latest):
            migrations[version](db)
        # PRAGMA takes no parameters; the value is our own integer.
        db.execute(f"PRAGMA user_version = {latest:d}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return found


class PrivateDatabase:
    """A store over one private SQLite file: opened (``open_private_database``) and migrated
    at construction, used under one lock through ``_connection`` and ``_transaction``, closed
    once. ``what`` names the store in its errors; ``_refusal`` says what a failed statement
    becomes (by default: the store is unavailable, with what to do)."""

    what: ClassVar[str] = "The store"

    def __init__(
        self,
        path: str,
        migrate: Callable[[sqlite3.Connection], object],
        *,
        foreign_keys: bool = False,
    ) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None
        self._db, self.journal_mode = open_private_database(
            path, self.what, migrate, foreign_keys=foreign_keys
        )

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _refusal(self, error: sqlite3.Error) -> TeraxError | None:
        """The error a failed statement is raised as (None: as it is)."""
        return database_unavailable(self.path, self.what, error)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._db is None:
                raise Unavailable(f"{self.what} is closed.", reason="store_closed")
            try:
                yield self._db
            except sqlite3.Error as error:
                refusal = self._refusal(error)
                if refusal is None:
                    raise
                raise refusal from None

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as db:
            # IMMEDIATE takes the write lock up front: a read-then-write transaction cannot
            # fail half-way because another connection wrote in between.
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                # Some errors (a full disk) already rolled the transaction back.
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
