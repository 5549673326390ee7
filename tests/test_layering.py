"""Managers never touch the OS with a path that did not come from the security layer.

Checked on the syntax tree of every module (strings and comments do not count): raw file,
process and directory calls appear only in the modules allowed below, each for one reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import terax_jupyter

PACKAGE = Path(terax_jupyter.__file__).parent

# Module (relative to the package; a trailing "/" covers a folder) -> (calls allowed, why).
ALLOWED: dict[str, tuple[frozenset[str] | None, str]] = {
    "security/": (None, "the security layer itself: it does the checked I/O for everyone else"),
    "services/fs/ripgrep.py": (
        frozenset({"asyncio.create_subprocess_exec", "shutil.which"}),
        "runs rg inside a folder the guard checked",
    ),
    "services/fs/ignore.py": (frozenset({"open"}), "reads .gitignore files under a checked folder"),
    "services/pty/backend.py": (
        frozenset({"open"}),
        "spawns shells on PTYs in a checked folder; reads /proc to find a session's processes",
    ),
    "services/pty/history.py": (
        frozenset({"open"}),
        "reads the user's shell history files for suggestions; commands with secrets are dropped",
    ),
    "services/pty/shells.py": (
        frozenset({"shutil.which", "asyncio.create_subprocess_exec"}),
        "finds the installed shells on PATH; asks fish's parser (--no-execute, no shell, no "
        "config) whether a line the run API is to type can run",
    ),
    "services/preview/owner.py": (
        frozenset({"open"}),
        "reads /proc/net/tcp{,6} to learn which account owns the socket that accepted a preview "
        "connection, where the kernel's netlink socket diagnostics are not available",
    ),
    "services/git/runner.py": (
        frozenset({"asyncio.create_subprocess_exec", "shutil.which"}),
        "runs the git CLI (git -C <repository root the guard checked>), no shell",
    ),
    "services/browser/launcher.py": (
        frozenset(
            {
                "shutil.which",
                "shutil.rmtree",
                "tempfile.mkdtemp",
                "subprocess.Popen",
                "pathlib.read_text",
                "pathlib.write_text",
                "pathlib.glob",
                "os.kill",
                "tempfile.gettempdir",
            }
        ),
        "starts headless Chromium (no shell) in its own process group with a private temporary "
        "profile it removes on close (and removes those of browsers whose server died); "
        "reads the DevToolsActivePort file there",
    ),
    "services/browser/evals/": (
        frozenset({"tempfile.TemporaryDirectory", "os.walk", "open"}),
        "the browser evals (a benchmark, not a service): a temporary folder of their own for "
        "the replay store, read back to prove no typed value was stored",
    ),
    "services/ai/tools/processes.py": (
        frozenset({"subprocess.Popen", "shutil.which"}),
        "runs the agent's commands with bash -c after the command guard, in a folder the guard "
        "checked, in their own session so that they can be stopped",
    ),
    "services/ai/agent_audit.py": (
        frozenset({"os.open"}),
        "opens the audit log the administrator's policy names (an absolute path, never through "
        "a symbolic link, a regular file only), append-only, to write agent actions",
    ),
    "services/secrets/startup.py": (
        frozenset({"os.open", "open", "os.unlink"}),
        "reads the key file the administrator names at start (and deletes it if asked); blanks "
        "the provider keys in the server's own initial environment block (/proc/self/mem)",
    ),
    "notebook/terminal_view.py": (
        frozenset({"pathlib.read_text"}),
        "reads the package's own xterm.js module and widget files to send them to the page",
    ),
    "app.py": (
        frozenset({"os.path.realpath"}),
        "jupyter terax, before any server starts: is a running server's root the folder asked "
        "for (symlinks resolved)?",
    ),
    "pytest_plugin.py": (
        frozenset({"pathlib.write_text", "pathlib.mkdir"}),
        "test fixtures: writes the sample project into the test's own folder",
    ),
}

OS_CALLS = frozenset(
    {
        "open", "fdopen", "remove", "unlink", "rename", "renames", "replace", "mkdir", "makedirs",
        "rmdir", "removedirs", "symlink", "link", "chmod", "lchmod", "chown", "lchown", "truncate",
        "scandir", "listdir", "walk", "fwalk", "system", "popen", "spawnl", "spawnv", "execv",
        "execvp", "mkfifo", "utime",
    }
)  # fmt: skip
ANY_ATTRIBUTE = frozenset({"shutil", "subprocess", "tempfile", "pty"})
ASYNCIO_CALLS = frozenset({"create_subprocess_exec", "create_subprocess_shell"})
# Unmistakably pathlib methods, and ones that are pathlib's only where pathlib is imported.
PATHLIB_ALWAYS = frozenset(
    {"write_text", "write_bytes", "read_text", "read_bytes", "touch", "symlink_to", "hardlink_to"}
)
PATHLIB_IF_IMPORTED = frozenset(
    {"unlink", "mkdir", "rename", "open", "rmdir", "replace", "chmod", "iterdir", "rglob"}
)


class RawAccessFinder(ast.NodeVisitor):
    """Collects ``(line, call)`` for every raw OS access in one module."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []
        self.aliases: dict[str, str] = {}  # local name -> "os", "os.remove", "shutil.rmtree", ...
        self.uses_pathlib = False

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.aliases[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )
            if alias.name == "pathlib":
                self.uses_pathlib = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module == "pathlib":
            self.uses_pathlib = True
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = qualified
            if qualified == "os.path.realpath":
                self.found.append((node.lineno, "os.path.realpath"))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._qualified(node) == "os.path.realpath":
            self.found.append((node.lineno, "os.path.realpath"))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self._qualified(node.func)
        if name is not None:
            head, _, tail = name.rpartition(".")
            if name in ("open", "io.open", "codecs.open", "builtins.open"):
                self.found.append((node.lineno, "open"))
            elif (
                (head == "os" and tail in OS_CALLS)
                or head.split(".")[0] in ANY_ATTRIBUTE
                or name in ANY_ATTRIBUTE
                or (head == "asyncio" and tail in ASYNCIO_CALLS)
            ):
                self.found.append((node.lineno, name))
        if isinstance(node.func, ast.Attribute) and self._pathlib_method(node.func.attr, name):
            self.found.append((node.lineno, f"pathlib.{node.func.attr}"))
        self.generic_visit(node)

    def _pathlib_method(self, method: str, name: str | None) -> bool:
        if not (method in PATHLIB_ALWAYS or (self.uses_pathlib and method in PATHLIB_IF_IMPORTED)):
            return False
        # A function of a module (``fileio.read_bytes``, ``os.replace``) is not a pathlib method.
        return name is None or name.split(".")[0] not in (
            "os",
            "shutil",
            "asyncio",
            "terax_jupyter",
        )

    def _qualified(self, node: ast.AST) -> str | None:
        """``os.path.realpath`` for an expression naming it (through import aliases), else None."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id, node.id)
        return ".".join([root, *reversed(parts)])


def raw_access(source: str) -> list[tuple[int, str]]:
    finder = RawAccessFinder()
    finder.visit(ast.parse(source))
    return sorted(set(finder.found))


def allowance(relative: str) -> tuple[frozenset[str] | None, str] | None:
    for key, value in ALLOWED.items():
        if relative == key or (key.endswith("/") and relative.startswith(key)):
            return value
    return None


def modules() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if "labextension" not in p.relative_to(PACKAGE).parts
    )


@pytest.mark.parametrize("module", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_raw_os_access_outside_the_allowed_modules(module: Path) -> None:
    relative = module.relative_to(PACKAGE).as_posix()
    found = raw_access(module.read_text(encoding="utf-8"))
    allowed = allowance(relative)
    if allowed is None:
        assert found == [], f"{relative} touches the OS directly: {found}"
        return
    calls, _reason = allowed
    if calls is not None:
        stray = [(line, call) for line, call in found if call not in calls]
        assert stray == [], f"{relative} may only use {sorted(calls)}: {stray}"


def test_allowlist_entries_exist_and_say_why() -> None:
    for key, (_calls, reason) in ALLOWED.items():
        assert (PACKAGE / key).exists(), key
        assert reason
        assert "\n" not in reason


def test_the_scanner_sees_what_it_must() -> None:
    source = """
import os, shutil as sh, subprocess, asyncio, io
from os import remove as rm
from os.path import realpath
from pathlib import Path
open("x")
io.open("x")
os.unlink("x")
rm("x")
sh.rmtree("x")
subprocess.run(["ls"])
asyncio.create_subprocess_exec("ls")
os.system("ls")
os.path.realpath("x")
Path("x").write_text("y")
Path("x").unlink()
p = Path("x"); p.open()
"""
    assert "pathlib.read_bytes" not in [
        c
        for _, c in raw_access(
            "from terax_jupyter.security import fileio\nfileio.read_bytes(c, 1)\n"
        )
    ]
    calls = [call for _, call in raw_access(source)]
    for expected in (
        "open", "os.unlink", "os.remove", "shutil.rmtree", "subprocess.run",
        "asyncio.create_subprocess_exec", "os.system", "os.path.realpath", "pathlib.write_text",
        "pathlib.unlink", "pathlib.open",
    ):  # fmt: skip
        assert expected in calls, expected
    harmless = '''
# os.remove("x") and open("y") in a comment
"""shutil.rmtree in a docstring"""
text = "subprocess.run(['rm'])"
name = "a.b".replace(".", "/")
os_path = len("open")
self_files = manager.rename("a", "b")
'''
    assert raw_access(harmless) == []
