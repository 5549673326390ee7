"""The agent's commands and the user's keys, end to end: a real server, real bash, the model
stub receiving what the model would read. A command that names the key store is refused
without asking; a key the command prints encoded reaches the model redacted."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run, tool_results

if TYPE_CHECKING:
    from pathlib import Path

    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

USER_KEY = "sk-proj-users-own-key-4e5f6a7b8c9d0e1f2a3b"


def windows(text: str, width: int = 10) -> list[str]:
    return [text[i : i + width] for i in range(len(text) - width + 1)]


async def test_commands_that_name_the_key_store_are_refused_without_asking(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_data_dir: Path
) -> None:
    await terax_api("secrets/OPENAI_API_KEY", method="PUT", body={"value": USER_KEY})
    store = jp_data_dir / "terax" / "secrets.json"
    assert USER_KEY in store.read_text()  # the file the agent must not read
    model_stub.script(
        [
            turns.tool_calls(
                [
                    ("bash_run", {"command": f"base64 -w0 {store}"}),
                    ("bash_run", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ"}),
                    ("bash_background", {"command": f"cd {store.parent} && cat *.json"}),
                ]
            ),
            turns.text("Refused."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Find the API key")
    await events.until("finish")
    assert not events.of("approval_requested")
    finished = events.of("tool_call_finished")
    assert [e["data"]["reason"] for e in finished] == ["key_store_access"] * 3
    sent = json.dumps(model_stub.requests[1].body)
    assert USER_KEY not in sent
    assert base64.b64encode(store.read_bytes()).decode()[:40] not in sent


async def test_a_key_printed_in_base64_or_hex_reaches_the_model_redacted(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    await terax_api("secrets/OPENAI_API_KEY", method="PUT", body={"value": USER_KEY})
    # The key where the key-store guard cannot see it: a file the user pasted it into.
    notes = jp_root_dir / "notes.txt"
    notes.write_text(f"todo: rotate {USER_KEY} next week\n")
    model_stub.script(
        [
            turns.tool_call(
                "bash_run", {"command": "base64 notes.txt; xxd -p notes.txt; base64 -w0 notes.txt"}
            ),
            turns.text("Done."),
        ]
    )
    session_id = await new_session(terax_api)
    events = await run(terax_api, open_events, session_id, "Encode my notes")
    approval = (await events.until("approval_requested"))["approval"]
    await terax_api(f"ai/approvals/{approval['id']}", method="POST", body={"decision": "approve"})
    await events.until("finish")
    content = tool_results(model_stub, 1)[0]["content"]
    assert "[REDACTED]" in content
    data = notes.read_bytes()
    offset = data.index(USER_KEY.encode())
    encoded = base64.b64encode(data).decode()
    key_b64 = encoded[-(-8 * offset // 6) : (8 * (offset + len(USER_KEY))) // 6]
    key_hex = USER_KEY.encode().hex()
    flat = content.replace("\n", "")
    for piece in [*windows(key_b64), *windows(key_hex, 16)]:
        assert piece not in flat, piece
    assert encoded[:8] in flat  # the rest of the file is still there for the model
    # Nor in what the store keeps, or what the panel was sent.
    messages = json.dumps(await terax_api(f"ai/sessions/{session_id}/messages"))
    events_text = json.dumps(events.seen)
    for piece in windows(key_b64):
        assert piece not in messages.replace("\\n", "")
        assert piece not in events_text.replace("\\n", "")
