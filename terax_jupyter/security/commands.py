"""The shell command guard for commands the agent runs.

Not a sandbox: a short list of commands no assistant should ever run unasked,
recognised through quoting, wrappers (``sudo``, ``env``, ``bash -c``), command
substitution and pipelines. Everything else goes to the approval flow.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

from terax_jupyter.exceptions import CommandDenied

MAX_COMMAND_LENGTH = 100_000
_MAX_DEPTH = 4

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
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "mksh", "tcsh", "csh"}
_INTERPRETERS = _SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}
_DOWNLOADERS = {"curl", "wget", "fetch", "aria2c", "http", "https"}
_DISK_TOOLS = {"mkfs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "mkswap"}
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
_HOME_FORMS = {"~", "$home", "${home}"}

_FORK_BOMB = re.compile(r"(?P<name>[\w:.]+)\s*\(\s*\)\s*\{[^}]*?(?P=name)\s*\|\s*&?\s*(?P=name)\s*&")
_BLOCK_DEVICE_REDIRECT = re.compile(
    r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|dm-|md|loop|mapper/)"
)
_PROCESS_SUBSTITUTION_FETCH = re.compile(
    r"\b(?:" + "|".join(sorted(_SHELLS)) + r")\b[^|;&]*<\(\s*(?:" + "|".join(_DOWNLOADERS) + r")\b"
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
                f"The command contains a control character (U+{code:04X}) that can hide what it does."
            )
        if code in _INVISIBLE or unicodedata.category(ch) == "Cf":
            raise CommandDenied(
                f"The command contains an invisible or bidirectional character (U+{code:04X})."
            )


def _check_text(text: str, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise CommandDenied("The command nests shells too deeply to be checked.")
    folded = text.casefold()
    if "--no-preserve-root" in folded:
        raise CommandDenied("--no-preserve-root is never run.")
    if _FORK_BOMB.search(text):
        raise CommandDenied("The command defines a fork bomb.")
    if _BLOCK_DEVICE_REDIRECT.search(folded):
        raise CommandDenied("The command writes to a block device.")
    if _PROCESS_SUBSTITUTION_FETCH.search(folded):
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
    names = []
    for words in pipeline:
        words = _strip_wrappers(words)
        if not words:
            names.append("")
            continue
        names.append(_command_name(words[0]))
        _check_simple(words, depth)
    for upstream, downstream in zip(names, names[1:]):
        if upstream in _DOWNLOADERS and downstream in _INTERPRETERS:
            raise CommandDenied(f"The command pipes a download into {downstream} ({upstream} | {downstream}).")


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
            if arg.startswith("of=/dev/") and arg not in ("of=/dev/null", "of=/dev/zero", "of=/dev/stdout", "of=/dev/stderr"):
                raise CommandDenied("dd onto a device is never run.")
    elif name.split(".", 1)[0] in _DISK_TOOLS:
        raise CommandDenied(f"{name} (disk partitioning and formatting) is never run.")
    elif name == "shred" and any(a.startswith("/dev/") for a in args):
        raise CommandDenied("shred of a device is never run.")
    elif name in _SHELLS or name == "eval":
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
    form = target.casefold().strip()
    while form.endswith(("/*", "/.", "/")) and len(form) > 1:
        form = form[:-2] if form.endswith(("/*", "/.")) else form[:-1]
    form = form.replace('"', "").replace("'", "")
    if form in ("*", "/*", "/", "/."):
        return form != "*"
    if form in _HOME_FORMS or form.startswith(("~/..", "$home/..", "${home}/..")):
        return True
    if re.fullmatch(r"~[a-z_][\w-]*", form):
        return True
    return form in _SYSTEM_DIRS or re.fullmatch(r"/(home|users)/[^/]+", form) is not None


def _is_home_or_root(target: str) -> bool:
    form = target.casefold().rstrip("/")
    return form in ("", "~") or form in _HOME_FORMS


def _has_recursive_flag(args: list[str], *, long_flag: str) -> bool:
    return any(a == long_flag or (a.startswith("-") and not a.startswith("--") and "R" in a) for a in args)


def _strip_wrappers(words: list[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        name = _command_name(word)
        if "=" in word and not word.startswith("-") and re.fullmatch(r"[A-Za-z_]\w*=.*", word, re.DOTALL):
            index += 1
        elif name in _WRAPPERS:
            index += 1
            # Skip the wrapper's own options (sudo -u root, timeout 10, nice -n 5).
            while index < len(words) and (words[index].startswith("-") or words[index].isdigit()):
                index += 1
        else:
            break
    return words[index:]


def _command_name(word: str) -> str:
    return word.rsplit("/", 1)[-1].casefold()


def _inline_script(name: str, args: list[str]) -> str | None:
    if name == "eval":
        return " ".join(args)
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:] and index + 1 < len(args):
            return args[index + 1]
    return None


def _substitutions(text: str) -> list[str]:
    """Bodies of ``$(...)`` and backtick substitutions, outermost first."""
    bodies = []
    start = text.find("$(")
    while start != -1:
        depth = 0
        for index in range(start + 1, len(text)):
            if text[index] == "(":
                depth += 1
            elif text[index] == ")":
                depth -= 1
                if depth == 0:
                    bodies.append(text[start + 2 : index])
                    break
        else:
            bodies.append(text[start + 2 :])
        start = text.find("$(", start + 2)
    bodies.extend(re.findall(r"`([^`]*)`", text))
    return bodies

