"""The stores' SQLite files: created private, migrated in one transaction, refused when damaged
or written by a newer Terax."""

from __future__ import annotations

import os
import sqlite3
import stat
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.security.database import migrate_schema, open_private_database, run_script

if TYPE_CHECKING:
    from pathlib import Path


def _to_1(db: sqlite3.Connection) -> None:
    run_script(db, "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);")


def _to_2(db: sqlite3.Connection) -> None:
    run_script(db, "CREATE TABLE b (y TEXT)")


def _broken(db: sqlite3.Connection) -> None:
    run_script(db, "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1)")


def _open(path: Path, migrations: tuple) -> tuple[sqlite3.Connection, str]:
    return open_private_database(
        str(path), "The test store", lambda db: migrate_schema(db, migrations, "The test store")
    )


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_new_store_is_private_and_migrated_to_the_latest_schema(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db, mode = _open(path, (_to_1, _to_2))
    assert mode == "wal"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert _tables(db) == {"a", "b"}
    db.close()


def test_an_older_store_gets_only_the_migrations_it_lacks(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    db, _ = _open(path, (_to_1,))
    db.execute("INSERT INTO a VALUES (2)")
    db.close()
    db, _ = _open(path, (_to_1, _to_2))
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert [row[0] for row in db.execute("SELECT x FROM a ORDER BY x")] == [1, 2]  # _to_1 not rerun
    db.close()


def test_a_failing_migration_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _open(path, (_to_1,))[0].close()
    with pytest.raises(Unavailable):
        _open(path, (_to_1, _to_2, _broken))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    assert _tables(db) == {"a"}  # neither b nor c: the step that worked was rolled back too
    db.close()


def test_a_store_from_a_newer_terax_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    _open(path, (_to_1, _to_2))[0].close()
    before = path.read_bytes()
    with pytest.raises(Unavailable) as caught:
        _open(path, (_to_1,))
    assert caught.value.reason == "store_too_new"
    assert "schema 2, this one knows 1" in str(caught.value)
    assert path.read_bytes() == before


def test_a_damaged_store_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not a database" * 100)
    path.chmod(0o600)
    with pytest.raises(Unavailable) as caught:
        _open(path, (_to_1,))
    assert caught.value.reason == "store_corrupt"
    assert path.read_bytes() == b"this is not a database" * 100
