"""The AI side panel in Chromium against the model stubs: streaming, approvals, reload, keys."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from terax_jupyter.testing.model_stub import slow, text, tool_call

from .ai_helpers import PANEL, TIMEOUT_MS, ask, open_panel, use_stub_provider
from .conftest import STUB_KEY
from .helpers import DARK, LIGHT, artifact_name, change_theme, wait_for_lab

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Locator, Page

    from terax_jupyter.testing.model_stub import ModelStub

    from .conftest import LabServer

pytestmark = pytest.mark.ui

ANSWER = (
    "Here is **the answer**, streamed in small pieces.\n\n"
    "```bash\nls -la src\n```\n\n"
    "- one point\n- another point\n"
)


def bash_turns(command: str, after: str) -> list:
    return [tool_call("bash_run", {"command": command}), text(after)]


def test_a_question_gets_a_streamed_markdown_answer(
    page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    model_stub.script([slow(text(ANSWER, chunk=6), 0.03)])
    panel = open_panel(page)
    ask(panel, "What is in src?")
    answer = panel.locator(".jp-TeraxAi-answer").last
    # Streaming: the stop button and part of the text show before the end.
    expect(panel.locator(".jp-TeraxAi-stop")).to_be_visible(timeout=TIMEOUT_MS)
    expect(answer.locator(".jp-TeraxAi-markdown")).to_contain_text("Here is", timeout=TIMEOUT_MS)
    expect(answer.locator("strong")).to_have_text("the answer", timeout=TIMEOUT_MS)
    expect(answer.locator("li")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-send")).to_be_visible(timeout=TIMEOUT_MS)
    # The sanitized renderer's code block, with its actions.
    code = answer.locator(".jp-TeraxAi-codeTools")
    expect(code.locator("pre")).to_contain_text("ls -la src")
    expect(code.get_by_role("button", name="Copy the code")).to_have_count(1)
    expect(answer.locator(".jp-TeraxAi-turnFooter")).to_have_count(0)
    expect(panel.locator(".jp-TeraxAi-turnFooter").last).to_contain_text("in")
    # The session is titled after its first prompt.
    expect(panel.locator(".jp-TeraxAi-title")).to_have_text("What is in src?")
    page.screenshot(path=artifact_name(request, "-light"))


def test_a_command_runs_after_approve(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    target = root_lab.root / "made_by_ai.txt"
    target.unlink(missing_ok=True)
    model_stub.script(bash_turns("touch made_by_ai.txt", "Created the file."))
    panel = open_panel(page)
    ask(panel, "Create made_by_ai.txt")
    card = panel.locator(".jp-TeraxAi-approval")
    expect(card).to_be_visible(timeout=TIMEOUT_MS)
    expect(card.locator(".jp-TeraxAi-approvalCommand")).to_have_text("touch made_by_ai.txt")
    tool = panel.locator(".jp-TeraxAi-tool[data-tool='bash_run']")
    expect(tool).to_have_attribute("data-status", "pending_approval")
    assert not target.exists()
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)

    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card).to_have_count(0, timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Created the file.", timeout=TIMEOUT_MS
    )
    expect(tool).to_have_attribute("data-status", "done")
    assert target.exists()
    # The card expands to the arguments and the result.
    tool.locator(".jp-TeraxAi-toolHeader").click()
    expect(tool.locator(".jp-TeraxAi-toolBody")).to_contain_text("touch made_by_ai.txt")


def test_a_denied_command_never_runs(
    root_lab: LabServer, page: Page, model_stub: ModelStub
) -> None:
    target = root_lab.root / "never_made.txt"
    model_stub.script(bash_turns("touch never_made.txt", "Understood, I did not run it."))
    panel = open_panel(page)
    ask(panel, "Create never_made.txt")
    card = panel.locator(".jp-TeraxAi-approval")
    expect(card).to_be_visible(timeout=TIMEOUT_MS)
    card.get_by_placeholder("Note for the agent (optional)").fill("not now")
    card.get_by_role("button", name="Deny").click()
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Understood, I did not run it.", timeout=TIMEOUT_MS
    )
    tool = panel.locator(".jp-TeraxAi-tool[data-tool='bash_run']")
    expect(tool).to_have_attribute("data-status", "denied")
    assert not target.exists()
    # The agent was told, with the note.
    told = [
        m
        for r in model_stub.requests
        for m in (r.body or {}).get("messages", [])
        if m.get("role") == "tool"
    ]
    assert any("denied" in m["content"] and "not now" in m["content"] for m in told)


def test_a_pending_approval_survives_a_reload(
    page: Page, lab: LabServer, model_stub: ModelStub
) -> None:
    name = f"after_reload_{lab.base_url.strip('/').replace('/', '_') or 'root'}.txt"
    target = lab.root / name
    target.unlink(missing_ok=True)
    model_stub.script(bash_turns(f"touch {name}", "Done after the reload."))
    panel = open_panel(page)
    ask(panel, f"Create {name}")
    expect(panel.locator(".jp-TeraxAi-approval")).to_be_visible(timeout=TIMEOUT_MS)

    page.reload()
    wait_for_lab(page)
    page.evaluate("() => window.jupyterapp.commands.execute('terax:ai-open')")
    panel = page.locator(PANEL)
    card = panel.locator(".jp-TeraxAi-approval")
    expect(card).to_be_visible(timeout=TIMEOUT_MS)
    expect(card.locator(".jp-TeraxAi-approvalCommand")).to_have_text(f"touch {name}")
    expect(panel.locator(".jp-TeraxAi-prompt")).to_have_text(f"Create {name}")
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Done after the reload.", timeout=TIMEOUT_MS
    )
    assert target.exists()


def set_key(panel: Locator, value: str) -> None:
    """Type a key into the settings view's password field and save it."""
    field = panel.get_by_label("API key for Keyed")
    expect(field).to_have_attribute("type", "password")
    field.fill(value)
    panel.get_by_role("button", name="Save key").click()
    expect(panel.locator(".jp-TeraxAi-keyState")).to_have_text("set", timeout=TIMEOUT_MS)
    expect(field).to_have_value("")


def use_keyed_provider(panel: Locator) -> Locator:
    """Pick the keyed provider, name its model in the settings; the settings stay open."""
    bar = panel.locator(".jp-TeraxAi-modelBar")
    bar.get_by_label("Provider").select_option("keyed")
    panel.get_by_role("button", name="AI settings").click()
    settings = panel.locator(".jp-TeraxAi-settings")
    expect(settings.get_by_label("Provider", exact=True)).to_have_value("keyed")
    settings.get_by_label("Model", exact=True).fill("stub-model")
    settings.get_by_role("button", name="Use for chats").click()
    expect(bar.get_by_label("Model")).to_have_value("stub-model", timeout=TIMEOUT_MS)
    return settings


def test_a_bad_key_shows_an_actionable_banner(
    root_lab: LabServer,
    page: Page,
    keyed_stub: ModelStub,
    request: pytest.FixtureRequest,
) -> None:
    panel = open_panel(page)
    use_keyed_provider(panel)
    set_key(panel, "sk-wrong-key-000")
    panel.get_by_role("button", name="AI settings").click()

    ask(panel, "Hello keyed")
    banner = panel.locator(".jp-TeraxAi-banner")
    expect(banner).to_be_visible(timeout=TIMEOUT_MS)
    expect(banner).to_have_attribute("data-reason", "bad_key")
    action = banner.get_by_role("button", name="Set KEYED_API_KEY")
    expect(action).to_be_visible()
    page.screenshot(path=artifact_name(request, "-light"))
    change_theme(page, DARK)
    try:
        page.screenshot(path=artifact_name(request, "-dark"))
    finally:
        change_theme(page, LIGHT)
    # The action opens the settings with the key field focused.
    action.click()
    expect(panel.get_by_label("API key for Keyed")).to_be_focused(timeout=TIMEOUT_MS)
    assert "sk-wrong-key-000" not in page.content()
    # Test connection says the key is refused; with the right key it connects.
    test = panel.get_by_role("button", name="Test connection")
    result = panel.locator(".jp-TeraxAi-settings .jp-TeraxAi-testResult").first
    test.click()
    expect(result).to_have_class(re.compile(r"jp-mod-error"), timeout=TIMEOUT_MS)
    expect(result).to_contain_text("KEYED_API_KEY")
    set_key(panel, STUB_KEY)
    test.click()
    expect(result).to_have_class(re.compile(r"jp-mod-ok"), timeout=TIMEOUT_MS)


def test_the_key_never_reaches_the_page(
    root_lab: LabServer, page: Page, keyed_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    bodies: list[str] = []
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda frame: bodies.append(str(frame))),
    )
    keyed_stub.script([text("The keyed model answers.")])
    panel = open_panel(page)
    use_keyed_provider(panel)
    set_key(panel, STUB_KEY)
    page.screenshot(path=artifact_name(request, "-settings"))
    panel.get_by_role("button", name="AI settings").click()
    ask(panel, "Hello again")
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "The keyed model answers.", timeout=TIMEOUT_MS
    )
    expect(panel.locator(".jp-TeraxAi-banner")).to_have_count(0)
    # The stub saw the key: it went from the server, not the page.
    assert keyed_stub.requests[-1].headers.get("authorization") == f"Bearer {STUB_KEY}"

    assert STUB_KEY not in page.content()
    assert STUB_KEY not in page.evaluate("() => document.documentElement.outerHTML")
    values = page.evaluate("() => [...document.querySelectorAll('input')].map(i => i.value)")
    assert STUB_KEY not in "".join(values)
    for response in responses:
        with contextlib.suppress(Exception):  # redirects and aborted requests have no body
            bodies.append(response.body().decode("utf-8", "replace"))
    assert bodies, "the network log is empty"
    assert not [b for b in bodies if STUB_KEY in b]


def test_plan_mode_queues_changes_for_one_review(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    kept, skipped = root_lab.root / "plan_kept.txt", root_lab.root / "plan_skipped.txt"
    for path in (kept, skipped):
        path.unlink(missing_ok=True)
    model_stub.script(
        [
            tool_call("bash_run", {"command": "touch plan_kept.txt"}),
            tool_call("bash_run", {"command": "touch plan_skipped.txt"}),
            text("The plan is ready."),
        ]
    )
    panel = open_panel(page)
    use_stub_provider(panel)
    toggle = panel.locator("label[title^='Plan mode'] input[type='checkbox']")
    toggle.click()  # the server's answer checks it
    expect(toggle).to_be_checked(timeout=TIMEOUT_MS)
    expect(panel.locator(".jp-TeraxAi-planBadge")).to_be_visible(timeout=TIMEOUT_MS)
    ask(panel, "Make two files")
    plan = panel.locator(".jp-TeraxAi-plan")
    items = plan.locator(".jp-TeraxAi-planItem")
    expect(items).to_have_count(2, timeout=TIMEOUT_MS)
    # Nothing ran: the agent queued its changes and finished.
    expect(panel.locator(".jp-TeraxAi-approval")).to_have_count(0)
    assert not kept.exists()
    assert not skipped.exists()
    items.nth(1).locator("input[type='checkbox']").click()
    apply = plan.get_by_role("button", name="Apply 1 of 2")
    expect(apply).to_be_enabled(timeout=TIMEOUT_MS)
    page.screenshot(path=artifact_name(request, "-review"))
    apply.click()
    expect(items).to_have_count(0, timeout=TIMEOUT_MS)
    assert kept.exists()
    assert not skipped.exists()


def test_an_auto_approve_rule_runs_matching_commands_without_asking(
    root_lab: LabServer, page: Page, model_stub: ModelStub
) -> None:
    target = root_lab.root / "rule_auto.txt"
    target.unlink(missing_ok=True)
    panel = open_panel(page)
    use_stub_provider(panel)
    rules = panel.locator("details.jp-TeraxAi-rules")
    rules.locator("summary").click()
    rules.get_by_label("Command prefix").fill("touch rule_auto.txt")
    rules.get_by_role("button", name="Add").click()
    expect(rules.locator("summary")).to_have_text("Auto-approve: 1 rule", timeout=TIMEOUT_MS)
    expect(rules.locator(".jp-TeraxAi-rule")).to_contain_text("touch rule_auto.txt")
    model_stub.script(bash_turns("touch rule_auto.txt", "Done without asking."))
    ask(panel, "Make the file")
    expect(panel.locator(".jp-TeraxAi-turn").last).to_contain_text(
        "Done without asking.", timeout=TIMEOUT_MS
    )
    expect(panel.locator(".jp-TeraxAi-approval")).to_have_count(0)
    assert target.exists()
    rules.get_by_role("button", name="Remove this rule").click()
    expect(rules.locator("summary")).to_have_text("Auto-approve: 0 rules", timeout=TIMEOUT_MS)


def test_a_custom_agent_gets_only_its_tools(
    root_lab: LabServer, page: Page, model_stub: ModelStub
) -> None:
    panel = open_panel(page)
    use_stub_provider(panel)
    panel.get_by_role("button", name="AI settings").click()
    agents = panel.locator("section[aria-label='Agents']")
    agents.get_by_role("button", name="New agent…").click()
    agents.get_by_label("Name").fill("reader")
    agents.get_by_label("Prompt").fill("Only read files.")
    for box in agents.locator("fieldset input[type='checkbox']").all():
        if box.is_checked():
            box.click()
    agents.locator("fieldset label", has_text="read_file").locator("input").click()
    agents.get_by_role("button", name="Save agent").click()
    expect(agents.locator(".jp-TeraxAi-agent", has_text="reader")).to_contain_text(
        "1 tools", timeout=TIMEOUT_MS
    )
    agents.get_by_label("Agent of this session").select_option("reader")
    panel.get_by_role("button", name="AI settings").click()  # back to the chat
    model_stub.script([text("I can only read.")])
    ask(panel, "What can you do?")
    expect(panel.locator(".jp-TeraxAi-turn").last).to_contain_text(
        "I can only read.", timeout=TIMEOUT_MS
    )
    offered = {tool["function"]["name"] for tool in model_stub.requests[-1].body["tools"]}
    assert offered == {"read_file"}
    panel.get_by_role("button", name="AI settings").click()
    agents.locator(".jp-TeraxAi-agent", has_text="reader").get_by_role(
        "button", name="Delete"
    ).click()
    expect(agents.locator(".jp-TeraxAi-agent", has_text="reader")).to_have_count(0)


def test_sessions_are_searched_renamed_and_deleted(
    root_lab: LabServer, page: Page, model_stub: ModelStub
) -> None:
    marker = f"zebra-{uuid.uuid4().hex[:6]}"
    panel = open_panel(page)
    use_stub_provider(panel)
    model_stub.script([text("Noted.")])
    ask(panel, f"Remember the {marker}")
    expect(panel.locator(".jp-TeraxAi-turn").last).to_contain_text("Noted.", timeout=TIMEOUT_MS)
    panel.get_by_role("button", name="Sessions", exact=True).click()
    panel.get_by_label("Search sessions").fill(marker)
    sessions = panel.locator(".jp-TeraxAi-session")
    expect(sessions).to_have_count(1, timeout=TIMEOUT_MS)
    expect(sessions.first).to_contain_text(f"Remember the {marker}")
    sessions.first.get_by_role("button", name=f"Rename Remember the {marker}").click()
    title = panel.get_by_label("New title")
    title.fill(f"Renamed {marker}")
    title.press("Enter")
    expect(sessions.first).to_contain_text(f"Renamed {marker}", timeout=TIMEOUT_MS)
    sessions.first.get_by_role("button", name=f"Delete Renamed {marker}").click()
    page.locator(".jp-Dialog").get_by_role("button", name="Delete").click()
    expect(sessions).to_have_count(0, timeout=TIMEOUT_MS)


def forget_model(lab: LabServer, provider: str, model: str) -> None:
    """Remove what a test said about a model (other tests expect no prices)."""
    query = urllib.parse.urlencode({"provider": provider, "model": model})
    request = urllib.request.Request(
        f"{lab.url}terax/api/ai/models?{query}",
        method="DELETE",
        headers={"Authorization": f"token {lab.token}"},
    )
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(request, timeout=10).close()


def described_model(lab: LabServer, provider: str, model: str) -> dict:
    request = urllib.request.Request(
        f"{lab.url}terax/api/ai/models", headers={"Authorization": f"token {lab.token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        models = json.load(response)["models"]
    return next(m for m in models if (m["provider"], m["id"]) == (provider, model))


def test_model_prices_make_turns_show_their_cost(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    panel = open_panel(page)
    use_stub_provider(panel)
    panel.get_by_role("button", name="AI settings").click()
    details = panel.get_by_role("region", name="Model details")
    expect(details.locator("h3")).to_contain_text("stub-model")
    save = details.get_by_role("button", name="Save model details")
    status = details.get_by_role("status")
    try:
        # One price alone is refused, and nothing is saved.
        details.get_by_label("Context window (tokens)").fill("32000")
        details.get_by_label("Input price ($ / M tokens)").fill("3")
        save.click()
        expect(status).to_have_text("Give both prices, or neither: a cost needs both.")
        # A number the server refuses: its reason shows.
        details.get_by_label("Output price ($ / M tokens)").fill("20000")
        save.click()
        expect(status).to_contain_text("US dollars per million tokens", timeout=TIMEOUT_MS)
        expect(status).to_have_class(re.compile(r"jp-mod-error"))
        details.get_by_label("Output price ($ / M tokens)").fill("15")
        save.click()
        expect(status).to_have_text("Saved. New turns show their cost.", timeout=TIMEOUT_MS)
        # The server's choice of an output limit shows once saved.
        expect(details.get_by_label("Max output (tokens)")).not_to_have_value("")
        assert described_model(root_lab, "stub", "stub-model")["vision"] is False
        reads_images = details.get_by_label(re.compile(r"^Reads images"))
        expect(reads_images).not_to_be_checked()
        reads_images.check()
        save.click()
        expect(status).to_have_text("Saved. New turns show their cost.", timeout=TIMEOUT_MS)
        assert described_model(root_lab, "stub", "stub-model")["vision"] is True
        page.screenshot(path=artifact_name(request, "-form"))

        panel.get_by_role("button", name="AI settings").click()  # back to the chat
        model_stub.script([text("Priced.", input_tokens=2000, output_tokens=100)])
        ask(panel, "How much was that?")
        footer = panel.locator(".jp-TeraxAi-turnFooter").last
        # (2000 x $3 + 100 x $15) / 1M = $0.0075
        expect(footer).to_contain_text("$0.0075", timeout=TIMEOUT_MS)
    finally:
        forget_model(root_lab, "stub", "stub-model")


def chat_requests(model_stub: ModelStub) -> list[dict]:
    return [r.body for r in model_stub.requests if r.path.endswith("/chat/completions")]


def test_a_cut_answer_shows_a_note_and_continues_with_a_higher_limit(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    target = root_lab.root / "cut_by_limit.txt"
    target.unlink(missing_ok=True)
    cut_call = tool_call(
        "write_file",
        '{"path": "cut_by_limit.txt", "content": "one\\ntwo\\nthr',
        output_tokens=4096,
    )
    model_stub.script(
        [
            dataclasses.replace(cut_call, finish="length"),
            text("Wrote it in smaller pieces."),
            text("A half answ", finish="content_filter"),
        ]
    )
    panel = open_panel(page)
    use_stub_provider(panel)
    ask(panel, "Write cut_by_limit.txt")
    note = panel.locator(".jp-TeraxAi-cutNote")
    expect(note).to_be_visible(timeout=TIMEOUT_MS)
    expect(note).to_have_attribute("data-cut", "length")
    expect(note).to_contain_text("cut off the call to write_file")
    expect(note).to_contain_text("nothing was run")
    expect(panel.locator(".jp-TeraxAi-tool[data-tool='write_file']")).to_have_attribute(
        "data-status", "error"
    )
    assert len(chat_requests(model_stub)) == 1  # stopped at once, not at the step limit
    assert not target.exists()
    page.screenshot(path=artifact_name(request, "-light"))

    button = note.get_by_role("button", name="Continue with a higher limit")
    button.click()
    expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
        "Wrote it in smaller pieces.", timeout=TIMEOUT_MS
    )
    first, second = chat_requests(model_stub)
    assert second["max_tokens"] == 2 * first["max_tokens"]
    # The note stays with its turn; the new turn has none, and offers nothing.
    expect(panel.locator(".jp-TeraxAi-cutNote")).to_have_count(1)
    expect(panel.get_by_role("button", name="Continue with a higher limit")).to_have_count(0)

    ask(panel, "Explain it")
    filtered = panel.locator(".jp-TeraxAi-turn").last.locator(".jp-TeraxAi-cutNote")
    expect(filtered).to_have_text(
        "The provider's content filter stopped the answer.", timeout=TIMEOUT_MS
    )
    expect(filtered.get_by_role("button")).to_have_count(0)


# -- connecting a model (issue 16, item 9) and the model bar's width (item 8) ---------------


def provider_api(lab: LabServer, provider: str, method: str, body: dict | None = None) -> None:
    """PUT or DELETE the user's settings of a provider (a missing entry is fine to delete)."""
    request = urllib.request.Request(
        f"{lab.url}terax/api/ai/providers/{provider}",
        data=None if body is None else json.dumps(body).encode("utf-8"),
        method=method,
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
    )
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(request, timeout=10).close()


@pytest.fixture
def silent_ollama(root_lab: LabServer) -> Iterator[int]:
    """Ollama moved to a port that takes connections and never answers (a hung server):
    the connection test must say it is testing, then why it failed."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = int(server.getsockname()[1])
        provider_api(root_lab, "ollama", "PUT", {"base_url": f"http://127.0.0.1:{port}/v1"})
        try:
            yield port
        finally:
            provider_api(root_lab, "ollama", "DELETE")


def unconnect(panel: Locator) -> Locator:
    """Choose a hosted provider that has no key: the chat shows the empty state."""
    bar = panel.locator(".jp-TeraxAi-modelBar")
    bar.get_by_label("Provider").select_option("openai")
    connect = panel.get_by_role("group", name="Connect a model")
    expect(connect).to_be_visible(timeout=TIMEOUT_MS)
    return connect


def test_a_new_user_connects_a_model_from_the_empty_state(
    root_lab: LabServer,
    page: Page,
    model_stub: ModelStub,
    silent_ollama: int,
    request: pytest.FixtureRequest,
) -> None:
    panel = open_panel(page)
    bar = panel.locator(".jp-TeraxAi-modelBar")
    settings = panel.locator(".jp-TeraxAi-settings")
    try:
        connect = unconnect(panel)
        expect(connect).to_contain_text("OpenAI needs an API key.")
        for name in ("Ollama", "LM Studio", "Paste an API key", "Custom endpoint"):
            expect(connect.get_by_role("button", name=re.compile(f"^{name}"))).to_be_visible()
        page.screenshot(path=artifact_name(request, "-empty-light"))
        change_theme(page, DARK)
        try:
            page.screenshot(path=artifact_name(request, "-empty-dark"))
        finally:
            change_theme(page, LIGHT)

        # Ollama: chosen for the chat and shown in the settings, one selection.
        connect.get_by_role("button", name=re.compile("^Ollama")).click()
        expect(settings.get_by_label("Provider", exact=True)).to_have_value("ollama")
        expect(bar.get_by_label("Provider")).to_have_value("ollama", timeout=TIMEOUT_MS)
        # Its model list cannot be had: the field stays free text and says why.
        note = settings.locator("[data-listing='failed']")
        expect(note).to_contain_text("Could not list the models", timeout=30_000)
        expect(note).to_contain_text(
            f"did not answer within 6 s at http://127.0.0.1:{silent_ollama}"
        )
        expect(note).to_contain_text("Type the model id instead.")
        # The test says it is running, then why it failed.
        test = settings.get_by_role("button", name=re.compile("^(Test connection|Testing…)$"))
        test.click()
        expect(test).to_have_text("Testing…")
        expect(test).to_be_disabled()
        expect(
            settings.get_by_role("status").filter(has_text="Testing the connection to Ollama")
        ).to_be_visible()
        page.screenshot(path=artifact_name(request, "-testing"))
        result = settings.locator(".jp-TeraxAi-testResult.jp-mod-error").first
        expect(result).to_contain_text("Ollama did not answer within 6 s", timeout=30_000)
        expect(test).to_have_text("Test connection")
        expect(test).to_be_enabled()

        # Choosing in the model bar shows in the settings too.
        bar.get_by_label("Provider").select_option("openai")
        expect(settings.get_by_label("Provider", exact=True)).to_have_value(
            "openai", timeout=TIMEOUT_MS
        )

        # Paste a key: the settings open at the hosted provider's key field.
        panel.get_by_role("button", name="AI settings").click()  # back to the chat
        connect.get_by_role("button", name=re.compile("^Paste an API key")).click()
        expect(panel.get_by_label("API key for OpenAI")).to_be_focused(timeout=TIMEOUT_MS)

        # A custom OpenAI-compatible endpoint: its form, then its listed models to pick from.
        panel.get_by_role("button", name="AI settings").click()
        connect.get_by_role("button", name=re.compile("^Custom endpoint")).click()
        form = panel.get_by_role("region", name="Custom endpoint")
        expect(form.get_by_label("Name", exact=True)).to_be_focused(timeout=TIMEOUT_MS)
        form.get_by_label("Name", exact=True).fill("Stub endpoint")
        form.get_by_label("Endpoint base URL").fill(model_stub.url)
        local = form.get_by_label("On this machine or my network (a local address)")
        expect(local).to_be_checked()  # a loopback address
        form.get_by_role("button", name="Add endpoint").click()
        expect(settings.get_by_label("Provider", exact=True)).to_have_value(
            "stub-endpoint", timeout=TIMEOUT_MS
        )
        expect(bar.get_by_label("Provider")).to_have_value("stub-endpoint")
        expect(settings.locator("[data-listing='ok']")).to_have_text(
            "1 model to pick from.", timeout=TIMEOUT_MS
        )
        settings.get_by_role("button", name="Show models").click()
        listbox = settings.get_by_role("listbox", name="Models of Stub endpoint")
        listbox.get_by_role("option", name="stub-model").click()
        expect(bar.get_by_label("Model")).to_have_value("stub-model", timeout=TIMEOUT_MS)
        expect(settings.get_by_label("Model", exact=True)).to_have_value("stub-model")
        page.screenshot(path=artifact_name(request, "-custom"))

        # Connected: the chat is ready and answers through the new endpoint.
        panel.get_by_role("button", name="AI settings").click()
        expect(panel.get_by_role("group", name="Connect a model")).to_have_count(0)
        model_stub.script([text("Connected through the endpoint.")])
        ask(panel, "Hello endpoint")
        expect(panel.locator(".jp-TeraxAi-markdown").last).to_have_text(
            "Connected through the endpoint.", timeout=TIMEOUT_MS
        )
    finally:
        use_stub_provider(panel)
        provider_api(root_lab, "stub-endpoint", "DELETE")


LONG_MODEL = "qwen2.5-coder:7b-instruct"  # a local model's usual kind of name


def test_the_model_bar_fits_the_default_sidebar_width(
    root_lab: LabServer, page: Page, model_stub: ModelStub, request: pytest.FixtureRequest
) -> None:
    panel = open_panel(page)
    use_stub_provider(panel)
    bar = panel.locator(".jp-TeraxAi-modelBar")
    panel.get_by_role("button", name="AI settings").click()
    settings = panel.locator(".jp-TeraxAi-settings")
    settings.get_by_label("Model", exact=True).fill(LONG_MODEL)
    settings.get_by_role("button", name="Use for chats").click()
    expect(bar.get_by_label("Model")).to_have_value(LONG_MODEL, timeout=TIMEOUT_MS)
    panel.get_by_role("button", name="AI settings").click()  # back to the chat
    try:
        # The sidebar's box, not the panel's: a panel wider than its sidebar is cut by it.
        box = panel.locator("xpath=..").bounding_box()
        assert box is not None
        right = box["x"] + box["width"]
        controls = {
            "provider": bar.get_by_label("Provider"),
            "model": bar.get_by_label("Model"),
            "plan": panel.locator("label[title^='Plan mode']"),
        }
        for theme in (LIGHT, DARK):
            change_theme(page, theme)
            for name, control in controls.items():
                shape = control.bounding_box()
                assert shape is not None, name
                # Inside the sidebar: nothing cut off at its right edge.
                assert shape["x"] >= box["x"], (name, shape, box)
                assert shape["x"] + shape["width"] <= right + 0.5, (name, shape, box)
            # Each control shows its whole text: the Plan label, and the chosen model's
            # name in its select (the text's width in the select's font, plus its arrow).
            fits = panel.evaluate(
                """p => {
                    const label = p.querySelector("label[title^='Plan mode']");
                    const select = p.querySelector('.jp-TeraxAi-modelBar [aria-label="Model"]');
                    const style = getComputedStyle(select);
                    const context = document.createElement('canvas').getContext('2d');
                    context.font = `${style.fontSize} ${style.fontFamily}`;
                    const text = select.options[select.selectedIndex].text;
                    return {
                        label: label.scrollWidth <= label.clientWidth,
                        need: context.measureText(text).width + 24,
                        have: select.clientWidth,
                    };
                }"""
            )
            assert fits["label"]
            assert fits["have"] >= fits["need"], fits
            suffix = "light" if theme == LIGHT else "dark"
            page.screenshot(path=artifact_name(request, f"-{suffix}"))
    finally:
        change_theme(page, LIGHT)
        bar.get_by_label("Model").select_option("stub-model")
        expect(bar.get_by_label("Model")).to_have_value("stub-model", timeout=TIMEOUT_MS)
