"""AiStore against a real SQLite file: WAL, 0600, schema, cascades, threads, restarts, damage."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Conflict, InvalidRequest, NotFound, Unavailable
from terax_jupyter.security.redact import Redactor
from terax_jupyter.services.ai.providers.base import Message, ToolCall
from terax_jupyter.services.ai.store import SCHEMA_VERSION, AiStore

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TABLES = ("sessions", "runs", "messages", "tool_calls", "approvals", "usage", "file_reads")


@pytest.fixture
def db_path(tmp_path: Path) -> str:
    return str(tmp_path / "state" / "ai.sqlite3")


@pytest.fixture
def store(db_path: str) -> Iterator[AiStore]:
    with AiStore(db_path) as opened:
        yield opened


def raw(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path)


def test_the_file_is_private_in_wal_mode_with_the_current_schema(
    store: AiStore, db_path: str
) -> None:
    store.create_session(title="x")
    assert stat.S_IMODE(os.stat(db_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(db_path)).st_mode) == 0o700
    # SQLite gives the write-ahead log the database's mode.
    assert stat.S_IMODE(os.stat(db_path + "-wal").st_mode) == 0o600
    other = raw(db_path)
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert other.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    other.close()
    assert store.journal_mode == "wal"


def test_a_store_from_a_newer_terax_is_refused(db_path: str) -> None:
    AiStore(db_path).close()
    other = raw(db_path)
    other.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    other.commit()
    other.close()
    with pytest.raises(Unavailable) as caught:
        AiStore(db_path)
    assert caught.value.reason == "store_too_new"


def test_sessions_are_created_read_updated_and_listed_by_activity(store: AiStore) -> None:
    first = store.create_session(title="First", user="alice")
    assert first["agent"] == "coder"
    assert first["plan_mode"] is False
    assert first["rules"] == []
    assert first["todos"] == []
    assert first["user"] == "alice"
    assert len(first["id"]) == 32
    second = store.create_session(title="Second", provider="openai", model="gpt-x")
    assert [s["id"] for s in store.list_sessions()] == [second["id"], first["id"]]

    store.touch(first["id"])
    assert [s["id"] for s in store.list_sessions()] == [first["id"], second["id"]]

    updated = store.update_session(
        second["id"],
        title="Renamed",
        plan_mode=True,
        rules=[{"tool": "bash_run", "command_prefix": "npm test"}],
        todos=[{"content": "a", "status": "pending"}],
        model=None,
    )
    assert updated["title"] == "Renamed"
    assert updated["plan_mode"] is True
    assert updated["rules"] == [{"tool": "bash_run", "command_prefix": "npm test"}]
    assert updated["model"] is None
    assert updated["updated_at"] >= second["updated_at"]
    assert store.list_sessions()[0]["id"] == second["id"]
    assert [s["id"] for s in store.list_sessions(limit=1, offset=1)] == [first["id"]]


def test_session_errors(store: AiStore) -> None:
    session = store.create_session()
    with pytest.raises(NotFound, match="No AI session nope"):
        store.get_session("nope")
    with pytest.raises(InvalidRequest) as caught:
        store.update_session(session["id"], colour="red")
    assert caught.value.reason == "unknown_field"
    for bad in ({"plan_mode": "yes"}, {"rules": "x"}, {"title": 3}):
        with pytest.raises(InvalidRequest):
            store.update_session(session["id"], **bad)
    with pytest.raises(NotFound):
        store.update_session("nope", title="x")
    with pytest.raises(NotFound):
        store.touch("nope")
    with pytest.raises(InvalidRequest):
        store.list_sessions(limit=0)
    with pytest.raises(InvalidRequest):
        store.list_sessions(offset=-1)
    store.delete_session(session["id"])
    with pytest.raises(NotFound):
        store.delete_session(session["id"])


def test_search_matches_titles_and_messages_literally(store: AiStore) -> None:
    percent = store.create_session(title="Coverage at 100% now")
    underscore = store.create_session(title="fix my_var")
    plain = store.create_session(title="plain")
    backslash = store.create_session(title=r"C:\temp")
    store.add_message(plain["id"], Message("user", "Where is the FooBar class?"))

    def found(query: str) -> set[str]:
        return {s["id"] for s in store.list_sessions(query=query)}

    assert found("%") == {percent["id"]}
    assert found("_") == {underscore["id"]}
    assert found("0% n") == {percent["id"]}
    assert found("\\") == {backslash["id"]}
    assert found("foobar") == {plain["id"]}
    assert found("MY_VAR") == {underscore["id"]}
    assert found("nothing like it") == set()
    assert len(store.list_sessions(query="")) == 4


def test_messages_stream_in_pieces_and_read_back_whole(store: AiStore) -> None:
    session = store.create_session()
    run_id = store.add_run(session["id"], agent="coder", provider="openai", model="m", prompt="p")
    store.add_message(session["id"], Message("user", "hello"), run_id=run_id)
    message_id = store.add_message(
        session["id"], Message("assistant"), run_id=run_id, status="streaming"
    )
    pieces = [f"piece {i:03d} ✓ " for i in range(100)]
    for piece in pieces:
        store.append_message(message_id, text=piece)
    store.append_message(message_id, reasoning="think")
    store.append_message(message_id)  # nothing to add is fine

    # A streaming message is not part of the conversation yet.
    assert [m.role for m in store.conversation(session["id"])] == ["user"]

    call = ToolCall("call_1", "read_file", {"path": "a.py"})
    store.finish_message(message_id, tool_calls=[call])
    store.add_message(
        session["id"],
        Message("tool", "contents", tool_call_id="call_1", name="read_file", is_error=True),
        run_id=run_id,
    )
    conversation = store.conversation(session["id"])
    assert [m.role for m in conversation] == ["user", "assistant", "tool"]
    assert conversation[1].content == "".join(pieces)
    assert conversation[1].reasoning == "think"
    assert conversation[1].tool_calls == [call]
    assert conversation[2].tool_call_id == "call_1"
    assert conversation[2].is_error is True

    listed = store.messages(session["id"])
    assert [m["status"] for m in listed] == ["complete", "complete", "complete"]
    assert listed[1]["id"] == message_id
    assert listed[1]["run_id"] == run_id
    assert set(listed[1]) == {
        "id",
        "run_id",
        "status",
        "created_at",
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "name",
        "reasoning",
        "is_error",
    }
    assert listed[1]["tool_calls"] == [call.to_json()]

    store.replace_message_content(message_id, "short")
    assert store.conversation(session["id"])[1].content == "short"

    with pytest.raises(NotFound):
        store.append_message(99999, text="x")
    with pytest.raises(NotFound):
        store.finish_message(99999)
    with pytest.raises(InvalidRequest):
        store.finish_message(message_id, status="done")
    with pytest.raises(NotFound):
        store.add_message("nope", Message("user", "x"))
    with pytest.raises(NotFound):
        store.messages("nope")


def test_a_cut_message_stays_in_the_conversation(store: AiStore) -> None:
    session = store.create_session()
    message_id = store.add_message(session["id"], Message("assistant"), status="streaming")
    store.append_message(message_id, text="half an ans")
    store.finish_message(message_id, tool_calls=[], status="cut")
    assert store.messages(session["id"])[0]["status"] == "cut"
    assert store.conversation(session["id"])[0].content == "half an ans"


def test_a_run_of_another_session_is_refused(store: AiStore) -> None:
    one, two = store.create_session(), store.create_session()
    run_id = store.add_run(one["id"])
    with pytest.raises(NotFound, match="No AI run"):
        store.add_message(two["id"], Message("user", "x"), run_id=run_id)
    with pytest.raises(NotFound):
        store.add_run("nope")


def test_runs_finish_with_their_error(store: AiStore) -> None:
    session = store.create_session()
    run_id = store.add_run(session["id"], agent="coder", prompt="do it")
    assert store.get_run(run_id)["status"] == "running"
    finished = store.finish_run(
        run_id, "failed", steps=3, error={"message": "no", "reason": "bad_key"}
    )
    assert finished["status"] == "failed"
    assert finished["steps"] == 3
    assert finished["error"] == {"message": "no", "reason": "bad_key"}
    assert finished["ended_at"] >= finished["started_at"]
    assert [r["id"] for r in store.runs(session["id"])] == [run_id]
    with pytest.raises(InvalidRequest):
        store.finish_run(run_id, "exploded", steps=1)
    with pytest.raises(NotFound):
        store.finish_run("nope", "finished", steps=1)
    with pytest.raises(NotFound):
        store.get_run("nope")


def test_tool_calls_are_recorded_once_and_finished(store: AiStore) -> None:
    session = store.create_session()
    run_id = store.add_run(session["id"])
    message_id = store.add_message(session["id"], Message("assistant"), run_id=run_id)
    call = store.add_tool_call(
        session["id"], run_id, "call_9", "bash_run", {"command": "ls"}, message_id=message_id
    )
    assert call["status"] == "running"
    assert call["arguments"] == {"command": "ls"}
    with pytest.raises(Conflict) as caught:
        store.add_tool_call(session["id"], run_id, "call_9", "bash_run", {})
    assert caught.value.reason == "duplicate_call_id"
    store.set_tool_call_status("call_9", "pending_approval")
    assert store.tool_calls(session["id"])[0]["status"] == "pending_approval"
    done = store.finish_tool_call(
        "call_9", status="done", result="a\nb", data={"exit_code": 0}, duration_ms=12.5
    )
    assert done["result"] == "a\nb"
    assert done["data"] == {"exit_code": 0}
    assert done["duration_ms"] == 12.5
    assert done["is_error"] is False
    with pytest.raises(InvalidRequest):
        store.set_tool_call_status("call_9", "weird")
    with pytest.raises(NotFound):
        store.finish_tool_call("nope", status="done", result="", duration_ms=1)
    # A reference to a message that does not exist is refused, not stored.
    with pytest.raises(InvalidRequest):
        store.add_tool_call(session["id"], run_id, "call_10", "x", {}, message_id=424242)


def test_an_approval_is_decided_once(store: AiStore) -> None:
    session = store.create_session()
    run_id = store.add_run(session["id"])
    proposal = {"tool": "edit", "kind": "edit", "summary": "s", "payload": {"path": "a"}}
    approval = store.add_approval(session["id"], run_id, "call_1", "edit", proposal)
    queued = store.add_approval(session["id"], run_id, "call_2", "edit", proposal, status="queued")
    auto = store.add_approval(
        session["id"],
        run_id,
        "call_3",
        "bash_run",
        proposal,
        status="approved",
        auto_rule={"tool": "bash_run"},
    )
    assert approval["status"] == "pending"
    assert approval["proposal"] == proposal
    assert auto["auto_rule"] == {"tool": "bash_run"}
    assert [a["id"] for a in store.approvals(session["id"], status="pending")] == [approval["id"]]
    assert {a["id"] for a in store.approvals(session["id"], status=["pending", "queued"])} == {
        approval["id"],
        queued["id"],
    }
    assert len(store.approvals(session["id"])) == 3

    decided = store.decide_approval(
        approval["id"], status="partially_approved", decision={"hunks": [0]}, user="alice"
    )
    assert decided["status"] == "partially_approved"
    assert decided["decision"] == {"hunks": [0]}
    assert decided["decided_by"] == "alice"
    assert decided["decided_at"] is not None
    with pytest.raises(Conflict) as caught:
        store.decide_approval(approval["id"], status="denied", decision=None, user="bob")
    assert caught.value.reason == "already_decided"
    assert store.get_approval(approval["id"])["decided_by"] == "alice"
    with pytest.raises(Conflict):
        store.decide_approval(auto["id"], status="denied", decision=None, user=None)
    assert (
        store.decide_approval(queued["id"], status="discarded", decision={}, user=None)["status"]
        == "discarded"
    )
    with pytest.raises(NotFound):
        store.decide_approval("nope", status="denied", decision=None, user=None)
    with pytest.raises(InvalidRequest):
        store.decide_approval(approval["id"], status="pending", decision=None, user=None)
    with pytest.raises(InvalidRequest):
        store.approvals(session["id"], status="nonsense")


def test_two_threads_deciding_at_once_decide_once(store: AiStore) -> None:
    session = store.create_session()
    approval = store.add_approval(session["id"], None, "c", "edit", {"summary": "s"})
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def decide(index: int) -> None:
        barrier.wait()
        try:
            store.decide_approval(approval["id"], status="approved", decision={}, user=str(index))
            outcomes.append("ok")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict"] * 7 + ["ok"]


def test_usage_adds_up(store: AiStore) -> None:
    session = store.create_session()
    assert store.usage_totals(session["id"]) == {
        "input_tokens": 0,
        "output_tokens": 0,
        "cached_tokens": 0,
    }
    store.add_usage(session["id"], None, "openai", "m", 100, 20, 50)
    store.add_usage(session["id"], None, "openai", "m", 10, 2)
    assert store.usage_totals(session["id"]) == {
        "input_tokens": 110,
        "output_tokens": 22,
        "cached_tokens": 50,
    }


def test_the_read_ledger_persists_across_restarts(db_path: str) -> None:
    with AiStore(db_path) as store:
        session = store.create_session()
        assert store.read_etags(session["id"]) == {}
        store.record_read(session["id"], "src/a.py", "etag-1")
        store.record_read(session["id"], "src/a.py", "etag-2")
        store.record_read(session["id"], "src/b.py", "etag-b")
        other = store.create_session()
        assert store.read_etags(other["id"]) == {}
    with AiStore(db_path) as store:
        assert store.read_etags(session["id"]) == {"src/a.py": "etag-2", "src/b.py": "etag-b"}


def test_delete_cascades_to_everything(store: AiStore, db_path: str) -> None:
    doomed, kept = store.create_session(), store.create_session()
    for session in (doomed, kept):
        run_id = store.add_run(session["id"])
        message_id = store.add_message(session["id"], Message("user", "hi"), run_id=run_id)
        store.add_tool_call(
            session["id"], run_id, f"call-{session['id']}", "x", {}, message_id=message_id
        )
        store.add_approval(session["id"], run_id, "c", "x", {})
        store.add_usage(session["id"], run_id, "p", "m", 1, 1)
        store.record_read(session["id"], "a", "e")
    store.delete_session(doomed["id"])
    other = raw(db_path)
    for table in TABLES:
        column = "id" if table == "sessions" else "session_id"
        remaining = other.execute(
            f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", (doomed["id"],)
        ).fetchone()[0]
        assert remaining == 0, table
        kept_rows = other.execute(
            f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", (kept["id"],)
        ).fetchone()[0]
        assert kept_rows == 1, table
    other.close()


def test_threads_share_the_store(store: AiStore) -> None:
    errors: list[BaseException] = []
    created: list[str] = []

    def work() -> None:
        try:
            session = store.create_session()
            created.append(session["id"])
            message_id = store.add_message(session["id"], Message("assistant"), status="streaming")
            for i in range(50):
                store.append_message(message_id, text=f"{i},")
            store.finish_message(message_id)
            store.add_usage(session["id"], None, "p", "m", 1, 1)
            store.list_sessions(query="1,")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(created) == 8
    expected = "".join(f"{i}," for i in range(50))
    for session_id in created:
        assert store.conversation(session_id)[0].content == expected


def test_reopening_keeps_everything_and_a_closed_store_says_so(db_path: str) -> None:
    store = AiStore(db_path)
    session = store.create_session(title="kept")
    store.add_message(session["id"], Message("user", "remember me"))
    store.close()
    store.close()  # twice is fine
    with pytest.raises(Unavailable) as caught:
        store.get_session(session["id"])
    assert caught.value.reason == "store_closed"
    with AiStore(db_path) as reopened:
        assert reopened.get_session(session["id"])["title"] == "kept"
        assert reopened.conversation(session["id"])[0].content == "remember me"


def test_interrupt_unfinished_closes_what_a_crash_left_open(db_path: str) -> None:
    with AiStore(db_path) as store:
        session = store.create_session()
        run_id = store.add_run(session["id"])
        done_run = store.add_run(session["id"])
        store.finish_run(done_run, "finished", steps=1)
        message_id = store.add_message(
            session["id"], Message("assistant"), run_id=run_id, status="streaming"
        )
        store.append_message(message_id, text="partial")
        pending = store.add_approval(session["id"], run_id, "c1", "edit", {})
        queued = store.add_approval(session["id"], run_id, "c2", "edit", {}, status="queued")
        store.add_tool_call(session["id"], run_id, "c1", "edit", {}, status="pending_approval")
        store.add_tool_call(session["id"], run_id, "c3", "bash_run", {})
        store.add_tool_call(session["id"], run_id, "c2", "edit", {}, status="queued")
    # The server restarts.
    with AiStore(db_path) as store:
        assert store.interrupt_unfinished() == 1
        assert store.get_run(run_id)["status"] == "interrupted"
        assert store.get_run(run_id)["ended_at"] is not None
        assert store.get_run(done_run)["status"] == "finished"
        assert store.messages(session["id"])[0]["status"] == "cut"
        assert store.conversation(session["id"])[0].content == "partial"
        assert store.get_approval(pending["id"])["status"] == "expired"
        assert store.get_approval(queued["id"])["status"] == "queued"
        calls = {c["id"]: c for c in store.tool_calls(session["id"])}
        assert calls["c1"]["status"] == "error"
        assert calls["c3"]["status"] == "error"
        assert calls["c3"]["is_error"] is True
        assert calls["c2"]["status"] == "queued"
        assert store.interrupt_unfinished() == 0


def test_a_damaged_file_is_reported_and_left_alone(db_path: str) -> None:
    os.makedirs(os.path.dirname(db_path), mode=0o700)
    garbage = b"this is not a database, it is a shopping list\n" * 200
    fd = os.open(db_path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, garbage)
    os.close(fd)
    with pytest.raises(Unavailable) as caught:
        AiStore(db_path)
    assert caught.value.reason == "store_corrupt"
    assert "move it aside" in caught.value.message
    with open(db_path, "rb") as handle:
        assert handle.read() == garbage


def test_a_file_others_can_read_or_a_symlink_is_refused(tmp_path: Path, db_path: str) -> None:
    AiStore(db_path).close()
    os.chmod(db_path, 0o644)
    with pytest.raises(Unavailable) as caught:
        AiStore(db_path)
    assert caught.value.reason == "insecure_file"
    assert "chmod 600" in caught.value.message

    target = tmp_path / "elsewhere.sqlite3"
    target.write_bytes(b"")
    os.chmod(target, 0o600)
    link = tmp_path / "state" / "link.sqlite3"
    link.symlink_to(target)
    with pytest.raises(Unavailable) as caught:
        AiStore(str(link))
    assert caught.value.reason == "insecure_file"


def test_a_known_secret_is_never_stored(db_path: str) -> None:
    secret = "zq-known-secret-value-12345"
    redactor = Redactor()
    redactor.add_secret(secret)
    with AiStore(db_path, redactor=redactor) as store:
        session = store.create_session()
        store.add_message(session["id"], Message("user", f"my key is {secret}"))
        message_id = store.add_message(session["id"], Message("assistant"), status="streaming")
        # Split across two deltas, no single piece matches.
        store.append_message(message_id, text=f"echo {secret[:10]}")
        store.append_message(message_id, text=f"{secret[10:]} done")
        store.finish_message(message_id)
        run_id = store.add_run(session["id"], prompt=f"use {secret}")
        store.finish_run(run_id, "failed", steps=0, error={"message": f"bad {secret}"})
        store.add_tool_call(session["id"], run_id, "c", "bash_run", {"command": "env"})
        store.finish_tool_call(
            "c", status="done", result=f"KEY={secret}", data={"out": secret}, duration_ms=1
        )
        texts = [m.content for m in store.conversation(session["id"])]
        assert all(secret not in text for text in texts)
        assert "[REDACTED]" in texts[1]
        other = raw(db_path)
        other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        other.close()
    with open(db_path, "rb") as handle:
        assert secret.encode() not in handle.read()


def test_a_days_usage_outlives_its_sessions_and_is_carried_over_from_schema_1(
    db_path: str,
) -> None:
    from terax_jupyter.security.database import migrate_schema
    from terax_jupyter.services.ai.store import MIGRATIONS, utc_day

    # A store of schema 1 (before usage by day), with usage of yesterday and today.
    os.makedirs(os.path.dirname(db_path), mode=0o700)
    old = raw(db_path)
    migrate_schema(old, MIGRATIONS[:1], "old")
    old.execute(
        "INSERT INTO sessions (id, agent, created_at, updated_at) VALUES ('s', 'coder', 0, 0)"
    )
    day = 86400.0
    now = (int(time.time()) // 86400) * day + 60  # today, just after midnight
    for when, tokens in ((now - day, 1000), (now, 7), (now, 5)):
        old.execute(
            "INSERT INTO usage (session_id, provider, model, input_tokens, output_tokens,"
            " created_at) VALUES ('s', 'p', 'm', ?, 1, ?)",
            (tokens, when),
        )
    old.commit()
    old.close()
    os.chmod(db_path, 0o600)
    with AiStore(db_path) as store:
        assert store.usage_on(utc_day(now)) == [
            {
                "provider": "p",
                "model": "m",
                "input_tokens": 12,
                "output_tokens": 2,
                "cached_tokens": 0,
            }
        ]
        assert store.usage_on(utc_day(now - day))[0]["input_tokens"] == 1000
        store.add_usage("s", None, None, None, 3, 4)
        store.delete_session("s")
        today = {(r["provider"], r["model"]): r["input_tokens"] for r in store.usage_on(utc_day())}
        assert today == {("p", "m"): 12, ("", ""): 3}  # deleting the session gave nothing back
