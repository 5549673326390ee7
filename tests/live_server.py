"""A live ``jupyter server`` with Terax for tests that need a real one: a subprocess on
127.0.0.1 with token auth and its own home, config, data and runtime folders, so it never
sees a developer's Jupyter set-up, keychain or folders."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import terax_jupyter
from terax_jupyter.client.api import SyncTeraxClient, TeraxAPIError

if TYPE_CHECKING:
    from collections.abc import Sequence

PROJECT = str(Path(terax_jupyter.__file__).resolve().parents[1])
READY_TIMEOUT = 60.0


@dataclass
class LiveTerax:
    url: str  # the base URL, with the prefix and a trailing slash
    token: str
    root: Path
    home: Path
    runtime_dir: Path
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def environment(self, **extra: str) -> dict[str, str]:
        """A subprocess environment that sees only this server's Jupyter folders."""
        return environment_for(self.home, self.runtime_dir, **extra)

    def api(self) -> SyncTeraxClient:
        return SyncTeraxClient(self.url, self.token)

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def environment_for(home: Path, runtime_dir: Path, **extra: str) -> dict[str, str]:
    """This environment without Jupyter's and Terax's variables, its folders under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "TERAX"))}
    env.update(
        HOME=str(home),
        PYTHONPATH=PROJECT,
        JUPYTER_NO_CONFIG="1",
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(runtime_dir),
        JUPYTER_PATH=str(home / "share"),
    )
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_live_server(
    home: Path,
    root: Path,
    base_url: str = "/",
    config: dict[str, Any] | None = None,
    prefix: Sequence[str] = (),
) -> LiveTerax:
    """A server with ``root`` as its root, under ``base_url``, ready to answer (and its
    runtime file written); ``config`` is more configuration (``{"AiManager": {...}}``);
    ``prefix`` runs it through a wrapper (``setpriv ... --``)."""
    port, token = free_port(), secrets.token_hex(16)
    arguments = [
        *prefix,
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.jpserver_extensions={'terax_jupyter': True}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.base_url={base_url}",
        "--ServerApp.open_browser=False",
        "--allow-root",
        # Paths the tests send stay inside the root: no adding real folders as roots.
        "--TeraxApp.allow_user_roots=False",
        # Keys go to a file in the temporary data folder, never a developer's keychain.
        "--SecretsManager.backend=file",
    ]
    if config:
        config_file = home / "terax_config.json"
        config_file.write_text(json.dumps(config))
        arguments.append(f"--config={config_file}")
    log = home / "server.log"
    runtime_dir = home / "runtime"
    with log.open("wb") as output:
        process = subprocess.Popen(
            arguments,
            cwd=root,
            env=environment_for(home, runtime_dir),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
    prefix = f"/{base_url.strip('/')}/" if base_url.strip("/") else "/"
    url = f"http://127.0.0.1:{port}{prefix}"
    server = LiveTerax(url, token, root, home, runtime_dir, process, log)
    try:
        _wait_until_ready(server)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_until_ready(server: LiveTerax) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    with SyncTeraxClient(server.url, server.token, timeout=5) as client:
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited:\n{server.log_tail()}")
            try:
                client.get("info")
                # The runtime file is written once the server listens; discovery reads it.
                if any(server.runtime_dir.glob("jpserver-*.json")):
                    return
            except TeraxAPIError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start:\n{server.log_tail()}")
            time.sleep(0.2)
