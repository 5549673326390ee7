"""Notebook edits and runs over ``jupyter terax mcp`` against a live Terax server: each call is
approved (or denied, or left unanswered) by the user in the server's session for the external
agent, exactly as the built-in agent's calls are, and nothing happens before that."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

if TYPE_CHECKING:
    from live_terax import LiveTerax, McpSession

pytestmark = pytest.mark.live

NOTEBOOK = "changes.ipynb"


def short_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:12]


@pytest.fixture
def notebook(live: LiveTerax) -> str:
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for cell_id, source in (("one", "x = 20"), ("two", "print('x is', x * 2)")):
        cell = nbformat.v4.new_code_cell(source)
        cell.id = cell_id
        book.cells.append(cell)
    (live.root / NOTEBOOK).write_text(nbformat.writes(book))
    return NOTEBOOK


def external_session(live: LiveTerax) -> dict[str, Any] | None:
    sessions = live.api().get("ai/sessions")["sessions"]
    return next((s for s in sessions if s["title"].startswith("External agent: ")), None)


class User:
    """Answers the next approval of the external agent's session from another thread, as
    the person at the AI panel would."""

    def __init__(self, live: LiveTerax, decision: dict[str, Any]) -> None:
        self.live = live
        self.decision = decision
        self.seen: list[dict[str, Any]] = []
        self._thread = threading.Thread(target=self._answer, daemon=True)

    def __enter__(self) -> User:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(timeout=60)

    def _answer(self) -> None:
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline:
            session = external_session(self.live)
            if session is not None:
                found = self.live.api().get(f"ai/sessions/{session['id']}")
                if found["pending_approvals"]:
                    approval = found["pending_approvals"][0]
                    self.seen.append(approval)
                    self.live.api().post(f"ai/approvals/{approval['id']}", self.decision)
                    return
            time.sleep(0.2)


def ops_for_first_cell() -> list[dict[str, Any]]:
    return [
        {"op": "replace", "id": "one", "expected_hash": short_hash("x = 20"), "source": "x = 21"}
    ]


def test_the_change_tools_are_listed_and_say_they_need_approval(mcp_session: McpSession) -> None:
    tools = {tool.name: tool for tool in mcp_session.list_tools()}
    for name in ("notebook_edit", "notebook_create", "notebook_run", "notebook_restart"):
        assert tools[name].annotations.read_only_hint is False, name
        assert "approves it in the Terax AI panel" in tools[name].description, name
    assert tools["notebook_run_status"].annotations.read_only_hint is True
    assert tools["notebook_edit"].input_schema["required"] == ["path", "ops"]


def test_an_edit_waits_for_the_users_approval(
    mcp_session: McpSession, live: LiveTerax, notebook: str
) -> None:
    with User(live, {"decision": "approve"}) as user:
        text = mcp_session.text("notebook_edit", path=notebook, ops=ops_for_first_cell())
    [approval] = user.seen
    assert approval["tool"] == "notebook_edit"
    assert "x = 21" in json.dumps(approval["proposal"])  # the card shows the change
    assert text.startswith(f"Applied 1 cell operations to {notebook}")
    book = nbformat.read(live.root / notebook, as_version=4)
    assert [cell.source for cell in book.cells] == ["x = 21", "print('x is', x * 2)"]
    session = external_session(live)
    assert session is not None
    assert session["title"] == "External agent: mcp"  # the client's name
    calls = live.api().get(f"ai/sessions/{session['id']}/tool-calls")["tool_calls"]
    assert [(c["name"], c["status"]) for c in calls][-1] == ("notebook_edit", "done")


def test_a_denied_edit_changes_nothing_and_says_so(
    mcp_session: McpSession, live: LiveTerax, notebook: str
) -> None:
    before = (live.root / notebook).read_bytes()
    with User(live, {"decision": "deny", "message": "not that cell"}):
        error = mcp_session.error("notebook_edit", path=notebook, ops=ops_for_first_cell())
    assert "The user denied this notebook_edit call" in error
    assert (live.root / notebook).read_bytes() == before


def test_an_unanswered_call_is_cancelled_and_does_nothing(
    mcp_session: McpSession, live: LiveTerax, notebook: str
) -> None:
    before = (live.root / notebook).read_bytes()
    begun = time.monotonic()
    error = mcp_session.error("notebook_edit", path=notebook, ops=ops_for_first_cell(), wait=5)
    assert time.monotonic() - begun < 30
    assert "was not answered within 5 s in the Terax AI panel" in error
    assert (live.root / notebook).read_bytes() == before
    session = external_session(live)
    assert session is not None
    found = live.api().get(f"ai/sessions/{session['id']}")
    assert not found["running"]
    assert not found["pending_approvals"]  # the card went with the cancelled call
    # The session takes the next call at once.
    with User(live, {"decision": "approve"}):
        mcp_session.text("notebook_edit", path=notebook, ops=ops_for_first_cell())


def test_a_stale_hash_is_refused_before_anyone_is_asked(
    mcp_session: McpSession, live: LiveTerax, notebook: str
) -> None:
    stale = [{"op": "delete", "id": "two", "expected_hash": "000000000000"}]
    error = mcp_session.error("notebook_edit", path=notebook, ops=stale)
    assert "hash" in error
    session = external_session(live)
    assert session is not None
    assert not live.api().get(f"ai/sessions/{session['id']}")["pending_approvals"]


def test_a_run_is_approved_then_followed_to_its_output(
    mcp_session: McpSession, live: LiveTerax, notebook: str
) -> None:
    with User(live, {"decision": "approve"}) as user:
        started = mcp_session.text("notebook_run", path=notebook, ids=["one", "two"], wait=40)
    [approval] = user.seen
    assert "print('x is', x * 2)" in json.dumps(approval["proposal"])  # the exact sources
    match = re.search(r"Run ([0-9a-f]{16}) of ", started)
    assert match, started
    handle = match.group(1)
    status = mcp_session.text("notebook_run_status", handle=handle, wait=40)
    assert "x is 40" in started + status
    assert "untrusted-data-" in started + status


def test_a_runs_images_are_pointed_to_notebook_read(
    mcp_session: McpSession, live: LiveTerax
) -> None:
    from tests.services.ai.tools.test_notebook_read import tiny_png

    encoded = base64.b64encode(tiny_png(32, 16)).decode()
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    cell = nbformat.v4.new_code_cell(
        "import base64\nfrom IPython.display import Image, display\n"
        f"display(Image(data=base64.b64decode({encoded!r})))"
    )
    cell.id = "plot"
    book.cells.append(cell)
    (live.root / "plot.ipynb").write_text(nbformat.writes(book))
    with User(live, {"decision": "approve"}):
        started = mcp_session.text("notebook_run", path="plot.ipynb", ids=["plot"], wait=40)
    match = re.search(r"Run ([0-9a-f]{16}) of ", started)
    assert match, started
    status = started
    if "image/png" not in status:
        status += mcp_session.text("notebook_run_status", handle=match.group(1), wait=40)
    assert "image/png, " in status
    assert "read the cell with notebook_read to get them as images" in status
