"""A notebook cell's outputs as text a model can read, and as one-line summaries.

Streams and tracebacks lose their ANSI escapes; tracebacks keep their first frame, their
last frames and the error line. A display bundle shows ``text/plain`` first (a DataFrame's
plain repr is a table already); HTML only when there is no plain text, as text with tables
as rows. PNG and JPEG images are shown to the model when the reader can (``images.py``) and
otherwise described (type, bytes, pixel size read from the header, why not shown), widgets by
their model id, other types by name. Nothing here redacts or caps a
whole result: ``views.py`` does that over what this returns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from terax_jupyter.ansi import strip
from terax_jupyter.notebook_view.images import (
    MAX_IMAGES,
    OutputImage,
    attachable,
    decoded,
    image_pixels,
)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
TEXT_MIMES = ("text/plain", "text/markdown", "text/latex")
IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")
HTML_INPUT_CHARS = 1024 * 1024  # more HTML than this is cut before it is parsed
FRAME_CHARS = 3000
FIRST_FRAMES = 1
LAST_FRAMES = 2
SUMMARY_ERROR_CHARS = 160
_DEFAULT_REPR = re.compile(r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>")


@dataclass
class RenderedOutput:
    """``label`` names the output (``stdout``, ``error``, ``display_data``, ...)."""

    label: str
    text: str


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def plain(text: str) -> str:
    """``text`` without terminal escapes; carriage returns and backspaces applied."""
    return strip(text.encode("utf-8", "replace"))


def joined(value: Any) -> str:
    """A notebook string field, which on disk may be a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return "" if value is None else str(value)


# -- whole outputs -------------------------------------------------------------------------


def output_label(output: Any) -> str:
    """``stdout``, ``error``, ``display_data``, ...: what kind of output this is."""
    if not isinstance(output, dict):
        return "invalid"
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name")
        return name if isinstance(name, str) else "stream"
    if kind in ("error", "execute_result", "display_data", "update_display_data"):
        return str(kind)
    return "unknown"


def render_output(output: Any, attach: Attach | None = None) -> RenderedOutput:
    """``output`` as text; ``attach`` is how its PNG and JPEG images are shown, if at all."""
    if not isinstance(output, dict):
        return RenderedOutput("invalid", "[an output that is not a JSON object]")
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name")
        label = name if isinstance(name, str) else "stream"
        return RenderedOutput(label, plain(joined(output.get("text"))))
    if kind == "error":
        ename, evalue = joined(output.get("ename")), joined(output.get("evalue"))
        traceback = output.get("traceback")
        frames = [joined(entry) for entry in traceback] if isinstance(traceback, list) else []
        return RenderedOutput("error", traceback_text(frames, ename, evalue))
    if kind in ("execute_result", "display_data", "update_display_data"):
        data = output.get("data")
        bundle = data if isinstance(data, dict) else {}
        return RenderedOutput(str(kind), bundle_text(bundle, attach))
    return RenderedOutput("unknown", f"[an output of unknown type {kind!r}, not shown]")


def traceback_text(frames: list[str], ename: str, evalue: str) -> str:
    """The traceback without escapes: header, first frame, last frames, error line."""
    entries = [plain(entry).strip("\n") for entry in frames]
    entries = [entry for entry in entries if entry.strip()]
    error_line = plain(f"{ename}: {evalue}" if evalue else ename)
    if entries and entries[-1].strip().startswith(ename or "\0"):
        error_line = entries.pop()
    header: list[str] = []
    while entries and _is_header(entries[0]):
        header.append(entries.pop(0))
    if len(entries) > FIRST_FRAMES + LAST_FRAMES + 1:
        left_out = len(entries) - FIRST_FRAMES - LAST_FRAMES
        entries = [
            *entries[:FIRST_FRAMES],
            f"[... {left_out} frames not shown ...]",
            *entries[-LAST_FRAMES:],
        ]
    entries = [_cut(entry, FRAME_CHARS) for entry in entries]
    return "\n".join([*header, *entries, error_line])


def _is_header(entry: str) -> bool:
    text = entry.strip()
    return bool(text) and (set(text) <= {"-"} or text.endswith("Traceback (most recent call last)"))


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} characters not shown]"


def bundle_text(data: dict[str, Any], attach: Attach | None = None) -> str:
    parts: list[str] = []
    used: set[str] = set()
    widget = data.get(WIDGET_MIME)
    if widget is not None:
        used.add(WIDGET_MIME)
        model = widget.get("model_id") if isinstance(widget, dict) else None
        parts.append(
            f"[widget view of model {model or '(no model id)'}; its state lives in the "
            "kernel and is not shown]"
        )
    for mime in IMAGE_MIMES:
        if mime in data:
            used.add(mime)
            parts.append(image_text(mime, data[mime], attach))
    text_mime = next((mime for mime in TEXT_MIMES if isinstance(data.get(mime), str)), None)
    # ``<IPython.core.display.HTML object>`` says nothing the HTML (or image) does not say.
    default_repr = text_mime == "text/plain" and _DEFAULT_REPR.fullmatch(data[text_mime].strip())
    if default_repr and isinstance(data.get("text/markdown"), str):
        text_mime = "text/markdown"
    elif default_repr and isinstance(data.get("text/html"), str):
        text_mime = None
    elif default_repr and used & set(IMAGE_MIMES):
        used.add("text/plain")
        text_mime = None
    if text_mime is not None:
        used.add(text_mime)
        parts.append(plain(data[text_mime]))
    elif isinstance(data.get("text/html"), str):
        used.add("text/html")
        parts.append(html_text(data["text/html"]))
    elif "application/json" in data:
        used.add("application/json")
        parts.append(json.dumps(data["application/json"], indent=1, ensure_ascii=False))
    others = [mime for mime in data if mime not in used]
    if others:
        sizes = ", ".join(f"{mime} ({human_size(_stored_size(data[mime]))})" for mime in others)
        parts.append(f"[also in this output, not shown: {sizes}]")
    return "\n".join(parts) if parts else "[an empty display output]"


def _stored_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8"))
    return len(json.dumps(value))


# -- images --------------------------------------------------------------------------------

# What a reader does with an image it may show the model: the words that stand for it in the
# text when it is shown, or None when it is not (the call's limit is reached).
Attach = Callable[[OutputImage], str | None]


def image_text(mime: str, value: Any, attach: Attach | None = None) -> str:
    """An image output in words: shown (through ``attach``) or described, saying why not."""
    if mime == "image/svg+xml":
        size = _stored_size(value)
        return f"[image {mime}, {human_size(size)}; not shown: SVG is not rasterised]"
    raw = decoded(value)
    if raw is None:
        return f"[image {mime}: its data is not valid base64]"
    pixels = image_pixels(raw)
    facts = f"{mime}, {human_size(len(raw))}" + (f", {pixels[0]}x{pixels[1]} px" if pixels else "")
    if attach is None:
        return f"[image {facts}; not shown here: read the cell with notebook_read to see it]"
    image = attachable(mime, raw, pixels)
    if isinstance(image, str):
        return f"[image {facts}; not shown: {image}]"
    label = attach(image)
    if label is None:
        return (
            f"[image {facts}; not shown: {MAX_IMAGES} images are shown per call at most "
            "(read this cell alone to see it)]"
        )
    return f"[{label}: {facts}, shown with this result]"


# -- HTML ----------------------------------------------------------------------------------


_BLOCKS = frozenset(
    {
        "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "table",
        "thead", "tbody", "tfoot", "pre", "section", "article", "header", "footer", "hr",
        "caption", "dl", "dt", "dd", "blockquote",
    }
)  # fmt: skip
_HIDDEN = frozenset({"script", "style", "head", "template"})


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.hidden = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag in _BLOCKS:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in ("td", "th") and self.cell is not None:
            if self.row is not None:
                self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.out.append("\n" + " | ".join(self.row) + "\n")
            self.row = None
        elif tag in _BLOCKS:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.out.append(re.sub(r"[ \t\r\n]+", " ", data))


def html_text(html: str) -> str:
    """HTML as text: tags dropped, scripts and styles left out, table rows as ``a | b``."""
    cut = len(html) > HTML_INPUT_CHARS
    parser = _HtmlText()
    parser.feed(html[:HTML_INPUT_CHARS])
    parser.close()
    lines = [line.strip() for line in "".join(parser.out).split("\n")]
    text = "\n".join(line for line in lines if line)
    if cut:
        text += f"\n[the HTML continues: only its first {HTML_INPUT_CHARS // 1024} KiB were read]"
    return f"(HTML output, as text)\n{text}"


# -- one-line summaries --------------------------------------------------------------------


def output_summary(output: Any) -> str:
    """What an output is, in a few words: for the outline."""
    if not isinstance(output, dict):
        return "invalid output"
    kind = output.get("output_type")
    if kind == "stream":
        size = _stored_size(joined(output.get("text")))
        return f"{output.get('name', 'stream')} {human_size(size)}"
    if kind == "error":
        ename = plain(joined(output.get("ename")))
        evalue = plain(joined(output.get("evalue"))).replace("\n", " ")
        return _cut(f"error {ename}: {evalue}", SUMMARY_ERROR_CHARS)
    if kind in ("execute_result", "display_data", "update_display_data"):
        data = output.get("data")
        if not isinstance(data, dict) or not data:
            return f"{kind} (empty)"
        parts = []
        for mime, value in data.items():
            if mime == WIDGET_MIME and isinstance(value, dict):
                parts.append(f"widget {value.get('model_id', '?')}")
            elif mime.startswith("image/") and mime != "image/svg+xml":
                parts.append(f"{mime} {human_size(len(joined(value)) * 3 // 4)}")
            else:
                parts.append(f"{mime} {human_size(_stored_size(value))}")
        return ", ".join(parts)
    return f"output of unknown type {kind!r}"
