"""The browser REST API: drive a tab, save a workflow, replay it with no model, refusals as
409 with their reason, destructive workflows refused here, tabs listed and closed."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.browser.evals.site import EvalSite

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

    Api = Callable[..., Awaitable[Any]]


@pytest.fixture
def site() -> Iterator[EvalSite]:
    with EvalSite() as app:
        yield app


def ref(page: dict[str, Any], what: str) -> str:
    for line in page["text"].splitlines():
        if what in line:
            return line.rsplit("[ref=", 1)[1].rstrip("]")
    raise AssertionError(f"{what} not in\n{page['text']}")


async def record_search(terax_api: Api, site: EvalSite, tab: str) -> dict[str, Any]:
    page = await terax_api(
        f"browser/tabs/{tab}/open", method="POST", body={"url": site.url("/search")}
    )
    page = await terax_api(
        f"browser/tabs/{tab}/type",
        method="POST",
        body={"ref": ref(page, 'textbox "Query"'), "text": "apple", "input": "query"},
    )
    page = await terax_api(
        f"browser/tabs/{tab}/click", method="POST", body={"ref": ref(page, 'button "Search"')}
    )
    return await terax_api(
        f"browser/tabs/{tab}/wait", method="POST", body={"title_contains": "Results"}
    )


async def test_a_flow_driven_through_the_api_replays_with_other_inputs(
    terax_api: Api, jp_fetch: Any, site: EvalSite
) -> None:
    page = await record_search(terax_api, site, "api-1")
    assert 'heading "Results for apple"' in page["text"]
    assert page["steps"] == 3  # open, type, click (waiting is not an action)
    assert page["cacheable"] is True
    saved = await terax_api(
        "browser/tabs/api-1/save",
        method="POST",
        body={
            "name": "catalog-search",
            "side_effect": "read_only",
            "postconditions": [{"kind": "text_contains", "value": "found"}],
        },
    )
    assert saved["inputs"] == ["query"]
    assert [s["kind"] for s in saved["steps"]] == ["navigate", "type", "click"]
    assert saved["steps"][1]["value"] == "{{query}}"

    site.page_loads.clear()
    result = await terax_api(
        "browser/workflows/catalog-search/run", method="POST", body={"inputs": {"query": "pear"}}
    )
    assert result["model_calls"] == 0
    assert result["steps_replayed"] == 3
    # The first page is loaded once: the replay acts on the page its checks saw.
    assert site.page_loads.count("/search") == 1, site.page_loads

    # Another scope (the app on another port) refuses; so does a missing input.
    for body, reason in (
        ({"inputs": {"query": "x"}, "scope_id": "http://127.0.0.1:1"}, "scope_mismatch"),
        ({"inputs": {}}, "input_missing"),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api("browser/workflows/catalog-search/run", method="POST", body=body)
        assert caught.value.code == 409
        assert error_of(caught.value)["reason"] == reason

    tabs = (await terax_api("browser/tabs"))["tabs"]
    assert [t["id"] for t in tabs] == ["api-1"]
    shot = await jp_fetch("terax", "api", "browser", "tabs", "api-1", "screenshot")
    assert shot.headers["Content-Type"] == "image/png"
    assert shot.body.startswith(b"\x89PNG\r\n")
    await terax_api("browser/tabs/api-1", method="DELETE")
    assert (await terax_api("browser/tabs"))["tabs"] == []


async def test_destructive_workflows_do_not_run_through_the_api(
    terax_api: Api, site: EvalSite
) -> None:
    page = await terax_api(
        "browser/tabs/api-2/open", method="POST", body={"url": site.url("/items")}
    )
    page = await terax_api(
        "browser/tabs/api-2/click",
        method="POST",
        body={"ref": ref(page, 'link "Delete beta notes"')},
    )
    await terax_api(
        "browser/tabs/api-2/click",
        method="POST",
        body={"ref": ref(page, 'button "Confirm delete"')},
    )
    assert site.deleted == ["beta notes"]
    await terax_api(
        "browser/tabs/api-2/save",
        method="POST",
        body={"name": "delete-beta", "side_effect": "destructive"},
    )
    site.reset()
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("browser/workflows/delete-beta/run", method="POST", body={})
    assert caught.value.code == 409
    assert error_of(caught.value)["reason"] == "approval_required"
    assert site.deleted == []
    await terax_api("browser/workflows/delete-beta", method="DELETE")
    assert (await terax_api("browser/workflows"))["workflows"] == []


async def test_bad_requests_change_nothing(terax_api: Api, site: EvalSite) -> None:
    cases = [
        ("browser/tabs/t/open", {"url": "file:///etc/passwd"}, 403),
        ("browser/tabs/t/open", {"url": "http://10.0.0.1/"}, 403),
        ("browser/tabs/t/click", {"ref": "e999"}, 404),
        ("browser/tabs/t/wait", {"title_contains": "x", "selector": "y"}, 400),
        ("browser/tabs/t/save", {"name": "Bad Name", "side_effect": "read_only"}, 400),
        ("browser/workflows/nothing-here/run", {}, 404),
        ("browser/workflows/x/run", {"inputs": {"a": 1}}, 400),
    ]
    for path, body, status in cases:
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(path, method="POST", body=body)
        assert caught.value.code == status, (path, body, error_of(caught.value))
    assert (await terax_api("browser/workflows"))["workflows"] == []


# -- issue 15: pins, no silent lowering, the TTL, the audit ---------------------------------


async def test_a_run_can_pin_the_version_and_side_effect(terax_api: Api, site: EvalSite) -> None:
    await record_search(terax_api, site, "pin")
    await terax_api(
        "browser/tabs/pin/save",
        method="POST",
        body={"name": "catalog-search", "side_effect": "read_only"},
    )
    run = "browser/workflows/catalog-search/run"
    pinned = {"inputs": {"query": "pear"}, "workflow_version": 1, "side_effect": "read_only"}
    assert (await terax_api(run, method="POST", body=pinned))["steps_replayed"] == 3
    for change, status, reason in (
        ({"workflow_version": 2}, 409, "version_mismatch"),
        ({"side_effect": "mutating"}, 409, "side_effect_mismatch"),
        ({"workflow_version": 0}, 400, "invalid_parameter"),
        ({"workflow_version": True}, 400, "invalid_parameter"),
        ({"side_effect": "harmless"}, 400, "invalid_parameter"),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(run, method="POST", body={**pinned, **change})
        assert caught.value.code == status, change
        assert error_of(caught.value)["reason"] == reason, change


async def test_the_api_never_lowers_a_side_effect_or_replaces_a_destructive_workflow(
    terax_api: Api, site: EvalSite
) -> None:
    async def record(tab: str) -> None:
        page = await terax_api(
            f"browser/tabs/{tab}/open", method="POST", body={"url": site.url("/items")}
        )
        page = await terax_api(
            f"browser/tabs/{tab}/click",
            method="POST",
            body={"ref": ref(page, 'link "Delete beta notes"')},
        )
        await terax_api(
            f"browser/tabs/{tab}/click",
            method="POST",
            body={"ref": ref(page, 'button "Confirm delete"')},
        )
        site.reset()

    await record("low")
    save = "browser/tabs/low/save"
    await terax_api(save, method="POST", body={"name": "delete-beta", "side_effect": "destructive"})
    await terax_api(save, method="POST", body={"name": "tidy", "side_effect": "mutating"})
    for name, side_effect in (
        ("delete-beta", "read_only"),
        ("delete-beta", "mutating"),
        ("delete-beta", "destructive"),  # replacing it is a change the user approves too
        ("tidy", "read_only"),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(
                save,
                method="POST",
                body={"name": name, "side_effect": side_effect, "overwrite": True},
            )
        assert caught.value.code == 409, (name, side_effect)
        assert error_of(caught.value)["reason"] == "approval_required"
        assert "needs the user's approval" in error_of(caught.value)["message"]
    stored = {w["name"]: w["policy"] for w in (await terax_api("browser/workflows"))["workflows"]}
    assert stored["delete-beta"]["side_effect"] == "destructive"
    assert stored["delete-beta"]["workflow_version"] == 1
    assert stored["tidy"]["side_effect"] == "mutating"
    # Raising a side effect asks nothing.
    raised = await terax_api(
        save, method="POST", body={"name": "tidy", "side_effect": "destructive", "overwrite": True}
    )
    assert raised["policy"]["workflow_version"] == 2
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("browser/workflows/delete-beta/run", method="POST", body={})
    assert error_of(caught.value)["reason"] == "approval_required"
    assert site.deleted == []


async def test_save_honours_ttl_seconds_and_refuses_bad_ones(
    terax_api: Api, site: EvalSite
) -> None:
    await record_search(terax_api, site, "ttl")
    body = {"name": "catalog-search", "side_effect": "read_only"}
    for bad in (0, -5, 7776001, 1.5, "3600", True, None):
        with pytest.raises(HTTPClientError) as caught:
            await terax_api(
                "browser/tabs/ttl/save", method="POST", body={**body, "ttl_seconds": bad}
            )
        assert caught.value.code == 400, bad
        assert "ttl_seconds" in error_of(caught.value)["message"]
    assert (await terax_api("browser/workflows"))["workflows"] == []
    saved = await terax_api(
        "browser/tabs/ttl/save", method="POST", body={**body, "ttl_seconds": 3600}
    )
    assert saved["policy"]["ttl_seconds"] == 3600
    stored = await terax_api("browser/workflows/catalog-search")
    assert stored["policy"]["ttl_seconds"] == 3600


async def test_recording_and_saving_are_audited_without_typed_values(
    terax_api: Api, site: EvalSite, jp_data_dir: Any
) -> None:
    await record_search(terax_api, site, "audited")  # types "apple" as {{query}}
    await terax_api(
        "browser/tabs/audited/save",
        method="POST",
        body={"name": "catalog-search", "side_effect": "read_only"},
    )
    folder = jp_data_dir / "terax" / "browser" / "audit"
    records = {
        path.name.split("-")[0]: [json.loads(line) for line in path.read_text().splitlines()]
        for path in folder.glob("*.jsonl")
    }
    recorded = records["record"]
    assert [r["event"] for r in recorded] == ["recording_started"] + ["step_recorded"] * 3
    assert [r["action"]["kind"] for r in recorded[1:]] == ["navigate", "type", "click"]
    assert recorded[2]["action"]["value"] == "{{query}}"
    [saved] = records["save"]
    assert saved["event"] == "workflow_saved"
    assert (saved["workflow"], saved["workflow_version"], saved["steps"]) == (
        "catalog-search",
        1,
        3,
    )
    server_audit = (jp_data_dir / "terax" / "audit.jsonl").read_text()
    actions = [json.loads(line)["action"] for line in server_audit.splitlines()]
    assert "browser.workflow.save" in actions
    everything = server_audit + "".join(p.read_text() for p in folder.glob("*.jsonl"))
    assert "apple" not in everything
