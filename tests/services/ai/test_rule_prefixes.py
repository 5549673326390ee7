"""A command prefix of a rule is literal words: a prefix that reads like a pattern
(``pytest*``) is refused with a clear error and nothing is saved, since it would never match."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security.rules import matching_rule, validate_rules
from terax_jupyter.services.ai.agents import ALL_TOOLS
from terax_jupyter.services.ai.tools.base import Proposal

if TYPE_CHECKING:
    from pathlib import Path

    from tests.services.ai.conftest import Api


def _rule(prefix: str) -> list[dict[str, str]]:
    return validate_rules([{"tool": "bash_run", "command_prefix": prefix}], set(ALL_TOOLS))


@pytest.mark.parametrize(
    ("prefix", "word"),
    [
        ("pytest*", "pytest*"),
        ("npm run test:?", "test:?"),
        ("ls [ab]", "[ab]"),
        ("echo $HOME", "$HOME"),
        ("cat ~/notes", "~/notes"),
        ("make {a,b}", "{a,b}"),
    ],
)
def test_a_prefix_that_reads_like_a_pattern_is_refused(prefix: str, word: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        _rule(prefix)
    assert caught.value.reason == "invalid_parameter"
    message = caught.value.message
    assert repr(word) in message
    assert "literal whole words" in message
    assert "nothing was saved" in message


def test_unbalanced_quotes_in_a_prefix_are_refused() -> None:
    with pytest.raises(InvalidRequest, match="unbalanced quotes"):
        _rule("git commit -m 'oops")


@pytest.mark.parametrize(
    ("prefix", "command"),
    [
        ("pytest", "pytest -q tests"),
        ("npm run test:unit", "npm run test:unit"),
        ("ls '*'", "ls '*'"),  # quoted: the star is a literal word, and matches one
        ("git log", "git log --oneline"),
    ],
)
def test_literal_prefixes_are_accepted_and_match(prefix: str, command: str) -> None:
    rules = _rule(prefix)
    proposal = Proposal(
        tool="bash_run",
        kind="command",
        summary="x",
        payload={},
        command=command,  # type: ignore[arg-type]
    )
    assert matching_rule(rules, proposal) == rules[0]


async def test_a_pattern_prefix_over_rest_saves_nothing(
    terax_api: Api, jp_data_dir: Path, model_stub: Any
) -> None:
    session = await terax_api("ai/sessions", method="POST", body={})
    path = f"ai/sessions/{session['id']}/rules"
    kept = [{"tool": "bash_run", "command_prefix": "pytest"}]
    await terax_api(path, method="PUT", body={"rules": kept})
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(
            path,
            method="PUT",
            body={"rules": [{"tool": "bash_run", "command_prefix": "pytest*"}]},
        )
    assert caught.value.code == 400
    error = error_of(caught.value)
    assert error["reason"] == "invalid_parameter"
    assert "'pytest*'" in error["message"]
    assert (await terax_api(f"ai/sessions/{session['id']}"))["rules"] == kept
    audit = (jp_data_dir / "terax" / "audit.jsonl").read_text()
    saved = [json.loads(line) for line in audit.splitlines()]
    assert [e["rules"] for e in saved if e["action"] == "ai.rules.set"] == [kept]
