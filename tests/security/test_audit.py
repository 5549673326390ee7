"""The audit log and private files: valid JSON lines, redacted, private, intact when concurrent."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from terax_jupyter.security.audit import AuditLog
from terax_jupyter.security.redact import REDACTED, Redactor
from terax_jupyter.security.storage import write_private_file

SECRET = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor()


@pytest.fixture
def log(tmp_path: Path, redactor: Redactor) -> AuditLog:
    return AuditLog(str(tmp_path / "state" / "audit.jsonl"), redactor)


def lines(log: AuditLog) -> list[str]:
    with open(log.path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_each_record_is_one_json_line(log: AuditLog) -> None:
    first = log.record("workspace.root_added", user="ada", path="/projects/project")
    log.record("agent.approved", user=None, command="ls -la", count=2)
    raw = lines(log)
    assert len(raw) == 2
    parsed = [json.loads(line) for line in raw]
    assert parsed[0] == first
    assert parsed[0]["action"] == "workspace.root_added"
    assert parsed[0]["user"] == "ada"
    assert parsed[0]["path"] == "/projects/project"
    assert parsed[0]["time"].endswith("Z")
    assert parsed[1]["user"] is None
    assert parsed[1]["count"] == 2
    assert log.entries() == parsed


def test_the_log_and_its_folder_are_private(log: AuditLog) -> None:
    log.record("x", user="ada")
    assert stat.S_IMODE(os.stat(log.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(log.path)).st_mode) == 0o700


def test_records_are_redacted_before_they_are_written(log: AuditLog, redactor: Redactor) -> None:
    redactor.add_secret("plain-known-value")
    entry = log.record(
        "agent.command",
        user="ada",
        command=f"curl -H 'Authorization: Bearer {SECRET}' https://x",
        env={"OPENAI_API_KEY": "anything-at-all", "HOME": "/home/ada"},
        note="the value plain-known-value was typed",
    )
    text = Path(log.path).read_text(encoding="utf-8")
    assert SECRET not in text
    assert "anything-at-all" not in text
    assert "plain-known-value" not in text
    assert entry["env"] == {"OPENAI_API_KEY": REDACTED, "HOME": "/home/ada"}
    assert entry["note"] == f"the value {REDACTED} was typed"


def test_redaction_never_breaks_a_line(log: AuditLog, redactor: Redactor) -> None:
    # Redacting serialized JSON could eat the backslash of an escape; values are redacted first.
    redactor.add_secret('pass"word\\with-escapes')
    redactor.add_secret("caf\u00e9-secret-value")
    log.record("x", user="ada", detail='password=abcdef\\"ghi', more='pass"word\\with-escapes')
    log.record("y", user="ada", detail="caf\u00e9-secret-value")
    [first, second] = [json.loads(line) for line in lines(log)]
    assert first["more"] == REDACTED
    assert first["detail"] == f'password={REDACTED}"ghi'
    assert second["detail"] == REDACTED
    assert "caf" not in Path(log.path).read_text(encoding="utf-8")


def test_concurrent_writers_produce_intact_lines(log: AuditLog) -> None:
    writers, each = 8, 50
    barrier = threading.Barrier(writers)

    def write(number: int) -> None:
        barrier.wait()
        for index in range(each):
            log.record("load", user=f"user-{number}", index=index, padding="x" * 2000)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    raw = lines(log)
    assert len(raw) == writers * each
    parsed = [json.loads(line) for line in raw]
    seen = {(entry["user"], entry["index"]) for entry in parsed}
    assert seen == {(f"user-{n}", i) for n in range(writers) for i in range(each)}


def test_a_second_log_object_appends_to_the_same_file(tmp_path: Path, redactor: Redactor) -> None:
    path = str(tmp_path / "audit.jsonl")
    AuditLog(path, redactor).record("first", user="ada")
    AuditLog(path, redactor).record("second", user="bob")
    assert [e["action"] for e in AuditLog(path, redactor).entries()] == ["first", "second"]


def test_a_damaged_line_does_not_hide_the_others(log: AuditLog) -> None:
    log.record("first", user="ada")
    with open(log.path, "a", encoding="utf-8") as handle:
        handle.write('{"action": "cut-sho\n[1, 2]\n')
    log.record("second", user="ada")
    assert [e["action"] for e in log.entries()] == ["first", "second"]


def test_entries_of_a_missing_log_are_empty(tmp_path: Path, redactor: Redactor) -> None:
    assert AuditLog(str(tmp_path / "none.jsonl"), redactor).entries() == []


# -- private files --------------------------------------------------------------------------------


def test_private_files_are_0600_and_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "state" / "roots.json"
    write_private_file(str(path), '{"roots": ["a much longer first version"]}')
    write_private_file(str(path), "{}")
    assert path.read_text() == "{}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert os.listdir(path.parent) == ["roots.json"]


def test_a_failed_private_write_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "roots.json"
    write_private_file(str(path), "old")

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        write_private_file(str(path), "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["roots.json"]
