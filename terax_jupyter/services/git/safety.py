"""What git may run for a repository: nothing its own configuration names, unless trusted.

A repository can make git run programs through its configuration (``.git/config``, the
worktree config, files they include) and its attributes (``.gitattributes`` naming a filter
driver): ``core.fsmonitor``, hooks, ``filter.<name>.clean/smudge/process``, signing programs,
ssh commands, credential helpers, upload-pack and remote helpers. A cloned project brings its
attributes; an archive or shared folder brings a whole ``.git``; a project can even commit a
bare repository as plain files that git discovers when a command runs inside that folder.

Every git call therefore gets, on its command line (``-c``, which beats every file):

- ``ALWAYS``: output-shaping settings that also close programs git would otherwise run on a
  read (signature verification, the ``ext::`` transport, implicit bare repositories, index
  refreshes by ``git diff``, a gitlink's diff run by git inside the submodule);
- ``UNTRUSTED`` for a repository the user has not trusted: no fsmonitor, no submodule
  recursion (a submodule's own configuration is not inspected; status and diff also carry
  ``IGNORE_SUBMODULES``, the only form that beats a ``submodule.<name>.ignore``);
- ``core.hooksPath=/dev/null`` for every read, and for writes in untrusted repositories.

and, for an untrusted repository, environment entries (``GIT_CONFIG_COUNT``, which carry any
key, even a subsection with ``=`` in it) that neutralise what the repository's own scopes
define: every filter driver, signing programs set back to the user's (or git's default).
Settings that only the network operations use and that cannot be neutralised faithfully
(ssh command, credential helpers, upload-pack, ...) make fetch, pull and push refuse until
the user trusts the repository. Configuration of the user (global), the system and the
server's environment is the user's and administrator's own and is honoured.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# Where hooks go when they must not run: no file can exist below it.
NO_HOOKS = os.devnull

ALWAYS: tuple[tuple[str, str], ...] = (
    # A folder holding HEAD, objects/ and refs/ (a bare repository committed as plain files)
    # is not a repository unless named with --git-dir. Only the command line and the
    # user's or system's files are read for this key; the repository cannot undo it.
    ("safe.bareRepository", "explicit"),
    # ext:: runs any command as a "transport".
    ("protocol.ext.allow", "never"),
    # Verifying a signature runs gpg.program (and would mix gpg's output into the log).
    ("log.showSignature", "false"),
    # git diff rewrites the index to refresh stat data (firing post-index-change); a read
    # writes nothing.
    ("diff.autoRefreshIndex", "false"),
    ("core.pager", "cat"),
    # diff.submodule=diff (or log) makes a diff of a gitlink run git inside the submodule:
    # another repository, with its own configuration and attributes, and without this
    # command's --no-textconv/--no-ext-diff or the GIT_CONFIG_COUNT entries of
    # Safety.environment (git drops those for submodule processes). Trusting a superproject
    # does not trust what its submodules hold; and the API shows one path's diff, for a
    # gitlink its two commit ids. So: for every repository, trusted or not.
    ("diff.submodule", "short"),
)

UNTRUSTED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    # git status and git diff would run "git status" inside each submodule, with that
    # submodule's own configuration (filters) unseen by this module: report only the
    # submodule commits the superproject records. A submodule.<name>.ignore in .gitmodules
    # or the repository's configuration beats this key: status and diff also get
    # IGNORE_SUBMODULES on their command line, which beats both.
    ("diff.ignoreSubmodules", "dirty"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
)

# The flag status and diff of an untrusted repository carry (see UNTRUSTED).
IGNORE_SUBMODULES = "--ignore-submodules=dirty"

# The configuration files a repository brings (its own, its worktree's, what they include).
REPOSITORY_SCOPES = frozenset({"local", "worktree"})

# A driver's name is the subsection as written: any bytes, dots, quotes and spaces included,
# and empty too (`filter=` in .gitattributes names the driver "", `filter..clean`). git
# splits the key at its first and last dot, and so does this pattern (greedy).
_FILTER = re.compile(r"^filter\.(?P<name>.*)\.(?:clean|smudge|process|required)$", re.DOTALL)
_FILTER_NEUTRAL = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
# Program keys with a faithful neutral value: the user's own setting, else git's default.
_PROGRAM_DEFAULTS = {
    "gpg.program": "gpg",
    "gpg.openpgp.program": "gpg",
    "gpg.x509.program": "gpgsm",
    "gpg.ssh.program": "ssh-keygen",
    "gpg.format": "openpgp",
    # Signing prompts for the user's key (pinentry); a repository does not decide that.
    "commit.gpgsign": "false",
    "merge.verifysignatures": "false",
}
# Keys that name a program git runs for fetch, pull or push; no faithful neutral value.
_NETWORK = re.compile(
    r"^(?:core\.(?:sshcommand|gitproxy|askpass|alternaterefscommand)"
    r"|credential\.(?:.*\.)?helper"
    r"|remote\..*\.(?:uploadpack|receivepack|vcs))$",
    re.DOTALL,
)
# Keys only a commit uses that name a program and have no neutral value.
_COMMIT = frozenset({"gpg.ssh.defaultkeycommand"})
# A merge driver (.gitattributes ``merge=<name>``) is a program git runs for each file it
# merges; an empty command is no faithful "no driver", so what merges refuses instead.
_MERGE = re.compile(r"^merge\..*\.driver$", re.DOTALL)
# Keys of the repository's own configuration worth telling the user about before trusting:
# what trusting would let run. (Programs covered by flags, like diff drivers, are included:
# they are part of what the repository asks for.)
_SHOWN = re.compile(
    r"^(?:core\.(?:fsmonitor|hookspath|sshcommand|gitproxy|askpass|alternaterefscommand|editor"
    r"|pager)"
    r"|filter\..*\.(?:clean|smudge|process)"
    r"|diff\..*\.(?:textconv|command)|diff\.external|merge\..*\.driver"
    r"|gpg\.(?:.*\.)?program|gpg\.ssh\.defaultkeycommand"
    r"|credential\.(?:.*\.)?helper"
    r"|remote\..*\.(?:uploadpack|receivepack|vcs)"
    r"|pager\..+|sequence\.editor|protocol\..*allow)$",
    re.DOTALL,
)

# Hooks git may run for each operation Terax offers; the ones present are reported when an
# untrusted repository skips them.
HOOKS: dict[str, tuple[str, ...]] = {
    "commit": (
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-rewrite",
        "reference-transaction",
        "pre-auto-gc",
    ),
    "push": ("pre-push", "reference-transaction"),
    "pull": ("post-merge", "post-checkout", "reference-transaction", "pre-auto-gc"),
    "fetch": ("reference-transaction", "pre-auto-gc"),
    "checkout": ("post-checkout", "reference-transaction"),
    "branch": ("reference-transaction",),
    "index": ("post-index-change",),
}
ALL_HOOKS: tuple[str, ...] = tuple(
    sorted({hook for hooks in HOOKS.values() for hook in hooks} | {"pre-merge-commit"})
)


@dataclass(frozen=True)
class ConfigEntry:
    scope: str
    key: str  # section and variable lower-cased by git; a subsection as written
    value: str | None  # None: a key without "=" (boolean true)


def parse_config_list(data: bytes) -> list[ConfigEntry]:
    """``git config --list --show-scope -z``: ``scope NUL key LF value NUL`` records."""
    tokens = data.decode("utf-8", "surrogateescape").split("\0")
    entries: list[ConfigEntry] = []
    for index in range(0, len(tokens) - 1, 2):
        scope, record = tokens[index], tokens[index + 1]
        key, newline, value = record.partition("\n")
        if key:
            entries.append(ConfigEntry(scope, key, value if newline else None))
    return entries


@dataclass(frozen=True)
class Safety:
    """What one repository's git calls may run, and what its own configuration asks for."""

    trusted: bool = False
    # (key, value) pairs passed through GIT_CONFIG_COUNT: they override the repository's scopes.
    overrides: tuple[tuple[str, str], ...] = ()
    # Repository keys that name programs fetch, pull and push would run; refused untrusted.
    network_programs: tuple[str, ...] = ()
    # Repository keys that name programs a commit would run, without a neutral value.
    commit_programs: tuple[str, ...] = ()
    # Repository keys that name merge drivers (continuing a rebase or cherry-pick merges).
    merge_programs: tuple[str, ...] = ()
    # What the repository's configuration names, for the trust prompt: (key, value).
    programs: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def arguments(self, *, hooks: bool) -> list[str]:
        """``-c`` arguments for one call; ``hooks`` asks for hooks (granted only if trusted)."""
        pairs: list[tuple[str, str]] = list(ALWAYS)
        if not self.trusted:
            pairs += UNTRUSTED
        if not (hooks and self.trusted):
            pairs.append(("core.hooksPath", NO_HOOKS))
        args: list[str] = []
        for key, value in pairs:
            args += ["-c", f"{key}={value}"]
        return args

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The GIT_CONFIG_COUNT entries after the ones ``base`` (the server's) already has."""
        if not self.overrides:
            return {}
        try:
            start = max(0, int(base.get("GIT_CONFIG_COUNT", "0")))
        except ValueError:
            start = 0
        env = {"GIT_CONFIG_COUNT": str(start + len(self.overrides))}
        for offset, (key, value) in enumerate(self.overrides):
            env[f"GIT_CONFIG_KEY_{start + offset}"] = key
            env[f"GIT_CONFIG_VALUE_{start + offset}"] = value
        return env


UNTRUSTED_SAFETY = Safety()
TRUSTED_SAFETY = Safety(trusted=True)


def assess(entries: Iterable[ConfigEntry], *, trusted: bool) -> Safety:
    """The safety of a repository whose configuration lists as ``entries``."""
    entries = list(entries)
    programs = tuple(
        (e.key, e.value or "")
        for e in entries
        if e.scope in REPOSITORY_SCOPES and _SHOWN.match(e.key.lower())
    )
    if trusted:
        return Safety(trusted=True, programs=programs)
    overrides: list[tuple[str, str]] = []
    drivers: dict[str, None] = {}
    network: dict[str, None] = {}
    commit: dict[str, None] = {}
    merge: dict[str, None] = {}
    neutral: dict[str, str] = {}
    for entry in entries:
        lowered = entry.key.lower()
        if entry.scope not in REPOSITORY_SCOPES:
            # The user's own values (the last one wins), restored over the repository's.
            if entry.value is not None and (
                lowered in _PROGRAM_DEFAULTS or _FILTER.match(entry.key) is not None
            ):
                neutral[entry.key if lowered.startswith("filter.") else lowered] = entry.value
            continue
        match = _FILTER.match(entry.key)
        if match is not None:
            drivers[match["name"]] = None
        elif _NETWORK.match(lowered):
            network[entry.key] = None
        elif lowered in _COMMIT:
            commit[entry.key] = None
        elif _MERGE.match(lowered):
            merge[entry.key] = None
        elif lowered in _PROGRAM_DEFAULTS:
            neutral.setdefault(lowered, _PROGRAM_DEFAULTS[lowered])
    for name in drivers:
        # Verified on git 2.39: empty clean/smudge/process mean "no filter", and a driver
        # marked required no longer fails without one. A driver the user defines too (git
        # lfs installed globally and in the repository) keeps the user's commands.
        for variable, empty in _FILTER_NEUTRAL:
            key = f"filter.{name}.{variable}"
            overrides.append((key, neutral.get(key, empty)))
    repository_keys = {e.key.lower() for e in entries if e.scope in REPOSITORY_SCOPES}
    for key in _PROGRAM_DEFAULTS:
        if key in repository_keys:
            overrides.append((key, neutral.get(key, _PROGRAM_DEFAULTS[key])))
    return Safety(
        trusted=False,
        overrides=tuple(overrides),
        network_programs=tuple(network),
        commit_programs=tuple(commit),
        merge_programs=tuple(merge),
        programs=programs,
    )


def hooks_directory(entries: Iterable[ConfigEntry], top: str, common_dir: str) -> str:
    """Where git looks for hooks: ``core.hooksPath`` (any scope, last wins) or ``hooks``."""
    configured = None
    for entry in entries:
        # Our own "-c core.hooksPath=/dev/null" shows in the listing: not the repository's.
        ours = entry.scope == "command" and entry.value == NO_HOOKS
        if entry.key.lower() == "core.hookspath" and entry.value and not ours:
            configured = entry.value
    if configured is None:
        return os.path.join(common_dir, "hooks")
    expanded = os.path.expanduser(configured)
    return expanded if os.path.isabs(expanded) else os.path.join(top, expanded)


def present_hooks(directory: str, names: Iterable[str]) -> list[str]:
    """The hooks among ``names`` that exist as executable files in ``directory``.

    A stat of each name git would look for; the names are git's, not a client's.
    """
    found = []
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            found.append(name)
    return found


def describe(safety: Safety) -> list[dict[str, Any]]:
    """The repository's program settings as the API shows them."""
    return [{"key": key, "value": value} for key, value in safety.programs]
