"""Redaction of secrets in text bound for logs, the audit, the sessions store or the browser."""

from __future__ import annotations

import base64
import re
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

REDACTED = "[REDACTED]"
# Known values this long or longer are also found encoded (shorter encoded pieces would
# match by chance in ordinary base64 or hex data).
MIN_ENCODED = 12


def _shapes(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + ")")


# Shapes of well-known credentials. Each pattern's first group, when present, is kept.
_PATTERNS: tuple[re.Pattern[str], ...] = (
    # PEM and PGP private keys (whole block; a block cut short runs to the end).
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    # Provider, source host, chat and cloud keys, and JSON web tokens: one alternation, so
    # the text is scanned once for all of them (13 scans cost 11 ms on 45 KB; one, 1 ms).
    _shapes(
        r"sk-ant-[A-Za-z0-9_\-]{16,}",
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        r"gsk_[A-Za-z0-9]{20,}",
        r"xai-[A-Za-z0-9]{20,}",
        r"csk-[A-Za-z0-9]{20,}",
        r"AIza[0-9A-Za-z_\-]{35}",
        r"hf_[A-Za-z0-9]{30,}",
        r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}",
        r"github_pat_[A-Za-z0-9_]{40,}",
        r"glpat-[A-Za-z0-9_\-]{20,}",
        r"xox[abposr]-[A-Za-z0-9\-]{10,}",
        r"(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    # Credentials in URLs: keep scheme and user, drop the password (up to the last "@"
    # before the host, since people do put an unescaped "@" in a password).
    re.compile(r"(?<=://)([^/\s:@]+):[^/\s]+(?=@)"),
    # Authorization headers, as text or as a quoted mapping, with or without a scheme.
    re.compile(
        r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
        r"(?:(?:bearer|basic|token|digest|negotiate)\s+)?)[^\s\"',;]{6,}"
    ),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9_\-.=+/]{16,}"),
    # key=value and "key": "value" assignments with secret-looking names. Not counts
    # ("max_tokens": 100000), tokenizers, or code (password = getpass.getpass()).
    re.compile(
        r"(?i)(\b[\w.\-]*(?:api[_-]?key|secret|passwd|password|token(?!s|iz)|access[_-]?key)[\w.\-]*"
        r"[\"']?\s*[:=]\s*[\"']?)(?![A-Za-z_][\w.]*[(\[])[^\s\"',;]{6,}"
    ),
)

# Keys of structured data whose string values are secrets whatever they look like.
_SECRET_KEY = re.compile(
    r"(?i)api[_-]?key|secret|passwd|password|token(?!s|iz)|access[_-]?key|authorization|credential"
)


class Redactor:
    """Replaces known secret values and credential-shaped strings with ``[REDACTED]``.

    Known values (keys the secrets service holds) are matched exactly, longest
    first, so a key that matches no pattern is still never written anywhere; and in the
    encodings one standard command gives (see ``EncodedValues``), so ``base64 file`` or
    ``xxd -p file`` in an agent's command does not carry a key past it.
    """

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._known_pattern: re.Pattern[str] | None = None
        self._encoded: EncodedValues | None = None
        self._lock = threading.Lock()

    def add_secret(self, value: str) -> None:
        """Remember a secret value (values shorter than 6 characters would redact noise)."""
        if len(value) < 6:
            return
        with self._lock:
            if value not in self._known:
                self._known.add(value)
                self._rebuild()

    def forget_secret(self, value: str) -> None:
        with self._lock:
            self._known.discard(value)
            self._rebuild()

    def _rebuild(self) -> None:
        literals = {form for value in self._known for form in (value, *url_forms(value))}
        self._known_pattern = _alternation(literals) if literals else None
        self._encoded = EncodedValues(self._known) if self._known else None

    def redact(self, text: str, *, keep_lines: bool = False) -> str:
        """``text`` with secrets replaced. With ``keep_lines`` a secret that spans lines (a
        PEM block) leaves as many line breaks as it had, so line numbers stay true."""
        if not text:
            return text
        known, encoded = self._known_pattern, self._encoded
        replace = _keeping_lines if keep_lines else _keep_prefix
        if known is not None:
            text = known.sub(_keeping_lines if keep_lines else REDACTED, text)
        if encoded is not None:
            text = encoded.redact(text, keep_lines=keep_lines)
        for pattern in _PATTERNS:
            text = pattern.sub(replace, text)
        return text

    def redact_data(self, value: Any, *, key: str = "") -> Any:
        """A copy of JSON-like ``value`` with every string redacted before it is serialized.

        Redacting serialized JSON instead can cut an escape in half (invalid JSON) and
        misses known values that serialization escapes. A string under a secret-looking
        key is a secret whatever it looks like.
        """
        if isinstance(value, str):
            return REDACTED if value and _SECRET_KEY.search(key) else self.redact(value)
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_data(v, key=str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [self.redact_data(item, key=key) for item in value]
        if value is None or isinstance(value, (bool, int, float)):
            return value
        return self.redact_data(str(value), key=key)


def _keep_prefix(match: re.Match[str]) -> str:
    if match.re.groups and match.group(1) is not None:
        prefix = match.group(1)
        # The URL rule's group is the user name: keep it and its colon.
        if match.re.pattern.startswith("(?<=://)"):
            return f"{prefix}:{REDACTED}"
        return prefix + REDACTED
    return REDACTED


def _keeping_lines(match: re.Match[str]) -> str:
    replacement = _keep_prefix(match) if match.re.groups else REDACTED
    return replacement + "\n" * (match.group(0).count("\n") - replacement.count("\n"))


def _alternation(values: set[str]) -> re.Pattern[str]:
    ordered = sorted(values, key=len, reverse=True)
    return re.compile("|".join(re.escape(v) for v in ordered))


# -- known values, encoded ----------------------------------------------------------------------

_B64_CHARS = "A-Za-z0-9+/_-"
_B64_STANDARD = str.maketrans("-_", "+/", "\r\n")
# Hex digits with what tools put around them: ``\x``/``0x``/``%`` before a byte; spaces, line
# breaks, ``:`` or ``,`` between bytes (``xxd -p``, ``od -An -tx1``, ``bytes.hex(' ')``).
_HEX_NOISE = re.compile(r"\\x|0[xX]|%|[\s:,]+")
_HEX_DIGIT = re.compile(r"(?:\\x|0[xX]|%|[\s:,])*([0-9A-Fa-f])")
_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


class EncodedValues:
    """Finds known values as base64 (standard or URL-safe, at each of the three offsets a
    value can have in a longer input, wrapped at any column) and as hex (either case, bytes
    run together or apart, with ``\\x``, ``0x`` or ``%`` before them).

    It finds runs of base64 characters (and the lines they wrap onto) and places where a
    value's hex starts, joins each run (line breaks and separators out) and searches it for
    the encodings with plain substring searches: adding a key costs no big regular
    expression, and a scan costs little more with many keys than with one. Not found: other
    encodings (base32, rot13, compression, encryption), base64 wrapped at fewer than 16
    columns, or a value cut into pieces.
    """

    def __init__(self, values: set[str]) -> None:
        pieces: set[str] = set()
        hexes: set[str] = set()
        for value in values:
            if len(value) < MIN_ENCODED:
                continue
            data = value.encode("utf-8")
            for offset in range(3):
                # The value after ``offset`` other bytes of its 3-byte group: the characters
                # that depend on the value's bits only.
                encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
                first, last = -(-8 * offset // 6), (8 * (offset + len(data))) // 6
                if last - first >= MIN_ENCODED:
                    pieces.add(encoded[first:last])
            hexes.add(data.hex())
        self._pieces = sorted(pieces, key=len, reverse=True)
        self._hexes = sorted(hexes, key=len, reverse=True)
        shortest_b64 = min((len(p) for p in pieces), default=0)
        # A base64 run worth a look: a line of 16 characters or more and the lines it wraps
        # onto (``base64`` wraps at 76 columns; a key may be cut anywhere).
        chars = f"[{_B64_CHARS}]"
        self._b64_run = re.compile(rf"{chars}{{16,}}(?:\r?\n{chars}+)*") if pieces else None
        self._b64_min = shortest_b64
        # Hex is looked for where a value's first two bytes are (``73 6b`` for ``sk``): the
        # digits of most text (base64, other hex) would make a scan for any hex run slow.
        gap = r"[\s:,]{0,3}(?:\\x|0[xX]|%)?"
        starts = {_hex_pattern(h[:2]) + gap + _hex_pattern(h[2:4]) for h in hexes}
        self._hex_start = re.compile("|".join(sorted(starts))) if hexes else None
        self._hex_run = re.compile(r"(?:[0-9A-Fa-f]{2}" + gap + ")+")

    def redact(self, text: str, *, keep_lines: bool = False) -> str:
        spans: list[tuple[int, int]] = []
        if self._b64_run is not None:
            for run in self._b64_run.finditer(text):
                if run.end() - run.start() >= self._b64_min:
                    spans += self._find(run, self._pieces, _b64_normal, _b64_positions)
        if self._hex_start is not None:
            for first in self._hex_start.finditer(text):
                hex_run = self._hex_run.match(text, first.start())
                if hex_run is not None:
                    spans += self._find(hex_run, self._hexes, _hex_normal, _hex_positions, 0)
        if not spans:
            return text
        out, at = [], 0
        for start, end in _merged(spans):
            out.append(text[at:start])
            hidden = text[start:end]
            out.append(REDACTED + ("\n" * hidden.count("\n") if keep_lines else ""))
            at = end
        out.append(text[at:])
        return "".join(out)

    @staticmethod
    def _find(
        run: re.Match[str],
        needles: list[str],
        normal: Callable[[str], str],
        positions: Callable[[str], list[int]],
        only_at: int | None = None,
    ) -> list[tuple[int, int]]:
        """Where ``needles`` are in ``run`` once joined (anywhere, or only at ``only_at``)."""
        raw = run.group(0)
        joined = normal(raw)
        found = []
        for needle in needles:
            if only_at is not None:
                if joined.startswith(needle, only_at):
                    found.append((only_at, only_at + len(needle)))
                continue
            at = joined.find(needle)
            while at >= 0:
                found.append((at, at + len(needle)))
                at = joined.find(needle, at + 1)
        if not found:
            return []
        # Only now (rarely) map positions in the joined run back to the text.
        where = positions(raw)
        base = run.start()
        return [(base + where[a], base + where[b - 1] + 1) for a, b in found]


def _b64_normal(run: str) -> str:
    return run.translate(_B64_STANDARD)


def _b64_positions(run: str) -> list[int]:
    return [i for i, char in enumerate(run) if char not in "\r\n"]


def _hex_normal(run: str) -> str:
    return _HEX_NOISE.sub("", run).lower()


def _hex_positions(run: str) -> list[int]:
    return [match.start(1) for match in _HEX_DIGIT.finditer(run)]


def _hex_pattern(digits: str) -> str:
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def url_forms(value: str) -> list[str]:
    """``value`` percent-encoded as URL tools write it (``/`` kept or not, hex digits in
    either case); none when encoding changes nothing."""
    if len(value) < MIN_ENCODED or all(c in _URL_SAFE for c in value):
        return []
    from urllib.parse import quote

    forms = {quote(value, safe=""), quote(value, safe="/")}
    forms |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in forms}
    forms.discard(value)
    return sorted(forms)


def redact(text: str) -> str:
    """Redact credential-shaped strings (no known values): for callers without a Redactor."""
    return _DEFAULT.redact(text)


_DEFAULT = Redactor()
