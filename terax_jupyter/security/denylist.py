"""The deny-list: names, directories and prefixes no Terax tool reads or writes.

The built-in rules are the floor. Configuration adds to them and never removes.
Every rule is matched against every spelling from ``normalize.matching_forms``
(case-folded, NFKC, look-alikes folded, Windows stream and trailing-dot forms).
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pathspec

from terax_jupyter.security.normalize import (
    fold_for_matching,
    matching_forms,
    strip_drive,
    to_slashes,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

# Matched (fullmatch) against the last segment: files that hold secrets.
SECRET_FILE_NAMES: tuple[tuple[str, str], ...] = (
    (".env*", r"\.env.*"),
    ("*.pem", r".*\.pem"),
    ("*.key", r".*\.key"),
    ("*.p12", r".*\.p12"),
    ("*.pfx", r".*\.pfx"),
    ("*.asc", r".*\.asc"),
    ("*.gpg", r".*\.gpg"),
    ("*.keystore", r".*\.keystore"),
    ("*.jks", r".*\.jks"),
    ("*.kdbx", r".*\.kdbx"),
    ("id_rsa*, id_dsa*, id_ecdsa*, id_ed25519*", r"id_(rsa|dsa|ecdsa|ed25519).*"),
    ("known_hosts", r"known_hosts.*"),
    ("authorized_keys", r"authorized_keys.*"),
    ("htpasswd", r"\.?htpasswd"),
    (".netrc", r"\.netrc"),
    ("_netrc", r"_netrc"),
    ("credentials", r"credentials(\.json)?"),
    (".git-credentials", r"\.git-credentials"),
    (".pgpass", r"\.pgpass"),
    (".npmrc", r"\.npmrc"),
    (".pypirc", r"\.pypirc"),
    ("secret(s).(json|yaml|yml|toml|env)", r"secrets?\.(json|yaml|yml|toml|env)"),
    ("service[-_]account*.json", r"service[-_]account.*\.json"),
    ("jupyter_cookie_secret", r"jupyter_cookie_secret"),
    ("jpserver-*.json", r"jpserver-.*\.(json|html)"),
    ("kernel-*.json", r"kernel-.*\.json"),
)

# Matched as whole segments anywhere in the path: directories that hold secrets.
SECRET_DIRECTORIES: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".git",
    ".password-store",
    ".config/gh",
    ".config/git",
    ".config/gcloud",
    ".local/share/keyrings",
    "library/keychains",
    "appdata/roaming/microsoft/credentials",
    "appdata/local/microsoft/credentials",
    "appdata/roaming/microsoft/protect",
)

# Substrings of the joined, lower-case, newline-framed paths that every path a rule above
# denies contains (segment boundaries are "/" and newline). A pre-filter only: each hit
# still gets the full check. A test proves the filter misses nothing the rules deny.
_RULE_NEEDLES: tuple[str, ...] = (
    "/.env",
    ".pem\n",
    ".key\n",
    ".p12\n",
    ".pfx\n",
    ".asc\n",
    ".gpg\n",
    ".keystore\n",
    ".jks\n",
    ".kdbx\n",
    "/id_rsa",
    "/id_dsa",
    "/id_ecdsa",
    "/id_ed25519",
    "/known_hosts",
    "/authorized_keys",
    "htpasswd\n",
    "netrc\n",
    "/credentials",
    "/.git-credentials\n",
    "/.pgpass\n",
    "/.npmrc\n",
    "/.pypirc\n",
    "/secret.",
    "/secrets.",
    "/service-account",
    "/service_account",
    "/jupyter_cookie_secret\n",
    "/jpserver-",
    "/kernel-",
    *(f"/{d}{end}" for d in SECRET_DIRECTORIES for end in ("/", "\n")),
)

# Substrings that make a path mean something other than its literal text once normalized
# (separators, stream suffixes, trailing dots and spaces, empty and "." segments, the NT
# "/??/" prefix): the needles above would not see through them.
_UNUSUAL_MARKS: tuple[str, ...] = (":", "\\", "//", "./", ".\n", " /", " \n", "/\n", "/??/")

# The same rules as globs for an external search tool (ripgrep ``--iglob !glob``), so it
# never even opens a protected file. Its results are still filtered by ``check``.
SEARCH_EXCLUDE_GLOBS: tuple[str, ...] = (
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.asc",
    "*.gpg",
    "*.keystore",
    "*.jks",
    "*.kdbx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "known_hosts*",
    "authorized_keys*",
    "htpasswd",
    ".htpasswd",
    ".netrc",
    "_netrc",
    "credentials",
    "credentials.json",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "secret.{json,yaml,yml,toml,env}",
    "secrets.{json,yaml,yml,toml,env}",
    "service[-_]account*.json",
    "jupyter_cookie_secret",
    "jpserver-*.{json,html}",
    "kernel-*.json",
    *(f"**/{d}/**" for d in SECRET_DIRECTORIES),
    *(d.rsplit("/", 1)[-1] for d in SECRET_DIRECTORIES if "/" not in d),
)

# Absolute prefixes nothing may read or write.
SYSTEM_PREFIXES: tuple[str, ...] = ("/etc", "/proc", "/sys", "/dev")

# Absolute prefixes that may be read (a workspace root permitting) but never written.
WRITE_ONLY_DENIED_PREFIXES: tuple[str, ...] = (
    "/usr",
    "/bin",
    "/sbin",
    "/boot",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/var/lib",
    "/windows",
    "/program files",
    "/program files (x86)",
    "/programdata",
    "/system",
    "/library",
    "/applications",
)


@dataclass(frozen=True)
class Denial:
    """Why a path is refused, in words a person can act on."""

    rule: str
    segment: str

    def explain(self) -> str:
        return f"'{self.segment}' matches the protected rule '{self.rule}'"


class DenyList:
    """The built-in rules plus an admin's additions (gitignore-style patterns and prefixes)."""

    def __init__(
        self,
        extra_patterns: Iterable[str] = (),
        extra_prefixes: Iterable[str] = (),
        extra_write_prefixes: Iterable[str] = (),
    ) -> None:
        # DOTALL: a name on disk may hold a newline, and ``.env<newline>x`` is still ``.env*``.
        self._names = [(label, re.compile(regex, re.DOTALL)) for label, regex in SECRET_FILE_NAMES]
        self._directories = [tuple(d.split("/")) for d in SECRET_DIRECTORIES]
        self.extra_patterns = [p for p in extra_patterns if p.strip()]
        self._extra_spec = pathspec.GitIgnoreSpec.from_lines(
            _at_any_depth(fold_for_matching(p)) for p in self.extra_patterns
        )
        self._prefixes = _prefix_forms([*SYSTEM_PREFIXES, *extra_prefixes])
        self._write_prefixes = _prefix_forms([*WRITE_ONLY_DENIED_PREFIXES, *extra_write_prefixes])
        self._prefilters = {
            False: _prefilters(self._prefixes),
            True: _prefilters(self._prefixes + self._write_prefixes),
        }

    def denied_among(
        self, paths: list[str], *, write: bool = False, base: str | None = None
    ) -> set[int]:
        """Indices of the denied paths in ``paths``: the same answer as ``check`` for each.

        For bulk use (file indexes, search results). A literal pre-filter over the
        joined paths finds the few candidates; only those get the full check. With
        ``base``, ``paths`` are relative to that folder (``/``-separated), which keeps
        the joined text short: the folder is judged once, not once per line.
        """
        if not paths:
            return set()
        if base is not None:
            base = base.rstrip("/\\") or base
            if self.check(base, write=write) is not None:
                return set(range(len(paths)))
            if self.extra_patterns or self._rule_continues_below(base):
                paths = [f"{base}/{p}" for p in paths]
                base = None
        full = paths if base is None else [f"{base}/{p}" for p in paths]
        if self.extra_patterns:
            return {i for i, path in enumerate(full) if self.check(path, write=write) is not None}
        lead = "\n" if base is None else "\n/"
        blob = lead + lead.join(paths).lower() + "\n"
        if (
            not blob.isascii()
            or blob.count("\n") != len(paths) + 1
            or blob.count("\n/") != len(paths)
            or any(mark in blob for mark in _UNUSUAL_MARKS)
        ):
            # Rare: non-ASCII or multi-line names, relative paths, or spellings that
            # normalization rewrites (Windows forms, "//", "/./"); judge every path fully.
            return {i for i, path in enumerate(full) if self.check(path, write=write) is not None}
        step = len(lead)
        starts = [0]
        for path in paths[:-1]:
            starts.append(starts[-1] + len(path) + step)
        candidates: set[int] = set()
        for prefilter in self._prefilters[write]:
            for match in prefilter.finditer(blob):
                candidates.add(bisect.bisect_right(starts, match.start()) - 1)
        return {
            i
            for i in candidates
            if 0 <= i < len(paths) and self.check(full[i], write=write) is not None
        }

    def _rule_continues_below(self, base: str) -> bool:
        """Whether a multi-segment folder rule could start in ``base`` and end below it."""
        tail = [s for s in fold_for_matching(to_slashes(base)).split("/") if s]
        for directory in self._directories:
            for width in range(1, len(directory)):
                if tuple(tail[-width:]) == directory[:width]:
                    return True
        return False

    def check(self, path: str, *, write: bool) -> Denial | None:
        """The first rule ``path`` breaks, or None. ``path`` is literal or canonical."""
        for form in matching_forms(path):
            denial = self._check_form(form, write=write)
            if denial is not None:
                return denial
        return None

    def _check_form(self, form: str, *, write: bool) -> Denial | None:
        segments = [s for s in form.split("/") if s]
        if segments:
            name = segments[-1]
            for label, regex in self._names:
                if regex.fullmatch(name):
                    return Denial(label, name)
        for directory in self._directories:
            if _contains_run(segments, directory):
                return Denial("/".join(directory) + "/", "/".join(directory))
        if form.startswith("/"):
            prefixes = self._prefixes + (self._write_prefixes if write else [])
            for prefix in prefixes:
                if form == prefix or form.startswith(prefix + "/"):
                    return Denial(prefix + "/", prefix)
        if self.extra_patterns and segments:
            relative = "/".join(segments)
            if self._extra_spec.match_file(relative):
                return Denial("admin deny pattern", segments[-1])
        return None


def _contains_run(segments: list[str], run: tuple[str, ...]) -> bool:
    width = len(run)
    return any(tuple(segments[i : i + width]) == run for i in range(len(segments) - width + 1))


def _at_any_depth(pattern: str) -> str:
    """``dumps/*.sql`` as ``**/dumps/*.sql``.

    In a .gitignore an inner "/" anchors a pattern to the file's folder; paths here are
    matched whole, from the filesystem root, so such a pattern would match nothing. A
    leading "/" still anchors (to the filesystem root).
    """
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if "/" in body.rstrip("/") and not body.startswith(("/", "**/")):
        body = "**/" + body
    return ("!" if negated else "") + body


def _prefix_forms(prefixes: Iterable[str]) -> list[str]:
    """Each prefix as written and as the filesystem resolves it.

    The guard's second check sees canonical paths: a prefix reached through a link
    (``/etc`` -> ``/private/etc``, a data folder under a linked home) must match there too.
    """
    forms: list[str] = []
    for prefix in prefixes:
        spellings = [prefix]
        if os.path.isabs(prefix):
            spellings.append(os.path.realpath(prefix))
        for spelling in spellings:
            form = _prefix_form(spelling)
            if form not in forms:
                forms.append(form)
    return forms


def _prefix_form(prefix: str) -> str:
    form = fold_for_matching(strip_drive(to_slashes(prefix))).rstrip("/")
    return form if form.startswith("/") else "/" + form


def _prefilters(prefixes: list[str]) -> list[re.Pattern[str]]:
    """The needles as few patterns: one led by "/" (re finds the "/" fast), one for the rest."""
    needles = list(_RULE_NEEDLES) + [f"\n{p}{end}" for p in prefixes for end in ("/", "\n")]
    slash_led = [n[1:] for n in needles if n.startswith("/")]
    others = [n for n in needles if not n.startswith("/")]
    return [
        re.compile("/(?:" + "|".join(_needle_pattern(n) for n in slash_led) + ")"),
        re.compile("|".join(_needle_pattern(n) for n in others)),
    ]


def _needle_pattern(needle: str) -> str:
    """A needle's pattern; a closing line break is looked at, not consumed, so the
    next path's leading line break stays free to start the next match."""
    if needle.endswith("\n"):
        return re.escape(needle[:-1]) + "(?=\n)"
    return re.escape(needle)
