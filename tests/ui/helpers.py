"""Helpers of the browser tests: the generated project, screenshots and Lab readiness."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.sync_api import expect

if TYPE_CHECKING:
    import pytest
    from playwright.sync_api import Page

    from .conftest import LabServer

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
READY_TIMEOUT_MS = 30_000
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"

# The value planted in the workspace's .env; it must never reach the browser.
ENV_SECRET = "needle_marker_SECRET_7f3a9c"


def server_api(lab: LabServer, path: str, body: dict[str, Any] | None = None) -> Any:
    """The JSON answer of ``path`` (under the server's base URL) with the test token: a GET,
    or a POST of ``body`` (requests with a token need no XSRF cookie)."""
    request = urllib.request.Request(
        f"{lab.url}{path}",
        data=None if body is None else json.dumps(body).encode("utf-8"),
        method="GET" if body is None else "POST",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read().decode("utf-8") or "null")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_project(root: Path) -> None:
    """A small project with known matches of ``needle_marker`` and a secret .env."""
    write(
        root / "src" / "app.py",
        '"""The application entry point."""\n'
        "\n"
        "from utils.string_helpers import slugify\n"
        "\n"
        "\n"
        "def main() -> None:\n"
        '    print(slugify("needle_marker"))\n'
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    main()\n",
    )
    write(
        root / "src" / "utils" / "string_helpers.py",
        '"""String helpers."""\n'
        "\n"
        "\n"
        "def slugify(text: str) -> str:\n"
        '    """Lower-case ``text`` and join words with dashes (see needle_marker)."""\n'
        '    return "-".join(text.lower().split())\n'
        "\n"
        "\n"
        "def greet(name: str) -> str:\n"
        '    return f"héllo 😀 {name}: needle_marker"\n',
    )
    write(
        root / "src" / "components" / "navigation_bar.tsx",
        "export function NavigationBar(): JSX.Element {\n"
        '  return <nav className="needle_marker">Home</nav>;\n'
        "}\n",
    )
    write(
        root / "docs" / "guide.md",
        "# Guide\n\nSearch for needle_marker to find every place it is used.\n",
    )
    write(root / "README.md", "# Demo project\n\nA small project for the browser tests.\n")
    write(root / "tests" / "test_app.py", "def test_main() -> None:\n    assert True\n")
    write(
        root
        / "deeply"
        / "nested"
        / "folder"
        / "structure"
        / "with"
        / "a"
        / "very"
        / "long"
        / "path"
        / "for_truncation_checks"
        / "configuration_loader_utilities.py",
        "LOADER = 'needle_marker'\n",
    )
    write(root / "data" / "records.csv", "id,name\n1,alpha\n2,beta\n")
    write(root / ".env", f"API_TOKEN={ENV_SECRET}\n")


def artifact_name(request: pytest.FixtureRequest, suffix: str = "") -> Path:
    """``test-artifacts/ui/<test name><suffix>.png``, safe as a file name."""
    name = re.sub(r"[^A-Za-z0-9_.\[\]-]+", "-", request.node.name)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}{suffix}.png"


def wait_for_reloaded(page: Page, command: str) -> None:
    """Lab is up again after a reload: this extension's ``command`` is there, the shell restored.

    The splash can be gone before Lab has even started (it is drawn by a script), so the
    command is what tells that the extension has loaded.
    """
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=READY_TIMEOUT_MS)
    page.wait_for_function(
        "command => window.jupyterapp && window.jupyterapp.commands.hasCommand(command)",
        arg=command,
        timeout=READY_TIMEOUT_MS,
    )
    page.evaluate("() => window.jupyterapp.restored")


def wait_for_lab(page: Page) -> None:
    """Wait until Lab's shell is restored and this extension's panel is in the sidebar."""
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=READY_TIMEOUT_MS)
    page.wait_for_selector("#jp-main-dock-panel", state="attached", timeout=READY_TIMEOUT_MS)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('terax:go-to-file')",
        timeout=READY_TIMEOUT_MS,
    )
    page.evaluate("() => window.jupyterapp.restored")
    page.wait_for_selector(
        ".jp-SideBar [data-id='terax-search-in-files']", timeout=READY_TIMEOUT_MS
    )
    # Lab focuses the launcher a moment after start-up; a test that types before then
    # would lose its focus to it.
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.closest('.jp-Launcher')",
        timeout=READY_TIMEOUT_MS,
    )


def change_theme(page: Page, theme: str) -> None:
    """Switch Lab's theme and wait until the page is painted in it (for screenshots)."""
    page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', { theme })", theme
    )
    light = theme == LIGHT
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", str(light).lower())
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme)
    # Lab covers the page while it loads a theme's CSS; then the menu bar must have the
    # theme's colour, painted (two frames), before a screenshot shows it.
    page.wait_for_selector("#jupyterlab-splash", state="detached", timeout=READY_TIMEOUT_MS)
    page.wait_for_function(
        """light => {
            const bar = document.querySelector('#jp-top-panel') || document.body;
            const [r, g, b] = getComputedStyle(bar).backgroundColor.match(/\\d+/g).map(Number);
            return (r * 299 + g * 587 + b * 114) / 1000 > 128 === light;
        }""",
        arg=light,
        timeout=READY_TIMEOUT_MS,
    )
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
