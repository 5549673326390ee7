"""Find the user's running Terax server without configuration.

In this order, the first that answers ``GET <base>terax/api/info`` with its token wins:

1. An explicit URL (and token): arguments, else ``TERAX_URL`` / ``TERAX_TOKEN``. A URL pasted
   from the browser (``.../lab?token=...``) is cut back to its base and its token used. When
   it is given, nothing else is tried.
2. For a kernel, the server that started it: the running server whose pid is the kernel's
   ``JPY_PARENT_PID`` (``parent_pid``).
3. ``JUPYTER_SERVER_URL`` with ``JUPYTER_TOKEN`` (or the token of the server's runtime file).
4. A JupyterHub single-user server's environment: ``JUPYTERHUB_API_TOKEN`` with
   ``JUPYTERHUB_SERVICE_URL`` (where the server listens; a wildcard host means this machine),
   then ``JUPYTERHUB_PUBLIC_URL``, then ``JUPYTERHUB_HOST`` + ``JUPYTERHUB_SERVICE_PREFIX``.
5. The runtime files of running servers (``jupyter_server``'s ``list_running_servers``): the
   deepest whose root holds the current folder, then the others, most recently started first.

A token only ever goes to the URL it was issued for.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from terax_jupyter.client.api import SyncTeraxClient, TeraxAPIError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

HINT = "start one with `jupyter terax`, or pass --url and --token / set TERAX_URL and TERAX_TOKEN"
PROBE_TIMEOUT = 3.0  # seconds per candidate: a local server answers /terax/api/info at once
# Path segments of Lab and Jupyter pages: a URL copied from the browser ends its base there.
_PAGE_SEGMENTS = ("lab", "tree", "notebooks", "edit", "terminals", "doc", "terax", "api")
_WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")  # noqa: S104 (names read, not bound)


class DiscoveryError(Exception):
    """No running Terax server was found; the message says what was tried and what to pass."""


@dataclass(frozen=True)
class Candidate:
    """A server that may be Terax: where, its token, and how it was found."""

    url: str  # the base URL, ending in "/"
    token: str = field(repr=False)
    source: str
    root_dir: str | None = None
    socket: str | None = None


@dataclass(frozen=True)
class ServerTarget:
    """The server to use: a candidate that answered, with its ``/terax/api/info``."""

    url: str
    token: str = field(repr=False)
    source: str
    socket: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> str:
        return str(self.info.get("server_root") or "")

    @property
    def version(self) -> str:
        return str(self.info.get("version") or "")


def split_url(url: str) -> tuple[str, str | None]:
    """The base URL of a server (``scheme://host:port/base/``) and the token a copied browser
    URL carries, if any: ``http://h:8888/user/a/lab/tree/x?token=t`` gives
    (``http://h:8888/user/a/``, ``t``)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DiscoveryError(f"{url!r} is not an http(s) URL of a Jupyter server.")
    token = parse_qs(parts.query).get("token", [None])[0]
    segments = [s for s in parts.path.split("/") if s]
    # JupyterHub's /user/<name>/: a user may be called "lab".
    first = 2 if segments[:1] == ["user"] else 0
    for index, name in enumerate(segments[first:], first):
        if name in _PAGE_SEGMENTS:
            segments = segments[:index]
            break
    path = "/" + "".join(f"{s}/" for s in segments)
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), token


def _same_server(a: str, b: str) -> bool:
    def key(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        host = "127.0.0.1" if host in ("localhost", "::1") else host
        return parts.scheme, f"{host}:{parts.port}", parts.path.rstrip("/")

    try:
        return key(a) == key(b)
    except ValueError:
        return False


def _local_url(url: str) -> str:
    """``url`` with a wildcard host (a bind address: ``http://:8888/``, ``0.0.0.0``) replaced
    by this machine's loopback address."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    name, colon, port = host.rpartition(":")
    if not colon or name.count("[") != name.count("]"):  # no port, or inside an IPv6 address
        name, port = host, ""
    if name in _WILDCARD_HOSTS:
        netloc = f"127.0.0.1:{port}" if port else "127.0.0.1"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return url


def _runtime_candidate(info: Mapping[str, Any]) -> Candidate | None:
    socket = info.get("sock") or None
    if socket:
        base = str(info.get("base_url") or "/")
        url = "http://localhost" + (base if base.startswith("/") else "/" + base)
    else:
        url = str(info.get("url") or "")
        if not url.startswith(("http://", "https://")):
            return None
    return Candidate(
        url=url if url.endswith("/") else url + "/",
        token=str(info.get("token") or ""),
        source=f"running server (pid {info.get('pid')}, root {info.get('root_dir')})",
        root_dir=str(info.get("root_dir") or "") or None,
        socket=socket,
    )


def _contains(root: str, folder: str) -> bool:
    root = os.path.normpath(root)
    folder = os.path.normpath(folder)
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)


def rank_running(
    running: Iterable[Mapping[str, Any]],
    folders: Iterable[str],
    started: Callable[[Mapping[str, Any]], float],
) -> list[Candidate]:
    """Running servers, best first: the deepest root that holds one of ``folders`` (the
    current folder, as the kernel and as the shell spell it), then the most recently started."""
    here = [f for f in folders if f and os.path.isabs(f)]
    ranked: list[tuple[tuple[int, int, float], Candidate]] = []
    for info in running:
        candidate = _runtime_candidate(info)
        if candidate is None:
            continue
        root = candidate.root_dir or ""
        inside = bool(root) and any(_contains(root, folder) for folder in here)
        depth = len(os.path.normpath(root).split(os.sep)) if inside else 0
        ranked.append(((int(inside), depth, started(info)), candidate))
    ranked.sort(key=lambda item: item[0], reverse=True)
    return [candidate for _, candidate in ranked]


def candidates(
    url: str | None = None,
    token: str | None = None,
    *,
    environ: Mapping[str, str],
    folders: Iterable[str] = (),
    running: Iterable[Mapping[str, Any]] = (),
    started: Callable[[Mapping[str, Any]], float] = lambda info: 0.0,
    parent_pid: int | None = None,
) -> list[Candidate]:
    """The servers to try, in order (see the module docstring). Pure: the caller supplies the
    environment, the current folder, the runtime entries and the pid of the process that
    started this one (a kernel's server), if any."""
    running = list(running)
    chosen: str | None
    explicit_url = url or environ.get("TERAX_URL") or ""
    explicit_token = token or environ.get("TERAX_TOKEN") or ""
    if explicit_url:
        base, pasted_token = split_url(explicit_url)
        chosen = explicit_token or pasted_token or ""
        source = "--url" if url else "TERAX_URL"
        if not chosen:
            # A URL alone: the token of the running server at that address, if there is one.
            known = _known_token(running, base)
            if known is not None:
                chosen, source = known, f"{source} (token from its runtime file)"
        return [Candidate(base, chosen, source)]
    if token:
        raise DiscoveryError("--token needs --url (or TERAX_URL): which server is it for?")
    found: list[Candidate] = []
    hub_token = environ.get("JUPYTERHUB_API_TOKEN", "")
    if parent_pid is not None:
        for info in running:
            parent = _runtime_candidate(info) if info.get("pid") == parent_pid else None
            if parent is not None:
                # A hub-spawned server's runtime file may carry no token: the hub's is valid.
                found.append(
                    dataclasses.replace(
                        parent,
                        token=parent.token or hub_token,
                        source=f"the server that started this kernel (pid {parent_pid})",
                    )
                )
    server_url = environ.get("JUPYTER_SERVER_URL", "")
    if server_url:
        try:
            base, pasted_token = split_url(_local_url(server_url))
        except DiscoveryError:
            base = ""
        if base:
            chosen = environ.get("JUPYTER_TOKEN") or pasted_token or _known_token(running, base)
            found.append(Candidate(base, chosen or hub_token, "JUPYTER_SERVER_URL"))
    if hub_token:
        prefix = environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
        service_url = environ.get("JUPYTERHUB_SERVICE_URL", "")
        public_url = environ.get("JUPYTERHUB_PUBLIC_URL", "")
        host = environ.get("JUPYTERHUB_HOST", "").rstrip("/")
        hub_urls = [
            (_local_url(service_url), "JupyterHub (JUPYTERHUB_SERVICE_URL)"),
            (public_url, "JupyterHub (JUPYTERHUB_PUBLIC_URL)"),
            (host + prefix if host and prefix else "", "JupyterHub (JUPYTERHUB_HOST)"),
        ]
        for hub_url, source in hub_urls:
            if not hub_url:
                continue
            try:
                base, _ = split_url(hub_url)
            except DiscoveryError:
                continue
            found.append(Candidate(base, hub_token, source))
    found.extend(rank_running(running, folders, started))
    return _unique(found)


def _known_token(running: Iterable[Mapping[str, Any]], base: str) -> str | None:
    """The token in the runtime file of the running server at ``base``, if there is one."""
    for info in running:
        known = _runtime_candidate(info)
        if known is not None and _same_server(known.url, base):
            return known.token
    return None


def _unique(found: list[Candidate]) -> list[Candidate]:
    """``found`` without a server tried twice with the same token (the first source stays)."""
    kept: list[Candidate] = []
    for candidate in found:
        if not any(
            c.token == candidate.token
            and c.socket == candidate.socket
            and _same_server(c.url, candidate.url)
            for c in kept
        ):
            kept.append(candidate)
    return kept


def _started(info: Mapping[str, Any]) -> float:
    """When the server process started (seconds since the epoch), 0 if unknown."""
    import psutil

    try:
        return float(psutil.Process(int(info["pid"])).create_time())
    except (KeyError, TypeError, ValueError, psutil.Error):
        return 0.0


def _running_servers() -> list[dict[str, Any]]:
    from jupyter_server.serverapp import list_running_servers

    return list(list_running_servers())


def _current_folders(environ: Mapping[str, str]) -> list[str]:
    try:
        physical = os.getcwd()
    except OSError:
        physical = ""
    # The shell's spelling keeps symlinked folders (macOS /tmp, a linked project) as typed.
    return [physical, environ.get("PWD", "")]


def probe(candidate: Candidate, timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """``GET terax/api/info`` on ``candidate`` with its token: the info, or TeraxAPIError."""
    with SyncTeraxClient(
        candidate.url, candidate.token, socket=candidate.socket, timeout=timeout
    ) as client:
        info = client.get("info")
    if not isinstance(info, dict) or "server_root" not in info:
        raise TeraxAPIError("answered, but not as Terax does", status=200, reason="not_terax")
    return info


def discover(
    url: str | None = None,
    token: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    folders: Iterable[str] | None = None,
    running: Iterable[Mapping[str, Any]] | None = None,
    check: Callable[[Candidate], dict[str, Any]] = probe,
    parent_pid: int | None = None,
    hint: str = HINT,
) -> ServerTarget:
    """The first candidate that answers as Terax, or DiscoveryError saying what was tried and
    ending with ``hint`` (what to pass instead)."""
    environ = os.environ if environ is None else environ
    if running is None:
        running = _running_servers()
    order = candidates(
        url,
        token,
        environ=environ,
        folders=_current_folders(environ) if folders is None else folders,
        running=running,
        started=_started,
        parent_pid=parent_pid,
    )
    failures: list[str] = []
    for candidate in order:
        try:
            info = check(candidate)
        except TeraxAPIError as error:
            failures.append(f"{candidate.url} ({candidate.source}): {error.message}")
            continue
        return ServerTarget(
            candidate.url, candidate.token, candidate.source, candidate.socket, info
        )
    if not order:
        from jupyter_core.paths import jupyter_runtime_dir

        raise DiscoveryError(
            "No running Terax server found (no TERAX_URL, no JupyterHub server, no server "
            f"in {jupyter_runtime_dir()}): {hint}."
        )
    tried = "\n".join(f"  - {line}" for line in failures)
    raise DiscoveryError(f"No Terax server answered:\n{tried}\nTo fix it: {hint}.")
