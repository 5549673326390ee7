"""Real notebooks executed with nbclient against a live Terax server (under JupyterHub's
``/user/alice/`` prefix) and the HTTP model stub: the kernel finds the server with no
configuration, drives a terminal, and runs the agent headless with a policy."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from nbclient import NotebookClient

from terax_jupyter.notebook.policy import HEADLESS_NOTE
from terax_jupyter.testing import model_stub as turns
from terax_jupyter.testing.model_stub import ModelStub
from tests.mcp.live_terax import PROJECT, LiveTerax, environment_for, start_live_terax

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = [pytest.mark.live, pytest.mark.timeout(240)]
CELL_TIMEOUT = 90


@pytest.fixture(scope="module")
def stub() -> Iterator[ModelStub]:
    with ModelStub(models=["stub-model"]) as running:
        yield running


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, stub: ModelStub) -> Iterator[LiveTerax]:
    config = {
        "AiManager": {
            "providers": {
                "stub": {"kind": "openai", "label": "Stub", "base_url": stub.url, "local": True}
            },
            "default_provider": "stub",
            "default_model": "stub-model",
        }
    }
    server = start_live_terax(tmp_path_factory.mktemp("home"), config)
    (server.root / "notebooks").mkdir()
    yield server
    server.stop()


def notebook(*cells: str) -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    return book


def execute(
    book: nbformat.NotebookNode, cwd: Path, env: dict[str, str], *, allow_errors: bool = False
) -> nbformat.NotebookNode:
    client = NotebookClient(
        book,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute(env=env)
    return book


def text_of(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def reported(cell: Any) -> dict[str, Any]:
    """The ``JSON:`` line a cell printed."""
    for line in text_of(cell).splitlines():
        if line.startswith("JSON:"):
            return json.loads(line[len("JSON:") :])  # type: ignore[no-any-return]
    errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
    raise AssertionError(f"no JSON line in {text_of(cell)!r} {errors}")


SETUP = """
import json, os
import terax_jupyter.notebook as terax
conn = terax.connect()
print("JSON:" + json.dumps({"url": conn.url, "source": conn.target.source,
                            "module": terax.__file__}))
"""

TERMINAL = r"""
term = terax.terminal()
ok = term.run("printf 'one\\ntwo\\n'")
failed = term.run("(exit 3)")
try:
    term.run("sleep 30", timeout=1)
    timed_out = None
except terax.CommandTimeout as error:
    timed_out = {"interrupted": error.interrupted, "message": str(error),
                 "exit": error.result.exit_code if error.result else "none"}
after = term.run("echo after")
print("JSON:" + json.dumps({
    "cwd": term.cwd, "ok": [ok.exit_code, ok.output, ok.duration, ok.block_id],
    "failed": failed.exit_code, "timeout": timed_out, "after": [after.exit_code, after.output],
}))
term.close()
"""

AGENT = """
agent = terax.agent(model="stub/stub-model", agent="coder",
                    policy=[{"tool": "edit", "path": "src/**"}])
result = agent.ask("Change the greeting, then touch ran.txt")
print("JSON:" + json.dumps({
    "session": agent.session_id, "text": result.text, "files": result.files_changed,
    "tools": [[c.name, c.status] for c in result.tool_calls],
    "approvals": [[a.tool, a.status, a.by] for a in result.approvals],
    "usage": [result.usage.input_tokens, result.usage.output_tokens], "finish": result.finish,
}))
"""

MAGIC = """%%terax
Say hi from the magic."""

AFTER_MAGIC = """print("JSON:" + json.dumps({"text": _terax.text, "session": _terax.session_id}))"""

ASYNC = """
res = await agent.ask_async("And asynchronously?", display=False)
print("JSON:" + json.dumps({"text": res.text, "session": res.session_id}))
"""

PANEL = """
panel = terax.agent(session=os.environ["PANEL_SESSION"], display=False)
cont = panel.ask("Continue from the panel")
print("JSON:" + json.dumps({"text": cont.text, "session": panel.session_id}))
"""


def test_a_notebook_drives_the_terminal_and_the_agent(live: LiveTerax, stub: ModelStub) -> None:
    api = live.api()
    panel = api.post("ai/sessions", {"title": "Started in the panel"})
    stub.reset()
    stub.script(
        [
            turns.tool_call("read_file", {"path": "src/app.py"}),
            turns.tool_call(
                "edit",
                {"path": "src/app.py", "old_string": "hello terax", "new_string": "hi notebook"},
            ),
            turns.tool_call("bash_run", {"command": "touch ran.txt"}),
            turns.text("Edited src/app.py; the command was denied."),
            turns.text("Hi from the magic."),
            turns.text("Async answer."),
            turns.text("Continued."),
        ]
    )
    book = notebook(
        SETUP, TERMINAL, AGENT, "%load_ext terax_jupyter.notebook", MAGIC, AFTER_MAGIC, ASYNC, PANEL
    )
    env = live.environment(PANEL_SESSION=panel["id"])
    execute(book, live.root / "notebooks", env)
    cells = book.cells

    # Found with no configuration: the runtime file of the server whose root holds the folder.
    setup = reported(cells[0])
    assert setup["url"] == live.url
    assert setup["source"].startswith("running server")
    assert setup["module"].startswith(PROJECT)

    # term.run: exit codes, output, duration; a timeout interrupts; the terminal goes on.
    terminal = reported(cells[1])
    assert terminal["cwd"] == str(live.root / "notebooks")
    exit_code, output, duration, block_id = terminal["ok"]
    assert (exit_code, output.splitlines()) == (0, ["one", "two"])
    assert duration >= 0
    assert block_id >= 1
    assert terminal["failed"] == 3
    assert terminal["timeout"]["interrupted"] is True
    assert terminal["timeout"]["exit"] != 0
    assert "did not finish within 1 s" in terminal["timeout"]["message"]
    assert terminal["after"][0] == 0
    assert terminal["after"][1].strip() == "after"

    # The agent: the rule approved the edit, the headless run denied the command.
    agent = reported(cells[2])
    assert agent["text"] == "Edited src/app.py; the command was denied."
    assert agent["files"] == ["src/app.py"]
    assert agent["tools"] == [["read_file", "done"], ["edit", "done"], ["bash_run", "denied"]]
    assert agent["approvals"] == [["edit", "approved", "rule"], ["bash_run", "denied", "headless"]]
    assert agent["finish"] == "stop"
    assert agent["usage"][0] > 0
    assert "hi notebook" in (live.root / "src" / "app.py").read_text()
    assert not (live.root / "ran.txt").exists()
    streamed = text_of(cells[2])
    assert "Approved by the notebook's rule" in streamed
    assert "Denied by the headless rule: " in streamed
    assert "Edited src/app.py; the command was denied." in streamed
    # The model was told why: the note went with the denial.
    assert any(HEADLESS_NOTE[:40] in json.dumps(r.body) for r in stub.requests)

    # %%terax: the cell is a prompt to the current session.
    magic = reported(cells[5])
    assert magic == {"text": "Hi from the magic.", "session": agent["session"]}
    assert "Hi from the magic." in text_of(cells[4])

    # ask_async, top-level await in the kernel's own loop.
    assert reported(cells[6]) == {"text": "Async answer.", "session": agent["session"]}

    # Sessions are the server's: the notebook's is in the panel's list, and a panel session
    # was continued from the notebook.
    continued = reported(cells[7])
    assert continued == {"text": "Continued.", "session": panel["id"]}
    listed = {s["id"]: s for s in api.get("ai/sessions")["sessions"]}
    assert listed[agent["session"]]["title"].startswith("Change the greeting")
    messages = api.get(f"ai/sessions/{panel['id']}/messages")["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Continue from the panel"),
        ("assistant", "Continued."),
    ]
    notebook_messages = api.get(f"ai/sessions/{agent['session']}/messages")["messages"]
    prompts = [m["content"] for m in notebook_messages if m["role"] == "user"]
    assert prompts == [
        "Change the greeting, then touch ran.txt",
        "Say hi from the magic.",
        "And asynchronously?",
    ]


def test_no_server_is_a_clear_error(live: LiveTerax, tmp_path: Path) -> None:
    empty = tmp_path / "runtime"
    empty.mkdir()
    env = environment_for(live.home, empty)
    for name in ("JUPYTERHUB_API_TOKEN", "TERAX_URL", "TERAX_TOKEN"):
        env.pop(name, None)
    book = notebook("import terax_jupyter.notebook as terax\nterax.agent()")
    execute(book, tmp_path, env, allow_errors=True)
    errors = [o for o in book.cells[0].outputs if o.output_type == "error"]
    assert [e.ename for e in errors] == ["DiscoveryError"]
    message = errors[0].evalue
    assert "No running Terax server found" in message
    assert "terax.connect(url=" in message
    assert "TERAX_URL and TERAX_TOKEN" in message
    assert os.fspath(empty) in message


INTERACTIVE = """
import json
import terax_jupyter.notebook as terax
conn = terax.connect()
agent = terax.agent()
print("SESSION " + agent.session_id, flush=True)
result = agent.ask("Say goodbye in notes/todo.txt")
print("JSON:" + json.dumps({
    "source": conn.target.source, "files": result.files_changed,
    "approvals": [[a.tool, a.status, a.by] for a in result.approvals], "text": result.text,
}))
"""


def test_a_lab_kernel_finds_its_server_and_waits_for_a_person(
    live: LiveTerax, stub: ModelStub
) -> None:
    """A kernel the server started (as Lab starts them): found through JPY_PARENT_PID, and
    with no policy an approval waits until a person answers it (here through the REST call
    the AI panel makes)."""
    import threading
    import time

    import httpx
    from jupyter_client.blocking import BlockingKernelClient

    stub.reset()
    stub.script(
        [
            turns.tool_call("read_file", {"path": "notes/todo.txt"}),
            turns.tool_call(
                "edit", {"path": "notes/todo.txt", "old_string": "item 1\n", "new_string": "bye\n"}
            ),
            turns.text("Said goodbye."),
        ]
    )
    headers = {"Authorization": f"token {live.token}"}
    created = (
        httpx.post(
            live.url + "api/sessions",
            headers=headers,
            json={"path": "notebooks/lab.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
            timeout=60,
        )
        .raise_for_status()
        .json()
    )
    kernel_id = created["kernel"]["id"]
    client = BlockingKernelClient(
        connection_file=str(live.runtime_dir / f"kernel-{kernel_id}.json")
    )
    client.load_connection_file()
    client.start_channels()
    outputs: list[str] = []
    done = threading.Event()

    views: list[dict[str, Any]] = []  # the agent widget's states, as the page gets them

    def hook(message: dict[str, Any]) -> None:
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            outputs.append(content["text"])
        elif kind == "error":
            outputs.append("ERROR " + content["evalue"])
        elif kind in ("comm_open", "comm_msg"):
            state = (content.get("data") or {}).get("state") or {}
            if isinstance(state.get("state"), dict):
                views.append(state["state"])

    def run() -> None:
        try:
            client.execute_interactive(INTERACTIVE, output_hook=hook, timeout=CELL_TIMEOUT)
        finally:
            done.set()

    try:
        client.wait_for_ready(timeout=60)
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        api = live.api()
        approval = None
        deadline = time.monotonic() + CELL_TIMEOUT
        while approval is None and time.monotonic() < deadline and not done.is_set():
            session_ids = [
                line.split()[1]
                for line in "".join(outputs).splitlines()
                if line.startswith("SESSION ")
            ]
            if session_ids:
                pending = api.get(f"ai/sessions/{session_ids[0]}")["pending_approvals"]
                approval = pending[0] if pending else None
            time.sleep(0.2)
        assert approval is not None, "".join(outputs)
        time.sleep(0.5)  # still waiting: nothing decides for the person
        assert api.get(f"ai/approvals/{approval['id']}")["status"] == "pending"
        api.post(f"ai/approvals/{approval['id']}", {"decision": "approve"})
        assert done.wait(CELL_TIMEOUT)
        worker.join(5)
    finally:
        client.stop_channels()
        httpx.delete(live.url + f"api/sessions/{created['id']}", headers=headers, timeout=30)
    text = "".join(outputs)
    # A person at Lab gets the widget: the approval with its buttons, then the outcome.
    waiting = [v for v in views if any(a["waiting"] for a in v.get("approvals", []))]
    assert waiting, views
    assert waiting[0]["approvals"][0]["tool"] == "edit"
    assert "+bye" in waiting[0]["approvals"][0]["diff"]
    assert views[-1]["status"] == "finished"
    assert views[-1]["approvals"][0]["status"] == "approved"
    assert views[-1]["files_changed"] == ["notes/todo.txt"]
    report = next(json.loads(line[5:]) for line in text.splitlines() if line.startswith("JSON:"))
    assert report["source"] == f"the server that started this kernel (pid {live.process.pid})"
    assert report["files"] == ["notes/todo.txt"]
    assert report["approvals"] == [["edit", "approved", "person"]]
    assert report["text"] == "Said goodbye."
    assert (live.root / "notes" / "todo.txt").read_text().startswith("bye\n")
