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
# When the detector finds several legacy encodings equally plausible (it cannot tell
# cp1250 from cp1252 on most Western text), the most common one wins, not the first
# in alphabetical order.
_PREFERRED_LEGACY = ("cp1252", "latin_1", "iso8859_15")


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
    encoding: str | None
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return DecodedContent(data.decode(encoding), encoding, binary=False)
            except UnicodeDecodeError:
                # A BOM followed by bytes that are not in that encoding: not that encoding.
                break
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return _as_binary(data)
    try:
        return DecodedContent(data.decode("utf-8"), "utf-8", binary=False)
    except UnicodeDecodeError:
        pass
    encoding = _legacy_encoding(data[: 1 << 20])
    if encoding is None:
        return _as_binary(data)
    try:
        return DecodedContent(data.decode(encoding), encoding, binary=False)
    except (UnicodeDecodeError, LookupError):
        return _as_binary(data)


def _legacy_encoding(sample: bytes) -> str | None:
    """The detector's choice for non-UTF-8 text, preferring common encodings among equals."""
    results = from_bytes(sample)
    best = results.best()
    if best is None or best.encoding is None:
        return None
    tied = {best.encoding, *best.could_be_from_charset}
    tied.update(
        m.encoding for m in results if (m.chaos, m.coherence) == (best.chaos, best.coherence)
    )
    for preferred in _PREFERRED_LEGACY:
        if preferred in tied:
            return preferred
    return best.encoding


def encode(content: str, encoding: str) -> bytes:
    """Bytes to write for ``content`` given in ``encoding`` (a codec name or "base64")."""
    if encoding == "base64":
        try:
            return base64.b64decode(content, validate=True)
        except ValueError:
            raise InvalidRequest(
                "The content is not valid base64.", reason="invalid_content"
            ) from None
    try:
        codecs.lookup(encoding)
    except (LookupError, ValueError):  # ValueError: a NUL in the name
        raise Unsupported(
            f"Unknown text encoding '{encoding}'.", reason="unknown_encoding"
        ) from None
    try:
        return content.encode(encoding)
    except LookupError:
        raise Unsupported(
            f"'{encoding}' is not a text encoding.", reason="unknown_encoding"
        ) from None
    except UnicodeEncodeError as error:
        raise Unsupported(
            f"The text has a character that {encoding} cannot store (position {error.start}).",
            reason="unencodable",
        ) from None
    except UnicodeError as error:
        # Codecs with rules of their own (idna labels, the "undefined" codec) say why.
        raise Unsupported(
            f"{encoding} cannot store this text: {error}.", reason="unencodable"
        ) from None


def _as_binary(data: bytes) -> DecodedContent:
    return DecodedContent(base64.b64encode(data).decode("ascii"), "base64", binary=True)
