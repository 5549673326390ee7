"""The images of a notebook's outputs, shown to a model that reads images: which are shown
(PNG and JPEG within limits, three per call), how each wire format carries them (checked by
the model stub under each provider's rules), and what a model without vision, a later run
and compaction get instead."""

from __future__ import annotations

import base64
import json
import struct
from typing import TYPE_CHECKING, Any

import nbformat
import pytest

from terax_jupyter.notebook_view import views
from terax_jupyter.notebook_view.cells import parse_notebook
from terax_jupyter.notebook_view.images import MAX_IMAGES, estimated_tokens
from terax_jupyter.services.ai.compaction import compact, estimate_tokens
from terax_jupyter.services.ai.providers.base import ImagePart, Message, ToolCall
from terax_jupyter.services.ai.tools.notebooks import NotebookRead
from terax_jupyter.testing import model_stub as turns
from tests.services.ai.test_agent_api import new_session, run

from .test_notebook_read import tiny_png, write
from .tool_context import make_context

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer
    from terax_jupyter.testing.model_stub import ModelStub
    from tests.services.ai.conftest import Api

PLOT = tiny_png(640, 480)


def tiny_jpeg(width: int, height: int) -> bytes:
    """A whole baseline JPEG, mid-grey: one Huffman code for "no change" and one for "end
    of block", so each 8x8 block is two bits (width and height multiples of 8)."""

    def segment(marker: int, body: bytes) -> bytes:
        return struct.pack(">BBH", 0xFF, marker, len(body) + 2) + body

    blocks = (width // 8) * (height // 8)
    bits = "00" * blocks
    bits += "1" * (-len(bits) % 8)
    scan = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))
    one_code = bytes([1] + [0] * 15) + b"\x00"  # one code of length 1, for symbol 0
    return (
        b"\xff\xd8"
        + segment(0xDB, b"\x00" + b"\x01" * 64)
        + segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
        + segment(0xC4, b"\x00" + one_code)
        + segment(0xC4, b"\x10" + one_code)
        + segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
        + scan.replace(b"\xff", b"\xff\x00")
        + b"\xff\xd9"
    )


JPEG = tiny_jpeg(16, 8)


def display(mime: str, raw: bytes | str, plain: str = "<Figure size 640x480 with 1 Axes>") -> Any:
    value = raw if isinstance(raw, str) else base64.b64encode(raw).decode()
    return nbformat.v4.new_output("display_data", data={mime: value, "text/plain": plain})


def notebook(*outputs: Any, cell_id: str = "plots") -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("plot()")
    cell.id = cell_id
    cell.outputs = list(outputs)
    book = nbformat.v4.new_notebook()
    book.cells = [cell]
    return book


def read(book: nbformat.NotebookNode, budget: int = views.DEFAULT_BUDGET) -> views.View:
    parsed = parse_notebook("plots.ipynb", json.dumps(book))
    return views.read(parsed, [parsed.cells[0].id], lambda text, **_: text, budget=budget)


# -- which images are shown ------------------------------------------------------------------


def test_png_and_jpeg_are_shown_up_to_the_cap_and_the_rest_described() -> None:
    retina = tiny_png(1280, 960)
    huge = tiny_png(2600, 1200)
    book = notebook(
        display("image/png", PLOT),
        display("image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>"),
        display("image/gif", b"GIF89a\x10\x00\x08\x00\x80\x00\x00;"),
        display("image/png", huge),
        display("image/png", b"not a png at all"),
        display("image/png", PLOT[:-12]),  # cut before its IEND chunk
        display("image/jpeg", PLOT),  # a PNG that says it is a JPEG
        display("image/jpeg", JPEG),
        display("image/png", retina),
        display("image/png", PLOT),  # the fourth: past the cap
    )
    view = read(book)
    assert [(i.media_type, i.width, i.height) for i in view.images] == [
        ("image/png", 640, 480),
        ("image/jpeg", 16, 8),
        ("image/png", 1280, 960),
    ]
    assert len(view.images) == MAX_IMAGES
    assert [base64.b64decode(i.data) for i in view.images] == [PLOT, JPEG, retina]
    assert [i.label for i in view.images] == [
        "image 1 (cell plots output 1)",
        "image 2 (cell plots output 8)",
        "image 3 (cell plots output 9)",
    ]
    text = view.text
    assert "[image 1 (cell plots output 1): image/png, " in text
    assert "640x480 px, shown with this result]" in text
    assert "not shown: SVG is not rasterised]" in text
    assert "not shown: only PNG and JPEG images are shown, not image/gif]" in text
    assert "2600x1200 px; not shown: larger than 2048 px a side" in text
    assert "[image image/png: its data is not valid base64]" not in text  # it is base64
    assert text.count("not shown: its data is not a whole PNG image]") == 2
    assert "not shown: its data is not a whole JPEG image]" in text
    assert "not shown: 3 images are shown per call at most (read this cell alone" in text
    assert "<Figure size 640x480 with 1 Axes>" in text  # the plain text stays
    assert "iVBOR" not in text
    assert [fact["label"] for fact in view.data["images"]] == [i.label for i in view.images]


def test_an_image_whose_words_the_budget_cuts_is_not_shown() -> None:
    long_text = "x" * 2000
    book = notebook(
        nbformat.v4.new_output("stream", name="stdout", text=long_text),
        display("image/png", PLOT),
    )
    assert len(read(book, budget=2500).images) == 1
    cut = read(book, budget=views.MIN_BUDGET)
    assert cut.images == []
    assert "image/png" not in cut.text


def test_a_default_repr_next_to_an_image_is_left_out() -> None:
    view = read(notebook(display("image/png", PLOT, "<IPython.core.display.Image object>")))
    assert "IPython.core.display.Image object" not in view.text
    assert "also in this output" not in view.text


async def test_notebook_read_returns_the_images_as_parts(
    terax_security: Callable[..., SecurityLayer], ws: Path
) -> None:
    write(ws / "plots.ipynb", notebook(display("image/png", PLOT)))
    context = make_context(terax_security(ws))
    result = await NotebookRead().run({"path": "plots.ipynb", "ids": ["plots"]}, context)
    [part] = result.images
    assert isinstance(part, ImagePart)
    assert (part.media_type, part.width, part.height) == ("image/png", 640, 480)
    assert base64.b64decode(part.data) == PLOT
    assert f"[{part.label}: image/png" in result.content
    assert result.data["images"][0]["bytes"] == len(PLOT)


# -- what the model is sent -------------------------------------------------------------------


async def describe(terax_api: Api, provider: str, model: str, *, vision: bool) -> None:
    await terax_api(
        "ai/models",
        method="POST",
        body={"provider": provider, "id": model, "context_window": 100000, "vision": vision},
    )


async def read_plots(
    terax_api: Api, open_events: Any, model_stub: ModelStub, provider: str, prompt: str
) -> str:
    model_stub.script(
        [
            turns.tool_calls([("notebook_read", {"path": "plots.ipynb", "ids": ["plots"]})]),
            turns.text("A rising line."),
        ]
    )
    session_id = await new_session(terax_api, provider=provider, model="stub-model")
    events = await run(terax_api, open_events, session_id, prompt)
    await events.until("finish")
    assert not events.of("error"), events.of("error")
    return session_id


def data_url(raw: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(raw).decode()}"


async def test_openai_format_shows_images_in_one_user_message_after_the_results(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.profile = "openai"  # refuses images anywhere but a user's image_url parts
    write(jp_root_dir / "plots.ipynb", notebook(display("image/png", PLOT)))
    await describe(terax_api, "stub", "stub-model", vision=True)
    await read_plots(terax_api, open_events, model_stub, "stub", "What does the plot show?")
    messages = model_stub.requests[1].body["messages"]
    tool_index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert isinstance(messages[tool_index]["content"], str)
    assert "shown with this result]" in messages[tool_index]["content"]
    shown = messages[tool_index + 1]
    assert shown["role"] == "user"
    note, label, image = shown["content"]
    assert "untrusted" in note["text"]
    assert label == {"type": "text", "text": "image 1 (cell plots output 1)"}
    assert image == {"type": "image_url", "image_url": {"url": data_url(PLOT)}}
    assert tool_index + 2 == len(messages)


async def test_anthropic_format_shows_images_inside_the_tool_result(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.profile = "anthropic"  # checks the tool_result's text and image blocks
    write(jp_root_dir / "plots.ipynb", notebook(display("image/jpeg", JPEG)))
    await describe(terax_api, "stub-anthropic", "stub-model", vision=True)
    await read_plots(terax_api, open_events, model_stub, "stub-anthropic", "Describe it.")
    last = model_stub.requests[1].body["messages"][-1]
    [result] = [b for b in last["content"] if b["type"] == "tool_result"]
    text, image = result["content"]
    assert text["type"] == "text"
    assert "[image 1 (cell plots output 1): image/jpeg" in text["text"]
    assert image == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": "image/jpeg",
            "data": base64.b64encode(JPEG).decode(),
        },
    }


async def test_a_model_without_vision_gets_words_and_a_later_run_no_images(
    terax_api: Api, open_events: Any, model_stub: ModelStub, jp_root_dir: Path
) -> None:
    model_stub.profile = "openai"
    write(jp_root_dir / "plots.ipynb", notebook(display("image/png", PLOT)))
    await read_plots(terax_api, open_events, model_stub, "stub", "Plot?")  # not known to see
    body = json.dumps(model_stub.requests[1].body)
    assert "image_url" not in body
    assert "not known to read images" in body

    await describe(terax_api, "stub", "stub-model", vision=True)
    session_id = await read_plots(terax_api, open_events, model_stub, "stub", "Plot?")
    assert "image_url" in json.dumps(model_stub.requests[3].body)
    model_stub.script([turns.text("Still a line.")])
    events = await run(terax_api, open_events, session_id, "And now?")
    await events.until("finish")
    later = model_stub.requests[4].body["messages"]
    assert "image_url" not in json.dumps(later)
    [stored] = [m for m in later if m["role"] == "tool"]
    assert "shown only in the run that made this call" in stored["content"]


@pytest.mark.parametrize("profile", ["openai", "anthropic"])
async def test_the_stub_refuses_images_where_the_provider_does(
    model_stub: ModelStub, profile: str
) -> None:
    import httpx

    if profile == "openai":
        path = "chat/completions"
        image = {"type": "image_url", "image_url": {"url": data_url(PLOT, "image/jpeg")}}
        body: dict[str, Any] = {
            "model": "stub-model",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}],
        }
    else:
        path = "messages"
        source = {"type": "base64", "media_type": "image/svg+xml", "data": "PHN2Zy8+"}
        body = {
            "model": "stub-model",
            "max_tokens": 10,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x"}]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": [{"type": "image", "source": source}],
                        }
                    ],
                },
            ],
        }
    model_stub.profile = profile
    model_stub.script([turns.text("never")])
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{model_stub.url}/{path}", json=body)
    assert response.status_code == 400
    reason = "does not match the provided media type" if profile == "openai" else "unsupported"
    assert reason in response.text


# -- compaction ------------------------------------------------------------------------------


def test_compaction_leaves_out_old_images_first() -> None:
    image = ImagePart("image/png", base64.b64encode(PLOT).decode(), 1280, 960, "image 1")
    history: list[Message] = [Message("system", "You help.")]
    for n in range(6):
        call = ToolCall(f"c{n}", "notebook_read", {"path": "plots.ipynb", "ids": ["plots"]})
        history += [
            Message("user", f"look {n}"),
            Message("assistant", tool_calls=[call]),
            Message("tool", "[image 1: a plot]", tool_call_id=call.id, images=[image]),
        ]
    with_images = estimate_tokens(history)
    assert with_images - estimate_tokens([*history[:1]]) > 6 * estimated_tokens(1280, 960) - 1
    budget = with_images - estimated_tokens(1280, 960) * 3 // 2  # two images over
    sent, report = compact(history, budget=budget)
    assert report.dropped_images == 2
    assert report.elided_results == report.dropped_messages == 0
    tools = [m for m in sent if m.role == "tool"]
    assert [len(m.images) for m in tools] == [0, 0, 1, 1, 1, 1]
    assert "left out to save context" in tools[0].content
    assert all(len(m.images) == 1 for m in history if m.role == "tool")  # the run's own history
