"""TeraxApp: the server extension's wiring, and ``jupyter terax [PATH]``."""

from __future__ import annotations

import errno
import os
import socket
import sys
from functools import partial
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from jupyter_core.paths import jupyter_data_dir, jupyter_runtime_dir
from jupyter_server.extension.application import ExtensionApp
from jupyter_server.serverapp import aliases as server_aliases
from jupyter_server.serverapp import flags as server_flags
from traitlets import Bool, Enum, Int, List, Unicode

from terax_jupyter import activity
from terax_jupyter._version import __version__
from terax_jupyter.base import (
    CONNECTIONS_KEY,
    DEFAULT_WEBSOCKETS_PER_USER,
    SETTINGS_KEY,
    ConnectionSlots,
)
from terax_jupyter.context import TeraxContext
from terax_jupyter.security import SecurityLayer
from terax_jupyter.security.policy import Policy, load_policy
from terax_jupyter.services import registry
from terax_jupyter.services.area import Setup
from terax_jupyter.services.preview.detect import ServerDetector
from terax_jupyter.services.registry import ManagerClass

if TYPE_CHECKING:
    from terax_jupyter.services.area import Area

# Every area's handler modules, in routing order (services/<area>/__init__.py names them).
HANDLER_MODULES = registry.handler_modules()

_flags: dict[str, Any] = {
    "read-only": ({"TeraxApp": {"read_only": True}}, "Refuse every write through Terax."),
    # The server's own, listed so that ``--help`` shows them.
    **{name: server_flags[name] for name in ("no-browser", "allow-root", "debug")},
}
_aliases: dict[str, Any] = {
    name: server_aliases[name]
    for name in ("port", "ip", "port-retries", "certfile", "keyfile", "config", "log-level")
}

_DESCRIPTION = """\
A terminal-first, AI-native development environment inside JupyterLab.

jupyter terax [PATH] [options] opens JupyterLab with the Terax panels, rooted at
PATH (a folder, or a file to open; default: the current folder). If a server is
already running for that folder, its URL is printed instead (give --port to start
another). jupyter terax mcp serves Terax's tools to other agents over MCP (stdio);
see jupyter terax mcp --help. Every JupyterLab and Jupyter Server option works too
(--help-all lists them); as root, add --allow-root (e.g. in a container)."""


class TeraxApp(ExtensionApp):
    """Terax inside Jupyter: the security layer, the managers, and their REST/WebSocket API."""

    name = "terax"
    description = _DESCRIPTION
    examples = """
jupyter terax                       # Lab with Terax on the current folder
jupyter terax ~/project --port 9000 # on ~/project, port 9000
jupyter terax --no-browser          # print the URL, open no browser
jupyter terax mcp                   # Terax's tools for another agent (MCP over stdio)
"""
    version = __version__
    extension_url = "/lab"
    load_other_extensions = True
    flags = _flags
    aliases = _aliases

    read_only = Bool(False, help="Refuse every write made through Terax (files, agent edits).").tag(
        config=True
    )
    extra_roots = List(
        Unicode(), help="Folders besides the server root that Terax tools may use."
    ).tag(config=True)
    allow_user_roots = Bool(
        True, help="Whether users may add workspace roots (each addition is audited)."
    ).tag(config=True)
    extra_deny_patterns = List(
        Unicode(),
        help="More gitignore-style patterns no Terax tool may read or write (adds to built-ins).",
    ).tag(config=True)
    extra_deny_prefixes = List(
        Unicode(), help="More absolute folders no Terax tool may read or write."
    ).tag(config=True)
    extra_write_deny_prefixes = List(
        Unicode(),
        help="More absolute folders Terax tools may read (inside a root) but never write.",
    ).tag(config=True)
    hard_links = Enum(
        ["stores", "refuse", "allow"],
        default_value="stores",
        help="Files with several names (hard links) may be another name of a protected file or "
        "of one outside the workspace. 'stores': their content is read only inside package "
        "stores (node_modules, site-packages, ...); 'refuse': never; 'allow': always.",
    ).tag(config=True)
    extra_hard_link_stores = List(
        Unicode(),
        help="More folder names (whole path segments) inside which files with several names "
        "are read, as inside node_modules and site-packages.",
    ).tag(config=True)
    local_model_hosts = List(
        Unicode(),
        help="Hosts of local model servers that may be reached on loopback or private addresses,"
        " as host, host:port or scheme://host:port (e.g. 127.0.0.1:11434, localhost:1234).",
    ).tag(config=True)
    max_websockets_per_user = Int(
        DEFAULT_WEBSOCKETS_PER_USER,
        help="WebSockets (terminal views, file watches, agent panels, preview relays) one user "
        "may have open at once; more are refused with 503 too_many_connections (0: no limit).",
    ).tag(config=True)
    # The managers, each the area's own class unless an administrator names a subclass (as
    # jupyter_server's contents_manager_class). The agent's and the browser's are read, and
    # imported, on the first use of their area.
    fs_manager_class = ManagerClass("fs")
    pty_manager_class = ManagerClass("pty")
    git_manager_class = ManagerClass("git")
    secrets_manager_class = ManagerClass("secrets")
    kernels_manager_class = ManagerClass("kernels")
    ai_manager_class = ManagerClass("ai")
    browser_manager_class = ManagerClass("browser")
    preview_manager_class = ManagerClass("preview")
    data_dir = Unicode(
        help=(
            "Where Terax keeps its state (audit, user roots, keys when there is no OS "
            "keychain); default <jupyter data dir>/terax."
        )
    ).tag(config=True)

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        self._refuse_wrong_manager_classes()
        state_dir = self.data_dir or os.path.join(jupyter_data_dir(), "terax")
        policy = self._load_policy()
        read_only = policy.read_only if policy.read_only is not None else self.read_only
        if read_only and not policy.read_only:
            # A shell writes wherever the account may: read-only by trait has no terminals.
            policy = policy.with_server_off("terminals", "TeraxApp.read_only is True")
        security = SecurityLayer.build(
            self.serverapp.root_dir,
            state_dir,
            read_only=read_only or policy.error is not None,
            extra_roots=self.extra_roots,
            allow_user_roots=self.allow_user_roots,
            extra_deny_patterns=self.extra_deny_patterns,
            # The server's own secrets: the token and cookie secret, kernel keys.
            extra_deny_prefixes=[*self.extra_deny_prefixes, jupyter_runtime_dir()],
            extra_write_deny_prefixes=self.extra_write_deny_prefixes,
            extra_local_hosts=self.local_model_hosts,
            hard_links=self.hard_links,
            extra_hard_link_stores=self.extra_hard_link_stores,
            policy=policy,
        )
        parts = SimpleNamespace(security=security)
        for area in registry.managed_areas(later=False):
            vars(parts).update(area.make(self._setup(area, state_dir), parts))
        # Between areas. Terminals offer only the servers the preview proxy would open (the
        # preview's detector is passed in: terminals do not import the preview).
        parts.pty.server_watch = partial(ServerDetector, accept=parts.preview.offers)
        # Terminals do not inherit the provider keys of the server's environment.
        parts.pty.environment_filter = parts.secrets.without_server_keys
        self.context = TeraxContext(
            **vars(parts),
            builders={
                area.name: partial(self._build_later, area, state_dir)
                for area in registry.managed_areas(later=True)
            },
        )
        self.settings[SETTINGS_KEY] = self.context
        self.settings[CONNECTIONS_KEY] = ConnectionSlots(self.max_websockets_per_user)
        # An agent run goes on after its request finished: while one lasts, the server is in
        # use for JupyterHub's idle culler (terminal traffic is marked in pty/stream.py).
        serverapp = self.serverapp
        self._busy_activity = activity.mark_while_busy(
            lambda: getattr(serverapp.web_app, "settings", None), self._agent_running
        )

    def _refuse_wrong_manager_classes(self) -> None:
        """A manager class traitlets refused when the configuration was read stops Terax here.

        jupyter_server logs that refusal and goes on to load the extension with the default
        class: an administrator's swap (a hub's own manager) would be undone in silence.
        """
        assert self.serverapp is not None
        # (A refused value is in the server's configuration, not in this app's.)
        for config in (self.serverapp.config, self.config):
            configured = config.get(type(self).__name__, {})
            for name, trait in self.traits().items():
                if isinstance(trait, ManagerClass) and name in configured:
                    setattr(self, name, configured[name])  # TraitError, said in one line

    def _setup(self, area: Area, state_dir: str) -> Setup:
        # The class is imported here: for the agent and the browser, on their first use.
        trait = self.traits()[area.manager_trait]
        assert isinstance(trait, ManagerClass)
        manager_class = trait.resolve(self)
        return Setup(manager_class, parent=self, state_dir=state_dir, serverapp=self.serverapp)

    def _build_later(self, area: Area, state_dir: str, context: TeraxContext) -> Any:
        return area.make(self._setup(area, state_dir), context)[area.name]

    def _agent_running(self) -> bool:
        ai = self.context.built("ai")
        return ai is not None and bool(ai.runs)

    def _load_policy(self) -> Policy:
        """The administrator's policy (``policy.py``), with the server's own switches."""
        assert self.serverapp is not None
        policy = load_policy()
        if policy.error is not None:
            self.log.error("Terax: %s; every Terax feature is off (fail closed).", policy.error)
        elif policy.sources:
            self.log.info("Terax: the administrator's policy from %s", ", ".join(policy.sources))
        if not self.serverapp.terminals_enabled:
            policy = policy.with_server_off("terminals", "ServerApp.terminals_enabled is False")
        return policy

    def initialize_handlers(self) -> None:
        for module in HANDLER_MODULES:
            self.handlers.extend(module.default_handlers)

    async def stop_extension(self) -> None:
        busy_activity = getattr(self, "_busy_activity", None)
        if busy_activity is not None:
            busy_activity.stop()
        context = getattr(self, "context", None)
        if context is not None:
            await context.close()


class LaunchError(Exception):
    """A reason ``jupyter terax`` cannot start, said in one line."""


class AlreadyRunning(LaunchError):
    """A server already runs for the folder: its URL, said in one line (not an error)."""


def main(argv: list[str] | None = None) -> None:
    """``jupyter terax [PATH] [server options]``: Lab with the Terax panels, rooted at PATH."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["mcp"]:
        from terax_jupyter.mcp.cli import main as mcp_main

        mcp_main(arguments[1:])
        return
    try:
        arguments = preflight(arguments)
    except AlreadyRunning as running:
        print(f"jupyter terax: {running}")
        return
    except LaunchError as error:
        print(f"jupyter terax: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        TeraxApp.launch_instance(arguments)
    except SystemExit:
        if _refused_as_root():
            # The server's own line is lost among thirty of startup log: say it last.
            print(
                "jupyter terax: refusing to run as root; start it as your own user, or add "
                "--allow-root if you mean to (as in a container).",
                file=sys.stderr,
            )
        raise


def _refused_as_root() -> bool:
    from jupyter_server.serverapp import ServerApp

    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not ServerApp.initialized():
        return False
    return not ServerApp.instance().allow_root


def preflight(arguments: list[str]) -> list[str]:
    """Check PATH and an explicit port before the server starts; return the arguments to use."""
    positional, options = _split_arguments(arguments)
    if len(positional) > 1:
        raise LaunchError(f"give one PATH, not {len(positional)}: {' '.join(positional)}")
    if positional:
        path = os.path.abspath(os.path.expanduser(positional[0]))
        if not os.path.exists(path):
            raise LaunchError(f"{positional[0]}: no such file or folder")
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        if not os.access(folder, os.R_OK | os.X_OK):
            raise LaunchError(f"{positional[0]}: permission denied (the folder cannot be read)")
    elif not os.access(os.getcwd(), os.R_OK | os.X_OK):
        raise LaunchError("the current folder cannot be read; give a PATH")
    port = options.get("port") or options.get("ServerApp.port") or os.environ.get("JUPYTER_PORT")
    if port is None and not _help_asked(options):
        root = positional[0] if positional else os.getcwd()
        root = os.path.abspath(os.path.expanduser(root))
        _refuse_a_second_server(root if os.path.isdir(root) else os.path.dirname(root))
    if port is not None:
        try:
            number = int(port)
        except ValueError:
            raise LaunchError(f"--port must be a number, not '{port}'") from None
        if not 0 <= number <= 65535:
            raise LaunchError(f"--port must be between 0 and 65535, not {number}")
        ip = options.get("ip") or options.get("ServerApp.ip") or "localhost"
        if number and _port_in_use(ip, number):
            raise LaunchError(
                f"port {number} on {ip} is already in use; choose another with --port"
            )
        if "port-retries" not in options and "ServerApp.port_retries" not in options:
            arguments = [*arguments, "--ServerApp.port_retries=0"]
    return arguments


def _help_asked(options: dict[str, str]) -> bool:
    return bool({"help", "help-all", "h", "version", "generate-config"} & set(options))


def _refuse_a_second_server(folder: str) -> None:
    """A Jupyter server this user runs for ``folder`` already: offer it instead of a second."""
    from jupyter_server.serverapp import list_running_servers

    wanted = os.path.realpath(folder)
    for info in list_running_servers():
        root = info.get("root_dir") or info.get("notebook_dir") or ""
        if not root or os.path.realpath(root) != wanted:
            continue
        url = str(info.get("url", "")).rstrip("/") + "/lab"
        token = info.get("token")
        if token:
            url += f"?token={token}"
        raise AlreadyRunning(
            f"a server is already running for {folder} (pid {info.get('pid')}): {url} "
            "- open it, or give --port to start another"
        )


def _split_arguments(arguments: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional arguments and ``--name value`` options, the way traitlets reads them."""
    valueless = {str(name) for name in server_flags} | set(_flags)
    value_taking = {str(name) for name in server_aliases}
    positional: list[str] = []
    options: dict[str, str] = {}
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if not argument.startswith("-") or argument == "-":
            positional.append(argument)
            continue
        name = argument.lstrip("-")
        if "=" in name:
            key, value = name.split("=", 1)
            options[key] = value
        elif name in valueless:
            options[name] = ""
        elif (name in value_taking or "." in name) and index < len(arguments):
            options[name] = arguments[index]
            index += 1
        else:
            options[name] = ""
    return positional, options


def _port_in_use(ip: str, port: int) -> bool:
    try:
        infos = socket.getaddrinfo(ip, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise LaunchError(f"cannot resolve --ip {ip}: {error.strerror}") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            if hasattr(socket, "SO_REUSEADDR") and os.name != "nt":
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    return True
                if error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue
                raise LaunchError(f"cannot listen on {ip}:{port}: {error.strerror}") from None
    return False
