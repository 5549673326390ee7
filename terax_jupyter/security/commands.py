"""The shell command guard for commands the agent runs.

Not a sandbox: a short list of commands no assistant should ever run unasked,
recognised through quoting, wrappers (``sudo``, ``env``, ``bash -c``), command
substitution and pipelines. Everything else goes to the approval flow.
"""

from __future__ import annotations

import itertools
import re
import shlex
import unicodedata

from terax_jupyter.exceptions import CommandDenied

MAX_COMMAND_LENGTH = 100_000
_MAX_DEPTH = 4
# How many words after a wrapper may still be its options and their values.
_WRAPPER_REACH = 8

_INVISIBLE = {
    0x061C,
    0x200B,
    0x200C,
    0x200D,
    0x200E,
    0x200F,
    0x2028,
    0x2029,
    0x202A,
    0x202B,
    0x202C,
    0x202D,
    0x202E,
    0x2060,
    0x2066,
    0x2067,
    0x2068,
    0x2069,
    0xFEFF,
}
_SEPARATORS = {";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"}
_WRAPPERS = {
    "sudo",
    "doas",
    "env",
    "nohup",
    "time",
    "command",
    "builtin",
    "exec",
    "nice",
    "ionice",
    "stdbuf",
    "timeout",
    "xargs",
    "busybox",
    "chroot",
    "setsid",
    "unbuffer",
}
# Words that may open a simple command without being its name.
_RESERVED = {"!", "{", "if", "then", "else", "elif", "do", "while", "until"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh", "tcsh", "csh"}
_INTERPRETERS = _SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}
# Per interpreter: option letters that give the program inline (so stdin is data), option
# letters that take the next word as their value, option letters that read the program
# from stdin even with arguments after them.
_PROGRAM_FLAGS: dict[str, tuple[str, str, str]] = {
    **{shell: ("c", "oO", "s") for shell in _SHELLS},
    "python": ("cm", "WX", ""),
    "perl": ("eE", "", ""),
    "ruby": ("e", "", ""),
    "node": ("ep", "r", ""),
    "php": ("r", "", ""),
}
_DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https"}
_DISK_TOOLS = {
    "mkfs",
    "mke2fs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "wipefs",
    "mkswap",
}
_SYSTEM_DIRS = {
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/opt",
    "/proc",
    "/root",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/users",
    "/system",
    "/library",
    "/applications",
}
# ``~``, ``$HOME``, ``${HOME}`` and parameter forms such as ``${HOME:?}`` (case-folded).
_HOME = r"(?:~|\$home|\$\{home(?:[:?=+#%-][^}]*)?\})"

# ``name() { name | name & }`` and ``function name { ... }``, any spacing. The name starts
# a word and, like the body, is bounded: unbounded runs make the search quadratic on
# long input (a 100 kB word took minutes).
_FORK_BOMB = re.compile(
    r"(?P<keyword>\bfunction\s+)?(?<![\w:.-])(?P<name>[\w:.-]{1,64})\s*(?(keyword)(?:\(\s*\))?|\(\s*\))"
    r"\s*\{[^}]{0,200}?(?P=name)\s*\|\s*&?\s*(?P=name)\s*&"
)
_BLOCK_DEVICE_REDIRECT = re.compile(
    r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|loop|mapper/)"
)
# A runner (an interpreter, eval, source or ``.``) fed by a download through ``<(...)``,
# ``$(...)`` or backticks: ``bash <(curl x)``, ``bash -c "$(curl x)"``, ``. <(wget -O- x)``.
_FETCH_AND_RUN = re.compile(
    r"(?:\b(?:"
    + "|".join(sorted(_INTERPRETERS | {"eval", "source"}))
    + r")\b|(?<![^\s;&|(])\.(?=\s))"
    r"[^|;&]{0,200}?(?:<\(|\$\(|`)\s*(?:sudo\s+)?(?:" + "|".join(sorted(_DOWNLOADERS)) + r")\b"
)


def check_command(command: str) -> str:
    """Return ``command`` if the guard lets it through, else raise CommandDenied."""
    if not isinstance(command, str) or not command.strip():
        raise CommandDenied("The command is empty.", reason="empty_command")
    if len(command) > MAX_COMMAND_LENGTH:
        raise CommandDenied(f"The command is longer than {MAX_COMMAND_LENGTH} characters.")
    _reject_hidden_characters(command)
    _check_text(command, depth=0)
    return command


def _reject_hidden_characters(command: str) -> None:
    for ch in command:
        code = ord(ch)
        if ch in "\t\n":
            continue
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            raise CommandDenied(
                f"The command contains a control character (U+{code:04X}) "
                "that can hide what it does."
            )
        if code in _INVISIBLE or unicodedata.category(ch) == "Cf":
            raise CommandDenied(
                f"The command contains an invisible or bidirectional character (U+{code:04X})."
            )


def _check_text(text: str, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise CommandDenied("The command nests shells too deeply to be checked.")
    # A backslash-newline joins lines before the shell reads words.
    text = text.replace("\\\n", "")
    folded = text.casefold()
    if "--no-preserve-root" in folded:
        raise CommandDenied("--no-preserve-root is never run.")
    if _FORK_BOMB.search(text):
        raise CommandDenied("The command defines a fork bomb.")
    if _BLOCK_DEVICE_REDIRECT.search(folded):
        raise CommandDenied("The command writes to a block device.")
    if _FETCH_AND_RUN.search(folded):
        raise CommandDenied("The command runs a downloaded script (shell <(curl ...)).")
    for inner in _substitutions(text):
        _check_text(inner, depth + 1)
    for pipeline in _pipelines(text):
        _check_pipeline(pipeline, depth)


def _pipelines(text: str) -> list[list[list[str]]]:
    """Pipelines of simple commands; each simple command is a list of words."""
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        # Unbalanced quotes: the shell would refuse it too; check what is there word by word.
        tokens = text.split()
    pipelines: list[list[list[str]]] = [[[]]]
    for token in tokens:
        if token in ("|", "|&"):
            pipelines[-1].append([])
        elif token in _SEPARATORS or set(token) <= set(";&|()"):
            pipelines.append([[]])
        else:
            pipelines[-1][-1].append(token)
    return [[words for words in p if words] for p in pipelines if any(p)]


def _check_pipeline(pipeline: list[list[str]], depth: int) -> None:
    stages = [_candidates(words) for words in pipeline]
    for stage in stages:
        for words in stage:
            _check_simple(words, depth)
    # A download piped, directly or through filters (tee, gunzip), into a program that runs stdin.
    fetched = next(
        (
            (i, _command_name(w[0]))
            for i, stage in enumerate(stages)
            for w in stage
            if _command_name(w[0]) in _DOWNLOADERS
        ),
        None,
    )
    if fetched is None:
        return
    for later in stages[fetched[0] + 1 :]:
        for words in later:
            name = _command_name(words[0])
            if _interpreter(name) and _runs_stdin(name, words[1:]):
                raise CommandDenied(
                    f"The command pipes a download into {name} ({fetched[1]} | {name})."
                )


def _check_simple(words: list[str], depth: int) -> None:
    name = _command_name(words[0])
    args = words[1:]
    if name == "rm" or (name == "busybox" and args[:1] == ["rm"]):
        _check_rm(args)
    elif name in ("chmod", "chown", "chgrp") and _has_recursive_flag(args, long_flag="--recursive"):
        targets = [a for a in args if not a.startswith("-")]
        if any(_is_catastrophic_target(t) for t in targets[1:]):
            raise CommandDenied(f"{name} -R on a system or home folder is never run.")
    elif name == "dd":
        for arg in args:
            if arg.startswith("of=/dev/") and arg not in (
                "of=/dev/null",
                "of=/dev/zero",
                "of=/dev/stdout",
                "of=/dev/stderr",
            ):
                raise CommandDenied("dd onto a device is never run.")
    elif name.split(".", 1)[0] in _DISK_TOOLS:
        raise CommandDenied(f"{name} (disk partitioning and formatting) is never run.")
    elif name == "shred" and any(a.startswith("/dev/") for a in args):
        raise CommandDenied("shred of a device is never run.")
    elif name == "find" and _find_deletes(args):
        if any(_is_catastrophic_target(a) for a in _leading_operands(args)):
            raise CommandDenied(
                "find ... -delete over the root, a system folder or home is never run."
            )
    elif name in _SHELLS or name in ("eval", "su"):
        script = _inline_script(name, args)
        if script is not None:
            _check_text(script, depth + 1)
    elif name == "mv" and any(_is_home_or_root(a) for a in args if not a.startswith("-")):
        raise CommandDenied("Moving the home or root folder is never run.")


def _check_rm(args: list[str]) -> None:
    options_done = False
    recursive = False
    targets = []
    for arg in args:
        if not options_done and arg == "--":
            options_done = True
        elif not options_done and arg.startswith("--"):
            recursive = recursive or arg == "--recursive"
        elif not options_done and arg.startswith("-") and len(arg) > 1:
            recursive = recursive or bool(set(arg[1:]) & {"r", "R"})
        else:
            targets.append(arg)
    if recursive and any(_is_catastrophic_target(t) for t in targets):
        raise CommandDenied("rm -r of the root, a system folder or the home folder is never run.")


def _is_catastrophic_target(target: str) -> bool:
    form = target.casefold().strip().replace('"', "").replace("'", "")
    if not form:
        return False
    while form.endswith(("/*", "/.", "/")) and len(form) > 1:
        form = form[:-2] if form.endswith(("/*", "/.")) else form[:-1]
    # "" is what "/*" and "/." become above: the root.
    if form in ("", "/"):
        return True
    if re.fullmatch(_HOME + r"(?:/\.\..*)?", form):
        return True
    if re.fullmatch(r"~[a-z_][\w-]*", form):
        return True
    return form in _SYSTEM_DIRS or re.fullmatch(r"/(home|users)/[^/]+", form) is not None


def _is_home_or_root(target: str) -> bool:
    form = target.casefold().replace('"', "").replace("'", "").rstrip("/")
    return form in ("", "~") or re.fullmatch(_HOME, form) is not None


def _find_deletes(args: list[str]) -> bool:
    if "-delete" in args:
        return True
    return any(
        flag in ("-exec", "-execdir", "-ok", "-okdir") and _command_name(command) in ("rm", "shred")
        for flag, command in itertools.pairwise(args)
    )


def _leading_operands(args: list[str]) -> list[str]:
    """``find``'s starting points: the words before the first option or expression."""
    operands = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        operands.append(arg)
    return operands


def _has_recursive_flag(args: list[str], *, long_flag: str) -> bool:
    return any(
        a == long_flag or (a.startswith("-") and not a.startswith("--") and "R" in a) for a in args
    )


def _candidates(words: list[str]) -> list[list[str]]:
    """The simple commands ``words`` may run: itself, and what a wrapper in front runs.

    Which word after ``sudo -u root`` or ``timeout -s KILL 10`` is the command depends
    on each wrapper's options; rather than model them, every later non-option word
    within reach counts as a possible start. Leading assignments and reserved words
    (``{``, ``then``, ``do``) are not commands.
    """
    starts: set[int] = set()
    queue = [0]
    while queue:
        index = queue.pop()
        while index < len(words) and (_is_assignment(words[index]) or words[index] in _RESERVED):
            index += 1
        if index >= len(words) or index in starts:
            continue
        starts.add(index)
        if _command_name(words[index]) in _WRAPPERS:
            reach = range(index + 1, min(len(words), index + 1 + _WRAPPER_REACH))
            queue.extend(i for i in reach if not words[i].startswith("-"))
    return [words[index:] for index in sorted(starts)]


def _is_assignment(word: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*=.*", word, re.DOTALL) is not None


def _interpreter(name: str) -> str | None:
    """The interpreter family of a command name (``python3.12`` -> ``python``), or None."""
    family = re.sub(r"[\d.]+$", "", name)
    return family if family in _PROGRAM_FLAGS else None


def _runs_stdin(name: str, args: list[str]) -> bool:
    """Whether the interpreter takes its program from stdin: no script file, no ``-c``/``-e``."""
    inline, valued, from_stdin = _PROGRAM_FLAGS[_interpreter(name) or "sh"]
    words = iter(args)
    for arg in words:
        if arg == "-":
            return True
        if arg == "--":
            return next(words, None) is None
        if arg.startswith("--"):
            if arg in ("--eval", "--print", "--command"):
                return False
            continue
        if arg.startswith(("-", "+")) and len(arg) > 1:
            letters = arg[1:]
            if any(letter in from_stdin for letter in letters):
                return True
            if any(letter in inline for letter in letters):
                return False
            if letters[-1] in valued:
                next(words, None)
            continue
        return False
    return True


def _command_name(word: str) -> str:
    return word.rsplit("/", 1)[-1].casefold()


def _inline_script(name: str, args: list[str]) -> str | None:
    if name == "eval":
        return " ".join(args)
    for index, arg in enumerate(args):
        if (
            arg.startswith("-")
            and not arg.startswith("--")
            and "c" in arg[1:]
            and index + 1 < len(args)
        ):
            return args[index + 1]
    return None


def _substitutions(text: str) -> list[str]:
    """Bodies of the outermost ``$(...)`` and of backtick substitutions.

    One pass with a stack (nested bodies are found when a body is checked in turn); an
    unclosed ``$(`` runs to the end, as the shell would read it.
    """
    bodies = []
    stack: list[int | None] = []  # body start of each open "$(", None for a plain "("
    open_substitutions = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char == "$" and text.startswith("$(", index):
            stack.append(index + 2)
            open_substitutions += 1
            index += 2
            continue
        if char == "(":
            stack.append(None)
        elif char == ")" and stack:
            start = stack.pop()
            if start is not None:
                open_substitutions -= 1
                if open_substitutions == 0:
                    bodies.append(text[start:index])
        index += 1
    outermost = next((s for s in stack if s is not None), None)
    if outermost is not None:
        bodies.append(text[outermost:])
    bodies.extend(re.findall(r"`([^`]*)`", text))
    return bodies
