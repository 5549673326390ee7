"""Through the server: a provider base URL whose host is no valid name is a 400, not a 500."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from tests.services.ai.conftest import Api


@pytest.mark.parametrize(
    "url",
    [
        "https://xn--api-openai.com/v1",  # an "xn--" label that is no valid punycode
        "https://xn--.example.com/v1",  # an empty one
        "https://ex\u05cf.com/v1",  # a code point IDNA does not allow
    ],
)
async def test_a_base_url_with_an_invalid_host_name_is_refused(terax_api: Api, url: str) -> None:
    before = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}["openai"]
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("ai/providers/openai", method="PUT", body={"base_url": url})
    assert caught.value.code == 400
    assert error_of(caught.value)["reason"] == "invalid_url"
    after = {p["id"]: p for p in (await terax_api("ai/providers"))["providers"]}["openai"]
    assert after == before
