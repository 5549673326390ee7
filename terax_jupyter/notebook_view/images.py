"""Which of a notebook's image outputs a model is shown, and within what limits.

PNG and JPEG are shown as they are stored (both providers' formats take them), up to
``MAX_IMAGES`` per tool call and within a size a model reads without a second thought: a
Lab plot (640x480, or 1280x960 at retina resolution) passes, a 20-megapixel photo does not.
Everything else is described instead: SVG (nothing here rasterises it), GIF, images larger
than the limits, and data that is not an image at all. Providers scale what they are sent
to their own limits; ``estimated_tokens`` follows the larger of their rules (Anthropic's:
pixels / 750, at most about 1.15 megapixels' worth).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass
from typing import Literal

MAX_IMAGES = 3  # per tool call
MAX_IMAGE_SIDE = 2048  # pixels, the longer side
MAX_IMAGE_PIXELS = 2_400_000  # width x height
MAX_IMAGE_BYTES = 2 * 1024 * 1024  # decoded
PIXELS_PER_TOKEN = 750
MAX_TOKENS_PER_IMAGE = 1_600
ATTACHED_TYPES = ("image/png", "image/jpeg")


@dataclass(frozen=True)
class OutputImage:
    """An image a model is shown: ``data`` as base64, as the notebook stored it."""

    media_type: Literal["image/png", "image/jpeg"]
    data: str
    width: int
    height: int
    size: int  # decoded bytes
    label: str = ""


def estimated_tokens(width: int, height: int) -> int:
    return min(MAX_TOKENS_PER_IMAGE, max(1, width * height // PIXELS_PER_TOKEN))


def decoded(value: object) -> bytes | None:
    """A notebook's base64 image field (a string or a list of lines) as bytes, or None."""
    text = value if isinstance(value, str) else ""
    if isinstance(value, list):
        text = "".join(part for part in value if isinstance(part, str))
    try:
        return base64.b64decode(re.sub(r"\s+", "", text), validate=True)
    except (binascii.Error, ValueError):
        return None


def image_pixels(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, JPEG or GIF header, or None."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR" and len(raw) >= 24:
        width, height = struct.unpack(">II", raw[16:24])
        return int(width), int(height)
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        width, height = struct.unpack("<HH", raw[6:10])
        return int(width), int(height)
    if raw[:2] == b"\xff\xd8":
        return _jpeg_pixels(raw)
    return None


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_pixels(raw: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 4 <= len(raw):
        if raw[index] != 0xFF:
            return None
        marker = raw[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        (length,) = struct.unpack(">H", raw[index + 2 : index + 4])
        if marker in _SOF and index + 9 <= len(raw):
            height, width = struct.unpack(">HH", raw[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None


def _whole_format_of(raw: bytes) -> str | None:
    """PNG or JPEG when ``raw`` is one from its start to its end marker (a provider refuses
    the whole request over an image it cannot decode, so a cut one is never sent)."""
    png_ends = raw[-12:-8] == b"\x00\x00\x00\x00" and raw[-8:-4] == b"IEND"
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR" and png_ends:
        return "image/png"
    jpeg_ends = raw.rstrip(b"\x00")[-2:] == b"\xff\xd9"
    if raw[:3] == b"\xff\xd8\xff" and jpeg_ends and b"\xff\xda" in raw:  # a start of scan
        return "image/jpeg"
    return None


def attachable(mime: str, raw: bytes, pixels: tuple[int, int] | None) -> OutputImage | str:
    """The image to show for an output of ``mime`` holding ``raw``, or why it is not shown."""
    if mime not in ATTACHED_TYPES:
        return f"only PNG and JPEG images are shown, not {mime}"
    if _whole_format_of(raw) != mime:
        return f"its data is not a whole {mime.split('/')[1].upper()} image"
    if pixels is None or 0 in pixels:
        return "its pixel size cannot be read"
    width, height = pixels
    if max(pixels) > MAX_IMAGE_SIDE or width * height > MAX_IMAGE_PIXELS:
        return (
            f"larger than {MAX_IMAGE_SIDE} px a side or {MAX_IMAGE_PIXELS / 1e6:.1f} megapixels "
            "(display it smaller to see it)"
        )
    if len(raw) > MAX_IMAGE_BYTES:
        return f"more than {MAX_IMAGE_BYTES // (1024 * 1024)} MB"
    media_type: Literal["image/png", "image/jpeg"] = (
        "image/png" if mime == "image/png" else "image/jpeg"
    )
    return OutputImage(media_type, base64.b64encode(raw).decode("ascii"), width, height, len(raw))
