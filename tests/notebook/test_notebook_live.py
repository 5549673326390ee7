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
from tests.live_server import PROJECT, LiveTerax, environment_for
from tests.mcp.live_terax import start_live_terax

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


class Execution:
    """One cell running in a LabKernel, in a thread: its printed text and widget states."""

    def __init__(self, client: Any, code: str) -> None:
        import threading

        self.outputs: list[str] = []
        self.views: list[dict[str, Any]] = []  # the agent widget's states, as a page gets them
        self.done = threading.Event()

        def run() -> None:
            try:
                client.execute_interactive(code, output_hook=self._hook, timeout=CELL_TIMEOUT)
            finally:
                self.done.set()

        threading.Thread(target=run, daemon=True).start()

    def _hook(self, message: dict[str, Any]) -> None:
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            self.outputs.append(content["text"])
        elif kind == "error":
            self.outputs.append(f"ERROR {content['ename']}: {content['evalue']}\n")
        elif kind in ("comm_open", "comm_msg"):
            state = (content.get("data") or {}).get("state") or {}
            if isinstance(state.get("state"), dict):
                self.views.append(state["state"])

    @property
    def text(self) -> str:
        return "".join(self.outputs)

    def wait_for(self, marker: str) -> str:
        """The first printed line that starts with ``marker``."""
        import time

        deadline = time.monotonic() + CELL_TIMEOUT
        while time.monotonic() < deadline:
            for line in self.text.splitlines():
                if line.startswith(marker):
                    return line
            assert not self.done.is_set(), self.text
            time.sleep(0.1)
        raise AssertionError(f"no {marker!r} in {self.text!r}")

    def report(self) -> dict[str, Any]:
        assert self.done.wait(CELL_TIMEOUT), self.text
        return json.loads(self.wait_for("JSON:")[len("JSON:") :])  # type: ignore[no-any-return]


class LabKernel:
    """A kernel the live server started for a notebook, as Lab starts them (its parent is the
    server; its execute requests allow stdin), driven over its connection file."""

    def __init__(self, live: LiveTerax, path: str) -> None:
        import httpx
        from jupyter_client.blocking import BlockingKernelClient

        self.live = live
        self.headers = {"Authorization": f"token {live.token}"}
        self.session = (
            httpx.post(
                live.url + "api/sessions",
                headers=self.headers,
                json={"path": path, "type": "notebook", "kernel": {"name": "python3"}},
                timeout=60,
            )
            .raise_for_status()
            .json()
        )
        kernel_id = self.session["kernel"]["id"]
        self.client = BlockingKernelClient(
            connection_file=str(live.runtime_dir / f"kernel-{kernel_id}.json")
        )
        self.client.load_connection_file()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def execute(self, code: str) -> Execution:
        return Execution(self.client, code)

    def interrupt(self) -> None:
        import httpx

        kernel_id = self.session["kernel"]["id"]
        httpx.post(
            self.live.url + f"api/kernels/{kernel_id}/interrupt", headers=self.headers, timeout=30
        ).raise_for_status()

    def close(self) -> None:
        import httpx

        self.client.stop_channels()
        httpx.delete(
            self.live.url + f"api/sessions/{self.session['id']}", headers=self.headers, timeout=30
        )


def test_a_lab_kernel_finds_its_server_and_waits_for_a_person(
    live: LiveTerax, stub: ModelStub
) -> None:
    """A kernel the server started (as Lab starts them): found through JPY_PARENT_PID, and
    with no policy an approval waits until a person answers it (here through the REST call
    the AI panel makes)."""
    import time

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
    kernel = LabKernel(live, "notebooks/lab.ipynb")
    try:
        cell = kernel.execute(INTERACTIVE)
        session_id = cell.wait_for("SESSION ").split()[1]
        api = live.api()
        approval = None
        deadline = time.monotonic() + CELL_TIMEOUT
        while approval is None and time.monotonic() < deadline and not cell.done.is_set():
            pending = api.get(f"ai/sessions/{session_id}")["pending_approvals"]
            approval = pending[0] if pending else None
            time.sleep(0.2)
        assert approval is not None, cell.text
        time.sleep(0.5)  # still waiting: nothing decides for the person
        assert api.get(f"ai/approvals/{approval['id']}")["status"] == "pending"
        api.post(f"ai/approvals/{approval['id']}", {"decision": "approve"})
        report = cell.report()
    finally:
        kernel.close()
    # A person at Lab gets the widget: the approval with its buttons, then the outcome.
    views = cell.views
    waiting = [v for v in views if any(a["waiting"] for a in v.get("approvals", []))]
    assert waiting, views
    assert waiting[0]["approvals"][0]["tool"] == "edit"
    assert "+bye" in waiting[0]["approvals"][0]["diff"]
    assert views[-1]["status"] == "finished"
    assert views[-1]["approvals"][0]["status"] == "approved"
    assert views[-1]["files_changed"] == ["notes/todo.txt"]
    assert report["source"] == f"the server that started this kernel (pid {live.process.pid})"
    assert report["files"] == ["notes/todo.txt"]
    assert report["approvals"] == [["edit", "approved", "person"]]
    assert report["text"] == "Said goodbye."
    assert (live.root / "notes" / "todo.txt").read_text().startswith("bye\n")
    # The prompt named the notebook this kernel's session is for (no cell id: this client
    # sends none; Lab sends it, and then the cell and its source go too).
    [prompt] = [
        m["content"]
        for m in api.get(f"ai/sessions/{session_id}/messages")["messages"]
        if m["role"] == "user"
    ]
    assert prompt.endswith("\n\nAttached files (read them as needed):\n- notebooks/lab.ipynb")


INTERRUPTED_COMMAND = """
import json, time
import terax_jupyter.notebook as terax
term = terax.terminal()
print("READY", flush=True)
try:
    term.run("sleep 30; echo $((6*7))done", timeout=120)
except KeyboardInterrupt:
    for _ in range(50):
        last = term.blocks()[-1]
        if not last["running"]:
            break
        time.sleep(0.1)
    print("JSON:" + json.dumps({"exit": last["exit_code"], "running": last["running"],
                                "output": term.output(5)}))
term.close()
"""

INTERRUPTED_AGENT = """
import json, time
import terax_jupyter.notebook as terax
agent = terax.agent(display=False)
print("ASKING " + agent.session_id, flush=True)
try:
    agent.ask("Take your time.")
except KeyboardInterrupt:
    for _ in range(50):
        session = agent.refresh()
        if not session["running"]:
            break
        time.sleep(0.1)
    print("JSON:" + json.dumps({"running": session["running"]}))
"""


def test_interrupting_the_kernel_interrupts_the_command_and_cancels_the_run(
    live: LiveTerax, stub: ModelStub
) -> None:
    import time

    stub.reset()
    stub.script([turns.slow(turns.text("slowly " * 40, chunk=7), 0.25)])  # about 10 s
    kernel = LabKernel(live, "notebooks/interrupt.ipynb")
    try:
        cell = kernel.execute(INTERRUPTED_COMMAND)
        cell.wait_for("READY")
        time.sleep(1.5)  # the command is running
        kernel.interrupt()
        command = cell.report()

        cell = kernel.execute(INTERRUPTED_AGENT)
        session_id = cell.wait_for("ASKING ").split()[1]
        api = live.api()
        deadline = time.monotonic() + CELL_TIMEOUT
        while not api.get(f"ai/sessions/{session_id}")["running"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(1)  # the answer is streaming
        started = time.monotonic()
        kernel.interrupt()
        agent = cell.report()
        took = time.monotonic() - started
    finally:
        kernel.close()
    assert command["running"] is False
    assert command["exit"] == 130  # SIGINT, from Ctrl-C on the terminal
    assert "42done" not in command["output"]
    assert agent == {"running": False}
    assert took < 6  # cancelled on the server, not streamed to the end
    messages = api.get(f"ai/sessions/{session_id}/messages")["messages"]
    assert (messages[-1]["role"], messages[-1]["status"]) == ("assistant", "cut")


def test_a_timeout_cancels_a_run_whose_events_keep_coming(
    live: LiveTerax, stub: ModelStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside a kernel too: plain Python given the server's address."""
    import asyncio
    import time

    import terax_jupyter.notebook as terax

    monkeypatch.setenv("TERAX_HEADLESS", "1")
    stub.reset()
    # An event every 50 ms for about 20 s: never a quiet moment in which to notice the time.
    stub.script([turns.slow(turns.text("busy " * 400, chunk=5), 0.05)])
    agent = terax.agent(url=live.url, token=live.token, display=False)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not finish within 1 s; its run was cancelled"):
        agent.ask("Keep talking", timeout=1)
    assert time.monotonic() - started < 6
    api = live.api()
    deadline = time.monotonic() + 10
    while api.get(f"ai/sessions/{agent.session_id}")["running"]:
        assert time.monotonic() < deadline, "the run went on after the timeout"
        time.sleep(0.1)
    messages = api.get(f"ai/sessions/{agent.session_id}/messages")["messages"]
    assert (messages[-1]["role"], messages[-1]["status"]) == ("assistant", "cut")

    # The same with ask_async.
    stub.script([turns.slow(turns.text("busy " * 400, chunk=5), 0.05)])
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="did not finish within 1 s; its run was cancelled"):
        asyncio.run(agent.ask_async("Keep talking, asynchronously", timeout=1))
    assert time.monotonic() - started < 6
    deadline = time.monotonic() + 10
    while api.get(f"ai/sessions/{agent.session_id}")["running"]:
        assert time.monotonic() < deadline, "the run went on after the timeout"
        time.sleep(0.1)
