"""What another local user can reach of the agent's browser: no DevTools endpoint (the browser
talks over a pipe), no socket of it, no copy of the pipe; and a pipe that closes with the
browser. Real Chromium, a real second uid (``second_user``), a real scan of every loopback
listener of the machine."""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import signal
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import AccessDenied, BrowserError
from terax_jupyter.services.browser.launcher import ChromiumLauncher
from terax_jupyter.services.browser.navigation import check_navigation
from terax_jupyter.services.browser.session import BrowserSession

from .driver_fixtures import live_group_members

if TYPE_CHECKING:
    from collections.abc import Iterator

    from terax_jupyter.services.browser.cdp import CdpEvent, Subscription
    from tests.second_user import OtherUser

# Run by /usr/bin/python3 as the other user (stdlib only): every TCP socket listening on
# loopback or on all addresses, probed with GET /json/version and a WebSocket upgrade on
# /devtools/browser (and on the browser's own path when /json/version named one); an endpoint
# that upgrades is driven (Browser.getVersion) to prove it can be. Then it tries to connect to
# the named unix sockets it is given. Prints JSON.
SCANNER = r"""
import base64, concurrent.futures, json, os, socket, sys, urllib.parse

def listeners():
    found = set()
    for path, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            with open(path) as table:
                rows = table.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] != "0A":  # LISTEN
                continue
            address, port = fields[1].split(":")
            port = int(port, 16)
            if family == socket.AF_INET:
                host = socket.inet_ntop(family, bytes.fromhex(address)[::-1])
                if host.startswith("127."):
                    found.add((family, host, port))
                elif host == "0.0.0.0":
                    found.add((family, "127.0.0.1", port))
            else:
                raw = b"".join(bytes.fromhex(address[i:i + 8])[::-1] for i in range(0, 32, 8))
                host = socket.inet_ntop(family, raw)
                if host in ("::1", "::"):
                    found.add((family, "::1", port))
                elif host.startswith("::ffff:127."):
                    found.add((socket.AF_INET, host.rsplit(":", 1)[1], port))
    return sorted(found)

def exchange(family, host, port, request, keep=None):
    connection = socket.socket(family)
    connection.settimeout(3)
    try:
        connection.connect((host, port))
        connection.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                length = min(int(value.strip()), 1 << 20)
        while len(body) < length:
            chunk = connection.recv(65536)
            if not chunk:
                break
            body += chunk
        if keep is not None and head.startswith(b"HTTP/1.1 101"):
            return head, body, keep(connection, body)
        return head, body, None
    except OSError:
        return b"", b"", None
    finally:
        connection.close()

def host_header(family, host, port):
    return f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"

def drive(connection, pending):
    # One masked text frame with a CDP call; read the answer frame.
    payload = json.dumps({"id": 1, "method": "Browser.getVersion"}).encode()
    mask = os.urandom(4)
    frame = bytes([0x81, 0x80 | len(payload)]) + mask
    frame += bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    connection.sendall(frame)
    data = pending
    while True:
        if len(data) >= 2:
            size, start = data[1] & 0x7F, 2
            if size == 126:
                size, start = int.from_bytes(data[2:4], "big"), 4
            elif size == 127:
                size, start = int.from_bytes(data[2:10], "big"), 10
            if len(data) >= start + size:
                return data[start:start + size].decode("utf-8", "replace")
        chunk = connection.recv(65536)
        if not chunk:
            return ""
        data += chunk

def upgrade(family, host, port, path):
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {host_header(family, host, port)}\r\n"
        f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    ).encode()
    head, _body, answer = exchange(family, host, port, request, keep=drive)
    return head.startswith(b"HTTP/1.1 101"), answer

def probe(target):
    family, host, port = target
    request = (
        f"GET /json/version HTTP/1.1\r\nHost: {host_header(family, host, port)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    head, body, _ = exchange(family, host, port, request)
    version = None
    if head.startswith(b"HTTP/1.1 200"):
        try:
            version = json.loads(body)
        except ValueError:
            version = None
    if not isinstance(version, dict) or "webSocketDebuggerUrl" not in version:
        version = None
    paths = ["/devtools/browser"]
    if version is not None:
        paths.append(urllib.parse.urlsplit(version["webSocketDebuggerUrl"]).path)
    upgraded, answer = False, None
    for path in paths:
        upgraded, answer = upgrade(family, host, port, path)
        if upgraded:
            break
    if version is None and not upgraded:
        return None
    return {"host": host, "port": port, "version": version, "upgraded": upgraded,
            "answer": answer}

def try_unix(name):
    connection = socket.socket(socket.AF_UNIX)
    connection.settimeout(3)
    try:
        connection.connect("\0" + name[1:] if name.startswith("@") else name)
        return True
    except OSError:
        return False
    finally:
        connection.close()

asked = json.loads(sys.argv[1])
targets = listeners()
with concurrent.futures.ThreadPoolExecutor(32) as pool:
    endpoints = [e for e in pool.map(probe, targets) if e is not None]
print(json.dumps({
    "uid": os.getuid(),
    "listeners": len(targets),
    "endpoints": endpoints,
    "unix_reached": [name for name in asked["unix"] if try_unix(name)],
}))
"""


ACCEPTING = 0x10000  # __SO_ACCEPTCON in /proc/net/unix: a listening socket


def scan_as(user: OtherUser, unix: list[str]) -> dict[str, Any]:
    done = user.run(["/usr/bin/python3", "-c", SCANNER, json.dumps({"unix": unix})], timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def group_socket_inodes(group: int) -> set[str]:
    """The socket inodes held by the processes of a process group."""
    inodes: set[str] = set()
    for pid in live_group_members(group):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue  # it ended meanwhile
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            found = re.fullmatch(r"socket:\[(\d+)\]", target)
            if found is not None:
                inodes.add(found.group(1))
    return inodes


def inet_listeners(inodes: set[str]) -> list[str]:
    """The TCP listeners and bound UDP sockets among ``inodes`` (/proc/net rows)."""
    rows = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = row.split()
            listening = fields[3] == "0A" if table.startswith("tcp") else True
            if fields[9] in inodes and listening:
                rows.append(f"{table}: {row.strip()}")
    return rows


def named_unix_sockets(inodes: set[str]) -> tuple[list[str], list[str]]:
    """The unix sockets among ``inodes`` that have a name (a path, or @abstract): all of them,
    and those another process could reach (listening, or an unconnected datagram socket)."""
    named, reachable = [], []
    for row in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = row.split()
        if len(fields) < 8 or fields[6] not in inodes:
            continue
        flags, kind, state = int(fields[3], 16), fields[4], fields[5]
        named.append(fields[7])
        if flags & ACCEPTING or (kind == "0002" and state == "01"):
            reachable.append(fields[7])
    return named, reachable


def pipe_holders(inode: str) -> set[int]:
    """Every process that has the pipe ``inode`` open."""
    holders = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = os.listdir(entry / "fd")
        except OSError:
            continue  # it ended meanwhile
        for fd in fds:
            try:
                if os.readlink(entry / "fd" / fd) == f"pipe:[{inode}]":
                    holders.add(int(entry.name))
            except OSError:
                continue  # closed meanwhile (the listing's own descriptor, for one)
    return holders


def pipe_inode(fd: int) -> str:
    found = re.fullmatch(r"pipe:\[(\d+)\]", os.readlink(f"/proc/self/fd/{fd}"))
    assert found is not None
    return found.group(1)


async def test_another_user_finds_no_devtools_endpoint_of_the_agents_browser(
    second_user: OtherUser,
) -> None:
    # The agent's browser, and as a control the way it was launched before (a DevTools port
    # on 127.0.0.1): the scan must find and drive the control, and find nothing of ours. Each
    # says who it is through its user agent (/json/version shows it), so browsers other
    # programs on this machine run do not confuse the result.
    ours, old = f"terax-agent-{secrets.token_hex(6)}", f"terax-control-{secrets.token_hex(6)}"
    agent = ChromiumLauncher(extra_args=[f"--user-agent={ours}"])
    control = ChromiumLauncher(
        extra_args=[
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-agent={old}",
        ]
    )
    await agent.start()
    try:
        await control.start()
        assert agent.pid is not None
        assert agent.profile_dir is not None
        profile = agent.profile_dir
        profile_mode = stat.S_IMODE(profile.stat().st_mode)
        inodes = group_socket_inodes(agent.pid)
        named, reachable = named_unix_sockets(inodes)
        inet = inet_listeners(inodes)
        result = await asyncio.to_thread(scan_as, second_user, named)
    finally:
        await control.close()
        await agent.close()
    assert result["uid"] == second_user.uid
    found = [json.dumps(e) for e in result["endpoints"]]
    controls = [e for e in result["endpoints"] if old in json.dumps(e["version"])]
    assert len(controls) == 1, f"the scanner did not find the control's port: {found}"
    assert controls[0]["upgraded"]
    assert '"product"' in (controls[0]["answer"] or ""), "the control was not driven"
    assert [e for e in found if ours in e] == [], "another user reached the agent's DevTools"
    assert result["unix_reached"] == []

    assert inodes, "the browser should hold some sockets (its own IPC)"
    assert inet == []  # no TCP listener, no UDP socket at all
    # Only Chromium's singleton socket listens, inside the profile, which only the server's
    # user can enter; no abstract (unpermissioned) socket listens. (The abstract names of its
    # connected socket pairs are not reachable: the scan tried them.)
    assert reachable, "Chromium's singleton socket should be listed"
    assert all(Path(name).is_relative_to(profile) for name in reachable), named
    assert profile_mode == 0o700


async def test_only_the_server_and_the_browser_hold_the_devtools_pipe() -> None:
    launcher = ChromiumLauncher()
    pipe = await launcher.start()
    try:
        async with BrowserSession(launcher) as browser:
            page = await browser.new_page()  # a renderer, the zygote and helpers are up
            await page.navigate("about:blank")
            assert launcher.pid is not None
            assert len(live_group_members(launcher.pid)) > 2
            # Another child of the server, even one that keeps every inheritable descriptor
            # (a terminal's shell, a git call), gets no copy.
            other = await asyncio.create_subprocess_exec("sleep", "30", close_fds=False)
            try:
                for fd in (pipe.read_fd, pipe.write_fd):
                    assert not os.get_inheritable(fd)
                    assert pipe_holders(pipe_inode(fd)) == {os.getpid(), launcher.pid}
            finally:
                other.kill()
                await other.wait()
    finally:
        await launcher.close()
    assert pipe.lost is not None
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(pipe.read_fd)  # closed with the browser


async def test_a_browser_that_dies_closes_its_pipe_and_the_session_says_so() -> None:
    browser = await BrowserSession().start()
    try:
        page = await browser.new_page()
        hanging = asyncio.create_task(page.evaluate("new Promise(() => {})", timeout=120))
        await asyncio.sleep(0.2)
        pid = browser.launcher.pid
        assert pid is not None
        # Only the browser process: if a helper it left behind held the pipe, no end of file
        # would come and the call would hang until its own timeout.
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserError, match="closed its DevTools pipe"):
            await asyncio.wait_for(hanging, 15)
        with pytest.raises(BrowserError, match=r"the browser is gone .*exited with code -9"):
            await asyncio.wait_for(browser.new_page(), 15)
        assert not browser.alive
    finally:
        await browser.close()
    assert not browser.launcher.running


SECRET_TEXT = "the-server-users-secret-7d1f"


# --- local files -----------------------------------------------------------------------------


class HostilePages:
    """A server on 127.0.0.1 whose pages try every way a page has to open a local file."""

    def __init__(self, secret: Path) -> None:
        target = secret.as_uri()
        self.pages = {
            "/": f"""<!doctype html><title>Hostile</title>
<a id="link" href="{target}">a local file</a>
<iframe id="frame" src="{target}"></iframe>
<p id="fetched">not yet</p>
<script>
  fetch("{target}").then(r => r.text()).then(
    t => {{ document.getElementById("fetched").textContent = "read " + t; }},
    e => {{ document.getElementById("fetched").textContent = "refused"; }});
</script>""",
        }
        self.target = target
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/redirect":
                    self.send_response(302)
                    self.send_header("Location", pages.target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = pages.pages.get(self.path, "not found").encode()
                self.send_response(200 if self.path in pages.pages else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET_TEXT)
    path.chmod(0o600)
    return path


@pytest.fixture
def hostile(secret: Path) -> Iterator[HostilePages]:
    pages = HostilePages(secret)
    yield pages
    pages.close()


def test_the_agent_cannot_open_local_files(secret: Path) -> None:
    for url in (secret.as_uri(), f"FILE://{secret}", f" file:{secret}", "filesystem:file:///x"):
        with pytest.raises(AccessDenied, match="may not open"):
            check_navigation(url)


async def test_a_page_cannot_open_or_read_local_files(hostile: HostilePages, secret: Path) -> None:
    text = SECRET_TEXT
    async with BrowserSession() as browser:
        assert browser.connection is not None
        targets = browser.connection.subscribe("Target.targetInfoChanged", None, maxsize=4096)
        created = browser.connection.subscribe("Target.targetCreated", None, maxsize=4096)
        await browser.connection.send("Target.setDiscoverTargets", {"discover": True})
        page = await browser.new_page()
        await page.navigate(hostile.url("/"))

        async def settled() -> str:
            script = "document.getElementById('fetched').textContent"
            while (found := await page.evaluate(script)) == "not yet":  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            return str(found)

        assert await asyncio.wait_for(settled(), 10) == "refused"
        frame = await page.evaluate(
            "(() => { try { return document.getElementById('frame').contentDocument"
            "?.documentElement?.outerHTML ?? 'no document'; } catch (e) { return 'opaque'; } })()"
        )
        assert text not in frame
        # By script, by a click, by a new window, and by a redirect of a local server.
        await page.evaluate(f"location.href = {json.dumps(hostile.target)}")
        await page.click((await page.snapshot()).find("link", "a local file")[0])
        await page.evaluate(f"window.open({json.dumps(hostile.target)})")
        with pytest.raises(BrowserError, match="ERR_UNSAFE_REDIRECT"):
            await page.navigate(hostile.url("/redirect"))
        await asyncio.sleep(0.5)  # what was started had time to commit
        assert not await page.text_contains(text)
        infos = (await browser.connection.send("Target.getTargets"))["targetInfos"]
        seen = [e.params["targetInfo"]["url"] for e in await _drain(targets, created)]
        urls = [info["url"] for info in infos] + seen
        assert [u for u in urls if u.lower().startswith("file:")] == [], urls
        assert await page.url() == hostile.url("/redirect")


async def _drain(*subscriptions: Subscription) -> list[CdpEvent]:
    """The events buffered so far."""
    events = []
    for subscription in subscriptions:
        while len(subscription):
            events.append(await subscription.get())
    return events
