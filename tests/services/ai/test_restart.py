"""A server that stops mid-run: nothing streamed is lost, nothing waiting is left half-done."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.services.ai.manager import AiManager
from terax_jupyter.services.fs.grep import GrepSearch
from terax_jupyter.services.fs.manager import FileManager
from terax_jupyter.services.fs.search import FileSearch
from terax_jupyter.services.secrets.manager import SecretsManager
from terax_jupyter.testing import model_stub as turns

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub


def make_manager(terax_security: Any, root: Path, state: Path, stub: ModelStub) -> AiManager:
    security = terax_security(root)
    return AiManager(
        security,
        str(state),
        files=FileManager(security),
        search=FileSearch(security),
        grep=GrepSearch(security),
        pty=None,
        secrets=SecretsManager(security, str(state), backend="file"),
        providers={"stub": {"kind": "openai", "base_url": stub.url, "local": True}},
        default_provider="stub",
        default_model="stub-model",
    )


async def wait_for(condition: Any, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_crash_mid_answer_keeps_what_was_streamed_and_expires_approvals(
    terax_security: Any, tmp_path: Path, model_stub: ModelStub
) -> None:
    root, state = tmp_path / "work", tmp_path / "state"
    root.mkdir()
    first = make_manager(terax_security, root, state, model_stub)
    model_stub.script([turns.tool_call("create_directory", {"path": "later"})])
    waiting = await first.create_session({}, user="alice")
    await first.start_run(waiting["id"], {"prompt": "Make a folder"}, user="alice")
    await wait_for(lambda: first.approvals.is_waiting_any())
    model_stub.script([turns.slow(turns.text("streamed " * 100, chunk=9), 0.02)])
    talking = await first.create_session({}, user="alice")
    listener = first.events.subscribe(talking["id"])
    await first.start_run(talking["id"], {"prompt": "Talk"}, user="alice")
    seen = ""
    while len(seen) < 90:
        event = await listener.next()
        if event and event["type"] == "text_delta":
            seen += event["text"]
    # The process dies here: no cleanup runs. A new server opens the same store.
    second = make_manager(terax_security, root, state, model_stub)
    try:
        messages = await second.messages(talking["id"])
        cut = messages[-1]
        assert cut["status"] == "cut"
        assert cut["content"].startswith(seen)
        session = await second.get_session(waiting["id"])
        assert session["pending_approvals"] == []
        assert not session["running"]
        [expired] = await second.approvals_of(waiting["id"], status="expired")
        assert expired["tool"] == "create_directory"
        model_stub.script([turns.text("Starting over.")])
        listener = second.events.subscribe(waiting["id"])
        await second.start_run(waiting["id"], {"prompt": "Try again"}, user="alice")
        while (event := await listener.next()) and event["type"] != "finish":
            pass
        assert event["reason"] == "stop"
        sent = model_stub.requests[-1].body["messages"]
        results = [m for m in sent if m["role"] == "tool"]
        assert len(results) == 1
        assert "interrupted" in results[0]["content"]
        assert not (root / "later").exists()
    finally:
        await first.close()
        await second.close()


async def test_a_damaged_store_takes_only_the_agent_out_of_service(
    terax_security: Any, tmp_path: Path, model_stub: ModelStub
) -> None:
    root, state = tmp_path / "work", tmp_path / "state"
    root.mkdir()
    state.mkdir()
    damaged = state / "ai.sqlite3"
    damaged.write_bytes(b"not a database at all " * 100)
    damaged.chmod(0o600)
    manager = make_manager(terax_security, root, state, model_stub)
    try:
        with pytest.raises(Unavailable) as caught:
            await manager.create_session({}, user="alice")
        assert caught.value.reason == "store_corrupt"
        assert manager.agents.get("coder").name == "coder"  # the rest still answers
        assert damaged.read_bytes().startswith(b"not a database")  # nothing was lost
    finally:
        await manager.close()
