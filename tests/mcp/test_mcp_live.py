"""``jupyter terax mcp`` against a live Terax server, through the MCP SDK's stdio client:
every tool answers from the server, under its rules (deny-list, roots, browser policy,
approvals), and the server is found with no configuration."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest
from live_terax import McpSession
from mcp.client.stdio import StdioServerParameters

from terax_jupyter.client.api import TeraxAPIError
from terax_jupyter.services.browser.evals.site import EvalSite

if TYPE_CHECKING:
    from collections.abc import Iterator

    from live_terax import LiveTerax

pytestmark = pytest.mark.live

TOOLS = {
    "read_file",
    "grep",
    "git_status",
    "notebook_outline",
    "notebook_read",
    "notebook_edit",
    "notebook_create",
    "notebook_run",
    "notebook_run_status",
    "notebook_interrupt",
    "notebook_restart",
    "kernel_variables",
    "terminal_output",
    "browser_open",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_wait",
    "browser_save_workflow",
    "list_workflows",
    "run_workflow",
}


@pytest.fixture(scope="module")
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


def ref(page: str, what: str) -> str:
    for line in page.splitlines():
        if what in line:
            return line.rsplit("[ref=", 1)[1].rstrip("]")
    raise AssertionError(f"{what} not in\n{page}")


def test_lists_the_tools_with_their_hints(mcp_session: McpSession) -> None:
    tools = {tool.name: tool for tool in mcp_session.list_tools()}
    assert set(tools) == TOOLS
    for name in ("read_file", "grep", "git_status", "terminal_output", "list_workflows"):
        assert tools[name].annotations.read_only_hint is True, name
    assert tools["browser_click"].annotations.destructive_hint is True
    assert tools["run_workflow"].annotations.destructive_hint is False
    # Only a notebook run reaches past the workspace (the user's code may use the network).
    assert [n for n, t in tools.items() if t.annotations.open_world_hint] == ["notebook_run"]
    assert "approv" in tools["run_workflow"].description
    assert tools["read_file"].input_schema["required"] == ["path"]


def test_read_file_numbers_lines_and_pages(mcp_session: McpSession) -> None:
    text = mcp_session.text("read_file", path="src/app.py")
    assert text == "    1\tdef main():\n    2\t    print('hello terax')"
    page = mcp_session.text("read_file", path="notes/todo.txt", offset=10, limit=3)
    assert page.splitlines()[:3] == ["   10\titem 10", "   11\titem 11", "   12\titem 12"]
    assert "Read more with offset=13" in page


def test_read_file_refuses_secrets_and_paths_outside_the_workspace(
    mcp_session: McpSession, live: LiveTerax
) -> None:
    denied = mcp_session.error("read_file", path=".env")
    assert "never-read-me" not in denied
    assert "path_denied" in denied
    assert "HTTP 403" in denied
    outside = mcp_session.error("read_file", path="/etc/passwd")
    assert "root:" not in outside
    assert "HTTP 403" in outside
    # The message is the server's own.
    with live.api() as api, pytest.raises(TeraxAPIError) as caught:
        api.get("fs/file", path=".env")
    assert caught.value.message in denied


def test_keys_and_the_servers_token_are_redacted(mcp_session: McpSession, live: LiveTerax) -> None:
    key = "ghp_" + "A" * 36
    (live.root / "settings.py").write_text(f"GITHUB = '{key}'\nTOKEN = '{live.token}'\n")
    text = mcp_session.text("read_file", path="settings.py")
    found = mcp_session.text("grep", pattern="AAAA", path="settings.py")
    for answer in (text, found):
        assert key not in answer
        assert live.token not in answer
    assert "    2\tTOKEN = '[REDACTED]'" in text


def test_grep_finds_a_string(mcp_session: McpSession) -> None:
    text = mcp_session.text("grep", pattern="hello terax")
    assert "src/app.py:2:    print('hello terax')" in text
    assert ".env" not in mcp_session.text("grep", pattern="never-read-me")
    one_file = mcp_session.text("grep", pattern="item 2", path="notes/todo.txt")
    assert "notes/todo.txt:2:item 2" in one_file


def test_git_status_shows_a_modified_file(mcp_session: McpSession, live: LiveTerax) -> None:
    (live.root / "README.md").write_text("# Demo, changed\n")
    text = mcp_session.text("git_status")
    assert "on branch main" in text
    assert "Not staged:" in text
    assert "modified" in text
    assert "README.md" in text


def test_terminal_output_shows_a_command_run_in_terax(
    mcp_session: McpSession, live: LiveTerax
) -> None:
    assert "No terminal is open" in mcp_session.error("terminal_output")
    with live.api() as api:
        session = api.post("pty/sessions", {"name": "mcp-test"})
        try:
            api.post(f"pty/sessions/{session['id']}/run", {"command": "echo terax-$((40+2))"})
            text = mcp_session.text("terminal_output")
            assert f"Terminal {session['id']} (mcp-test" in text
            assert "terax-42" in text
            assert "$ echo terax-$((40+2)) (exit 0)" in text
            block = mcp_session.text("terminal_output", session="mcp-test", block=-1)
            assert "block 1: $ echo terax-$((40+2)) (exit 0)" in block
            assert "terax-42" in block
        finally:
            api.delete(f"pty/sessions/{session['id']}")


def test_browser_records_a_flow_saves_it_and_replays_it(
    mcp_session: McpSession, site: EvalSite
) -> None:
    page = mcp_session.text("browser_open", url=site.url("/search"))
    assert 'textbox "Query"' in page
    page = mcp_session.text(
        "browser_type", ref=ref(page, 'textbox "Query"'), text="apple", input="query"
    )
    page = mcp_session.text("browser_click", ref=ref(page, 'button "Search"'))
    page = mcp_session.text("browser_wait", title_contains="Results")
    assert 'heading "Results for apple"' in page
    assert "Results for apple" in mcp_session.text("browser_snapshot")
    saved = mcp_session.text(
        "browser_save_workflow",
        name="catalog-search",
        side_effect="read_only",
        description="search the catalog",
        postconditions=[{"kind": "text_contains", "value": "found"}],
    )
    assert "Saved workflow 'catalog-search'" in saved
    assert "inputs: query" in saved
    listed = mcp_session.text("list_workflows")
    assert "- catalog-search (read_only, version 1, 3 steps, inputs: query)" in listed
    replay = mcp_session.text("run_workflow", name="catalog-search", inputs={"query": "pear"})
    assert "Replayed 'catalog-search': 3 steps" in replay
    assert "0 model calls" in replay
    assert "input_missing" in mcp_session.error("run_workflow", name="catalog-search")


def test_run_workflow_pins_the_version_and_side_effect(
    mcp_session: McpSession, site: EvalSite
) -> None:
    page = mcp_session.text("browser_open", url=site.url("/search"))
    page = mcp_session.text(
        "browser_type", ref=ref(page, 'textbox "Query"'), text="apple", input="query"
    )
    mcp_session.text("browser_click", ref=ref(page, 'button "Search"'))
    mcp_session.text("browser_save_workflow", name="pinned-search", side_effect="read_only")
    inputs = {"query": "pear"}
    replay = mcp_session.text(
        "run_workflow",
        name="pinned-search",
        inputs=inputs,
        workflow_version=1,
        side_effect="read_only",
    )
    assert "Replayed 'pinned-search'" in replay
    wrong_version = mcp_session.error(
        "run_workflow", name="pinned-search", inputs=inputs, workflow_version=2
    )
    assert "version_mismatch" in wrong_version
    wrong_effect = mcp_session.error(
        "run_workflow", name="pinned-search", inputs=inputs, side_effect="mutating"
    )
    assert "side_effect_mismatch" in wrong_effect
    # A destructive workflow saved as read-only over MCP: refused, it stays destructive.
    page = mcp_session.text("browser_open", url=site.url("/items"))
    page = mcp_session.text("browser_click", ref=ref(page, 'link "Delete gamma draft"'))
    mcp_session.text("browser_click", ref=ref(page, 'button "Confirm delete"'))
    mcp_session.text("browser_save_workflow", name="delete-gamma", side_effect="destructive")
    site.reset()
    lowered = mcp_session.error(
        "browser_save_workflow", name="delete-gamma", side_effect="read_only", overwrite=True
    )
    assert "approval_required" in lowered
    assert "approval_required" in mcp_session.error("run_workflow", name="delete-gamma")
    assert site.deleted == []


def test_browser_refusals_come_back_as_tool_errors(mcp_session: McpSession, site: EvalSite) -> None:
    assert "HTTP 403" in mcp_session.error("browser_open", url="http://10.0.0.1/")
    assert "Give exactly one" in mcp_session.error("browser_wait")
    # Argument validation happens before any request.
    assert mcp_session.call("browser_click", ref="nope").is_error


def test_a_destructive_workflow_needs_an_approval_in_lab(
    mcp_session: McpSession, site: EvalSite
) -> None:
    page = mcp_session.text("browser_open", url=site.url("/items"))
    page = mcp_session.text("browser_click", ref=ref(page, 'link "Delete beta notes"'))
    mcp_session.text("browser_click", ref=ref(page, 'button "Confirm delete"'))
    assert site.deleted == ["beta notes"]
    mcp_session.text("browser_save_workflow", name="delete-beta", side_effect="destructive")
    site.reset()
    refused = mcp_session.error("run_workflow", name="delete-beta")
    assert "approval_required" in refused
    assert "HTTP 409" in refused
    assert "Terax AI panel" in refused
    assert site.deleted == []


def test_print_config_finds_the_server_from_its_runtime_file(live: LiveTerax) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "terax_jupyter", "mcp", "--print-config"],
        cwd=live.root,
        env=live.environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "claude mcp add terax -- jupyter terax mcp" in done.stdout
    assert "[mcp_servers.terax]" in done.stdout
    assert '"mcpServers"' in done.stdout
    assert f"Terax server: {live.url} (found via running server" in done.stdout
    assert f"root {live.root}" in done.stdout
    assert live.token not in done.stdout + done.stderr


def test_print_config_with_no_server_says_what_to_pass(
    live: LiveTerax, tmp_path_factory: pytest.TempPathFactory
) -> None:
    empty = tmp_path_factory.mktemp("empty-runtime")
    done = subprocess.run(
        [sys.executable, "-m", "terax_jupyter", "mcp", "--print-config"],
        cwd=live.root,
        env=live.environment(JUPYTER_RUNTIME_DIR=str(empty)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "No running Terax server found" in done.stderr
    assert "start one with `jupyter terax`" in done.stderr
    assert "--url and --token / set TERAX_URL and TERAX_TOKEN" in done.stderr


@pytest.mark.parametrize("right", [True, False], ids=["token", "wrong-token"])
def test_print_config_with_terax_url_and_token(
    live: LiveTerax, tmp_path_factory: pytest.TempPathFactory, right: bool
) -> None:
    token = live.token if right else "not-the-token"
    done = subprocess.run(
        [sys.executable, "-m", "terax_jupyter", "mcp", "--print-config"],
        cwd=live.home,
        env=live.environment(
            JUPYTER_RUNTIME_DIR=str(tmp_path_factory.mktemp("no-runtime")),
            TERAX_URL=live.url + "lab?reset",
            TERAX_TOKEN=token,
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert token not in done.stdout + done.stderr
    if right:
        assert done.returncode == 0, done.stderr
        assert f"Terax server: {live.url} (found via TERAX_URL" in done.stdout
    else:
        assert done.returncode == 1
        assert f"{live.url} (TERAX_URL): Forbidden: the server refused the token" in done.stderr


def test_without_a_server_the_tools_say_what_to_pass(
    live: LiveTerax, tmp_path_factory: pytest.TempPathFactory
) -> None:
    empty = tmp_path_factory.mktemp("no-server-runtime")
    with (live.home / "mcp-no-server.log").open("w") as errlog:
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "terax_jupyter", "mcp"],
            env=live.environment(JUPYTER_RUNTIME_DIR=str(empty)),
            cwd=str(live.root),
        )
        session = McpSession(parameters, errlog).start()
        try:
            error = session.error("read_file", path="README.md")
        finally:
            session.close()
    assert "No running Terax server found" in error
    assert "start one with `jupyter terax`" in error


def test_sigterm_closes_the_tab_and_ends_as_the_signal_would(
    live: LiveTerax, site: EvalSite
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "terax_jupyter", "mcp"],
        cwd=live.root,
        env=live.environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    stdin, stdout = process.stdin, process.stdout
    assert stdin is not None
    assert stdout is not None

    def ask(message: dict[str, Any]) -> None:
        stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        stdin.flush()

    try:
        ask(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        assert json.loads(stdout.readline())["id"] == 1
        ask({"method": "notifications/initialized"})
        ask(
            {
                "id": 2,
                "method": "tools/call",
                "params": {"name": "browser_open", "arguments": {"url": site.url("/search")}},
            }
        )
        assert "Search the catalog" in stdout.readline()
        tab = f"mcp-{process.pid}"
        with live.api() as api:
            assert tab in [t["id"] for t in api.get("browser/tabs")["tabs"]]
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == -signal.SIGTERM
            assert tab not in [t["id"] for t in api.get("browser/tabs")["tabs"]]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


# Last: it ends the module's MCP session.
def test_the_mcp_server_closes_its_tab_and_never_logs_the_token(
    mcp_session: McpSession, live: LiveTerax
) -> None:
    with live.api() as api:
        assert [t["id"] for t in api.get("browser/tabs")["tabs"]] != []
        mcp_session.close()
        assert api.get("browser/tabs")["tabs"] == []
    log = (live.home / "mcp.log").read_text()
    assert "Using the Terax server at" in log
    assert live.token not in log
