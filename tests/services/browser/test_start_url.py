"""A workflow that starts on a url replay refuses (a query string) is refused for that reason,
through the REST API as through the agent: ``non_cacheable`` naming the query, not
``no_start_page`` (the page was opened)."""

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


async def test_a_start_url_with_a_query_string_is_refused_as_not_replayable(
    terax_api: Api, site: EvalSite
) -> None:
    page = await terax_api(
        "browser/tabs/q-1/open", method="POST", body={"url": site.url("/results?q=apple")}
    )
    assert 'heading "Results for apple"' in page["text"]
    assert page["cacheable"] is False
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(
            "browser/tabs/q-1/save",
            method="POST",
            body={"name": "apple-results", "side_effect": "read_only"},
        )
    error = error_of(caught.value)
    assert caught.value.code == 409, error
    assert error["reason"] == "non_cacheable"
    assert "query string" in error["message"]
    assert "apple" not in error["message"]  # the url is not repeated: a query may hold a token
    assert (await terax_api("browser/workflows"))["workflows"] == []

    # Without the query the same page saves (the refusal was about the query only).
    await terax_api("browser/tabs/q-1/open", method="POST", body={"url": site.url("/search")})
    saved = await terax_api(
        "browser/tabs/q-1/save",
        method="POST",
        body={"name": "search-page", "side_effect": "read_only"},
    )
    assert saved["name"] == "search-page"
    assert [step["kind"] for step in saved["steps"]] == ["navigate"]
