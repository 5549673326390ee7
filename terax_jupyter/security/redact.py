"""Redaction of secrets in text bound for logs, the audit, the sessions store or the browser."""

from __future__ import annotations

import re
import threading
from typing import Any

REDACTED = "[REDACTED]"


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
    first, so a key that matches no pattern is still never written anywhere.
    """

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._known_pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add_secret(self, value: str) -> None:
        """Remember a secret value (values shorter than 6 characters would redact noise)."""
        if len(value) < 6:
            return
        with self._lock:
            self._known.add(value)
            self._known_pattern = _alternation(self._known)

    def forget_secret(self, value: str) -> None:
        with self._lock:
            self._known.discard(value)
            self._known_pattern = _alternation(self._known) if self._known else None

    def redact(self, text: str, *, keep_lines: bool = False) -> str:
        """``text`` with secrets replaced. With ``keep_lines`` a secret that spans lines (a
        PEM block) leaves as many line breaks as it had, so line numbers stay true."""
        if not text:
            return text
        known = self._known_pattern
        replace = _keeping_lines if keep_lines else _keep_prefix
        if known is not None:
            text = known.sub(_keeping_lines if keep_lines else REDACTED, text)
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


def redact(text: str) -> str:
    """Redact credential-shaped strings (no known values): for callers without a Redactor."""
    return _DEFAULT.redact(text)


_DEFAULT = Redactor()
