"""Remote URLs: credentials stripped for display, and the web page of a repository or commit."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

# scp-like ssh syntax: [user@]host:path (no scheme; the host part holds no slash).
_SCP = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]/]+\]|[^:/]+):(?P<path>[^/].*|/.*)$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")
_OID = re.compile(r"^[0-9a-f]{4,64}$")


def strip_credentials(url: str) -> str:
    """The URL without a password or token in it (``https://user:token@host`` -> ``https://host``).

    Only URLs with a scheme carry credentials (scp-like ``git@host:path`` names a login only).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    if parts.scheme == "ssh" and ":" not in parts.netloc.rpartition("@")[0]:
        return url  # ssh://git@host/...: a login name, not a secret
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def web_url(url: str) -> str | None:
    """The https page of the repository a remote URL points at, or None (a local path, ...)."""
    located = _locate(url.strip())
    if located is None:
        return None
    scheme, host, path = located
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.rstrip("/")
    if not path or ".." in path.split("/"):
        return None
    lower = host.lower()
    if lower in ("ssh.github.com", "altssh.github.com"):
        host = "github.com"
    elif lower == "altssh.bitbucket.org":
        host = "bitbucket.org"
    elif lower == "altssh.gitlab.com":
        host = "gitlab.com"
    elif lower == "ssh.dev.azure.com" and path.startswith("v3/"):
        # git@ssh.dev.azure.com:v3/org/project/repo -> https://dev.azure.com/org/project/_git/repo
        parts = path.split("/")
        if len(parts) != 4:
            return None
        host, path = "dev.azure.com", f"{parts[1]}/{parts[2]}/_git/{parts[3]}"
    elif lower.endswith(".visualstudio.com") and path.startswith("v3/"):
        parts = path.split("/")
        if len(parts) != 4:
            return None
        host, path = f"{parts[1]}.visualstudio.com", f"{parts[2]}/_git/{parts[3]}"
    return f"{scheme}://{host}/{quote(path, safe='/~!$&()*+,;=:@-._')}"


def commit_url(repository_url: str, oid: str) -> str | None:
    """The web page of one commit, given ``web_url``'s answer (GitHub, GitLab, Bitbucket, ...)."""
    if not _OID.match(oid):
        return None
    parts = urlsplit(repository_url)
    host = parts.hostname or ""
    path = parts.path.strip("/")
    if host == "bitbucket.org" or host.startswith("bitbucket."):
        if path.startswith("scm/"):
            # Bitbucket Server: /scm/PROJECT/repo -> /projects/PROJECT/repos/repo/commits/<oid>
            segments = path.split("/")
            if len(segments) == 3:
                base = f"{parts.scheme}://{parts.netloc}"
                return f"{base}/projects/{segments[1]}/repos/{segments[2]}/commits/{oid}"
        return f"{repository_url}/commits/{oid}"
    if host == "gitlab.com" or "gitlab" in host.split(".")[0]:
        return f"{repository_url}/-/commit/{oid}"
    return f"{repository_url}/commit/{oid}"


def _locate(url: str) -> tuple[str, str, str] | None:
    """(web scheme, host, path) of a remote URL."""
    if not url or any(ord(ch) < 0x20 or ch == "\x7f" or ch.isspace() for ch in url):
        return None
    if "://" in url:
        try:
            parts = urlsplit(url)
            host = parts.hostname or ""
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme in ("http", "https"):
            web_scheme = scheme
            port = parts.port
            if port and port not in (80, 443):
                host = f"{host}:{port}"
        elif scheme in ("ssh", "git", "git+ssh", "ssh+git"):
            web_scheme = "https"  # the ssh/git port says nothing about the web server's
        else:
            return None  # file://, local paths, ext::, ...
        if not host or not _HOST.match(host.split(":")[0]):
            return None
        return web_scheme, host, parts.path
    match = _SCP.match(url)
    if match is None:
        return None
    host = match["host"]
    if not _HOST.match(host) or ("." not in host and host != "localhost"):
        return None  # "C:/repo" or a bare word is a local path, not a host
    return "https", host, match["path"]
