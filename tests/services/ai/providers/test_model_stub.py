"""The model stub itself: its script, control over HTTP, use from another process, shutdown."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from terax_jupyter.testing import model_stub as turns
from terax_jupyter.testing.model_stub import ModelStub, Turn

from .conftest import collect, text_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from terax_jupyter.services.ai.providers.base import Provider


def post(url: str, payload: Any) -> Any:
    request = urllib.request.Request(
        url, json.dumps(payload).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.loads(answer.read())


def test_turns_round_trip_through_json() -> None:
    script = [
        turns.text("a", chunk=2, input_tokens=5, output_tokens=6, cached_tokens=1),
        turns.tool_calls([("grep", {"pattern": "x"}, "c1"), ("bad", "{oops")], text="t"),
        turns.error(429, headers={"retry-after": "1"}),
        turns.cut(turns.slow(turns.reasoning("why", "because"), 0.1), 3),
        turns.error_event("Overloaded"),
        turns.raw(["data: [DONE]\n\n", {"choices": []}]),
    ]
    assert [Turn.from_json(json.loads(json.dumps(t.to_json()))) for t in script] == script


def test_a_sync_client_and_the_control_endpoints() -> None:
    with ModelStub(models=["m1"], require_key="sk-stub-required-key-01") as stub:
        assert stub.url == f"http://127.0.0.1:{stub.port}/v1"
        assert post(f"{stub.origin}/_stub/script", {"turns": [turns.text("hi").to_json()]}) == {
            "pending": 1
        }
        post(f"{stub.origin}/_stub/script", {"turns": [turns.text("2").to_json()], "append": True})
        assert stub.pending == 2
        with httpx.Client(base_url=stub.url, timeout=5) as client:
            refused = client.get("/models", headers={"Authorization": "Bearer sk-wrong"})
            assert refused.status_code == 401
            models = client.get("/models", headers={"x-api-key": "sk-stub-required-key-01"})
            assert [m["id"] for m in models.json()["data"]] == ["m1"]
            with client.stream(
                "POST",
                "/chat/completions",
                json={"model": "m1", "messages": [{"role": "user", "content": "x"}]},
                headers={"Authorization": "Bearer sk-stub-required-key-01"},
            ) as answer:
                assert answer.headers["content-type"].startswith("text/event-stream")
                assert answer.headers["transfer-encoding"] == "chunked"
                lines = [line for line in answer.iter_lines() if line]
        assert lines[-1] == "data: [DONE]"
        assert '"content": "hi"' in "".join(lines)
        seen = json.loads(urllib.request.urlopen(f"{stub.origin}/_stub/requests").read())
        assert [r["path"] for r in seen] == ["/v1/models", "/v1/models", "/v1/chat/completions"]
        assert seen[2]["body"]["model"] == "m1"
        assert stub.requests[1].headers["x-api-key"] == "sk-stub-required-key-01"
        post(f"{stub.origin}/_stub/reset", {})
        assert (stub.pending, stub.requests) == (0, [])


@pytest.fixture
def far_stub() -> Iterator[str]:
    """A stub started with ``python -m`` in a process of its own; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "terax_jupyter.testing.model_stub", "--model", "far"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_a_stub_in_another_process(far_stub: str, connect: Callable[..., Provider]) -> None:
    assert far_stub.startswith("http://127.0.0.1:")
    origin = far_stub.removesuffix("/v1")
    async with httpx.AsyncClient() as client:
        script = {"turns": [turns.text("from afar").to_json()]}
        assert (await client.post(f"{origin}/_stub/script", json=script)).json() == {"pending": 1}
    provider = connect("anthropic", base_url=far_stub)
    assert text_of(await collect(provider)) == "from afar"
    assert [m["id"] for m in await provider.list_models()] == ["far"]


def test_stop_ends_slow_streams_and_idle_connections_promptly() -> None:
    stub = ModelStub().start()
    stub.script([turns.slow(turns.text("a" * 50, chunk=1), 5.0)])
    client = httpx.Client(timeout=30)
    received: list[str] = []
    problems: list[BaseException] = []

    def read() -> None:
        try:
            with client.stream("POST", f"{stub.url}/chat/completions", json={}) as answer:
                received.extend(answer.iter_lines())
        except httpx.HTTPError as error:
            problems.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 5
    while not stub.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    stub.stop()
    reader.join(timeout=5)
    client.close()
    assert not reader.is_alive()
    assert time.monotonic() - started < 2
    assert problems  # the stream broke off: it did not finish
    with pytest.raises(RuntimeError):
        _ = stub.url


def test_a_profile_is_chosen_by_name_and_reset_forgets_what_was_streamed() -> None:
    with pytest.raises(ValueError, match="no stub profile"):
        ModelStub(profile="gemini-ish")
    with ModelStub() as stub:
        post(f"{stub.origin}/_stub/script", {"turns": [], "profile": "gemini"})
        assert stub.profile == "gemini"
        refused = {"turns": [turns.text("x").to_json()], "profile": "nope"}
        bad = httpx.post(f"{stub.origin}/_stub/script", json=refused)
        assert bad.status_code == 400
        assert stub.profile == "gemini"  # a refused change changes nothing
        assert stub.pending == 0
        stub.script([turns.tool_call("read_file", {"path": "a"})])
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        with httpx.stream("POST", f"{stub.url}/chat/completions", json=body) as answer:
            streamed = answer.read().decode()
        assert "thought_signature" in streamed
        assert len(stub.memory.signatures) == 1
        assert next(iter(stub.memory.signatures)) in streamed
        stub.reset()
        assert stub.memory.signatures == set()
