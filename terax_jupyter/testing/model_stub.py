"""A real model server on 127.0.0.1 that streams scripted OpenAI and Anthropic answers.

``ModelStub`` serves ``POST /v1/chat/completions`` (OpenAI server-sent events), ``POST
/v1/messages`` (Anthropic events), ``POST /v1/completions`` (fill-in-the-middle, one JSON
answer of the turn's text) and ``GET /v1/models`` from a background thread, so sync
tests, a Jupyter server in the same process and other processes can all use it. Answers
come from a FIFO script of turns (``stub.script([...])``, ``stub.add(turn)``, or ``POST
/_stub/script`` from another process); with the script empty it echoes the last user
message, so benchmarks can loop. ``profile`` (``ModelStub(profile="gemini")``) makes it
refuse requests the way that provider does (``provider_profiles``). Run it alone with
``python -m terax_jupyter.testing.model_stub``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import itertools
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, NamedTuple

from terax_jupyter.testing import provider_profiles

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from types import TracebackType

__all__ = [
    "ModelStub",
    "Received",
    "ScriptedCall",
    "Turn",
    "cut",
    "error",
    "error_event",
    "raw",
    "reasoning",
    "slow",
    "text",
    "tool_call",
    "tool_calls",
]

_ids = itertools.count(1)


# --- the script ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call a turn makes. ``arguments`` as a string is sent verbatim (malformed JSON)."""

    name: str
    arguments: dict[str, Any] | str
    id: str = ""


@dataclass(frozen=True)
class Turn:
    """One scripted answer. Usage numbers: ``output_tokens`` None counts about one token per
    four characters of the answer."""

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    chunk: int = 16
    input_tokens: int = 12
    output_tokens: int | None = None
    cached_tokens: int = 0
    finish: str | None = None  # "length" to say the answer was cut by max tokens
    status: int = 200
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()
    delay_per_chunk: float = 0.0
    cut_after: int | None = None  # close the connection after this many events
    stream_error: dict[str, Any] | None = None  # an error event after the first event
    raw: tuple[str, ...] | None = None  # server-sent events sent as they are, for quirks

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["headers"] = dict(self.headers)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in fields}
        values["tool_calls"] = tuple(
            ScriptedCall(c["name"], c.get("arguments", {}), c.get("id", ""))
            for c in values.get("tool_calls") or ()
        )
        values["headers"] = tuple((values.get("headers") or {}).items())
        if values.get("raw") is not None:
            values["raw"] = tuple(values["raw"])
        return cls(**values)

    @property
    def usage(self) -> tuple[int, int, int]:
        output = self.output_tokens
        if output is None:
            size = len(self.text) + len(self.reasoning)
            size += sum(len(_arguments_text(c)) + len(c.name) for c in self.tool_calls)
            output = max(1, size // 4)
        return self.input_tokens, output, self.cached_tokens


def text(
    content: str,
    *,
    chunk: int = 16,
    input_tokens: int = 12,
    output_tokens: int | None = None,
    cached_tokens: int = 0,
    finish: str | None = None,
) -> Turn:
    """An answer of plain text, streamed ``chunk`` characters at a time."""
    return Turn(
        text=content,
        chunk=chunk,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_tokens=cached_tokens,
        finish=finish,
    )


def reasoning(thought: str, answer: str = "", *, chunk: int = 16, **usage: int) -> Turn:
    """Reasoning (``reasoning_content`` / a thinking block), then the answer's text."""
    return Turn(text=answer, reasoning=thought, chunk=chunk, **usage)  # type: ignore[arg-type]


def tool_call(
    name: str,
    args: dict[str, Any] | str,
    id: str | None = None,
    *,
    text: str = "",
    chunk: int = 16,
    **usage: int,
) -> Turn:
    """One tool call (arguments streamed in ``chunk``-character fragments), after ``text``."""
    return tool_calls([ScriptedCall(name, args, id or "")], text=text, chunk=chunk, **usage)


def tool_calls(
    calls: Iterable[ScriptedCall | tuple[Any, ...] | dict[str, Any]],
    *,
    text: str = "",
    chunk: int = 16,
    **usage: int,
) -> Turn:
    """Parallel tool calls, each a ``ScriptedCall``, ``(name, args[, id])`` or a dict."""
    scripted = []
    for call in calls:
        if isinstance(call, ScriptedCall):
            scripted.append(call)
        elif isinstance(call, dict):
            scripted.append(
                ScriptedCall(call["name"], call.get("arguments", {}), call.get("id", ""))
            )
        else:
            scripted.append(ScriptedCall(call[0], call[1], call[2] if len(call) > 2 else ""))
    return Turn(text=text, tool_calls=tuple(scripted), chunk=chunk, **usage)  # type: ignore[arg-type]


def error(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Turn:
    """An error answer; ``body`` (JSON-able, or text) defaults to the provider's own shape.
    With a status below 400, ``body`` is answered instead of a stream."""
    return Turn(status=status, body=body, headers=tuple((headers or {}).items()))


def error_event(message: str, *, kind: str = "overloaded_error", code: int = 529) -> Turn:
    """An answer that starts, then fails with an error event (Anthropic ``event: error``;
    an ``{"error": ...}`` chunk for OpenAI, as OpenRouter sends)."""
    return Turn(text="never sent", stream_error={"type": kind, "message": message, "code": code})


def raw(events: Iterable[str | dict[str, Any]]) -> Turn:
    """An answer of exactly these server-sent events (``"data: {...}\\n\\n"``), for wire
    format quirks; an event that is a dict is sent as ``data: <its JSON>``."""
    return Turn(
        raw=tuple(e if isinstance(e, str) else f"data: {json.dumps(e)}\n\n" for e in events)
    )


def slow(turn: Turn, delay_per_chunk: float) -> Turn:
    """``turn`` with a pause before every event but the first (before the whole answer of a
    ``/v1/completions`` request)."""
    return dataclasses.replace(turn, delay_per_chunk=delay_per_chunk)


def cut(turn: Turn, after_chunks: int) -> Turn:
    """``turn`` whose connection closes after ``after_chunks`` events, without an end marker."""
    return dataclasses.replace(turn, cut_after=after_chunks)


def _arguments_text(call: ScriptedCall) -> str:
    return call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)


def _pieces(value: str, size: int) -> list[str]:
    size = max(1, size)
    return [value[i : i + size] for i in range(0, len(value), size)]


# --- wire formats ----------------------------------------------------------------------------


def _call_ids(turn: Turn, prefix: str) -> list[str]:
    return [c.id or f"{prefix}{next(_ids):06d}" for c in turn.tool_calls]


def openai_events(turn: Turn, model: str) -> list[str]:
    """The server-sent events of ``turn`` as chat.completion.chunk objects."""
    ident = f"chatcmpl-stub{next(_ids)}"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": ident,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    payloads: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    if turn.stream_error is not None:
        payloads.append({"error": turn.stream_error})
    payloads += [chunk({"reasoning_content": p}) for p in _pieces(turn.reasoning, turn.chunk)]
    payloads += [chunk({"content": p}) for p in _pieces(turn.text, turn.chunk)]
    for index, (call, call_id) in enumerate(
        zip(turn.tool_calls, _call_ids(turn, "call_"), strict=True)
    ):
        start = {"index": index, "id": call_id, "type": "function"}
        start["function"] = {"name": call.name, "arguments": ""}
        payloads.append(chunk({"tool_calls": [start]}))
        for piece in _pieces(_arguments_text(call), turn.chunk):
            fragment = {"index": index, "function": {"arguments": piece}}
            payloads.append(chunk({"tool_calls": [fragment]}))
    finish = turn.finish or ("tool_calls" if turn.tool_calls else "stop")
    payloads.append(chunk({}, finish))
    prompt, completion, cached = turn.usage
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    payloads.append({**chunk({}), "choices": [], "usage": usage})
    return [f"data: {json.dumps(p)}\n\n" for p in payloads] + ["data: [DONE]\n\n"]


def anthropic_events(turn: Turn, model: str) -> list[str]:
    """The server-sent events of ``turn`` as Messages stream events."""
    prompt, completion, cached = turn.usage
    events: list[tuple[str, dict[str, Any]]] = []
    message: dict[str, Any] = {
        "id": f"msg_stub{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt - cached,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 0,
            "output_tokens": 1,
        },
    }
    events.append(("message_start", {"type": "message_start", "message": message}))
    if turn.stream_error is not None:
        events.append(("error", {"type": "error", "error": turn.stream_error}))
    events.append(("ping", {"type": "ping"}))
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if turn.reasoning:
        thinking = [
            {"type": "thinking_delta", "thinking": p} for p in _pieces(turn.reasoning, turn.chunk)
        ]
        thinking.append({"type": "signature_delta", "signature": "c3R1Yg=="})
        block({"type": "thinking", "thinking": ""}, thinking)
    if turn.text:
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(turn.text, turn.chunk)]
        block({"type": "text", "text": ""}, deltas)
    for call, call_id in zip(turn.tool_calls, _call_ids(turn, "toolu_"), strict=True):
        deltas = [
            {"type": "input_json_delta", "partial_json": p}
            for p in _pieces(_arguments_text(call), turn.chunk)
        ]
        block({"type": "tool_use", "id": call_id, "name": call.name, "input": {}}, deltas)
    if turn.finish == "length":
        stop = "max_tokens"
    else:
        stop = "tool_use" if turn.tool_calls else (turn.finish or "end_turn")
    delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
    delta["usage"] = {"output_tokens": completion}
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events]


def _error_body(status: int, anthropic: bool) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    kind = kinds.get(status, "api_error")
    message = f"stub error {status}"
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


def _has_empty_message(body: dict[str, Any], anthropic: bool) -> bool:
    """Whether a chat request holds a message a strict server refuses: an assistant message
    with neither text nor tool calls (Mistral), or any message of no content (Anthropic)."""
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        empty = content is None or (isinstance(content, (str, list)) and not content)
        if isinstance(content, str) and not content.strip():
            empty = True
        if anthropic and empty:
            return True
        if message.get("role") == "assistant" and empty and not message.get("tool_calls"):
            return True
    return False


def _empty_message_error(anthropic: bool) -> dict[str, Any]:
    if anthropic:
        message = "messages: all messages must have non-empty content"
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    # Mistral's words for it.
    return {
        "object": "error",
        "message": "Assistant message must have either content or tool_calls, but not none.",
        "type": "invalid_request_message_order",
        "param": None,
        "code": "3230",
    }


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat request (what a test asked the model)."""
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [
                b.get("text") if b.get("type") == "text" else b.get("content")
                for b in content
                if isinstance(b, dict)
            ]
            return " ".join(p for p in parts if isinstance(p, str))
    return ""


# --- the server ------------------------------------------------------------------------------


class Received(NamedTuple):
    """One request the stub received: its path, headers (lower-case names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], stub: ModelStub) -> None:
        self.stub = stub
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a closed pool, a test that timed out) is not an error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # Streamed events go out one small write at a time: without this each waits for the
    # client's delayed ACK (about 40 ms), which swamps every timing.
    disable_nagle_algorithm = True
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 60  # an idle keep-alive connection ends after this

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read stub.requests instead

    def do_GET(self) -> None:
        self._dispatch(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self._json(400, {"error": {"message": "the body is not JSON"}})
            return
        self._dispatch(body)

    def _dispatch(self, body: Any) -> None:
        stub = self.server.stub
        path = self.path.split("?", 1)[0]
        try:
            if path.startswith("/_stub/"):
                self._control(path, body)
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            stub._record(Received(self.path, headers, body))
            anthropic = path == "/v1/messages"
            if stub.require_key is not None and not self._key_ok(headers, stub.require_key):
                self._json(401, _error_body(401, anthropic))
            elif self.command == "GET" and path == "/v1/models":
                self._json(200, stub._models_body())
            elif self.command == "POST" and path in ("/v1/chat/completions", "/v1/messages"):
                self._answer(body if isinstance(body, dict) else {}, anthropic)
            elif self.command == "POST" and path == "/v1/completions":
                self._complete(body if isinstance(body, dict) else {})
            else:
                self._json(404, {"error": {"message": f"no route {path}"}})
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True

    def _key_ok(self, headers: dict[str, str], key: str) -> bool:
        return headers.get("authorization") == f"Bearer {key}" or headers.get("x-api-key") == key

    def _control(self, path: str, body: Any) -> None:
        stub = self.server.stub
        if path == "/_stub/script" and self.command == "POST" and isinstance(body, dict):
            profile = body.get("profile", stub.profile)
            if profile is not None and profile not in provider_profiles.PROFILES:
                # Refused before anything changes.
                self._json(400, {"error": {"message": f"no stub profile {profile!r}"}})
                return
            stub.profile = profile
            turns = [Turn.from_json(t) for t in body.get("turns") or []]
            if body.get("append"):
                for turn in turns:
                    stub.add(turn)
            else:
                stub.script(turns)
            if isinstance(body.get("models"), list):
                stub.models = [str(m) for m in body["models"]]
            self._json(200, {"pending": stub.pending})
        elif path == "/_stub/requests" and self.command == "GET":
            self._json(200, [r._asdict() for r in stub.requests])
        elif path == "/_stub/reset" and self.command == "POST":
            stub.reset()
            self._json(200, {"pending": 0})
        else:
            self._json(404, {"error": {"message": f"no route {path}"}})

    def _answer(self, body: dict[str, Any], anthropic: bool) -> None:
        stub = self.server.stub
        if stub.strict and _has_empty_message(body, anthropic):
            self._json(400, _empty_message_error(anthropic))
            return
        # The provider's own refusal of what it does not take (see provider_profiles).
        refused = provider_profiles.refusal(stub.profile, body, anthropic, stub.memory)
        if refused is not None:
            self._json(*refused)
            return
        turn = stub._next_turn()
        if turn is None:
            echo = f"echo: {last_user_text(body)}"
            turn = text(echo, input_tokens=max(1, len(json.dumps(body)) // 4))
        if turn.status >= 400 or turn.body is not None:
            payload = turn.body if turn.body is not None else _error_body(turn.status, anthropic)
            self._json(turn.status, payload, dict(turn.headers))
            return
        model = str(body.get("model") or "stub-model")
        if turn.raw is not None:
            events = list(turn.raw)
        elif anthropic:
            events = anthropic_events(turn, model)
        else:
            events = provider_profiles.decorate(stub.profile, openai_events(turn, model))
        if not anthropic:
            stub.memory.remember(events)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in turn.headers:
            self.send_header(name, value)
        self.end_headers()
        for number, event in enumerate(events):
            if turn.cut_after is not None and number >= turn.cut_after:
                # Close without the last chunk: the client sees the stream break off.
                self.close_connection = True
                return
            if number and turn.delay_per_chunk and stub._stopping.wait(turn.delay_per_chunk):
                self.close_connection = True
                return
            data = event.encode("utf-8")
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")

    def _complete(self, body: dict[str, Any]) -> None:
        """A legacy (non-streamed) completion: the next turn's text, or its error."""
        turn = self.server.stub._next_turn()
        if turn is None:
            prompt = body.get("prompt")
            turn = text(f"echo: {prompt[-40:] if isinstance(prompt, str) else ''}")
        if turn.status >= 400 or turn.body is not None:
            payload = turn.body if turn.body is not None else _error_body(turn.status, False)
            self._json(turn.status, payload, dict(turn.headers))
            return
        if turn.delay_per_chunk and self.server.stub._stopping.wait(turn.delay_per_chunk):
            self.close_connection = True
            return
        prompt_tokens, completion_tokens, _ = turn.usage
        answer = {
            "id": f"cmpl-stub{next(_ids)}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": str(body.get("model") or "stub-model"),
            "choices": [{"index": 0, "text": turn.text, "finish_reason": turn.finish or "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        self._json(200, answer, dict(turn.headers))

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
        self.send_response(status)
        kind = "text/plain" if isinstance(payload, str) else "application/json"
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class ModelStub:
    """The stub server. ``ModelStub(models=[...], require_key="sk-...", strict=True)``
    (strict: 400 to a request holding an empty message, as Mistral); ``start()`` /
    ``stop()`` or ``with ModelStub() as stub:``; ``stub.url`` is the base URL
    (``http://127.0.0.1:PORT/v1``) for both wire formats."""

    def __init__(
        self,
        *,
        models: Sequence[str] = ("stub-model",),
        require_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        strict: bool = False,
        profile: str | None = None,
    ) -> None:
        self.models = list(models)
        self.require_key = require_key
        # Strict: answer 400 to a request holding an empty message, as Mistral and
        # Anthropic do (a test may switch it on for one case: ``stub.strict = True``).
        self.strict = strict
        self.profile = profile
        self.memory = provider_profiles.Memory()
        self._address = (host, port)
        self._turns: collections.deque[Turn] = collections.deque()
        self._received: list[Received] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> ModelStub:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="model-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        with server.connections_lock:
            open_connections = list(server.connections)
        for connection in open_connections:  # idle keep-alive and slow streams end now
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if thread is not None:
            thread.join()
        self._server = self._thread = None

    def __enter__(self) -> ModelStub:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/v1"

    # -- the script -----------------------------------------------------------------------

    def script(self, turns: Iterable[Turn]) -> ModelStub:
        """Replace the script with ``turns`` (answered in order, one per model request)."""
        with self._lock:
            self._turns = collections.deque(turns)
        return self

    def add(self, turn: Turn) -> ModelStub:
        with self._lock:
            self._turns.append(turn)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._turns)

    @property
    def requests(self) -> list[Received]:
        """Every model request received so far (``/_stub/`` control requests aside)."""
        with self._lock:
            return list(self._received)

    def reset(self) -> None:
        with self._lock:
            self._turns.clear()
            self._received.clear()
        self.memory.clear()

    @property
    def profile(self) -> str | None:
        """The provider whose rules the stub enforces on chat requests, or None for none
        (``provider_profiles.PROFILES`` names them)."""
        return self._profile

    @profile.setter
    def profile(self, value: str | None) -> None:
        if value is not None and value not in provider_profiles.PROFILES:
            raise ValueError(f"no stub profile {value!r}")
        self._profile = value

    def _next_turn(self) -> Turn | None:
        with self._lock:
            return self._turns.popleft() if self._turns else None

    def _record(self, received: Received) -> None:
        with self._lock:
            self._received.append(received)

    def _models_body(self) -> dict[str, Any]:
        # One shape both clients read: OpenAI's list fields and Anthropic's.
        data = [
            {
                "id": m,
                "object": "model",
                "type": "model",
                "created": 0,
                "owned_by": "stub",
                "display_name": m,
            }
            for m in self.models
        ]
        last = self.models[-1] if self.models else None
        return {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": None,
            "last_id": last,
        }


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted, printing the base URL first."""
    parser = argparse.ArgumentParser(description="A scripted model server for tests.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--require-key")
    options = parser.parse_args(argv)
    stub = ModelStub(
        models=options.models or ["stub-model"], require_key=options.require_key, port=options.port
    )
    with stub:
        print(stub.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
