"""The %%terax cell magic: options, the current session, the result variable."""

from __future__ import annotations

from typing import Any

import pytest

import terax_jupyter.notebook as terax
from terax_jupyter.notebook import magic


class FakeAgent:
    def __init__(self, session: Any = None, **fields: Any) -> None:
        self.session = session
        self.fields = fields
        self.policy = fields.get("policy")
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def ask(self, prompt: str, **options: Any) -> str:
        self.asked.append((prompt, options))
        return f"answer to {prompt}"


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[FakeAgent]:
    agents: list[FakeAgent] = []

    def agent(**fields: Any) -> FakeAgent:
        made = FakeAgent(**fields)
        agents.append(made)
        terax.set_current(made)  # type: ignore[arg-type]
        return made

    monkeypatch.setattr(terax, "agent", agent)
    monkeypatch.setattr(terax, "_current", None)
    return agents


def test_the_cell_goes_to_a_new_session_then_to_the_same_one(made: list[FakeAgent]) -> None:
    namespace: dict[str, Any] = {}
    magic.terax_cell("", "  What is this?\n", namespace)
    magic.terax_cell("--quiet --timeout 5", "And that?", namespace)
    assert len(made) == 1
    assert made[0].asked == [
        ("What is this?", {"display": True, "timeout": None}),
        ("And that?", {"display": False, "timeout": 5.0}),
    ]
    assert namespace["_terax"] == "answer to And that?"


def test_options_choose_the_session_model_and_policy(made: list[FakeAgent]) -> None:
    magic.terax_cell("--session abc --model stub/tiny --policy deny", "Go", {})
    assert made[0].fields == {"model": "stub/tiny", "agent": None, "policy": "deny"}
    assert made[0].session == "abc"
    magic.terax_cell("--agent ask", "Go", {})  # same session, keeps its policy
    assert made[1].session is made[0]
    assert made[1].fields["policy"] == "deny"


def test_bad_options_and_empty_cells_are_explained(made: list[FakeAgent]) -> None:
    with pytest.raises(ValueError, match="unrecognized arguments"):
        magic.terax_cell("--frobnicate", "Go", {})
    with pytest.raises(ValueError, match="empty"):
        magic.terax_cell("", "  \n", {})
