"""A file or folder the server's Unix account may not open is 403 ``permission_denied`` with a
message that says so, never a 500: reading, listing, stat, git's diff, and the agent's read
tool; searches skip what they cannot read.

The server runs as root without the capabilities that let root read anything
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH dropped from its bounding set), so mode 000 means
what it means for any account; the tests run as root, as CI does."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from terax_jupyter.testing import model_stub as turns
from terax_jupyter.testing.model_stub import ModelStub
from tests.live_server import start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.live_server import LiveTerax

WITHOUT_DAC = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture(scope="module")
def stub() -> Iterator[ModelStub]:
    with ModelStub(models=["stub-model"]) as model:
        yield model


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, stub: ModelStub) -> Iterator[LiveTerax]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a server without root's file access")
    home = tmp_path_factory.mktemp("home")
    root = tmp_path_factory.mktemp("root")
    (home / ".gitconfig").write_text("[user]\n\tname = T\n\temail = t@example.com\n")
    git(root, "init", "-q", "-b", "main")
    (root / "ok.txt").write_text("needle here\n")
    (root / "secret.txt").write_text("needle inside\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    (root / "secret.txt").write_text("needle changed\n")
    (root / "locked").mkdir()
    (root / "locked" / "inner.txt").write_text("needle\n")
    (root / "shut").mkdir()
    (root / "shut" / "kept.txt").write_text("kept\n")
    os.chmod(root / "secret.txt", 0)
    os.chmod(root / "shut", 0o555)
    os.chmod(root / "locked", 0)
    config = {
        "AiManager": {
            "providers": {
                "stub": {"kind": "openai", "label": "Stub", "base_url": stub.url, "local": True}
            },
            "default_provider": "stub",
            "default_model": "stub-model",
        }
    }
    live = start_live_server(home, root, config=config, prefix=WITHOUT_DAC)
    yield live
    live.stop()
    os.chmod(root / "locked", 0o755)


def call(server: LiveTerax, route: str, method: str = "GET", **kwargs: Any) -> httpx.Response:
    return httpx.request(
        method, f"{server.url}terax/api/{route}", headers=server.headers, timeout=30, **kwargs
    )


@pytest.mark.parametrize(
    ("route", "params", "shown"),
    [
        ("fs/file", {"path": "secret.txt"}, "secret.txt"),
        ("fs/file", {"path": "locked/inner.txt"}, "locked"),
        ("fs/list", {"path": "locked"}, "locked"),
        ("fs/stat", {"path": "locked/inner.txt"}, "locked"),
        ("git/diff", {"path": "", "file": "secret.txt"}, "secret.txt"),
    ],
)
def test_what_the_account_cannot_open_is_403(
    server: LiveTerax, route: str, params: dict[str, str], shown: str
) -> None:
    answer = call(server, route, params=params)
    assert answer.status_code == 403, answer.text
    body = answer.json()
    assert body["reason"] == "permission_denied"
    assert shown in body["message"]
    assert "permission" in body["message"]


@pytest.mark.parametrize(
    ("method", "route", "params", "body"),
    [
        ("PUT", "fs/file", None, {"path": "shut/kept.txt", "content": "x", "overwrite": True}),
        ("POST", "fs/create", None, {"path": "shut/new.txt"}),
        ("POST", "fs/create", None, {"path": "shut/folder", "type": "directory"}),
        ("POST", "fs/rename", None, {"path": "shut/kept.txt", "new_path": "moved.txt"}),
        ("DELETE", "fs/file", {"path": "shut/kept.txt"}, None),
    ],
)
def test_what_the_account_cannot_change_is_403(
    server: LiveTerax, method: str, route: str, params: Any, body: Any
) -> None:
    answer = call(server, route, method, params=params, json=body)
    assert answer.status_code == 403, answer.text
    assert answer.json()["reason"] == "permission_denied"
    assert "permission" in answer.json()["message"]
    assert sorted(os.listdir(server.root / "shut")) == ["kept.txt"]
    assert (server.root / "shut" / "kept.txt").read_text() == "kept\n"


def test_a_readable_file_beside_it_still_reads(server: LiveTerax) -> None:
    answer = call(server, "fs/file", params={"path": "ok.txt"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["content"] == "needle here\n"


def test_searches_skip_what_they_cannot_read(server: LiveTerax) -> None:
    grep = call(server, "fs/grep", params={"pattern": "needle", "path": ""})
    assert grep.status_code == 200, grep.text
    assert "ok.txt" in grep.text
    assert "needle inside" not in grep.text
    assert "needle changed" not in grep.text
    for route, params in (("fs/search", {"q": "txt"}), ("fs/glob", {"pattern": "**/*.txt"})):
        found = call(server, route, params=params)
        assert found.status_code == 200, (route, found.text)
        assert "ok.txt" in found.text
        assert "inner.txt" not in found.text  # inside the folder it may not open
    # git skips the folder it cannot open, and says the file it cannot hash is modified.
    status = call(server, "git/status", params={"path": ""})
    assert status.status_code == 200, status.text
    assert "secret.txt" in status.text


def test_the_agent_is_told_it_may_not_read_it(server: LiveTerax, stub: ModelStub) -> None:
    stub.script([turns.tool_call("read_file", {"path": "secret.txt"}), turns.text("It is locked.")])
    session = call(server, "ai/sessions", "POST", json={}).json()["id"]
    started = call(server, f"ai/sessions/{session}/runs", "POST", json={"prompt": "read it"})
    assert started.status_code in (200, 201, 202), started.text
    deadline = time.monotonic() + 30
    calls: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        calls = call(server, f"ai/sessions/{session}/tool-calls").json()["tool_calls"]
        if calls and calls[0]["status"] != "running" and len(stub.requests) >= 2:
            break
        time.sleep(0.2)
    assert [(c["name"], c["status"]) for c in calls] == [("read_file", "error")]
    [result] = [m for m in stub.requests[1].body["messages"] if m["role"] == "tool"]
    assert "secret.txt" in result["content"]
    assert "permission" in result["content"]
