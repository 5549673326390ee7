"""What a Binder link opens: Lab with the Terax layout (the workspace ``binder/postBuild``
imports), from one consistent set of Jupyter packages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from playwright.sync_api import expect

from .conftest import VIEWPORT, start_lab
from .helpers import artifact_name
from .terminal_helpers import EDITOR, PANE, header, run

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from terax_jupyter.testing.model_stub import ModelStub

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"
TIMEOUT_MS = 20_000


def pinned(environment: str) -> dict[str, Version]:
    """``name==version`` pins of the environment file's pip section."""
    return {
        match.group(1).lower().replace("_", "-"): Version(match.group(2))
        for match in re.finditer(r"^\s*-\s*([A-Za-z0-9_.-]+)==([0-9][^\s#]*)", environment, re.M)
    }


def test_the_binder_environment_pins_what_terax_needs() -> None:
    pins = pinned((BINDER / "environment.yml").read_text())
    assert {"jupyterlab", "notebook", "jupyter-server"} <= set(pins)
    for line in metadata.requires("terax-jupyter") or []:
        requirement = Requirement(line)
        if requirement.marker is not None:
            continue  # extras and platform-only requirements
        name = requirement.name.lower().replace("_", "-")
        if name in pins:
            assert requirement.specifier.contains(pins[name]), (name, pins[name])
    # notebook 7.N is built for JupyterLab 4.N (7.4 for 4.4: the conflict Binder reported).
    assert pins["notebook"].minor == pins["jupyterlab"].minor


@pytest.mark.ui
def test_a_binder_link_opens_the_terax_layout(
    browser: Browser,
    tmp_path_factory: pytest.TempPathFactory,
    model_stub: ModelStub,
    keyed_stub: ModelStub,
    request: pytest.FixtureRequest,
) -> None:
    workspaces = tmp_path_factory.mktemp("workspaces")
    environment = {"JUPYTERLAB_WORKSPACES_DIR": str(workspaces)}
    # As postBuild does it, with the real command.
    subprocess.run(
        [sys.executable, "-m", "jupyterlab", "workspaces", "import", "binder/terax-workspace.json"],
        cwd=REPO,
        env={**os.environ, **environment},
        check=True,
        capture_output=True,
    )
    with start_lab(tmp_path_factory, model_stub, keyed_stub, env=environment) as lab:
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
        page = context.new_page()
        try:
            page.goto(f"{lab.url}lab?token={lab.token}")  # no ?reset: the default workspace
            # Not wait_for_lab: it waits for the launcher, which this layout does not open.
            page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=TIMEOUT_MS * 3)
            terminal = page.locator("#jp-main-dock-panel .jp-TeraxTerminal")
            expect(terminal).to_have_count(1, timeout=TIMEOUT_MS)
            expect(page.locator("#terax-ai")).to_be_visible(timeout=TIMEOUT_MS)
            # The terminal is a live shell, not a restored picture.
            pane = page.locator(PANE).first
            expect(pane.locator(EDITOR)).to_be_visible(timeout=TIMEOUT_MS)
            run(page, pane, "echo binder-$((6*7))")
            expect(header(pane, "echo binder-$((6*7))")).to_have_attribute(
                "data-status", "success", timeout=TIMEOUT_MS
            )
        finally:
            page.screenshot(path=artifact_name(request))
            context.close()
