"""What an auto-approve rule never covers: options that write files, run programs or change config.

A command-prefix rule (``git log``) approves the commands that start with its words, not what
the words after them make the program do: ``git log --output=/elsewhere`` writes a file,
``rg --pre=prog`` runs a program, ``pytest --basetemp=dir`` empties a folder. ``uncovered``
names the first such word after the rule's own words, and the command then asks.

Options are read the way each program reads them: ``--opt=value`` and ``--opt value``, short
clusters (``-xvf``, up to a letter that takes a value), unique prefixes where the program
accepts them (GNU getopt_long, git's parse-options, optparse, npm), ``--`` ending options, and
single-dash long options (``find -exec``, ``go -o``). Wrappers (``env``, ``timeout``, ``xargs``,
``python -m``, ``npx``) are looked through. A program Terax has no table for gets no benefit of
the doubt: any option after the rule's words asks. Programs whose operands are what they write
(``rm``, ``cp``, ``tee``) or that run with other privileges (``sudo``) are covered only by a
rule that names the whole command.

This is a list, not a sandbox: it makes a rule mean what its words say for the programs an
agent runs most; an approval is still the boundary for everything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

WRITES = "writes files"
DELETES = "deletes or overwrites data"
RUNS = "runs another program"
CODE = "runs code given on the command line"
LOADS = "loads code or commands from elsewhere"
CONFIG = "changes the configuration, environment or folder the program uses"
SENDS = "sends data elsewhere"
UNKNOWN = "is an option Terax has no table for"


@dataclass(frozen=True)
class Finding:
    """A word a rule does not cover: where it is, and why."""

    index: int
    word: str
    why: str

    @property
    def message(self) -> str:
        return f"{self.word} {self.why}"


@dataclass(frozen=True)
class Program:
    """How one program reads its options, and which of them a rule never covers."""

    long: Mapping[str, str] = field(default_factory=dict)
    """Long option names (no dashes) and what they do."""
    short: Mapping[str, str] = field(default_factory=dict)
    """Short option letters and what they do."""
    short_values: str = ""
    """Letters that take a value (the rest of the cluster or the next word): after one of
    them a cluster says nothing more. Only letters known to take one: a letter missing here
    makes the check stricter, never looser."""
    abbreviations: bool = False
    """Whether the program accepts a unique prefix of a long option (``--outp``)."""
    exact_safe: frozenset[str] = frozenset()
    """Harmless long options that are prefixes of a listed one (pip's ``--pre``)."""
    single_dash_long: bool = False
    """``-name`` is one option (find, go), not a cluster."""
    value_checks: Mapping[str, tuple[Callable[[str], bool], str]] = field(default_factory=dict)
    """Long options that matter only for some values: name -> (test of the value, why)."""
    script_operand: bool = False
    """The first operand is a script or package; the words after it are its own (python,
    node): options there are the script's, which Terax does not know."""
    passthrough: str | None = None
    """A word after which the rest goes to another program (``--`` for ``npm test --``)."""
    subcommands: Mapping[str, Program] = field(default_factory=dict)
    """Per subcommand (git, npm), the options it adds; the program's own apply too."""
    check: Callable[[list[str], int, Program], Iterator[Finding]] | None = None
    """More checks on the words (a sed script, an awk program, make's assignments)."""


def _names(names: str) -> list[str]:
    return names.split()


def _table(why: str, names: str) -> dict[str, str]:
    return dict.fromkeys(_names(names), why)


# -- the checks some programs need beyond their options -------------------------------------


def _operands(words: list[str], start: int, spec: Program) -> Iterator[int]:
    """Indices of the words that are not options or their values, as far as ``spec`` knows."""
    index = start
    while index < len(words):
        word = words[index]
        if word == "--":
            yield from range(index + 1, len(words))
            return
        if word.startswith("-") and len(word) > 1:
            letters = word[1:] if not word.startswith("--") else ""
            if letters and not spec.single_dash_long:
                for position, letter in enumerate(letters):
                    if letter in spec.short_values:
                        if position == len(letters) - 1:
                            index += 1  # the value is the next word
                        break
        else:
            yield index
        index += 1


def _sed_script(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    # A sed script can write (w, W, s///w) and run commands (e, s///e); --sandbox refuses both.
    if any(w.startswith("--sa") and "sandbox".startswith(w[2:]) for w in words[start:]):
        return
    scripts: list[tuple[int, str]] = []
    index = start
    while index < len(words):
        word = words[index]
        if word == "--":
            break
        if word.startswith("--") and len(word) > 2:
            name, has_value, value = word[2:].partition("=")
            if name and "expression".startswith(name):
                if has_value:
                    scripts.append((index, value))
                elif index + 1 < len(words):
                    index += 1
                    scripts.append((index, words[index]))
        elif word.startswith("-") and len(word) > 1:
            for position, letter in enumerate(word[1:]):
                if letter in spec.short_values:
                    rest = word[position + 2 :]
                    if not rest:
                        index += 1
                        rest = words[index] if index < len(words) else ""
                    if letter == "e":
                        scripts.append((index, rest))
                    break
        index += 1
    if not scripts:
        first = next(_operands(words, start, spec), None)
        if first is not None:
            scripts.append((first, words[first]))
    for at, script in scripts:
        if re.search(r"[wWe]", script):
            yield Finding(at, words[at], "is a sed script that may write files or run commands")


def _awk_program(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    # An awk program is code: system(), print > file, "cmd" | getline, @load.
    first = next(_operands(words, start, spec), None)
    if first is not None and re.search(r"system|getline|[|>@]", words[first]):
        yield Finding(first, words[first], "is an awk program that may run commands or write files")


def _make_assignments(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    for index in _operands(words, start, spec):
        if "=" in words[index]:
            yield Finding(index, words[index], "overrides a variable the Makefile's recipes use")


def _second_operand_written(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    operands = list(_operands(words, start, spec))
    if len(operands) > 1:
        yield Finding(operands[1], words[operands[1]], WRITES)


def _git_push_refspecs(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    for index in _operands(words, start, spec):
        if words[index].startswith(("+", ":")):
            yield Finding(index, words[index], "force-pushes or deletes a remote branch")


def _positional(
    names: dict[str, str],
) -> Callable[[list[str], int, Program], Iterator[Finding]]:
    """A check for words such as ``git stash clear`` or ``git bisect run``."""

    def check(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
        for index in _operands(words, start, spec):
            if words[index] in names:
                yield Finding(index, words[index], names[words[index]])

    return check


def _writes_unless(
    *read_only: str,
) -> Callable[[list[str], int, Program], Iterator[Finding]]:
    """Formatters (black, ruff format) rewrite files unless told only to check."""

    def check(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
        if any(w in read_only for w in words[start:]):
            return
        operands = list(_operands(words, start, spec))
        # Each operand is a file it rewrites; with none, it rewrites the folder it runs in.
        for index in operands or [start - 1]:
            yield Finding(index, words[index], "rewrites files in place")

    return check


def _has_colon(value: str) -> bool:
    return ":" in value


# -- the table --------------------------------------------------------------------------------

_DIFF_OPTIONS = {"output": WRITES, "ext-diff": RUNS}
_GIT_DIFFS = Program(long=_DIFF_OPTIONS, abbreviations=True)
_GIT = Program(
    # git's own options, before the subcommand: no abbreviations there.
    long={
        **_table(CONFIG, "git-dir work-tree config-env namespace super-prefix"),
        "exec-path": RUNS,
    },
    short={"c": CONFIG, "C": CONFIG},
    subcommands={
        **dict.fromkeys(
            _names(
                "log show whatchanged diff diff-tree diff-index diff-files range-diff reflog cherry"
            ),
            _GIT_DIFFS,
        ),
        "format-patch": Program(
            long={**_DIFF_OPTIONS, "output-directory": WRITES},
            short={"o": WRITES},
            abbreviations=True,
        ),
        "archive": Program(
            long={"output": WRITES, "remote": RUNS, "exec": RUNS},
            short={"o": WRITES},
            abbreviations=True,
        ),
        "grep": Program(
            long={"open-files-in-pager": RUNS, "ext-grep": RUNS},
            short={"O": RUNS},
            short_values="efABCm",
            abbreviations=True,
        ),
        "clone": Program(
            long={
                "upload-pack": RUNS,
                "config": CONFIG,
                "template": CONFIG,
                "separate-git-dir": WRITES,
            },
            short={"u": RUNS, "c": CONFIG},
            abbreviations=True,
        ),
        **dict.fromkeys(
            _names("fetch pull ls-remote"),
            Program(long={"upload-pack": RUNS}, abbreviations=True),
        ),
        "push": Program(
            long={
                "receive-pack": RUNS,
                "exec": RUNS,
                **_table(DELETES, "force force-with-lease force-if-includes delete mirror prune"),
            },
            short={"f": DELETES, "d": DELETES},
            abbreviations=True,
            check=_git_push_refspecs,
        ),
        "rebase": Program(long={"exec": RUNS}, short={"x": RUNS}, abbreviations=True),
        **dict.fromkeys(
            _names("difftool mergetool"),
            Program(
                long={"extcmd": RUNS, "tool": RUNS},
                short={"x": RUNS, "t": RUNS},
                abbreviations=True,
            ),
        ),
        "filter-branch": Program(
            long=_table(
                RUNS,
                "tree-filter index-filter msg-filter env-filter parent-filter commit-filter "
                "tag-name-filter",
            ),
            abbreviations=True,
        ),
        "checkout": Program(long={"force": DELETES}, short={"f": DELETES}, abbreviations=True),
        "switch": Program(
            long=_table(DELETES, "discard-changes force force-create"),
            short={"f": DELETES, "C": DELETES},
            abbreviations=True,
        ),
        "reset": Program(long=_table(DELETES, "hard merge keep"), abbreviations=True),
        "clean": Program(long={"force": DELETES}, short={"f": DELETES}, abbreviations=True),
        "branch": Program(
            long={**_table(DELETES, "delete move force"), "edit-description": RUNS},
            short=_table(DELETES, "d D m M C f"),
            abbreviations=True,
        ),
        "tag": Program(
            long=_table(DELETES, "delete force"),
            short={"d": DELETES, "f": DELETES},
            abbreviations=True,
        ),
        "stash": Program(
            long=_DIFF_OPTIONS,
            abbreviations=True,
            check=_positional({"drop": DELETES, "clear": DELETES}),
        ),
        "bisect": Program(check=_positional({"run": RUNS})),
        "init": Program(long={"template": CONFIG, "separate-git-dir": WRITES}, abbreviations=True),
        "submodule": Program(check=_positional({"foreach": RUNS})),
    },
)
# Global options of git that take the next word as their value.
_GIT_VALUED = {
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
}
# Subcommands whose operands are what they change: only a rule naming the whole command.
_GIT_EXACT = {
    **_table(
        "changes what its operands name",
        "config rm mv restore apply am update-ref symbolic-ref gc prune worktree remote notes "
        "replace maintenance sparse-checkout",
    ),
    **_table(SENDS, "send-email request-pull daemon instaweb"),
}
# Built-in subcommands whose options hold nothing a rule must not cover.
_GIT_PLAIN = {
    "status",
    "add",
    "commit",
    "merge",
    "describe",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "shortlog",
    "blame",
    "annotate",
    "cherry-pick",
    "revert",
    "show-ref",
    "for-each-ref",
    "name-rev",
    "merge-base",
    "fsck",
    "count-objects",
    "check-ignore",
    "check-attr",
    "verify-commit",
    "verify-tag",
    "version",
    "help",
    "var",
    "show-branch",
    "stage",
    "hash-object",
    "mktree",
    "write-tree",
}

_PYTEST = Program(
    long={
        "basetemp": "empties and reuses that folder",
        **_table(
            WRITES,
            "rootdir junitxml junit-xml resultlog result-log report-log debug log-file html "
            "json-report-file benchmark-save benchmark-storage benchmark-json rsyncdir",
        ),
        **_table(CONFIG, "override-ini config-file inifile cov-config"),
        **_table(LOADS, "confcutdir pdbcls"),
        "pastebin": SENDS,
        "tx": RUNS,
    },
    short={"p": LOADS, "o": CONFIG, "c": CONFIG},
    short_values="kmpocrWn",
    value_checks={"cov-report": (_has_colon, "writes a report where it says")},
)
_PIP = Program(
    long={
        **_table(
            WRITES,
            "target prefix root src log log-file report cache-dir dest wheel-dir "
            "break-system-packages user",
        ),
        **_table(
            RUNS,
            "editable index-url extra-index-url find-links global-option install-option "
            "build-option",
        ),
        **_table(CONFIG, "trusted-host config-settings python proxy"),
    },
    short={"t": WRITES, "d": WRITES, "w": WRITES, "e": RUNS, "i": RUNS, "f": RUNS, "C": CONFIG},
    short_values="rc",
    abbreviations=True,
    exact_safe=frozenset({"pre"}),
)
_NPM = Program(
    long={
        **_table(CONFIG, "prefix userconfig globalconfig dir cwd use-yarnrc"),
        **_table(
            RUNS,
            "script-shell node-options registry init-module editor shell git browser viewer "
            "onload-script",
        ),
        **_table(WRITES, "global location cache modules-folder global-folder cache-folder"),
        "call": CODE,
    },
    short={"g": WRITES, "C": CONFIG, "c": CODE},
    abbreviations=True,
    passthrough="--",
    check=_positional(_table(RUNS, "exec x dlx explore")),
)
_SHELL = Program(
    long={"rcfile": LOADS, "init-file": LOADS, "init-command": CODE},
    short={"c": CODE, "C": CODE},
    script_operand=True,
)
_AWK = Program(
    long={
        **_table(LOADS, "file include load exec source"),
        **_table(WRITES, "pretty-print profile dump-variables"),
        "debug": RUNS,
    },
    short={
        **_table(LOADS, "f i l E"),
        **_table(WRITES, "o p d"),
        "D": RUNS,
        "W": CONFIG,
    },
    short_values="vF",
    abbreviations=True,
    check=_awk_program,
)
_SAFE = Program()

PROGRAMS: dict[str, Program] = {
    "git": _GIT,
    "pytest": _PYTEST,
    "py.test": _PYTEST,
    "pip": _PIP,
    "find": Program(
        long={
            **_table(RUNS, "exec execdir ok okdir"),
            "delete": DELETES,
            **_table(WRITES, "fprint fprint0 fprintf fls"),
        },
        single_dash_long=True,
    ),
    **dict.fromkeys(
        _names("fd fdfind"),
        Program(
            long=_table(RUNS, "exec exec-batch"),
            short={"x": RUNS, "X": RUNS},
            short_values="etdEcjSo",
        ),
    ),
    "rg": Program(
        long=_table(RUNS, "pre search-zip hostname-bin"),
        short={"z": RUNS},
        short_values="efgtTmABCjMErd",
    ),
    "sed": Program(
        long={"in-place": WRITES, "file": LOADS},
        short={"i": WRITES, "f": LOADS},
        short_values="efl",
        abbreviations=True,
        check=_sed_script,
    ),
    **dict.fromkeys(_names("awk gawk mawk nawk"), _AWK),
    "perl": Program(
        short={"e": CODE, "E": CODE, "i": WRITES, "M": LOADS, "m": LOADS, "x": CODE},
        script_operand=True,
    ),
    "ruby": Program(
        short={"e": CODE, "i": WRITES, "r": LOADS, "C": CONFIG, "x": CODE, "S": RUNS},
        long={"require": LOADS},
        script_operand=True,
    ),
    "python": Program(short={"c": CODE}, short_values="WX", script_operand=True),
    "node": Program(
        long={
            **_table(CODE, "eval print"),
            **_table(LOADS, "require import loader experimental-loader"),
            **_table(RUNS, "inspect inspect-brk inspect-port inspect-wait run"),
            "env-file": CONFIG,
        },
        short={"e": CODE, "p": CODE, "r": LOADS},
        script_operand=True,
    ),
    **dict.fromkeys(_names("npm pnpm yarn"), _NPM),
    "make": Program(
        long={
            **_table(LOADS, "file makefile include-dir"),
            "eval": CODE,
            **_table(CONFIG, "directory environment-overrides"),
        },
        short={"f": LOADS, "I": LOADS, "E": CODE, "C": CONFIG, "e": CONFIG},
        short_values="oW",
        abbreviations=True,
        check=_make_assignments,
    ),
    "tar": Program(
        long={
            **_table(
                WRITES, "extract get create append update catenate concatenate listed-incremental"
            ),
            **_table(DELETES, "delete remove-files unlink-first recursive-unlink overwrite"),
            **_table(
                RUNS,
                "to-command checkpoint-action use-compress-program rsh-command rmt-command "
                "info-script new-volume-script",
            ),
        },
        short={
            **_table(WRITES, "x c r u A g"),
            "U": DELETES,
            **_table(RUNS, "I F"),
        },
        short_values="fCbHKLNTVX",
        abbreviations=True,
    ),
    "sort": Program(
        long={"output": WRITES, "compress-program": RUNS, "temporary-directory": WRITES},
        short={"o": WRITES, "T": WRITES},
        short_values="ktS",
        abbreviations=True,
    ),
    "uniq": Program(short_values="fsw", check=_second_operand_written),
    "curl": Program(
        long={
            **_table(
                WRITES,
                "output remote-name remote-name-all output-dir create-dirs dump-header "
                "cookie-jar trace trace-ascii libcurl etag-save hsts alt-svc stderr",
            ),
            "config": LOADS,
            "upload-file": SENDS,
        },
        short={**_table(WRITES, "o O D c"), "K": LOADS, "T": SENDS},
        short_values="dHXAeruwFEmxyYzbCQtU",
    ),
    "wget": Program(
        long={
            **_table(
                WRITES,
                "output-document output-file append-output directory-prefix recursive mirror",
            ),
            **_table(SENDS, "post-file body-file"),
            "execute": CONFIG,
            "config": LOADS,
        },
        short={**_table(WRITES, "O o a P r m"), "e": CONFIG},
        abbreviations=True,
    ),
    "go": Program(
        long={
            **_table(RUNS, "exec toolexec"),
            **_table(
                WRITES,
                "o pkgdir coverprofile cpuprofile memprofile blockprofile mutexprofile trace "
                "outputdir",
            ),
            **_table(CONFIG, "modfile C overlay"),
        },
        single_dash_long=True,
        passthrough="-args",
        subcommands={"env": Program(long=_table(CONFIG, "w u"), single_dash_long=True)},
    ),
    "cargo": Program(
        long={
            "config": CONFIG,
            **_table(WRITES, "target-dir out-dir artifact-dir"),
            "manifest-path": LOADS,
        },
        short={"Z": CONFIG, "C": CONFIG},
        passthrough="--",
    ),
    "ruff": Program(
        long={
            **_table(WRITES, "fix unsafe-fixes output-file cache-dir add-noqa"),
            "config": CONFIG,
        },
        short={"o": WRITES},
        subcommands={"format": Program(check=_writes_unless("--check", "--diff"))},
    ),
    "black": Program(long={"config": CONFIG}, check=_writes_unless("--check", "--diff")),
    "prettier": Program(
        long={
            "write": WRITES,
            "cache-location": WRITES,
            "config": CONFIG,
            **_table(LOADS, "plugin plugin-search-dir"),
        },
        short={"w": WRITES},
    ),
    "eslint": Program(
        long={
            **_table(WRITES, "fix output-file cache-location"),
            "config": CONFIG,
            **_table(LOADS, "plugin rulesdir resolve-plugins-relative-to format parser"),
            "init": RUNS,
        },
        short={"o": WRITES, "c": CONFIG, "f": LOADS},
    ),
    "mypy": Program(
        long={
            **_table(
                WRITES,
                "cache-dir html-report xml-report txt-report linecount-report "
                "linecoverage-report memory-xml-report cobertura-xml-report lineprecision-report "
                "any-exprs-report junit-xml",
            ),
            "config-file": CONFIG,
            **_table(RUNS, "python-executable install-types"),
        },
        abbreviations=True,
    ),
    "yq": Program(long={"inplace": WRITES}, short={"i": WRITES}),
    "tree": Program(short={"o": WRITES}),
    "file": Program(long={"compile": WRITES}, short={"C": WRITES}, abbreviations=True),
    "date": Program(long={"set": CONFIG}, short={"s": CONFIG}, abbreviations=True),
    "unittest": _SAFE,
    **dict.fromkeys(
        _names(
            "ls cat head tail wc grep egrep fgrep echo printf pwd which type stat du df diff "
            "cmp comm true false uname whoami id basename dirname realpath readlink nl cut tr "
            "rev jq sha256sum md5sum"
        ),
        _SAFE,
    ),
}
for _shell in ("sh", "bash", "zsh", "dash", "ksh", "fish"):
    PROGRAMS[_shell] = _SHELL

# Programs whose operands are what they write, delete or change, or that run with other
# privileges or elsewhere: a rule covers them only when it names the whole command.
EXACT_ONLY: dict[str, str] = {
    **_table(
        "changes what its operands name",
        "rm mv cp ln tee dd truncate shred install unlink chmod chown chgrp split csplit patch "
        "kill pkill killall crontab sqlite3",
    ),
    **_table(
        "runs a command with other privileges or on another machine",
        "sudo doas su pkexec runuser chroot nsenter unshare ssh scp sftp rsync",
    ),
    "watch": "runs its arguments as a shell command",
}

# Wrappers: their own options (those that take a value), then the command they run.
_WRAPPER_VALUES: dict[str, tuple[str, set[str]]] = {
    # program: (short letters with a value, long options with a value)
    "timeout": ("sk", {"signal", "kill-after"}),
    "nice": ("n", {"adjustment"}),
    "nohup": ("", set()),
    "stdbuf": ("ioe", {"input", "output", "error"}),
    "setsid": ("", set()),
    "command": ("", set()),
    "time": ("fo", {"format", "output"}),
    "env": ("uSC", {"unset", "split-string", "chdir"}),
    "xargs": (
        "adEILnPs",
        {
            "arg-file",
            "delimiter",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
            "eof",
            "replace",
        },
    ),
    "npx": ("pc", {"package", "call"}),
}
# Options of the wrappers that a rule does not cover.
_WRAPPER_DANGER: dict[str, Program] = {
    "time": Program(long={"output": WRITES, "append": WRITES}, short={"o": WRITES, "a": WRITES}),
    "env": Program(
        long={"split-string": CODE, "chdir": CONFIG},
        short={"S": CODE, "C": CONFIG},
        abbreviations=True,
    ),
    "xargs": Program(long={"arg-file": LOADS}, short={"a": LOADS}, abbreviations=True),
    "npx": Program(long={"call": CODE}, short={"c": CODE}),
}
_WRAPPER_DURATION = {"timeout"}  # a positional value before the command
_MAX_DEPTH = 6


def program_name(word: str) -> str:
    """The table's name for a command word: ``/usr/bin/python3.12`` -> ``python``."""
    name = word.rsplit("/", 1)[-1].casefold()
    family = re.sub(r"[\d.]+$", "", name)
    if family in ("python", "pip", "perl", "ruby", "node"):
        return family
    return name


def uncovered(words: list[str], covered: int) -> Finding | None:
    """The first word at or after ``covered`` that a rule of ``words[:covered]`` does not
    cover, or None. Words the rule names itself are the user's choice, whatever they do."""
    found = [f for f in _command(words, 0, depth=0) if f.index >= covered]
    return min(found, key=lambda f: f.index) if found else None


def _is_assignment(word: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*=.*", word, re.DOTALL) is not None


def _command(words: list[str], start: int, depth: int) -> Iterator[Finding]:
    """Findings for the simple command ``words[start:]``."""
    if start >= len(words):
        return
    if depth > _MAX_DEPTH:
        yield Finding(start, words[start], "nests wrappers too deeply to be checked")
        return
    word = words[start]
    if _is_assignment(word):
        yield Finding(start, word, "sets an environment variable for the command")
        yield from _command(words, start + 1, depth + 1)
        return
    name = program_name(word)
    if name in EXACT_ONLY:
        for index in range(start + 1, len(words)):
            yield Finding(
                index, words[index], f"is more than the rule names ({name} {EXACT_ONLY[name]})"
            )
    elif name in _WRAPPER_VALUES:
        yield from _wrapper(words, start, name, depth)
    elif name == "python":
        yield from _python(words, start)
    elif name == "git":
        yield from _git(words, start)
    elif name == "tar" and start + 1 < len(words) and not words[start + 1].startswith("-"):
        # ``tar xvf a.tar``: the first word is a cluster of letters without a dash.
        for finding in _options(["-" + words[start + 1]], 0, PROGRAMS["tar"]):
            yield replace(finding, index=start + 1, word=words[start + 1])
        yield from _options(words, start + 2, PROGRAMS["tar"])
    elif name in PROGRAMS:
        yield from _program(words, start, PROGRAMS[name])
    else:
        yield from _unknown(words, start + 1, name)


def _program(words: list[str], start: int, spec: Program) -> Iterator[Finding]:
    index = start + 1
    first = next(_operands(words, index, spec), None) if spec.subcommands else None
    sub = spec.subcommands.get(words[first]) if first is not None else None
    if first is not None and sub is not None:
        # The program's own options hold after the subcommand too (``ruff format --config``).
        yield from _options(words, index, spec)
        yield from _options(words, first + 1, sub)
        if sub.check:
            yield from sub.check(words, first + 1, sub)
    else:
        yield from _options(words, index, spec)
    if spec.check:
        yield from spec.check(words, index, spec)


def _options(
    words: list[str],
    start: int,
    spec: Program,
    *,
    stop: int | None = None,
) -> Iterator[Finding]:
    """Findings for the options in ``words[start:stop]`` as ``spec`` reads them."""
    end = len(words) if stop is None else stop
    index = start
    seen_operand = False
    while index < end:
        word = words[index]
        if spec.passthrough is not None and word == spec.passthrough:
            yield from _unknown(words, index + 1, "the program it runs")
            return
        if word == "--":
            return
        if seen_operand and spec.script_operand:
            # The script's own arguments: what its options do, Terax cannot know.
            yield from _unknown(words, index, "the script or package it runs")
            return
        if word.startswith("--") and len(word) > 2:
            finding = _long(word, spec, words, index)
            if finding:
                yield finding
        elif word.startswith("-") and len(word) > 1:
            if spec.single_dash_long:
                finding = _long(word, spec, words, index)
                if finding:
                    yield finding
            else:
                for position, letter in enumerate(word[1:]):
                    if letter in spec.short:
                        shown = "" if len(word) == 2 else f"(-{letter}) "
                        yield Finding(index, word, shown + spec.short[letter])
                        break
                    if letter in spec.short_values:
                        if position == len(word) - 2:
                            index += 1  # its value is the next word
                        break
        else:
            seen_operand = True
        index += 1


def _long(word: str, spec: Program, words: list[str], index: int) -> Finding | None:
    name, has_value, value = word.lstrip("-").partition("=")
    why = spec.long.get(name)
    if why is None and spec.abbreviations and name and name not in spec.exact_safe:
        why = next((w for full, w in spec.long.items() if full.startswith(name)), None)
    if why is not None:
        return Finding(index, word, why)
    check = spec.value_checks.get(name)
    if check is not None:
        if not has_value:
            value = words[index + 1] if index + 1 < len(words) else ""
        test, reason = check
        if test(value):
            return Finding(index, word, reason)
    return None


def _unknown(words: list[str], start: int, owner: str) -> Iterator[Finding]:
    for index in range(start, len(words)):
        word = words[index]
        if word.startswith("-") and len(word) > 1:
            yield Finding(index, word, f"{UNKNOWN} (an option of {owner})")


def _wrapper(words: list[str], start: int, name: str, depth: int) -> Iterator[Finding]:
    letters, valued = _WRAPPER_VALUES[name]
    danger = _WRAPPER_DANGER.get(name)
    index = start + 1
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or len(word) == 1:
            break
        if danger is not None:
            yield from _options(words, index, danger, stop=index + 1)
        if word.startswith("--"):
            option, has_value, _ = word[2:].partition("=")
            if option in valued and not has_value:
                index += 1
        elif word[-1] in letters and not re.fullmatch(r"-\d+", word):
            index += 1
        index += 1
    if name == "env":
        while index < len(words) and _is_assignment(words[index]):
            yield Finding(index, words[index], "sets an environment variable for the command")
            index += 1
    if name in _WRAPPER_DURATION and index < len(words):
        index += 1
    yield from _command(words, index, depth + 1)


def _python(words: list[str], start: int) -> Iterator[Finding]:
    spec = PROGRAMS["python"]
    index = start + 1
    while index < len(words):
        word = words[index]
        if word.startswith("-m") and not word.startswith("--"):
            module = word[2:] or (words[index + 1] if index + 1 < len(words) else "")
            module_at = index if word[2:] else index + 1
            yield from _options(words, start + 1, spec, stop=index)
            known = PROGRAMS.get(module if module == "py.test" else module.split(".", 1)[0])
            if known is None:
                yield from _unknown(words, module_at + 1, f"the module {module}")
            else:
                yield from _program(words, module_at, known)
            return
        if not word.startswith("-") or word in ("-", "--"):
            break
        if word in ("-W", "-X"):
            index += 1
        index += 1
    yield from _options(words, start + 1, spec)


def _git(words: list[str], start: int) -> Iterator[Finding]:
    index = start + 1
    while index < len(words) and words[index].startswith("-"):
        yield from _options(words, index, _GIT, stop=index + 1)
        if words[index] in _GIT_VALUED:
            index += 1
        index += 1
    if index >= len(words):
        return
    sub = words[index]
    if sub in _GIT_EXACT:
        for later in range(index + 1, len(words)):
            yield Finding(
                later, words[later], f"is more than the rule names (git {sub} {_GIT_EXACT[sub]})"
            )
        return
    spec = _GIT.subcommands.get(sub)
    if spec is not None:
        yield from _options(words, index + 1, spec)
        if spec.check:
            yield from spec.check(words, index + 1, spec)
    elif sub not in _GIT_PLAIN:
        # An alias or a git-<name> program on PATH: Terax cannot know what it does.
        yield from _unknown(words, index + 1, f"git {sub}")
