"""The replay store (SQLite, WAL, 0600) and the per-run JSONL audit files."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import uuid
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import (
    AlreadyExists,
    InvalidRequest,
    NotFound,
    ReplayRefused,
    Unavailable,
)
from terax_jupyter.services.browser import store as store_module
from terax_jupyter.services.browser.ir import Recorder
from terax_jupyter.services.browser.policy import Condition
from terax_jupyter.services.browser.replay import Replayer
from terax_jupyter.services.browser.sanitize import Sanitizer
from terax_jupyter.services.browser.store import AuditWriter, ReplayStore
from terax_jupyter.services.browser.verifier import ReplayVerifier

from . import replay_fixtures
from .replay_fixtures import (
    SCOPE,
    FakePage,
    login_policy,
    record_login,
    record_search,
    search_policy,
)

if TYPE_CHECKING:
    from pathlib import Path

    from .replay_fixtures import Engine

engine = replay_fixtures.engine  # the shared fixture

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX file modes")


@posix_only
def test_the_database_is_private_and_in_wal_mode(engine: Engine) -> None:
    assert engine.store.journal_mode == "wal"
    assert stat.S_IMODE(engine.db_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(engine.db_path.parent.stat().st_mode) == 0o700


async def test_entries_are_keyed_by_scope_workflow_version_and_policy(engine: Engine) -> None:
    recording = await record_login(FakePage())
    policy = login_policy()
    entry = engine.store.put_entry("login", recording, policy, now=500.0)
    assert entry.created_at == 500.0
    assert entry.expires_at == 500.0 + policy.ttl_seconds
    found = engine.store.get_entry("login", policy)
    assert found == entry
    assert found.recording.actions == recording.actions
    assert found.command_digest == recording.command_digest()
    assert found.policy_fingerprint == policy.fingerprint()

    for other in (
        login_policy(scope_id="https://other.test|account"),
        login_policy(workflow_version=2),
        login_policy(ttl_seconds=60),
        login_policy(side_effect="destructive"),
        login_policy(postconditions=(Condition("text_contains", "Hello"),)),
    ):
        assert engine.store.get_entry("login", other) is None
    assert engine.store.get_entry("logout", policy) is None


async def test_putting_the_same_key_replaces_the_entry(engine: Engine) -> None:
    recording = await record_login(FakePage())
    engine.store.put_entry("login", recording, login_policy(), now=1.0)
    engine.store.put_entry("login", recording, login_policy(), now=2.0)
    engine.store.put_entry("login", recording, login_policy(workflow_version=2), now=3.0)
    assert [e.created_at for e in engine.store.entries(workflow="login")] == [3.0, 2.0]
    assert len(engine.store.entries(scope_id=SCOPE)) == 2
    assert engine.store.entries(scope_id="https://other.test") == []


async def test_expired_entries_are_purged(engine: Engine) -> None:
    recording = await record_login(FakePage())
    engine.store.put_entry("a", recording, login_policy(ttl_seconds=10), now=100.0)
    engine.store.put_entry("b", recording, login_policy(ttl_seconds=1000), now=100.0)
    assert engine.store.purge_expired(now=111.0) == 1
    assert [e.workflow for e in engine.store.entries()] == ["b"]
    assert engine.store.delete_entries(workflow="b") == 1
    assert engine.store.entries() == []


def test_a_non_cacheable_recording_is_refused(engine: Engine) -> None:
    recorder = Recorder()
    recorder.navigate("https://app.example.test/")
    recorder.coordinate_click(3, 4)
    with pytest.raises(ReplayRefused) as caught:
        engine.store.put_entry("x", recorder.finish(), login_policy())
    assert caught.value.reason == "non_cacheable"
    assert engine.store.entries() == []


def test_workflow_keys_are_validated(engine: Engine) -> None:
    with pytest.raises(InvalidRequest):
        engine.store.get_entry("", login_policy())
    with pytest.raises(InvalidRequest):
        engine.store.get_entry("a\x00b", login_policy())


async def test_workflows_are_saved_listed_and_deleted(engine: Engine) -> None:
    recording = await record_search(FakePage(), "first query")
    saved = engine.store.save_workflow(
        "find", recording, search_policy(), inputs=["query"], description="Find", now=7.0
    )
    assert engine.store.get_workflow("find") == saved
    assert saved.inputs == ("query",)
    assert [w.name for w in engine.store.list_workflows()] == ["find"]
    assert json.dumps(saved.to_json())
    with pytest.raises(AlreadyExists):
        engine.store.save_workflow("find", recording, search_policy(), inputs=["query"])
    engine.store.delete_workflow("find")
    with pytest.raises(NotFound):
        engine.store.get_workflow("find")
    with pytest.raises(NotFound):
        engine.store.delete_workflow("find")


async def test_the_store_survives_a_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "db" / "browser.db")
    recording = await record_login(FakePage())
    with ReplayStore(path, sanitizer=Sanitizer()) as first:
        first.put_entry("login", recording, login_policy())
    with ReplayStore(path, sanitizer=Sanitizer()) as second:
        assert second.get_entry("login", login_policy()) is not None
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == store_module.SCHEMA_VERSION
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    with pytest.raises(Unavailable) as caught:
        ReplayStore(path, sanitizer=Sanitizer())
    assert caught.value.reason == "store_too_new"


@posix_only
def test_an_insecure_database_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "browser.db"
    path.write_bytes(b"")
    path.chmod(0o644)
    with pytest.raises(Unavailable) as caught:
        ReplayStore(str(path), sanitizer=Sanitizer())
    assert caught.value.reason == "insecure_file"
    link = tmp_path / "link.db"
    link.symlink_to(tmp_path / "elsewhere.db")
    with pytest.raises(Unavailable):
        ReplayStore(str(link), sanitizer=Sanitizer())


@posix_only
def test_audit_files_are_unique_private_and_sanitized(tmp_path: Path) -> None:
    writer = AuditWriter(str(tmp_path / "audit"), sanitizer=Sanitizer())
    paths = set()
    for _ in range(200):
        run = writer.open_run("replay", typed=["typed-plaintext-value"])
        run.record("step_done", value="typed-plaintext-value", note="ok typed-plaintext-value")
        run.record("step_done", step=2)
        run.close()
        paths.add(run.path)
    files = sorted((tmp_path / "audit").iterdir())
    assert len(paths) == len(files) == 200
    assert stat.S_IMODE((tmp_path / "audit").stat().st_mode) == 0o700
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.name.startswith("replay-")
        assert path.suffix == ".jsonl"
        raw = path.read_bytes()
        assert b"typed-plaintext-value" not in raw
        records = [json.loads(line) for line in raw.splitlines()]
        assert [r["seq"] for r in records] == [1, 2]
        assert records[0]["note"] == "ok [typed]"


def test_audit_files_are_created_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = AuditWriter(str(tmp_path / "audit"), sanitizer=Sanitizer())
    fixed = uuid.UUID(int=1)
    monkeypatch.setattr(store_module.uuid, "uuid4", lambda: fixed)
    monkeypatch.setattr(store_module.time, "strftime", lambda *_: "20250101T000000Z")
    with writer.open_run():
        pass
    with pytest.raises(FileExistsError):
        writer.open_run()  # never appends to or clobbers another run's file


def test_audit_kinds_and_closed_runs(tmp_path: Path) -> None:
    writer = AuditWriter(str(tmp_path / "audit"), sanitizer=Sanitizer())
    with pytest.raises(InvalidRequest):
        writer.open_run("../escape")
    run = writer.open_run("recording")
    run.close()
    run.close()
    with pytest.raises(Unavailable):
        run.record("late")


@posix_only
def test_a_shared_audit_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "audit"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(Unavailable):
        AuditWriter(str(folder), sanitizer=Sanitizer()).open_run()


# -- page text at rest: keyed hashes of structure lines --------------------------------------

SHOUTED = "Signed in as ALICE-RECORDER"  # the typed user name, transformed by the page
RECOVERY = "Recovery code 7Q2M-XK9P-L4TR-88WZ"  # page text that looks like nothing known


def leaky_page() -> FakePage:
    page = FakePage()
    page.extra += [("status", SHOUTED), ("paragraph", RECOVERY)]
    return page


def assert_no_page_text(raw: bytes) -> None:
    for leaked in (SHOUTED, "ALICE-RECORDER", RECOVERY, "7Q2M-XK9P", "Welcome, [typed]"):
        assert leaked.encode() not in raw, leaked


async def test_page_text_is_stored_as_keyed_hashes_and_drift_still_detected(
    engine: Engine,
) -> None:
    recording = await record_login(leaky_page())
    assert any(RECOVERY in line for step in recording.steps for line in step.structure)
    entry = engine.store.put_entry("login", recording, login_policy())
    engine.workflows.save("Sign in", recording, login_policy(), inputs=["username", "password"])

    raw = engine.raw_bytes()  # the database, its WAL, the audit files
    assert b"Sign in" in raw  # the files were read; the targets' names are in clear
    assert_no_page_text(raw)
    stored = [line for step in entry.recording.steps for line in step.structure]
    assert "1:textbox:Username" in stored  # a target: in clear
    assert all(
        line.startswith("h:")
        for line in stored
        if "Username" not in line
        and "Password" not in line
        and "Sign in" not in line
        and "Home" not in line
    )

    # The same page replays (equal lines hash equally), even with another user's greeting.
    replay_page = leaky_page()
    bob = {"username": "bob-replayer", "password": "pw-bob-Replayed-22"}
    await engine.replayer.replay(entry, replay_page, bob, task="t", policy=login_policy())
    # A page that changed past the threshold is still refused.
    changed = leaky_page()
    changed.mutate(12)
    with pytest.raises(ReplayRefused) as caught:
        await engine.replayer.replay(entry, changed, bob, task="t", policy=login_policy())
    assert caught.value.reason == "mutation_drift"
    assert_no_page_text(engine.raw_bytes())


@posix_only
async def test_the_structure_key_is_private_kept_and_needed(tmp_path: Path) -> None:
    path = tmp_path / "db" / "browser.db"
    key_path = tmp_path / "db" / "browser.db.key"
    recording = await record_login(leaky_page())
    with ReplayStore(str(path), sanitizer=Sanitizer()) as first:
        stored = first.put_entry("login", recording, login_policy()).recording
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600
    key_text = key_path.read_text()
    assert len(bytes.fromhex(key_text)) == 32
    assert key_text.encode() not in path.read_bytes()
    # Reopened, the same key: the stored hashes match a fresh hashing of the same page.
    with ReplayStore(str(path), sanitizer=Sanitizer()) as second:
        entry = second.get_entry("login", login_policy())
        assert entry is not None
        assert entry.recording == stored
        assert "StructureKey(...)" in repr(second.structure_key)
    # Another store's key hashes the same lines differently (a hash is no dictionary entry).
    other = ReplayStore(str(tmp_path / "other" / "browser.db"), sanitizer=Sanitizer())
    with other:
        assert other.put_entry("login", recording, login_policy()).recording != stored
    key_path.chmod(0o644)
    with pytest.raises(Unavailable) as caught:
        ReplayStore(str(path), sanitizer=Sanitizer())
    assert caught.value.reason == "insecure_file"
    key_path.chmod(0o600)
    key_path.write_text("not hex")
    with pytest.raises(Unavailable) as caught:
        ReplayStore(str(path), sanitizer=Sanitizer())
    assert caught.value.reason == "invalid_key"


async def test_structures_stored_in_clear_by_an_older_version_are_hashed_on_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db" / "browser.db"
    recording = await record_login(leaky_page())
    with ReplayStore(str(path), sanitizer=Sanitizer()) as store:
        store.put_entry("login", recording, login_policy())
    # What an older version wrote: the recording with its structure lines in clear.
    sanitizer = Sanitizer().with_typed(recording.typed_values)
    db = sqlite3.connect(path)
    db.execute(
        "UPDATE cache_entries SET recording = ?", (json.dumps(sanitizer.recording(recording)),)
    )
    db.commit()
    db.close()
    assert RECOVERY.encode() in path.read_bytes()  # the text is on disk now
    with ReplayStore(str(path), sanitizer=Sanitizer()) as store:
        entry = store.get_entry("login", login_policy())
        assert entry is not None
        await replayer_for(tmp_path).replay(
            entry,
            leaky_page(),
            {"username": "bob-replayer", "password": "pw-bob-Replayed-22"},
            task="t",
            policy=login_policy(),
        )
    files = [p for p in (tmp_path / "db").iterdir() if p.is_file()]
    raw = b"".join(p.read_bytes() for p in files)
    assert b"Sign in" in raw
    assert_no_page_text(raw)


def replayer_for(tmp_path: Path) -> Replayer:
    return Replayer(
        verifier=ReplayVerifier(),
        audit=AuditWriter(str(tmp_path / "audit"), sanitizer=Sanitizer()),
        sanitizer=Sanitizer(),
        settle_timeout=0,
    )
