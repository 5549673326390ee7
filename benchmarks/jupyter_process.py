"""A ``jupyter server`` with Terax in a subprocess, for the benchmarks.

Token auth, 127.0.0.1 on a free port, its own root and config, data and runtime folders
(``state_dir``/config, /data, /runtime), this checkout on its ``PYTHONPATH``, its output in
``state_dir``/server.log. Each benchmark keeps its own client (httpx, http.client, tornado's
WebSocket); this is only the process. The benchmarks put the checkout first on ``sys.path`` and
import it as ``benchmarks.jupyter_process``, run as scripts or with ``python -m``.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
READY_TIMEOUT = 60.0  # seconds for /api/status to answer 200
POLL = 0.2  # seconds between two probes of /api/status


class JupyterProcess:
    """One ``python -m jupyter_server`` subprocess; ``start`` it, ``wait_ready``, ``stop``."""

    def __init__(self) -> None:
        self.token = secrets.token_hex(16)
        self.port = 0
        self.log_path = Path()
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None, "not started"
        return self.process.pid

    def start(
        self,
        root: Path,
        state_dir: Path,
        extra_args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        extensions: Iterable[str] | Mapping[str, bool] = ("terax_jupyter",),
    ) -> None:
        """Launch the server over ``root`` (also its working folder), without waiting for it.

        ``extra_args`` follow the common ``--ServerApp`` options; ``env`` adds to (or overrides)
        this process's environment with ``PYTHONPATH`` and the ``JUPYTER_*_DIR`` folders;
        ``extensions`` are the server extensions enabled (a mapping may also disable some).
        """
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            self.port = probe.getsockname()[1]
        for folder in ("config", "data", "runtime"):
            (state_dir / folder).mkdir(exist_ok=True)
        environment = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "JUPYTER_CONFIG_DIR": str(state_dir / "config"),
            "JUPYTER_DATA_DIR": str(state_dir / "data"),
            "JUPYTER_RUNTIME_DIR": str(state_dir / "runtime"),
            **(env or {}),
        }
        switches = extensions if isinstance(extensions, dict) else dict.fromkeys(extensions, True)
        enabled = ", ".join(f"{name!r}: {on}" for name, on in switches.items())
        self.log_path = state_dir / "server.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in stop())
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                f"--ServerApp.jpserver_extensions={{{enabled}}}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.ip={HOST}",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.open_browser=False",
                "--ServerApp.allow_root=True",
                *extra_args,
            ],
            cwd=root,
            env=environment,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    # -- readiness: GET /api/status until it answers 200 ---------------------------------------

    def _request(self) -> bytes:
        return (
            f"GET /api/status HTTP/1.1\r\nHost: {HOST}:{self.port}\r\n"
            f"Authorization: token {self.token}\r\nConnection: close\r\n\r\n"
        ).encode()

    @staticmethod
    def _is_ok(status_line: bytes) -> bool:
        parts = status_line.split()
        return len(parts) >= 2 and parts[1] == b"200"

    def _check_alive(self, deadline: float) -> None:
        assert self.process is not None, "not started"
        if self.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start; see {self.log_path}")

    def _ready_once(self) -> bool:
        try:
            with socket.create_connection((HOST, self.port), timeout=10) as connection:
                connection.sendall(self._request())
                return self._is_ok(connection.makefile("rb").readline())
        except OSError:
            return False

    async def _ready_once_async(self) -> bool:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, self.port), 10)
        except (OSError, asyncio.TimeoutError):
            return False
        try:
            writer.write(self._request())
            return self._is_ok(await asyncio.wait_for(reader.readline(), 10))
        except (OSError, asyncio.TimeoutError):
            return False
        finally:
            writer.close()

    def wait_ready(self, timeout: float = READY_TIMEOUT, poll: float = POLL) -> None:
        """Block until the server answers; RuntimeError if it exits or ``timeout`` passes.
        ``poll`` is the resolution of a start-up time measured around this call."""
        deadline = time.monotonic() + timeout
        while not self._ready_once():
            self._check_alive(deadline)
            time.sleep(poll)

    async def wait_ready_async(self, timeout: float = READY_TIMEOUT) -> None:
        """``wait_ready`` for a coroutine: the event loop runs on meanwhile."""
        deadline = time.monotonic() + timeout
        while not await self._ready_once_async():
            self._check_alive(deadline)
            await asyncio.sleep(POLL)

    # -- measuring and stopping ------------------------------------------------------------

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the server process has used (not its children's)."""
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM, SIGKILL after ``timeout`` seconds; then close the log."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
