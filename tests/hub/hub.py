"""A real JupyterHub on 127.0.0.1 for the hub tests: configurable-http-proxy, the dummy
authenticator and LocalProcessSpawner running each single-user server as its Unix user.

The hub runs as root (as a LocalProcessSpawner hub must) from this virtual environment; the
single-user servers run ``jupyterhub-singleuser`` of the same environment as ``hub-alice`` and
``hub-bob``, which ``.ci/run`` creates (and ``hub_users()`` creates when they are missing, as
root). Without root nobody can act as another uid: the hub then uses SimpleLocalProcessSpawner
(every server runs as the test's own user) and says so in the test output.

What each server gets is decided per (user, server name) by ``pre_spawn_hook`` from a JSON
file the test writes next to the hub's config (``profiles.json``): extra environment and
arguments. So one hub serves every configuration: a policy on alice's server, a server with
``terminals_enabled=False`` as bob's named server, a provider key in every environment.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

USERS = ("hub-alice", "hub-bob")
PASSWORD = "terax-hub-test"  # the shared password of the dummy authenticator
# A provider key the operator sets in every single-user server's environment.
ADMIN_KEY = "sk-test-admin-" + "5f1d9c0e7a2b4d6f8e1c3a5b7d9f0e2c"
ACTIVITY_INTERVAL = 2  # seconds between a single-user server's activity reports to the hub
START_TIMEOUT = 180.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def hub_users() -> tuple[bool, str]:
    """Make sure hub-alice and hub-bob exist: (real users?, why not when not)."""
    if os.name != "posix" or os.geteuid() != 0:
        return False, "not root: no other Unix user can be used"
    for name in USERS:
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(
                ["useradd", "--create-home", "--shell", "/bin/bash", name],
                check=True,
                capture_output=True,
            )
    return True, ""


def interpreter_reachable(user: str) -> str:
    """'' when ``user`` can start this environment's Python with Terax and the hub's
    single-user app, else what went wrong (with what an operator does about it)."""
    entry = pwd.getpwnam(user)
    probe = subprocess.run(
        [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--init-groups",
            "--reset-env",
            "--",
            sys.executable,
            "-c",
            "import terax_jupyter, jupyterhub.singleuser, jupyterlab",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        check=False,
    )
    if probe.returncode == 0:
        return ""
    real = os.path.realpath(sys.executable)
    return (
        f"{user} cannot run {sys.executable} (-> {real}): {probe.stderr.strip()[-400:]}\n"
        "Every folder above the interpreter and this checkout must be traversable by other "
        "users: .ci/run does `chmod o+x` on them (see docs/jupyterhub.md)."
    )


@dataclass
class Hub:
    """A running hub: its public URL, an admin service token, and per-user tokens."""

    url: str  # the proxy's public URL, e.g. http://127.0.0.1:PORT
    api_url: str  # the hub API through the proxy
    admin_token: str
    folder: Path
    real_users: bool
    process: subprocess.Popen[bytes]
    log_path: Path
    tokens: dict[str, str] = field(default_factory=dict)
    start_seconds: dict[str, float] = field(default_factory=dict)

    # -- the hub's REST API -----------------------------------------------------------

    def api(
        self, method: str, path: str, body: Any = None, *, token: str | None = None
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.api_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {token or self.admin_token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read().decode()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read().decode()
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, text

    def user(self, name: str) -> dict[str, Any]:
        status, model = self.api("GET", f"/users/{name}")
        assert status == 200, model
        return model

    def server_url(self, user: str, server: str = "") -> str:
        return f"{self.url}/user/{user}/{server + '/' if server else ''}"

    def profile(self, user: str, server: str = "", **settings: Any) -> None:
        """What (user, server) gets at its next start: ``env`` (dict) and ``args`` (list)."""
        path = self.folder / "profiles.json"
        profiles = json.loads(path.read_text()) if path.exists() else {}
        profiles[f"{user}/{server}"] = settings
        path.write_text(json.dumps(profiles))

    def start(self, user: str, server: str = "") -> str:
        """Start (user, server) and wait until the hub says it is ready; its URL."""
        return self.wait_ready(user, server, self.request_start(user, server))

    def request_start(self, user: str, server: str = "") -> float:
        """Ask the hub to start (user, server); when it was asked (for wait_ready)."""
        suffix = f"/servers/{server}" if server else "/server"
        began = time.monotonic()
        status, answer = self.api("POST", f"/users/{user}{suffix}")
        assert status in (201, 202), f"starting {user}/{server}: {status} {answer}"
        return began

    def wait_ready(self, user: str, server: str, began: float) -> str:
        deadline = began + START_TIMEOUT
        while time.monotonic() < deadline:
            model = self.user(user).get("servers", {}).get(server)
            if model and model.get("ready"):
                self.start_seconds.setdefault(f"{user}/{server}", time.monotonic() - began)
                return self.server_url(user, server)
            if self.process.poll() is not None:
                break
            time.sleep(0.25)
        pytest.fail(f"{user}/{server} did not start in time:\n{self.log_tail()}")

    def stop(self, user: str, server: str = "") -> None:
        suffix = f"/servers/{server}" if server else "/server"
        status, answer = self.api("DELETE", f"/users/{user}{suffix}")
        assert status in (202, 204, 400, 404), answer  # 400/404: it was not running
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if server not in self.user(user).get("servers", {}):
                return
            time.sleep(0.25)

    def token_for(self, user: str) -> str:
        """An API token of ``user`` (the hub grants it what the user may do)."""
        if user not in self.tokens:
            status, answer = self.api(
                "POST", f"/users/{user}/tokens", {"note": "terax hub tests", "expires_in": 3600}
            )
            assert status == 201, answer
            self.tokens[user] = answer["token"]
        return self.tokens[user]

    def log_tail(self, characters: int = 6000) -> str:
        with contextlib.suppress(OSError):
            return self.log_path.read_text(errors="replace")[-characters:]
        return ""

    def close(self) -> None:
        if self.process.poll() is None:
            # The hub stops the servers it spawned (cleanup_servers) and its proxy.
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


CONFIG = """
import json, os, pathlib

c = get_config()  # noqa
here = pathlib.Path({folder!r})
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {proxy_port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = "sqlite:///" + str(here / "hub.sqlite")
c.JupyterHub.cookie_secret_file = str(here / "cookie_secret")
c.JupyterHub.pid_file = str(here / "hub.pid")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.JupyterHub.allow_named_servers = True
# Only the single-user servers' own reports move a server's activity: no proxy polling in
# the test's lifetime, and every report counts (no 30 s resolution).
c.JupyterHub.last_activity_interval = 3600
c.JupyterHub.activity_resolution = 0
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.auth_token = {proxy_token!r}
c.ConfigurableHTTPProxy.should_start = True
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = {users!r}
c.JupyterHub.services = [{{"name": "terax-tests", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [
    {{
        "name": "terax-tests",
        "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "read:users"],
        "services": ["terax-tests"],
    }}
]
c.JupyterHub.spawner_class = {spawner!r}
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = {start_timeout}
c.Spawner.http_timeout = {start_timeout}
c.Spawner.environment = {{
    "OPENAI_API_KEY": {admin_key!r},
    "JUPYTERHUB_ACTIVITY_INTERVAL": "{activity_interval}",
    "PATH": {path!r},
}}
if {pythonpath!r}:
    # An older copy of terax_jupyter ahead of the installed one (to check a test fails there).
    c.Spawner.environment["PYTHONPATH"] = {pythonpath!r}


def pre_spawn_hook(spawner):
    profiles_file = here / "profiles.json"
    profiles = json.loads(profiles_file.read_text()) if profiles_file.exists() else {{}}
    profile = profiles.get(f"{{spawner.user.name}}/{{spawner.name}}", {{}})
    spawner.environment = {{**spawner.environment, **profile.get("env", {{}})}}
    spawner.args = list(profile.get("args", []))


c.Spawner.pre_spawn_hook = pre_spawn_hook
"""


def start_hub(folder: Path) -> Hub:
    real_users, why = hub_users()
    if real_users:
        for user in USERS:
            problem = interpreter_reachable(user)
            if problem:
                pytest.fail(problem)
    chp = shutil.which("configurable-http-proxy")
    if chp is None:
        pytest.fail("configurable-http-proxy is missing: npm install -g configurable-http-proxy")
    if not real_users:
        # Printed in the test output (the session fixture's first line): these runs do not
        # cover another uid.
        print(f"\nHUB TESTS: SimpleLocalProcessSpawner, every server runs as you ({why})")
    proxy_port, hub_port, proxy_api_port = free_port(), free_port(), free_port()
    admin_token = secrets.token_hex(24)
    bin_dir = Path(sys.executable).parent
    folder.chmod(0o755)
    (folder / "jupyterhub_config.py").write_text(
        textwrap.dedent(
            CONFIG.format(
                folder=str(folder),
                proxy_port=proxy_port,
                hub_port=hub_port,
                proxy_api_port=proxy_api_port,
                chp=chp,
                proxy_token=secrets.token_hex(24),
                password=PASSWORD,
                users=set(USERS),
                admin_token=admin_token,
                spawner="localprocess" if real_users else "simple",
                singleuser=str(bin_dir / "jupyterhub-singleuser"),
                start_timeout=int(START_TIMEOUT),
                admin_key=ADMIN_KEY,
                activity_interval=ACTIVITY_INTERVAL,
                path=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
                pythonpath=os.environ.get("TERAX_HUB_PYTHONPATH", ""),
            )
        )
    )
    log_path = folder / "hub.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "JPY_", "TERAX_")) and not key.endswith("_API_KEY")
    }
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(bin_dir / "jupyterhub"), "-f", str(folder / "jupyterhub_config.py")],
            cwd=folder,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{proxy_port}"
    hub = Hub(
        url=url,
        api_url=f"{url}/hub/api",
        admin_token=admin_token,
        folder=folder,
        real_users=real_users,
        process=process,
        log_path=log_path,
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the hub exited ({process.returncode}):\n{hub.log_tail()}")
        with contextlib.suppress(OSError, ValueError):
            status, _ = hub.api("GET", "/")
            if status == 200:
                return hub
        time.sleep(0.25)
    hub.close()
    pytest.fail(f"the hub did not answer in time:\n{hub.log_tail()}")
