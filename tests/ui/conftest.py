"""Fixtures for browser tests: a real ``jupyter lab`` process and one headless Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.testing.model_stub import ModelStub
from tests.browser_fixtures import (  # noqa: F401 (fixtures)
    chromium,
    jp_asyncio_loop,
    jp_server_cleanup,
)

from .helpers import artifact_name, make_project, wait_for_lab, write

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

# The key the ``keyed`` provider's stub accepts; UI tests check it never reaches the page.
STUB_KEY = "sk-ui-test-key-6d2f8a0c4e1b"
VIEWPORT = {"width": 1280, "height": 800}
LAB_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class LabServer:
    """A running ``jupyter lab`` for the browser tests."""

    url: str
    """Origin plus base URL, ending with a slash."""
    base_url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]

    def lab_url(self) -> str:
        # ``reset`` starts every page from the default layout, whatever the last test opened.
        return f"{self.url}lab?reset&token={self.token}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lab_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    settings = home / "settings"
    write(
        settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings",
        json.dumps({"fetchNews": "false", "checkForUpdates": False}),
    )
    config = home / "config"
    write(
        config / "jupyter_server_config.json",
        json.dumps({"ServerApp": {"jpserver_extensions": {"terax_jupyter": True}}}),
    )
    env = dict(os.environ)
    env.update(
        {
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1",
            # Terminals start a plain bash with this home: no personal rc files or history.
            "HOME": str(home),
        }
    )
    for name in ("JUPYTER_TOKEN", "JUPYTERHUB_API_TOKEN"):
        env.pop(name, None)
    env.update(extra or {})
    return env


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + LAB_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"jupyter lab did not answer {url}:\n{log.read_text()[-4000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the whole UI suite (it runs last)."""
    with chromium() as started:
        yield started


@pytest.fixture(scope="session")
def model_stub() -> Iterator[ModelStub]:
    """A model server on 127.0.0.1 the lab's ``stub`` provider talks to; a test scripts it."""
    with ModelStub(models=["stub-model"]) as stub:
        yield stub


@pytest.fixture(scope="session")
def keyed_stub() -> Iterator[ModelStub]:
    """A model server that accepts only ``STUB_KEY`` (the lab's ``keyed`` provider)."""
    with ModelStub(models=["stub-model"], require_key=STUB_KEY) as stub:
        yield stub


@pytest.fixture(autouse=True)
def _fresh_stubs(request: pytest.FixtureRequest) -> None:
    """Every test starts with empty scripts (stubs echo then)."""
    for name in ("model_stub", "keyed_stub"):
        if name in request.fixturenames:
            request.getfixturevalue(name).reset()


def _ai_providers(stub: ModelStub, keyed: ModelStub) -> str:
    providers = {
        "stub": {"kind": "openai", "label": "Stub", "base_url": stub.url, "local": True},
        "keyed": {"kind": "openai", "label": "Keyed", "base_url": keyed.url, "local": True,
                  "key_name": "KEYED_API_KEY"},
    }  # fmt: skip
    return repr(providers)


@pytest.fixture(
    scope="session",
    params=["/", "/user/alice/"],
    ids=["root", "prefixed"],
)
def lab(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    model_stub: ModelStub,
    keyed_stub: ModelStub,
) -> Iterator[LabServer]:
    """A real ``jupyter lab`` on 127.0.0.1, at the root or under a JupyterHub-style prefix."""
    with start_lab(tmp_path_factory, model_stub, keyed_stub, base_url=request.param) as server:
        yield server


@contextlib.contextmanager
def start_lab(
    tmp_path_factory: pytest.TempPathFactory,
    model_stub: ModelStub,
    keyed_stub: ModelStub,
    base_url: str = "/",
    env: dict[str, str] | None = None,
    python: str | None = None,
) -> Iterator[LabServer]:
    """Start a lab as the ``lab`` fixture does; ``env`` adds to its environment (a policy),
    ``python`` is the interpreter of another environment to run it with (this one's if None)."""
    home = tmp_path_factory.mktemp("lab-home")
    root = tmp_path_factory.mktemp("workspace")
    make_project(root)
    port = _free_port()
    token = secrets.token_hex(16)
    log = home / "lab.log"
    command = [
        python or sys.executable,
        "-m",
        "jupyterlab",
        "--allow-root",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.base_url={base_url}",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
        "--PtyManager.shell_command=/bin/bash",
        "--SecretsManager.backend=file",
        f"--AiManager.providers={_ai_providers(model_stub, keyed_stub)}",
        "--AiManager.default_provider=stub",
        "--AiManager.default_model=stub-model",
    ]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=_lab_environment(home, env),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}{base_url}"
        _wait_until_ready(f"{url}api/status?token={token}", process, log)
        yield LabServer(url=url, base_url=base_url, token=token, root=root, process=process)
    finally:
        _stop(process)


@pytest.fixture
def root_lab(lab: LabServer) -> LabServer:
    """The lab at the root only, for tests the prefixed lab adds nothing to but time."""
    if lab.base_url != "/":
        pytest.skip("covered at the root; the prefix is covered by the streaming test")
    return lab


@pytest.fixture
def page(browser: Browser, lab: LabServer, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A logged-in JupyterLab page, ready to use; screenshotted when the test ends."""
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            errors.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning")
            else None
        ),
    )
    try:
        page.goto(lab.lab_url())
        wait_for_lab(page)
        yield page
    finally:
        # Shown by pytest only when the test fails.
        print("\n".join(errors))
        try:
            page.screenshot(path=artifact_name(request))
        finally:
            context.close()
