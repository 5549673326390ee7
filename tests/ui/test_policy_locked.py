"""The administrator's policy as the user meets it in Lab: what is off says so and why, the AI
settings offer only what is allowed and show the administrator's settings as locked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from .conftest import VIEWPORT, start_lab
from .helpers import DARK, LIGHT, artifact_name, change_theme, server_api, wait_for_lab, write

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Browser, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

TIMEOUT_MS = 15_000
TURNED_OFF = "Turned off by your administrator"
POLICY = {
    "features": {"terminals": False, "git_push": False},
    "ai": {"providers": ["stub"], "default_model": "stub-model", "approvals": "always"},
    "limits": {"agent_steps_per_run": 20},
}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Lovelace",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Lovelace",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(scope="module")
def policy_lab(
    tmp_path_factory: pytest.TempPathFactory, model_stub: ModelStub, keyed_stub: ModelStub
) -> Iterator[LabServer]:
    """A lab whose administrator turned terminals and git push off and allows one provider."""
    folder = tmp_path_factory.mktemp("policy")
    write(folder / "terax_policy.json", json.dumps(POLICY))
    with start_lab(
        tmp_path_factory, model_stub, keyed_stub, env={"TERAX_POLICY_DIRS": str(folder)}
    ) as server:
        yield server


@pytest.fixture
def policy_page(
    browser: Browser, policy_lab: LabServer, request: pytest.FixtureRequest
) -> Iterator[Page]:
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    try:
        page.goto(policy_lab.lab_url())
        wait_for_lab(page)
        yield page
        assert not errors, errors
    finally:
        try:
            page.screenshot(path=artifact_name(request))
        finally:
            context.close()


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _refusal(lab: LabServer, path: str, body: dict[str, object]) -> dict[str, str]:
    """The server's 403 answer to a POST the policy refuses (its message is what Lab shows)."""
    request = urllib.request.Request(
        f"{lab.url}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    return json.loads(refused.value.read())


def _command(page: Page, command: str) -> dict[str, object]:
    return page.evaluate(
        """id => ({
            enabled: window.jupyterapp.commands.isEnabled(id),
            label: window.jupyterapp.commands.label(id, { isPalette: true }),
            caption: window.jupyterapp.commands.caption(id)
        })""",
        command,
    )


def test_terminals_and_push_are_off_with_the_reason(
    policy_page: Page, policy_lab: LabServer, request: pytest.FixtureRequest
) -> None:
    page = policy_page
    answer = server_api(policy_lab, "terax/api/policy")
    assert answer["features"]["terminals"] == {"enabled": False, "locked": True}

    # No launcher card that can only fail; Lab's own cards are still there.
    launcher = page.locator(".jp-Launcher")
    expect(launcher.locator(".jp-LauncherCard").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(
        launcher.locator(".jp-LauncherCard[title='Start a new Terax block terminal']")
    ).to_have_count(0)
    expect(launcher.locator(f".jp-LauncherCard[title^='{TURNED_OFF}']")).to_have_count(0)

    for command in ("terax:new-terminal", "terax:attach-terminal"):
        state = _command(page, command)
        assert state["enabled"] is False, (command, state)
        assert TURNED_OFF in str(state["label"]), state
        assert str(state["caption"]).startswith(TURNED_OFF), state

    # In the palette it is the disabled item with the reason, which Lab does not list.
    page.locator("#jp-main-dock-panel").click()
    page.keyboard.press("Control+Shift+C")
    palette = page.locator("#command-palette")
    palette.locator(".lm-CommandPalette-input").fill("New Terax Terminal")
    item = palette.locator(".lm-CommandPalette-item[data-command='terax:new-terminal']")
    expect(item).to_have_class(re.compile("lm-mod-disabled"), timeout=TIMEOUT_MS)
    expect(item).to_contain_text(TURNED_OFF)
    expect(item).to_be_hidden()
    page.keyboard.press("Escape")

    # Run anyway (a script, an old link): the server refuses, and its message is what shows.
    page.evaluate(
        "() => window.jupyterapp.commands.execute('terax:new-terminal').catch(() => null)"
    )
    refusal = _refusal(policy_lab, "terax/api/pty/sessions", {"shell": "bash"})
    assert refusal["reason"] == "disabled_by_policy", refusal
    toast = page.locator(".Toastify__toast", has_text=refusal["message"])
    expect(toast.first).to_be_visible(timeout=TIMEOUT_MS)
    expect(toast.first).not_to_contain_text("Could not start a terminal")

    # Git: the push button is disabled and says why; fetch still works as before.
    repo = policy_lab.root / "pushy"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    write(repo / "README.md", "# Pushy\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Initial commit")
    remote = policy_lab.root / "pushy-origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    _git(repo, "remote", "add", "origin", str(remote))
    page.evaluate(
        "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })", "pushy/"
    )
    page.evaluate("() => window.jupyterapp.commands.execute('terax:git-panel')")
    panel = page.locator("#terax-git")
    expect(panel.locator(".jp-TeraxGit-branchName")).to_have_text("main", timeout=TIMEOUT_MS)
    push = panel.locator(".jp-TeraxGit-remoteButton[data-operation='push']")
    expect(push).to_be_disabled()
    expect(push).to_have_attribute("title", f"Push: {TURNED_OFF}.")
    expect(panel.locator(".jp-TeraxGit-remoteButton[data-operation='fetch']")).to_be_enabled()
    state = _command(page, "terax:git-push")
    assert state["enabled"] is False, state
    assert TURNED_OFF in str(state["label"]), state
    assert not (remote / "refs" / "heads" / "main").exists()
    page.screenshot(path=artifact_name(request, "-git"))


@pytest.mark.parametrize("theme", [LIGHT, DARK])
def test_ai_settings_offer_only_allowed_providers_and_show_the_locks(
    policy_page: Page, request: pytest.FixtureRequest, theme: str
) -> None:
    page = policy_page
    if theme == DARK:
        change_theme(page, DARK)
    page.evaluate("() => window.jupyterapp.commands.execute('terax:ai-settings')")
    panel = page.locator("#terax-ai")
    settings = panel.locator(".jp-TeraxAi-settings")
    expect(settings).to_be_visible(timeout=TIMEOUT_MS)

    # Only the allowed provider, in the settings and in the chat's model bar; "keyed" is not.
    provider = settings.get_by_label("Provider", exact=True)
    expect(provider.locator("option")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(provider.locator("option")).to_have_attribute("value", "stub")
    bar = panel.locator(".jp-TeraxAi-modelBar select").first
    expect(bar.locator("option[value='keyed']")).to_have_count(0)
    expect(settings).to_contain_text("Only the providers your administrator allows.")
    # No custom endpoint: it would be a provider the administrator did not allow.
    expect(settings.get_by_text("Add an OpenAI-compatible endpoint")).to_have_count(0)

    # The administrator's settings: locked, with their values.
    admin = settings.locator("[data-policy='ai']")
    expect(admin).to_contain_text("Set by your administrator")
    expected = {
        "ai.providers": "stub",
        "ai.default_model": "stub-model",
        "ai.approvals": "always ask",
        "limits.agent_steps_per_run": "20",
    }
    for name, value in expected.items():
        field = admin.locator(f"[data-setting='{name}'] input")
        expect(field).to_have_value(value)
        expect(field).to_be_disabled()
    # Nothing the administrator left open is shown as locked.
    expect(admin.locator("[data-setting='ai.default_provider']")).to_have_count(0)

    # At Lab's default sidebar width nothing of the section is cut off.
    overflow = admin.evaluate(
        "node => [...node.querySelectorAll('*')]"
        ".filter(e => e.getBoundingClientRect().right > node.getBoundingClientRect().right + 1)"
        ".map(e => e.className || e.tagName)"
    )
    assert overflow == [], overflow
    page.screenshot(path=artifact_name(request, f"-{theme.split()[-1].lower()}"))

    # In the chat: no auto-approve rules of the user's own, the administrator's word instead.
    page.evaluate("() => window.jupyterapp.commands.execute('terax:ai-new-session')")
    approvals = panel.locator("[data-policy='approvals']")
    expect(approvals).to_contain_text("every action wait for your approval", timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-rules summary")).to_have_count(0)
    expect(panel.locator(".jp-TeraxAi-input")).to_be_visible()
    page.screenshot(path=artifact_name(request, f"-chat-{theme.split()[-1].lower()}"))
    if theme == DARK:
        change_theme(page, LIGHT)


@pytest.fixture(scope="module")
def read_only_lab(
    tmp_path_factory: pytest.TempPathFactory, model_stub: ModelStub, keyed_stub: ModelStub
) -> Iterator[LabServer]:
    """A lab whose administrator made it read-only and turned the agent off."""
    folder = tmp_path_factory.mktemp("policy-read-only")
    write(
        folder / "terax_policy.json", json.dumps({"read_only": True, "features": {"agent": False}})
    )
    with start_lab(
        tmp_path_factory, model_stub, keyed_stub, env={"TERAX_POLICY_DIRS": str(folder)}
    ) as server:
        yield server


def test_read_only_and_agent_off_say_so_where_they_matter(
    browser: Browser, read_only_lab: LabServer, request: pytest.FixtureRequest
) -> None:
    lab = read_only_lab
    repo = lab.root / "kept"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    write(repo / "README.md", "# Kept\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "Initial commit")
    context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    try:
        page.goto(lab.lab_url())
        wait_for_lab(page)
        # The AI panel: the reason in place of the chat; no prompt to type that would be refused.
        page.evaluate("() => window.jupyterapp.commands.execute('terax:ai-open')")
        panel = page.locator("#terax-ai")
        off = panel.locator("[data-policy='agent']")
        expect(off).to_be_visible(timeout=TIMEOUT_MS)
        expect(off).to_contain_text("The AI agent is turned off")
        expect(off).to_contain_text(TURNED_OFF)
        expect(panel.locator("textarea")).to_have_count(0)
        # The Git panel says it is read-only; commit and branch switching are off.
        page.evaluate(
            "path => window.jupyterapp.commands.execute('filebrowser:go-to-path', { path })",
            "kept/",
        )
        page.evaluate("() => window.jupyterapp.commands.execute('terax:git-panel')")
        git = page.locator("#terax-git")
        banner = git.locator("[data-policy='read_only']")
        expect(banner).to_be_visible(timeout=TIMEOUT_MS)
        expect(banner).to_contain_text("Read-only")
        expect(git.get_by_label("Commit message")).to_have_count(0)
        expect(git.locator(".jp-TeraxGit-remoteButton[data-operation='pull']")).to_be_disabled()
        for command in ("terax:git-commit", "terax:git-switch-branch", "terax:git-push"):
            assert _command(page, command)["enabled"] is False, command
        # A read-only server has no terminals either.
        assert _command(page, "terax:new-terminal")["enabled"] is False
        page.screenshot(path=artifact_name(request, "-light"))
        change_theme(page, DARK)
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        context.close()
