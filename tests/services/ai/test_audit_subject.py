"""What the audit names of a stored proposal: each tool's subject, and never a failure."""

from __future__ import annotations

from terax_jupyter.services.ai.toolbox import Toolbox


def test_a_stored_proposal_names_its_subject_and_a_malformed_one_does_not_fail() -> None:
    toolbox = Toolbox()
    stored = {
        "tool": "notebook_restart",
        "kind": "kernel",
        "summary": "Restart",
        "payload": {"path": "a.ipynb", "kernel": {"id": "k1", "name": "python3", "state": "idle"}},
        "path": "a.ipynb",
    }
    assert toolbox.audit_subject("notebook_restart", stored) == {
        "path": "a.ipynb",
        "kernel": {"id": "k1", "name": "python3", "incarnation": None},
    }
    assert toolbox.audit_subject("write_file", {**stored, "tool": "write_file"}) == {
        "path": "a.ipynb"
    }
    assert toolbox.audit_subject("bash_run", {**stored, "path": None}) == {}
    assert toolbox.audit_subject("notebook_run", {"tool": "notebook_run"}) == {"unreadable": True}
    assert toolbox.audit_subject("no_such_tool", stored) == {}
