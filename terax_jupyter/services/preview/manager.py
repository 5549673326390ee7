"""PreviewManager: the dev servers terminals started, and which ports the proxy may open."""

from __future__ import annotations

import asyncio
import ipaddress
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from traitlets import Float, Int, List
from traitlets.config import LoggingConfigurable

from terax_jupyter.exceptions import AccessDenied, InvalidRequest, NotFound
from terax_jupyter.security.policy import Policy
from terax_jupyter.services.preview.capabilities import Capability, PreviewCapabilities
from terax_jupyter.services.preview.detect import LOWEST_PORT, ServerDetector

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from terax_jupyter.services.pty.manager import PtyManager

# A listing looks at the sessions' ports again unless it did this recently.
REFRESH_AGE = 1.0
PROXY_ROUTE = "terax/proxy"
# ``<target>~<capability>``: the route segment a previewed page is served under.
CAPABILITY_SEPARATOR = "~"


@dataclass(frozen=True)
class ProxyTarget:
    """Where one proxied request goes: a loopback port, never a name that must be resolved."""

    port: int
    addresses: tuple[str, ...]  # tried in order: a server may listen on only one of them
    host: str  # the Host header the server gets, as if the browser had asked it directly
    segment: str  # the route segment as requested ("5173", "127.0.0.1:5173")


class PreviewManager(LoggingConfigurable):
    """Dev servers found in terminal sessions, and the port policy of the preview proxy."""

    denied_ports = List(
        Int(),
        help="Ports the preview never opens, besides the server's own port and ports below 1024.",
    ).tag(config=True)
    max_body_bytes = Int(
        64 * 1024 * 1024, help="The largest request body the preview proxy forwards."
    ).tag(config=True)
    connect_timeout = Float(
        10.0, help="Seconds the proxy waits for a previewed server to accept a connection."
    ).tag(config=True)
    capability_idle = Float(
        8 * 3600.0,
        help="Seconds a preview address (its capability) stays valid without a request; a dev "
        "server told to serve under it (vite --base) needs the new one after that.",
    ).tag(config=True)
    capability_lifetime = Float(
        7 * 24 * 3600.0,
        help="Seconds a preview address stays valid after it was issued, however much it is used.",
    ).tag(config=True)

    def __init__(
        self,
        pty: PtyManager,
        *,
        base_url: str = "/",
        own_ports: Callable[[], Iterable[int]] = tuple,
        state_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.pty = pty
        self.policy = Policy()  # the administrator's (app.py sets it)
        self.base_url = base_url
        self._own_ports = own_ports
        self.capabilities = PreviewCapabilities(
            os.path.join(state_dir, "preview-capabilities.json") if state_dir else None,
            idle=self.capability_idle,
            lifetime=self.capability_lifetime,
        )

    # -- the proxy's policy ------------------------------------------------------------

    def target(self, spec: str, *, also_own: Iterable[int] = ()) -> ProxyTarget:
        """The target of ``/terax/proxy/<spec>/``: ``<port>`` or ``<loopback host>:<port>``."""
        self.policy.require("preview")
        host, separator, port_text = spec.rpartition(":")
        if not separator:
            host = ""
        shown = spec if len(spec) <= 64 else spec[:64] + "…"
        if not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5):
            raise InvalidRequest(
                f"'{shown}' is not a port: give a number from {LOWEST_PORT} to 65535.",
                reason="invalid_port",
            )
        port = int(port_text)
        if not 0 < port <= 65535:
            raise InvalidRequest(
                f"Port {port} does not exist: give a number from {LOWEST_PORT} to 65535.",
                reason="invalid_port",
            )
        addresses, host_header = _loopback(host, port)
        self.check_port(port, also_own=also_own)
        return ProxyTarget(port, addresses, host_header, spec)

    def check_port(self, port: int, *, also_own: Iterable[int] = ()) -> None:
        if port < LOWEST_PORT:
            raise AccessDenied(
                f"Port {port} is below {LOWEST_PORT}: those belong to system services, which "
                "the preview does not open.",
                reason="privileged_port",
            )
        if port in self.own_ports(also_own):
            raise AccessDenied(
                f"Port {port} is this Jupyter server's own port; the preview never opens it.",
                reason="own_port",
            )
        if port in self.denied_ports:
            raise AccessDenied(
                f"The administrator does not allow previews of port {port}.",
                reason="port_denied",
            )

    def offers(self, port: int) -> bool:
        """Whether a server found on ``port`` is worth offering (the proxy would open it)."""
        return (
            LOWEST_PORT <= port <= 65535
            and port not in self.own_ports()
            and (port not in self.denied_ports)
        )

    def own_ports(self, also: Iterable[int] = ()) -> set[int]:
        return {*self._own_ports(), *also}

    def proxy_path(self, port: int) -> str:
        return f"{self.base_url.rstrip('/')}/{PROXY_ROUTE}/{port}/"

    # -- capabilities ------------------------------------------------------------------

    def capability_prefix(self, target: str, token: str) -> str:
        """The path a previewed page of ``target`` is served under (no trailing slash)."""
        return f"{self.base_url.rstrip('/')}/{PROXY_ROUTE}/{target}{CAPABILITY_SEPARATOR}{token}"

    def issue_capability(self, user: str, spec: str) -> dict[str, Any]:
        """The live preview address for ``spec`` (checked like a proxy target); ``user`` is
        recorded as who asked for a new one."""
        target = self.target(spec)
        capability, token = self.capabilities.issue(user, target.segment)
        return self._describe(capability, token)

    def capability_of(self, spec: str) -> dict[str, Any]:
        """The live address and the last page its frame loaded; NotFound when there is none."""
        target = self.target(spec)
        capability = self.capabilities.find(target.segment)
        if capability is None:
            raise NotFound(
                f"No preview address is live for {target.segment}.", reason="no_capability"
            )
        described = self._describe(capability, capability.token)
        navigation = capability.navigation
        described["navigation"] = None if navigation is None else vars(navigation).copy()
        return described

    def _describe(self, capability: Capability, token: str) -> dict[str, Any]:
        # A capability from before a restart has no known token until a page uses it.
        prefix = self.capability_prefix(capability.target, token) + "/" if token else None
        return capability.public(
            prefix=prefix,
            idle=self.capabilities.idle,
            lifetime=self.capabilities.lifetime,
        )

    # -- detected servers --------------------------------------------------------------

    async def servers(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The servers of one session (or all), after a fresh look at their ports."""
        if session_id is not None:
            sessions = [self.pty.get(session_id)]
        else:
            sessions = list(self.pty.sessions.values())
        # The app gives every session this area's detector; a session without one (a
        # terminal manager used on its own) has found no servers.
        watched = [
            (session, detector)
            for session in sessions
            if isinstance(detector := session.servers, ServerDetector)
        ]
        await asyncio.gather(
            *(detector.poll(REFRESH_AGE) for session, detector in watched if not session.exited),
            return_exceptions=True,
        )
        found = [
            {
                **server.to_dict(),
                "session_id": session.id,
                "session_name": session.name,
                "proxy_path": self.proxy_path(server.port),
            }
            for session, detector in watched
            for server in list(detector.servers.values())
            if self.offers(server.port)
        ]
        return sorted(found, key=lambda s: (s["first_seen"], s["port"]))


def _loopback(host: str, port: int) -> tuple[tuple[str, ...], str]:
    """The addresses to connect to for a host named in the route; nothing is resolved."""
    if host == "" or host.lower() == "localhost":
        return ("127.0.0.1", "::1"), f"localhost:{port}"
    if host == "[::1]":
        return ("::1",), f"[::1]:{port}"
    try:
        address = ipaddress.IPv4Address(host)
    except ValueError:
        address = None
    if address is not None and address.is_loopback and str(address) == host:
        return (host,), f"{host}:{port}"
    shown = host if len(host) <= 64 else host[:64] + "…"
    raise AccessDenied(
        f"The preview only opens servers on this machine's loopback (localhost, 127.0.0.1, "
        f"[::1]), not on '{shown}'.",
        reason="not_loopback",
    )
