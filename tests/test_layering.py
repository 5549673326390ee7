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


# -- import contracts ------------------------------------------------------------------------
#
# The layer diagram as data: each scope (a module or folder of the package; "services/*/" is
# every service area, "services/*/manager.py" every manager) may import only what its row
# allows. Every import counts, also those under ``if TYPE_CHECKING`` and inside functions: a
# type-only import is still a dependency of the design. Names are dotted prefixes.

PKG = "terax_jupyter"
# What every service area may build on: the layers below the services.
BELOW_SERVICES = frozenset(
    {
        f"{PKG}.exceptions",
        f"{PKG}.security",
        f"{PKG}.base",
        f"{PKG}.apispec",
        f"{PKG}.activity",
        f"{PKG}._version",
        f"{PKG}.ansi",  # terminal escapes out of text (terminals, notebook outputs)
        f"{PKG}.notebook_view",  # a notebook as text for a model (agent and MCP tools)
        f"{PKG}.services.area",  # what an area declares about itself (its AREA)
        f"{PKG}.services.registry",  # the areas in one list, and their manager-class traits
    }
)
# Service area -> the other areas (and modules above the services) it may import: the
# neighbours it uses today. A new arrow between areas is a design change: add it here.
AREA_NEIGHBOURS: dict[str, frozenset[str]] = {
    "ai": frozenset({"browser", "fs", "kernels", "pty", "secrets"}),
    "browser": frozenset(),
    "fs": frozenset(),
    "git": frozenset(),
    # Cell runs read and write notebooks through the file manager the security layer guards.
    "kernels": frozenset({"fs"}),
    # The meta area serves the OpenAPI document, which is made of every area's fragment.
    "meta": frozenset({f"{PKG}.openapi"}),
    # The preview's ports are the ones the terminals' processes listen on.
    "preview": frozenset({"pty"}),
    # The terminals know no preview: app.py hands them its server watch (ServerWatch).
    "pty": frozenset({"secrets"}),
    "secrets": frozenset(),
    "workspace": frozenset(),
}


class Contract:
    """``scope`` may import from the package only ``may_import`` (None: anything), and never
    ``never`` (package or not)."""

    def __init__(
        self,
        scope: str,
        why: str,
        *,
        may_import: frozenset[str] | None = None,
        never: frozenset[str] = frozenset(),
    ) -> None:
        self.scope, self.why, self.may_import, self.never = scope, why, may_import, never

    def covers(self, relative: str) -> bool:
        parts, scope = relative.split("/"), self.scope.rstrip("/").split("/")
        if self.scope.endswith("/"):
            return len(parts) > len(scope) and all(
                s in ("*", p) for s, p in zip(scope, parts, strict=False)
            )
        return len(parts) == len(scope) and all(
            s in ("*", p) for s, p in zip(scope, parts, strict=True)
        )

    def broken_by(self, imported: str) -> bool:
        if any(_within(imported, name) for name in self.never):
            return True
        if self.may_import is None or not _within(imported, PKG):
            return False
        return not any(_within(imported, name) for name in self.may_import)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _area_contract(area: str, neighbours: frozenset[str]) -> Contract:
    allowed = {f"{PKG}.services.{area}"} | BELOW_SERVICES
    allowed |= {n if n.startswith(PKG) else f"{PKG}.services.{n}" for n in neighbours}
    return Contract(
        f"services/{area}/",
        f"the {area} area builds on the layers below and on {sorted(neighbours) or 'no area'}",
        may_import=frozenset(allowed),
    )


CONTRACTS: list[Contract] = [
    *(
        Contract(
            f"{name}.py",
            "below everything: every layer may use it, so it uses none of the package",
            may_import=frozenset({f"{PKG}.{name}"}),
        )
        for name in ("exceptions", "apispec", "activity", "_version", "ansi")
    ),
    Contract(
        "notebook_view/",
        "a notebook as text, pure: the agent's tools and the MCP server (a REST client) share "
        "it, so it knows no service, no security layer and no server",
        may_import=frozenset({f"{PKG}.notebook_view", f"{PKG}.exceptions", f"{PKG}.ansi"}),
        never=frozenset({"tornado", "jupyter_server"}),
    ),
    Contract(
        "security/",
        "the bottom layer: it knows the error tree and nothing above it",
        may_import=frozenset({f"{PKG}.security", f"{PKG}.exceptions"}),
    ),
    Contract(
        "services/*/manager.py",
        "managers are the server's logic without HTTP: handlers translate, managers decide",
        never=frozenset({"tornado", "jupyter_server"}),
    ),
    *(_area_contract(area, neighbours) for area, neighbours in AREA_NEIGHBOURS.items()),
    Contract(
        "notebook/",
        "the notebook library talks to a server through the client, never through its code",
        never=frozenset({f"{PKG}.services"}),
    ),
    Contract(
        "mcp/",
        "the MCP bridge is a client of the REST API",
        never=frozenset({f"{PKG}.services"}),
    ),
    Contract(
        "client/",
        "the Python client is a library of its own (it runs where the server is not)",
        never=frozenset({f"{PKG}.services"}),
    ),
]

# (module, imported prefix) -> why a contract's exception stands today. Each is to be removed.
KNOWN_BREACHES: dict[tuple[str, str], str] = {}


class ImportFinder(ast.NodeVisitor):
    """Collects ``(line, dotted name)`` of every import of one module (relative ones resolved,
    ``from a import b`` as ``a.b``, ``importlib.import_module("a")`` with a literal name)."""

    def __init__(self, package: str) -> None:
        self.package = package  # the dotted package the module is in, for relative imports
        self.found: list[tuple[int, str]] = []

    def visit_Import(self, node: ast.Import) -> None:
        self.found += [(node.lineno, alias.name) for alias in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - node.level + 1]
            module = ".".join([*base, module] if module else base)
        # ``from a import b``: ``b`` may be a module of ``a``, so the name counts as ``a.b``.
        self.found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if (
            name in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            self.found.append((node.lineno, node.args[0].value))
        self.generic_visit(node)


def imports(source: str, package: str = PKG) -> list[tuple[int, str]]:
    finder = ImportFinder(package)
    finder.visit(ast.parse(source))
    return sorted(set(finder.found))


def _package_of(relative: str) -> str:
    """The package a relative import in ``relative`` starts from (``a/b.py``, ``a/__init__.py``:
    ``terax_jupyter.a``)."""
    return ".".join([PKG, *relative.split("/")[:-1]])


def breaches(relative: str, source: str) -> list[tuple[int, str, str]]:
    """``(line, imported, contract scope)`` of every import ``relative`` may not make."""
    found = []
    for contract in CONTRACTS:
        if not contract.covers(relative):
            continue
        for line, name in imports(source, _package_of(relative)):
            if contract.broken_by(name) and not any(
                module == relative and _within(name, prefix) for module, prefix in KNOWN_BREACHES
            ):
                found.append((line, name, contract.scope))
    return found


@pytest.mark.parametrize("module", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_keep_to_the_layer_contracts(module: Path) -> None:
    relative = module.relative_to(PACKAGE).as_posix()
    found = breaches(relative, module.read_text(encoding="utf-8"))
    assert found == [], f"{relative} imports across the layers: {found}"


def test_every_contract_covers_real_modules_and_says_why() -> None:
    relatives = [m.relative_to(PACKAGE).as_posix() for m in modules()]
    for contract in CONTRACTS:
        assert any(contract.covers(r) for r in relatives), contract.scope
        assert contract.why
    assert sorted(AREA_NEIGHBOURS) == sorted(
        p.name for p in (PACKAGE / "services").iterdir() if (p / "__init__.py").exists()
    ), "every service area has a row in AREA_NEIGHBOURS"
    for (module, prefix), reason in KNOWN_BREACHES.items():
        assert (PACKAGE / module).exists(), module
        assert prefix.startswith(PKG)
        assert reason.startswith("known: ")


def test_the_import_scanner_sees_what_it_must() -> None:
    source = """
import tornado.web
from terax_jupyter.services.fs import manager
from terax_jupyter import base
from . import sibling
from ..exceptions import NotFound
import importlib
importlib.import_module("terax_jupyter.app")
def later():
    from terax_jupyter.services.pty.manager import PtyManager
if TYPE_CHECKING:
    from terax_jupyter.context import TeraxContext
"""
    names = [name for _, name in imports(source, f"{PKG}.services.git")]
    for expected in (
        "tornado.web", f"{PKG}.services.fs.manager", f"{PKG}.base",
        f"{PKG}.services.git.sibling", f"{PKG}.services.exceptions.NotFound", f"{PKG}.app",
        f"{PKG}.services.pty.manager.PtyManager", f"{PKG}.context.TeraxContext",
    ):  # fmt: skip
        assert expected in names, expected
    assert imports('"""import tornado"""\n# from terax_jupyter import app\nx = "import os"\n') == []


@pytest.mark.parametrize(
    ("relative", "source", "scope"),
    [
        ("security/paths.py", "from terax_jupyter.services.fs import manager\n", "security/"),
        ("security/paths.py", "from terax_jupyter.base import TeraxAPIHandler\n", "security/"),
        ("security/new.py", "from .. import context\n", "security/"),
        ("services/fs/manager.py", "from tornado import web\n", "services/*/manager.py"),
        ("services/git/manager.py", "import tornado.ioloop\n", "services/*/manager.py"),
        (
            "services/fs/search.py",
            "from terax_jupyter.services.git import runner\n",
            "services/fs/",
        ),
        (
            "services/git/log.py",
            "from terax_jupyter.context import TeraxContext\n",
            "services/git/",
        ),
        ("services/pty/run.py", "from terax_jupyter.services.ai import store\n", "services/pty/"),
        ("services/fs/grep.py", "from terax_jupyter import app\n", "services/fs/"),
        ("notebook/agent.py", "from terax_jupyter.services.pty import text\n", "notebook/"),
        ("notebook/policy.py", "from terax_jupyter.services.ai import store\n", "notebook/"),
        ("mcp/server.py", "import terax_jupyter.services.fs.manager\n", "mcp/"),
        ("client/api.py", "from terax_jupyter.services import secrets\n", "client/"),
        ("exceptions.py", "from terax_jupyter.security import paths\n", "exceptions.py"),
        ("ansi.py", "from terax_jupyter.services.pty import text\n", "ansi.py"),
        (
            "notebook_view/views.py",
            "from terax_jupyter.security.redact import Redactor\n",
            "notebook_view/",
        ),
        ("notebook_view/cells.py", "from tornado import web\n", "notebook_view/"),
    ],
)
def test_a_planted_breach_is_caught(relative: str, source: str, scope: str) -> None:
    assert scope in [found_scope for _, _, found_scope in breaches(relative, source)]


def test_what_the_contracts_allow_passes() -> None:
    assert breaches("security/paths.py", "from terax_jupyter.exceptions import NotFound\n") == []
    assert (
        breaches("security/paths.py", "from terax_jupyter.security import fileio\nimport os\n")
        == []
    )
    assert (
        breaches("services/ai/manager.py", "from terax_jupyter.services.fs import manager\n") == []
    )
    assert breaches("services/fs/handlers.py", "from tornado import web\n") == []
    # The auto-approve rules are below the services: the notebook's policy matches them too.
    below = "from terax_jupyter.security.rules import matching_rule\n"
    assert breaches("notebook/policy.py", below) == []
    assert breaches("services/ai/runner.py", below) == []
    assert breaches("notebook/policy.py", below.replace("security", "services.ai")) != []
    # The notebook views are below the services: the MCP server (a REST client) renders too.
    shared = "from terax_jupyter.notebook_view import views\n"
    assert breaches("mcp/server.py", shared) == []
    assert breaches("services/ai/tools/notebooks.py", shared) == []
    assert breaches("services/pty/text.py", "from terax_jupyter.ansi import strip\n") == []


# -- outbound network clients ----------------------------------------------------------------
#
# The places that may open a connection to another host or a local socket: everything else
# reaches the network through them (the AI providers through the guarded client of
# security/network.py, the preview through its own-listener connector). A call of one of these
# constructors, or a class built on one, anywhere else fails.

NETWORK_CONSTRUCTORS = frozenset(
    {
        "httpx.AsyncClient", "httpx.Client", "httpx.AsyncHTTPTransport", "httpx.HTTPTransport",
        "httpx.request", "httpx.stream", "httpx.get", "httpx.post", "httpx.put", "httpx.patch",
        "httpx.delete", "httpx.head", "httpx.options",
        "socket.socket", "socket.create_connection",
        "urllib.request.urlopen", "urllib.request.build_opener",
        "http.client.HTTPConnection", "http.client.HTTPSConnection",
        "asyncio.open_connection", "asyncio.open_unix_connection",
        "websockets.connect", "websockets.unix_connect",
        "websockets.asyncio.client.connect", "websockets.asyncio.client.unix_connect",
        "websockets.client.connect", "websockets.sync.client.connect",
        "websockets.sync.client.unix_connect",
        "tornado.httpclient.AsyncHTTPClient", "tornado.httpclient.HTTPClient",
        "tornado.simple_httpclient.SimpleAsyncHTTPClient",
        "tornado.curl_httpclient.CurlAsyncHTTPClient", "tornado.tcpclient.TCPClient",
        "tornado.websocket.websocket_connect", "tornado.websocket.WebSocketClientConnection",
    }
)  # fmt: skip
# Event-loop methods that open a connection, whatever the loop is called.
LOOP_CONNECTS = frozenset({"create_connection", "create_unix_connection", "sock_connect"})

# Module -> (constructors it may use, why).
NETWORK_ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "security/network.py": (
        frozenset({"httpx.AsyncClient", "httpx.AsyncHTTPTransport"}),
        "the guarded HTTP client: every request's address passes the network policy first "
        "(the AI providers and every other outbound request use it)",
    ),
    "services/preview/connect.py": (
        frozenset({"tornado.tcpclient.TCPClient", "tornado.websocket.WebSocketClientConnection"}),
        "the preview's connector: a connection counts only if the listening socket is this "
        "server's own account's",
    ),
    "services/preview/proxy.py": (
        frozenset({"tornado.simple_httpclient.SimpleAsyncHTTPClient"}),
        "the preview proxy's HTTP client, connecting through the own-listener connector",
    ),
    "services/preview/owner.py": (
        frozenset({"socket.socket"}),
        "a netlink socket to the kernel (not the network): who owns a preview connection's peer",
    ),
    "client/api.py": (
        frozenset(
            {"httpx.AsyncClient", "httpx.Client", "httpx.AsyncHTTPTransport", "httpx.HTTPTransport"}
        ),
        "the Python client of a Terax server's REST API (TCP or its Unix socket)",
    ),
    "notebook/connection.py": (
        frozenset({"websockets.asyncio.client.connect", "websockets.asyncio.client.unix_connect"}),
        "the notebook library's WebSockets to the server it discovered",
    ),
    "app.py": (
        frozenset({"socket.socket"}),
        "jupyter terax, before a server starts: is the port free (a bind, never a connection)?",
    ),
}


class NetworkFinder(RawAccessFinder):
    """Collects ``(line, constructor)`` for every network client a module makes or builds on."""

    def visit_Call(self, node: ast.Call) -> None:
        name = self._qualified(node.func)
        if name in NETWORK_CONSTRUCTORS:
            self.found.append((node.lineno, name))
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in LOOP_CONNECTS
            and (name is None or name.split(".")[0] != "socket")
        ):
            self.found.append((node.lineno, f"loop.{node.func.attr}"))
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = self._qualified(base)
            if name in NETWORK_CONSTRUCTORS:
                self.found.append((node.lineno, name))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for alias in node.names:
            self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)


def network_clients(source: str) -> list[tuple[int, str]]:
    finder = NetworkFinder()
    finder.visit(ast.parse(source))
    return sorted(set(finder.found))


@pytest.mark.parametrize("module", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_network_clients_only_in_the_allowed_modules(module: Path) -> None:
    relative = module.relative_to(PACKAGE).as_posix()
    found = network_clients(module.read_text(encoding="utf-8"))
    allowed, _why = NETWORK_ALLOWED.get(relative, (frozenset(), ""))
    stray = [(line, name) for line, name in found if name not in allowed]
    assert stray == [], f"{relative} opens network connections itself: {stray}"


def test_network_allowlist_entries_exist_and_say_why() -> None:
    for module, (constructors, why) in NETWORK_ALLOWED.items():
        assert (PACKAGE / module).is_file(), module
        assert constructors <= NETWORK_CONSTRUCTORS, module
        assert why
        assert "\n" not in why


def test_the_network_scanner_sees_what_it_must() -> None:
    source = """
import httpx, socket, asyncio
import urllib.request
import websockets
from tornado.httpclient import AsyncHTTPClient as Client
from tornado.tcpclient import TCPClient
from websockets.asyncio.client import connect
httpx.AsyncClient()
httpx.get("https://example.org")
socket.create_connection(("example.org", 80))
urllib.request.urlopen("https://example.org")
asyncio.open_connection("example.org", 80)
websockets.connect("ws://example.org")
Client()
connect("ws://example.org")
asyncio.get_running_loop().create_connection(lambda: None, "example.org", 80)
class Mine(TCPClient):
    pass
"""
    names = [name for _, name in network_clients(source)]
    for expected in (
        "httpx.AsyncClient", "httpx.get", "socket.create_connection", "urllib.request.urlopen",
        "asyncio.open_connection", "websockets.connect", "tornado.httpclient.AsyncHTTPClient",
        "websockets.asyncio.client.connect", "loop.create_connection",
        "tornado.tcpclient.TCPClient",
    ):  # fmt: skip
        assert expected in names, expected
    harmless = """
import httpx, sqlite3
# httpx.AsyncClient() in a comment
text = "socket.create_connection"
client: httpx.AsyncClient | None = None
sqlite3.connect(":memory:")
guarded_client(policy)
"""
    assert network_clients(harmless) == []
