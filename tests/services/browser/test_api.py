"""The browser REST API: drive a tab, save a workflow, replay it with no model, refusals as
409 with their reason, destructive workflows refused here, tabs listed and closed."""

from __future__ import annotations

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

    result = await terax_api(
        "browser/workflows/catalog-search/run", method="POST", body={"inputs": {"query": "pear"}}
    )
    assert result["model_calls"] == 0
    assert result["steps_replayed"] == 3

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
