"""Text or binary, which encoding, and the etag of a file's content."""

from __future__ import annotations

import base64
import codecs
import hashlib
from dataclasses import dataclass

from charset_normalizer import from_bytes

from terax_jupyter.exceptions import InvalidRequest, Unsupported

# Like git: a NUL byte in the first 8000 bytes makes a file binary.
BINARY_SNIFF_BYTES = 8000
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


@dataclass(frozen=True)
class DecodedContent:
    content: str
    encoding: str  # a Python codec name, or "base64" for binary content
    binary: bool


def etag_for(data: bytes, mtime_ns: int) -> str:
    """Content hash plus modification time: changes when either does."""
    digest = hashlib.blake2b(data, digest_size=10).hexdigest()
    return f"{digest}-{mtime_ns:x}"


def decode(data: bytes) -> DecodedContent:
    """Decode file bytes as text when they are text, else base64."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return DecodedContent(data.decode(encoding), encoding, binary=False)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return _as_binary(data)
    try:
        return DecodedContent(data.decode("utf-8"), "utf-8", binary=False)
    except UnicodeDecodeError:
        pass
    best = from_bytes(data[: 1 << 20]).best()
    if best is None or best.encoding is None:
        return _as_binary(data)
    try:
        return DecodedContent(data.decode(best.encoding), best.encoding, binary=False)
    except (UnicodeDecodeError, LookupError):
        return _as_binary(data)


def encode(content: str, encoding: str) -> bytes:
    """Bytes to write for ``content`` given in ``encoding`` (a codec name or "base64")."""
    if encoding == "base64":
        try:
            return base64.b64decode(content, validate=True)
        except ValueError:
            raise InvalidRequest("The content is not valid base64.", reason="invalid_content") from None
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise Unsupported(f"Unknown text encoding '{encoding}'.", reason="unknown_encoding") from None
    try:
        return content.encode(encoding)
    except LookupError:
        raise Unsupported(f"'{encoding}' is not a text encoding.", reason="unknown_encoding") from None
    except UnicodeEncodeError as error:
        raise Unsupported(
            f"The text has a character that {encoding} cannot store (position {error.start}).",
            reason="unencodable",
        ) from None


def _as_binary(data: bytes) -> DecodedContent:
    return DecodedContent(base64.b64encode(data).decode("ascii"), "base64", binary=True)
