"""The preview renders in Lab under a JupyterHub's Content-Security-Policy (issue 17, item 1).

A real ``jupyter lab`` under a hub-style prefix, configured as jupyterhub-singleuser configures
its server (``ServerApp.tornado_settings['headers']``: ``frame-ancestors 'none'`` and the hub's
report URI), a real dev server on 127.0.0.1, and Chromium: the previewed page shows inside
the tab's frame, while Lab's own page keeps the hub's policy. Then the same with an operator
who lets a portal frame Lab: the preview shows inside Lab inside the portal.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .conftest import VIEWPORT, _lab_environment, _stop, _wait_until_ready
from .helpers import artifact_name, make_project, write
from .test_preview import FRAME, TAB, free_port, wait_listening

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Frame, Page

pytestmark = pytest.mark.ui

BASE_URL = "/user/alice/"
HUB_POLICY = "frame-ancestors 'none';report-uri /hub/security/csp-report"
GREETING = "Hello from under the hub"


@dataclass(frozen=True)
class HubLab:
    url: str
    token: str
    port: int


@contextlib.contextmanager
def started_lab(tmp_path: Path, policy: str) -> Iterator[HubLab]:
    """``jupyter lab`` as a hub's single-user server: its prefix, ``policy`` as its CSP."""
    home = tmp_path / "home"
    root = tmp_path / "workspace"
    make_project(root)
    environment = _lab_environment(home)
    # As jupyterhub-singleuser does it (singleuser/mixins.py, extension.py).
    write(
        home / "config" / "jupyter_server_config.json",
        json.dumps(
            {
                "ServerApp": {
                    "jpserver_extensions": {"terax_jupyter": True},
                    "tornado_settings": {
                        "headers": {
                            "Content-Security-Policy": policy,
                            "X-JupyterHub-Version": "6.1.1",
                        }
                    },
                }
            }
        ),
    )
    port = free_port()
    token = secrets.token_hex(16)
    log = home / "lab.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.base_url={BASE_URL}", f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}", "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True", "--PtyManager.shell_command=/bin/bash",
        "--SecretsManager.backend=file",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=root, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        url = f"http://127.0.0.1:{port}{BASE_URL}"
        _wait_until_ready(f"{url}api/status?token={token}", process, log)
        yield HubLab(url=url, token=token, port=port)
    finally:
        _stop(process)


@contextlib.contextmanager
def served(folder: Path, port: int) -> Iterator[int]:
    """A real HTTP server on 127.0.0.1:``port`` over ``folder``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_listening("127.0.0.1", port)
        yield port
    finally:
        _stop(process)


@pytest.fixture
def dev_server(tmp_path: Path) -> Iterator[int]:
    folder = tmp_path / "site"
    write(
        folder / "index.html",
        f"<!doctype html><title>Dev</title><h1 id='greeting'>{GREETING}</h1>",
    )
    with served(folder, free_port()) as port:
        yield port


@pytest.fixture
def portal_port() -> int:
    return free_port()


def lab_policy(lab: HubLab) -> str:
    with urllib.request.urlopen(f"{lab.url}lab?token={lab.token}", timeout=30) as response:
        return str(response.headers["Content-Security-Policy"])


def wait_for_terax(frame: Page | Frame) -> None:
    frame.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('terax:open-preview')",
        timeout=60_000,
    )
    frame.evaluate("() => window.jupyterapp.restored")


def open_preview(frame: Page | Frame, port: int) -> None:
    frame.evaluate(
        "async port => { await window.jupyterapp.commands.execute("
        "'terax:open-preview', {url: `http://localhost:${port}/`}); }",
        port,
    )


def new_page(browser: Browser) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda message: messages.append(message.text))
    return page, messages


def test_the_preview_renders_in_lab_under_the_hub_policy(
    browser: Browser,
    tmp_path: Path,
    dev_server: int,
    request: pytest.FixtureRequest,
) -> None:
    with started_lab(tmp_path, HUB_POLICY) as lab:
        # Lab's own page keeps the hub's policy: nothing may frame Lab.
        assert lab_policy(lab) == HUB_POLICY
        page, messages = new_page(browser)
        try:
            page.goto(f"{lab.url}lab?reset&token={lab.token}")
            wait_for_terax(page)
            open_preview(page, dev_server)
            expect(page.locator(TAB)).to_be_visible()
            shown = page.frame_locator(FRAME).locator("#greeting")
            expect(shown).to_have_text(GREETING, timeout=20_000)
            page.screenshot(path=artifact_name(request))
        finally:
            page.context.close()
        assert not [m for m in messages if "frame-ancestors" in m], messages


def test_the_preview_renders_in_lab_framed_by_a_portal(
    browser: Browser,
    tmp_path: Path,
    dev_server: int,
    portal_port: int,
    request: pytest.FixtureRequest,
) -> None:
    """An operator who lets a portal frame Lab: the preview frame has the portal as an
    ancestor as well, and must be allowed there too (the same site, another origin)."""
    portal = f"http://127.0.0.1:{portal_port}"
    policy = f"frame-ancestors 'self' {portal}; report-uri /hub/security/csp-report"
    with started_lab(tmp_path, policy) as lab:
        folder = tmp_path / "portal"
        write(
            folder / "index.html",
            "<!doctype html><title>Portal</title><h1>Portal</h1>"
            f"<iframe id='lab' src='{lab.url}lab?reset&token={lab.token}' "
            "style='width:1200px;height:700px'></iframe>",
        )
        page, messages = new_page(browser)
        with served(folder, portal_port):
            try:
                page.goto(f"{portal}/index.html")
                # Lab loads inside the portal's frame (its own page allows the portal).
                lab_frame = page.frame_locator("#lab")
                lab_frame.locator(".jp-SideBar [data-id='terax-search-in-files']").wait_for(
                    timeout=60_000
                )
                inner = page.frame(url=lambda url: url.startswith(f"{lab.url}lab"))
                assert inner is not None
                wait_for_terax(inner)
                open_preview(inner, dev_server)
                shown = lab_frame.frame_locator(FRAME).locator("#greeting")
                expect(shown).to_have_text(GREETING, timeout=20_000)
                page.screenshot(path=artifact_name(request))
            finally:
                page.context.close()
        assert not [m for m in messages if "frame-ancestors" in m], messages
