"""Recorded streams of every provider in the catalog, written after each one's documented
wire format: the chunk shapes, where usage goes, the finish reasons, how tool calls arrive
(in fragments, or whole in one chunk, with or without an index), and each one's quirks.

Each ``Recording`` is a two-step tool-use conversation: the first answer calls
``read_file`` with ``{"path": "app.py"}``, the second answers in text after the tool
result. ``profile`` is the model stub's profile that checks the second request the way
that provider does (``terax_jupyter.testing.provider_profiles``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CREATED = 1767225600
ARGS = {"path": "app.py"}
ARGS_TEXT = json.dumps(ARGS)
ANSWER = "app.py prints hi."
SIGNATURE = "CiQBcsjafA1R0h5mJbXKwE7y2C1XfQ5cO2zE3E9S6TgqkYxqJw=="
THOUGHT = "The user asks about app.py; I should read it first."


def sse(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def comment(text: str) -> str:
    return f": {text}\n\n"


DONE = "data: [DONE]\n\n"


@dataclass(frozen=True)
class Recording:
    """One provider's two answers and what a client must read from them."""

    provider: str  # a catalog id, or the custom id a user gives a server
    kind: str
    profile: str
    model: str
    first: list[str]
    second: list[str]
    usage: tuple[int, int, int]  # of the first answer: input, output, cached
    second_usage: tuple[int, int, int] | None
    reasoning: str = ""
    call_text: str = ""  # text before the call
    notes: str = ""
    product: str | None = None
    quirks: tuple[str, ...] = field(default=())


def _chunk(
    ident: str,
    model: str,
    delta: dict[str, Any] | None,
    finish: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": ident,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": choices,
        **extra,
    }


def _usage(prompt: int, completion: int, **extra: Any) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        **extra,
    }


def _text_answer(
    ident: str, model: str, tail_usage: dict[str, Any] | None, **last: Any
) -> list[str]:
    """A plain answer in three pieces, usage in a last chunk without choices (OpenAI's
    ``include_usage``)."""
    events = [sse(_chunk(ident, model, {"role": "assistant", "content": ""}))]
    events += [sse(_chunk(ident, model, {"content": p})) for p in ("app.py ", "prints ", "hi.")]
    events.append(sse(_chunk(ident, model, {}, "stop", **last)))
    if tail_usage is not None:
        events.append(sse(_chunk(ident, model, None, usage=tail_usage)))
    return [*events, DONE]


# -- OpenAI: arguments in fragments, usage alone in a last chunk with no choices ------------

_M = "gpt-5-mini"
OPENAI = Recording(
    "openai",
    "openai",
    "openai",
    _M,
    first=[
        sse(_chunk("chatcmpl-A1", _M, {"role": "assistant", "content": None, "refusal": None})),
        sse(
            _chunk(
                "chatcmpl-A1",
                _M,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_Qm7yXv1fJ3tHcR0aZpLkW2Ne",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                },
            )
        ),
        *(
            sse(
                _chunk(
                    "chatcmpl-A1", _M, {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}
                )
            )
            for p in ('{"pa', 'th": "', 'app.py"}')
        ),
        sse(_chunk("chatcmpl-A1", _M, {}, "tool_calls")),
        sse(
            _chunk(
                "chatcmpl-A1",
                _M,
                None,
                usage=_usage(
                    120,
                    18,
                    prompt_tokens_details={"cached_tokens": 64, "audio_tokens": 0},
                    completion_tokens_details={"reasoning_tokens": 0},
                ),
            )
        ),
        DONE,
    ],
    second=_text_answer("chatcmpl-A2", _M, _usage(150, 6)),
    usage=(120, 18, 64),
    second_usage=(150, 6, 0),
)

# -- Anthropic: typed events, pings, a signed thinking block, tool_use input in pieces ------

_C = "claude-sonnet-4-5"


def _anthropic(
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]], stop: str, usage: dict
) -> list[str]:
    message = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": _C,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["input"],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": usage["cached"],
            "output_tokens": 1,
        },
    }
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    events.append(sse({"type": "ping"}, "ping"))
    for index, (start, deltas) in enumerate(blocks):
        events.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        for delta in deltas:
            events.append(
                sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            )
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    events.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output"]},
            },
            "message_delta",
        )
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return events


ANTHROPIC = Recording(
    "anthropic",
    "anthropic",
    "anthropic",
    _C,
    first=_anthropic(
        [
            (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": "Let me look."}],
            ),
            (
                {
                    "type": "tool_use",
                    "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "name": "read_file",
                    "input": {},
                },
                [
                    {"type": "input_json_delta", "partial_json": ""},
                    {"type": "input_json_delta", "partial_json": '{"path": '},
                    {"type": "input_json_delta", "partial_json": '"app.py"}'},
                ],
            ),
        ],
        "tool_use",
        {"input": 400, "cached": 2000, "output": 90},
    ),
    second=_anthropic(
        [
            (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in ("app.py ", "prints hi.")],
            )
        ],
        "end_turn",
        {"input": 520, "cached": 2000, "output": 7},
    ),
    usage=(2400, 90, 2000),
    second_usage=(2520, 7, 2000),
    call_text="Let me look.",
)

# -- Gemini (OpenAI-compatible endpoint): whole calls without an index, a thought signature
#    in extra_content.google, usage on the chunk with the finish --------------------------

_G = "gemini-3-pro-preview"
GEMINI = Recording(
    "gemini",
    "openai",
    "gemini",
    _G,
    first=[
        sse(
            _chunk(
                "aBcDeFgHiJ",
                _G,
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "extra_content": {"google": {"thought_signature": SIGNATURE}},
                            "function": {"arguments": ARGS_TEXT, "name": "read_file"},
                            "id": "function-call-9431201734981265530",
                            "type": "function",
                        }
                    ],
                },
                "tool_calls",
                usage={
                    "completion_tokens": 16,
                    "prompt_tokens": 210,
                    "total_tokens": 318,
                    "completion_tokens_details": {"reasoning_tokens": 92},
                },
            )
        ),
        DONE,
    ],
    second=[
        sse(_chunk("kLmNoPqRsT", _G, {"content": "app.py prints", "role": "assistant"})),
        sse(
            _chunk(
                "kLmNoPqRsT",
                _G,
                {"content": " hi.", "role": "assistant"},
                "stop",
                usage={"completion_tokens": 6, "prompt_tokens": 260, "total_tokens": 266},
            )
        ),
        DONE,
    ],
    usage=(210, 16, 0),
    second_usage=(260, 6, 0),
    quirks=("thought_signature",),
)

# -- Groq: the whole call in one chunk, usage only in x_groq of the last chunk --------------

_Q = "llama-3.3-70b-versatile"


def _x_groq(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": "req_01jz3m5q3yf6r9c0q8v8x1b2c3",
        "usage": {
            "queue_time": 0.052,
            "prompt_tokens": prompt,
            "prompt_time": 0.011,
            "completion_tokens": completion,
            "completion_time": 0.061,
            "total_tokens": prompt + completion,
            "total_time": 0.072,
        },
    }


GROQ = Recording(
    "groq",
    "openai",
    "groq",
    _Q,
    first=[
        sse(
            _chunk(
                "chatcmpl-g1",
                _Q,
                {"role": "assistant", "content": None},
                system_fingerprint="fp_3f39b7b4a4",
                x_groq={"id": "req_01jz3m5q3yf6r9c0q8v8x1b2c3"},
            )
        ),
        sse(
            _chunk(
                "chatcmpl-g1",
                _Q,
                {
                    "tool_calls": [
                        {
                            "id": "call_c3xp",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                            "index": 0,
                        }
                    ]
                },
            )
        ),
        sse(_chunk("chatcmpl-g1", _Q, {}, "tool_calls", x_groq=_x_groq(320, 21))),
        DONE,
    ],
    second=[
        sse(_chunk("chatcmpl-g2", _Q, {"role": "assistant", "content": ""})),
        sse(_chunk("chatcmpl-g2", _Q, {"content": ANSWER})),
        sse(_chunk("chatcmpl-g2", _Q, {}, "stop", x_groq=_x_groq(350, 6))),
        DONE,
    ],
    usage=(320, 21, 0),
    second_usage=(350, 6, 0),
    quirks=("x_groq",),
)

# -- xAI: reasoning_content, the call whole in one chunk, usage on every chunk --------------

_X = "grok-3-mini"


def _xai_usage(completion: int, reasoning: int) -> dict[str, Any]:
    return _usage(
        180,
        completion,
        prompt_tokens_details={"text_tokens": 180, "cached_tokens": 128, "audio_tokens": 0},
        completion_tokens_details={"reasoning_tokens": reasoning},
        num_sources_used=0,
    )


XAI = Recording(
    "xai",
    "openai",
    "xai",
    _X,
    first=[
        sse(
            _chunk(
                "x-1",
                _X,
                {"role": "assistant", "reasoning_content": "I should"},
                usage=_xai_usage(0, 2),
            )
        ),
        sse(_chunk("x-1", _X, {"reasoning_content": " read app.py."}, usage=_xai_usage(0, 6))),
        sse(
            _chunk(
                "x-1",
                _X,
                {
                    "tool_calls": [
                        {
                            "id": "call_88213573",
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                            "index": 0,
                            "type": "function",
                        }
                    ]
                },
                usage=_xai_usage(20, 6),
            )
        ),
        sse(_chunk("x-1", _X, {}, "tool_calls", usage=_xai_usage(26, 6))),
        DONE,
    ],
    second=_text_answer("x-2", _X, None, usage=_usage(210, 6)),
    usage=(180, 26, 128),
    second_usage=(210, 6, 0),
    reasoning="I should read app.py.",
)

# -- Cerebras: usage and time_info on the last chunk ----------------------------------------

_B = "gpt-oss-120b"


def _cerebras_last(ident: str, finish: str, prompt: int, completion: int) -> dict[str, Any]:
    return _chunk(
        ident,
        _B,
        {},
        finish,
        usage=_usage(prompt, completion, prompt_tokens_details={"cached_tokens": 0}),
        time_info={
            "queue_time": 0.0001,
            "prompt_time": 0.003,
            "completion_time": 0.02,
            "total_time": 0.03,
        },
        system_fingerprint="fp_a2b37d8ed2",
    )


CEREBRAS = Recording(
    "cerebras",
    "openai",
    "cerebras",
    _B,
    first=[
        sse(_chunk("chatcmpl-c1", _B, {"role": "assistant", "reasoning": "Read the file."})),
        sse(
            _chunk(
                "chatcmpl-c1",
                _B,
                {
                    "tool_calls": [
                        {
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                            "type": "function",
                            "id": "1f3a5d7c9",
                            "index": 0,
                        }
                    ]
                },
            )
        ),
        sse(_cerebras_last("chatcmpl-c1", "tool_calls", 140, 24)),
        DONE,
    ],
    second=[
        sse(_chunk("chatcmpl-c2", _B, {"role": "assistant", "content": ANSWER})),
        sse(_cerebras_last("chatcmpl-c2", "stop", 170, 6)),
        DONE,
    ],
    usage=(140, 24, 0),
    second_usage=(170, 6, 0),
    reasoning="Read the file.",
)

# -- OpenRouter: ": OPENROUTER PROCESSING" comments, reasoning, fragments, usage with cost ---

_R = "anthropic/claude-sonnet-4.5"
_ROUTER = {"provider": "Anthropic"}
OPENROUTER = Recording(
    "openrouter",
    "openai",
    "openrouter",
    _R,
    first=[
        comment("OPENROUTER PROCESSING"),
        comment("OPENROUTER PROCESSING"),
        sse(
            _chunk(
                "gen-1",
                _R,
                {"role": "assistant", "content": "", "reasoning": "Check it."},
                **_ROUTER,
            )
        ),
        sse(
            _chunk(
                "gen-1",
                _R,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "toolu_vrtx_01Lx3",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                },
                **_ROUTER,
            )
        ),
        sse(
            _chunk(
                "gen-1",
                _R,
                {"tool_calls": [{"index": 0, "function": {"arguments": ARGS_TEXT}}]},
                **_ROUTER,
            )
        ),
        sse(
            {
                **_chunk("gen-1", _R, {}, "tool_calls", **_ROUTER),
                "choices": [
                    {
                        "index": 0,
                        "delta": {},
                        "finish_reason": "tool_calls",
                        "native_finish_reason": "tool_use",
                    }
                ],
            }
        ),
        sse(
            _chunk(
                "gen-1",
                _R,
                None,
                usage=_usage(900, 40, cost=0.00327, prompt_tokens_details={"cached_tokens": 512}),
                **_ROUTER,
            )
        ),
        DONE,
    ],
    second=[comment("OPENROUTER PROCESSING"), *_text_answer("gen-2", _R, _usage(960, 6))],
    usage=(900, 40, 512),
    second_usage=(960, 6, 0),
    reasoning="Check it.",
)

# -- DeepSeek (thinking mode): keep-alive comments, reasoning_content, cache-hit usage;
#    the thoughts of a turn that called a tool must come back -----------------------------

_D = "deepseek-reasoner"


def _deepseek_usage(prompt: int, completion: int, hit: int) -> dict[str, Any]:
    return _usage(
        prompt,
        completion,
        prompt_tokens_details={"cached_tokens": hit},
        prompt_cache_hit_tokens=hit,
        prompt_cache_miss_tokens=prompt - hit,
        completion_tokens_details={"reasoning_tokens": 12},
    )


DEEPSEEK = Recording(
    "deepseek",
    "openai",
    "deepseek",
    _D,
    first=[
        comment("keep-alive"),
        sse(_chunk("ds-1", _D, {"role": "assistant", "content": None, "reasoning_content": ""})),
        *(
            sse(_chunk("ds-1", _D, {"content": None, "reasoning_content": p}))
            for p in ("The user asks about app.py; ", "I should read it first.")
        ),
        sse(
            _chunk(
                "ds-1",
                _D,
                {
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_00_Vt3e8QWkYd2sJmIgb0a1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ],
                },
            )
        ),
        sse(
            _chunk("ds-1", _D, {"tool_calls": [{"index": 0, "function": {"arguments": ARGS_TEXT}}]})
        ),
        sse(_chunk("ds-1", _D, {"content": ""}, "tool_calls", usage=_deepseek_usage(300, 40, 256))),
        DONE,
    ],
    second=[
        sse(
            _chunk(
                "ds-2", _D, {"role": "assistant", "content": None, "reasoning_content": "Answer."}
            )
        ),
        sse(_chunk("ds-2", _D, {"content": ANSWER, "reasoning_content": None})),
        sse(_chunk("ds-2", _D, {"content": ""}, "stop", usage=_deepseek_usage(360, 9, 256))),
        DONE,
    ],
    usage=(300, 40, 256),
    second_usage=(360, 9, 256),
    reasoning=THOUGHT,
    quirks=("reasoning_content",),
)

# -- Mistral: no stream_options (422), the call whole with a nine-character id, usage on the
#    chunk with the finish ----------------------------------------------------------------

_S = "mistral-large-latest"
MISTRAL = Recording(
    "mistral",
    "openai",
    "mistral",
    _S,
    first=[
        sse(_chunk("cmpl-m1", _S, {"role": "assistant", "content": ""})),
        sse(
            _chunk(
                "cmpl-m1",
                _S,
                {
                    "tool_calls": [
                        {
                            "id": "D681PevKs",
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                            "index": 0,
                        }
                    ]
                },
                "tool_calls",
                usage=_usage(130, 22),
            )
        ),
        DONE,
    ],
    second=[
        sse(_chunk("cmpl-m2", _S, {"role": "assistant", "content": ""})),
        sse(_chunk("cmpl-m2", _S, {"content": ANSWER})),
        sse(_chunk("cmpl-m2", _S, {"content": ""}, "stop", usage=_usage(170, 6))),
        DONE,
    ],
    usage=(130, 22, 0),
    second_usage=(170, 6, 0),
    quirks=("stream_options", "tool_call_id"),
)

# -- LM Studio: numeric nine-digit ids, fragments, usage when asked -------------------------

_L = "qwen/qwen3-coder-30b"
LMSTUDIO = Recording(
    "lmstudio",
    "openai",
    "lmstudio",
    _L,
    first=[
        sse(_chunk("chatcmpl-l1", _L, {"role": "assistant", "content": ""}, system_fingerprint=_L)),
        sse(
            _chunk(
                "chatcmpl-l1",
                _L,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "365174485",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                },
            )
        ),
        sse(
            _chunk(
                "chatcmpl-l1",
                _L,
                {"tool_calls": [{"index": 0, "function": {"arguments": ARGS_TEXT}}]},
            )
        ),
        sse(_chunk("chatcmpl-l1", _L, {}, "tool_calls")),
        sse(_chunk("chatcmpl-l1", _L, None, usage=_usage(95, 19))),
        DONE,
    ],
    second=_text_answer("chatcmpl-l2", _L, _usage(120, 6)),
    usage=(95, 19, 0),
    second_usage=(120, 6, 0),
    product="LM Studio",
)

# -- MLX (mlx_lm.server) with a Mistral model: 36-character uuid call ids, which the model's
#    chat template refuses on the way back --------------------------------------------------

_X2 = "mlx-community/Ministral-8B-Instruct-2410-4bit"
MLX = Recording(
    "mlx",
    "openai",
    "mistral-template",
    _X2,
    first=[
        sse(
            _chunk(
                "chatcmpl-x1",
                _X2,
                {"role": "assistant", "content": ""},
                system_fingerprint="0.31.3",
            )
        ),
        sse(
            _chunk(
                "chatcmpl-x1",
                _X2,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "3d2c5a4e-6f1b-4b8a-9c7d-2e1f0a9b8c7d",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                        }
                    ]
                },
            )
        ),
        sse(_chunk("chatcmpl-x1", _X2, {}, "tool_calls")),
        sse(_chunk("chatcmpl-x1", _X2, None, usage=_usage(88, 15))),
        DONE,
    ],
    second=_text_answer("chatcmpl-x2", _X2, _usage(110, 6)),
    usage=(88, 15, 0),
    second_usage=(110, 6, 0),
    product="the MLX server",
    quirks=("tool_call_id",),
)

# -- Ollama /v1: reasoning, the whole call in one chunk, "stop" after a tool call -----------

_O = "qwen3:8b"
OLLAMA = Recording(
    "ollama",
    "openai",
    "ollama",
    _O,
    first=[
        sse(
            _chunk(
                "chatcmpl-312",
                _O,
                {"role": "assistant", "content": "", "reasoning": "Need the file."},
                system_fingerprint="fp_ollama",
            )
        ),
        sse(
            _chunk(
                "chatcmpl-312",
                _O,
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "call_x5e1oq2k",
                            "index": 0,
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ARGS_TEXT},
                        }
                    ],
                },
            )
        ),
        sse(_chunk("chatcmpl-312", _O, {"role": "assistant", "content": ""}, "stop")),
        sse(_chunk("chatcmpl-312", _O, None, usage=_usage(75, 30))),
        DONE,
    ],
    second=_text_answer("chatcmpl-313", _O, _usage(101, 6)),
    usage=(75, 30, 0),
    second_usage=(101, 6, 0),
    reasoning="Need the file.",
    product="Ollama",
)

# -- vLLM with a Mistral model (tokenizer mode mistral): fragments after an id+name chunk,
#    reasoning_content, the template's nine-character id rule ------------------------------

_V = "mistralai/Magistral-Small-2509"
VLLM = Recording(
    "vllm",
    "openai",
    "mistral-template",
    _V,
    first=[
        sse(_chunk("chatcmpl-v1", _V, {"role": "assistant", "content": ""})),
        sse(_chunk("chatcmpl-v1", _V, {"reasoning_content": "Read app.py."})),
        sse(
            _chunk(
                "chatcmpl-v1",
                _V,
                {
                    "tool_calls": [
                        {
                            "id": "chatcmpl-tool-6c0e1e5a8c0b4f7e9d1a",
                            "type": "function",
                            "index": 0,
                            "function": {"name": "read_file"},
                        }
                    ]
                },
            )
        ),
        *(
            sse(
                _chunk(
                    "chatcmpl-v1", _V, {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}
                )
            )
            for p in ('{"path": ', '"app.py"}')
        ),
        sse(_chunk("chatcmpl-v1", _V, {"content": ""}, "tool_calls", stop_reason=None)),
        sse(_chunk("chatcmpl-v1", _V, None, usage=_usage(240, 33))),
        DONE,
    ],
    second=_text_answer("chatcmpl-v2", _V, _usage(300, 6)),
    usage=(240, 33, 0),
    second_usage=(300, 6, 0),
    reasoning="Read app.py.",
    product="vLLM",
    quirks=("tool_call_id",),
)

# -- llama.cpp's server (an older build): no usage, only its timings on the last chunk ------

_P = "Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf"


def _timings(prompt: int, cached: int, predicted: int) -> dict[str, Any]:
    return {
        "cache_n": cached,
        "prompt_n": prompt,
        "prompt_ms": 81.2,
        "prompt_per_token_ms": 0.9,
        "prompt_per_second": 1108.4,
        "predicted_n": predicted,
        "predicted_ms": 302.5,
        "predicted_per_token_ms": 13.1,
        "predicted_per_second": 76.0,
    }


LLAMACPP = Recording(
    "llamacpp",
    "openai",
    "llamacpp",
    _P,
    first=[
        sse(_chunk("chatcmpl-p1", _P, {"role": "assistant", "content": None})),
        sse(
            _chunk(
                "chatcmpl-p1",
                _P,
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "Hh3NQK0vY7c2mLqT1xWbR4sUeJ9pZ5aD",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path":'},
                        }
                    ]
                },
            )
        ),
        sse(
            _chunk(
                "chatcmpl-p1",
                _P,
                {"tool_calls": [{"index": 0, "function": {"arguments": '"app.py"}'}}]},
            )
        ),
        sse(_chunk("chatcmpl-p1", _P, {}, "tool_calls", timings=_timings(90, 30, 23))),
        DONE,
    ],
    second=[
        sse(_chunk("chatcmpl-p2", _P, {"role": "assistant", "content": None})),
        sse(_chunk("chatcmpl-p2", _P, {"content": ANSWER})),
        sse(_chunk("chatcmpl-p2", _P, {}, "stop", timings=_timings(20, 125, 6))),
        DONE,
    ],
    usage=(120, 23, 30),
    second_usage=(145, 6, 125),
    product="llama.cpp",
    quirks=("timings",),
)

RECORDINGS = {
    r.provider: r
    for r in (
        OPENAI,
        ANTHROPIC,
        GEMINI,
        GROQ,
        XAI,
        CEREBRAS,
        OPENROUTER,
        DEEPSEEK,
        MISTRAL,
        LMSTUDIO,
        MLX,
        OLLAMA,
        VLLM,
        LLAMACPP,
    )
}
