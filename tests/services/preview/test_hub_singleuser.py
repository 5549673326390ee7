"""The preview's framing rule on a real ``jupyterhub-singleuser`` server (issue 17, item 1).

The real single-user app of JupyterHub 6.1.1 (its extension sets the hub's
``frame-ancestors 'none'`` and trusts the hub proxy's ``X-Forwarded-*``), started against a
stand-in for the hub's REST API (version, token check, activity) on 127.0.0.1, with Terax
enabled and a real dev server on 127.0.0.1. Requests come as the hub's proxy passes them on:
the hub's public Host and ``X-Forwarded-Proto: https``.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from tornado import web
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from terax_jupyter.services.preview.headers import SANDBOX

from .conftest import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

PUBLIC = "hub.example"
AS_THE_HUB_PROXY_SENDS = {"Host": PUBLIC, "X-Forwarded-Proto": "https"}
START_TIMEOUT = 60.0


class _HubRoot(web.RequestHandler):
    def get(self) -> None:
        self.set_header("X-JupyterHub-Version", "6.1.1")
        self.write({"version": "6.1.1"})


class _HubUser(web.RequestHandler):
    def initialize(self, token: str) -> None:
        self.token = token

    def get(self) -> None:
        if self.request.headers.get("Authorization") != f"token {self.token}":
            raise web.HTTPError(403)
        self.write(
            {"kind": "user", "name": "alice", "admin": False, "groups": [], "session_id": None,
             "scopes": ["access:servers!server=alice/", "access:servers!user=alice"]}
        )  # fmt: skip


class _HubActivity(web.RequestHandler):
    def check_xsrf_cookie(self) -> None:
        pass

    def post(self, name: str) -> None:
        self.write({})


class _DevPage(web.RequestHandler):
    def get(self) -> None:
        # A dev server that forbids framing itself, as helmet's defaults do.
        self.set_header("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
        self.set_header("X-Frame-Options", "DENY")
        self.write("<h1>hello from the dev server</h1>")


@dataclass(frozen=True)
class SingleUser:
    url: str
    """``http://127.0.0.1:<port>/user/alice/``"""
    token: str
    dev_port: int


def _serve_in_thread(apps: list[tuple[web.Application, int]]) -> tuple[threading.Thread, Any]:
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        servers = []
        for app, port in apps:
            server = HTTPServer(app)
            server.add_sockets(bind_sockets(port, "127.0.0.1"))
            servers.append(server)
        holder["loop"] = loop
        ready.set()
        loop.run_forever()
        for server in servers:
            server.stop()
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    return thread, holder["loop"]


def _get(url: str, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


@pytest.fixture(scope="module")
def singleuser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SingleUser]:
    binary = shutil.which("jupyterhub-singleuser")
    assert binary, "jupyterhub is a test dependency: jupyterhub-singleuser must be installed"
    home = tmp_path_factory.mktemp("singleuser")
    (home / "config").mkdir()
    (home / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"terax_jupyter": True}}})
    )
    token = secrets.token_hex(16)
    hub_port, dev_port, port = free_port(), free_port(), free_port()
    hub = web.Application(
        [
            (r"/hub/api/?", _HubRoot),
            (r"/hub/api/user", _HubUser, {"token": token}),
            (r"/hub/api/users/(\w+)/activity", _HubActivity),
        ]
    )
    thread, loop = _serve_in_thread(
        [(hub, hub_port), (web.Application([(r"/", _DevPage)]), dev_port)]
    )
    hub_api = f"http://127.0.0.1:{hub_port}/hub/api"
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER_", "JUPYTERHUB_"))
    }
    environment.update(
        {
            "HOME": str(home),
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTERHUB_API_TOKEN": token,
            "JUPYTERHUB_API_URL": hub_api,
            "JUPYTERHUB_ACTIVITY_URL": f"{hub_api}/users/alice/activity",
            "JUPYTERHUB_CLIENT_ID": "jupyterhub-user-alice",
            "JUPYTERHUB_USER": "alice",
            "JUPYTERHUB_BASE_URL": "/",
            "JUPYTERHUB_SERVICE_PREFIX": "/user/alice/",
            "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}/user/alice/",
            "JUPYTERHUB_OAUTH_CALLBACK_URL": "/user/alice/oauth_callback",
            "JUPYTERHUB_OAUTH_ACCESS_SCOPES": json.dumps(
                ["access:servers!server=alice/", "access:servers!user=alice"]
            ),
        }
    )
    log = home / "singleuser.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [binary, "--allow-root", f"--ServerApp.root_dir={home}"],
            cwd=home, env=environment, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/user/alice/"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert process.poll() is None, log.read_text()[-4000:]
            assert time.monotonic() < deadline, log.read_text()[-4000:]
            try:
                if _get(f"{url}api/status", {"Authorization": f"token {token}"})[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.25)
        yield SingleUser(url=url, token=token, dev_port=dev_port)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def _capability_prefix(server: SingleUser) -> str:
    request = urllib.request.Request(
        f"{server.url}terax/api/preview/capabilities",
        data=json.dumps({"target": str(server.dev_port)}).encode(),
        method="POST",
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(json.loads(response.read())["prefix"])


def test_the_hubs_own_pages_say_frame_ancestors_none(singleuser: SingleUser) -> None:
    """The premise, on the real app: Jupyter's and Terax's answers carry the hub's policy,
    and keep it."""
    auth = {"Authorization": f"token {singleuser.token}", **AS_THE_HUB_PROXY_SENDS}
    for path in ("api/status", "terax/api/preview/servers"):
        status, headers, _ = _get(singleuser.url + path, auth)
        assert status == 200, path
        assert headers["X-JupyterHub-Version"] == "6.1.1"
        policy = headers.get_all("Content-Security-Policy")
        assert len(policy) == 1, policy
        assert policy[0].startswith("frame-ancestors 'none'"), (path, policy)


def test_a_preview_page_is_framable_by_the_hubs_public_origin_only(
    singleuser: SingleUser,
) -> None:
    prefix = _capability_prefix(singleuser)
    origin = singleuser.url.split("/user/", 1)[0]
    status, headers, body = _get(origin + prefix, AS_THE_HUB_PROXY_SENDS)
    assert status == 200
    assert body == b"<h1>hello from the dev server</h1>"
    assert "X-Frame-Options" not in headers
    assert sorted(headers.get_all("Content-Security-Policy")) == sorted(
        [f"{SANDBOX}; frame-ancestors https://{PUBLIC}", "default-src 'self'"]
    )
    # The same-origin (token) route: the same rule.
    token = {"Authorization": f"token {singleuser.token}", **AS_THE_HUB_PROXY_SENDS}
    status, headers, _ = _get(f"{singleuser.url}terax/proxy/{singleuser.dev_port}/", token)
    assert status == 200
    assert f"{SANDBOX}; frame-ancestors https://{PUBLIC}" in headers.get_all(
        "Content-Security-Policy"
    )
    assert all("'none'" not in p for p in headers.get_all("Content-Security-Policy"))
