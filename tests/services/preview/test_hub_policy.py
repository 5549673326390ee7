"""The preview under a JupyterHub's Content-Security-Policy (issue 17, item 1).

A hub's single-user server puts ``frame-ancestors 'none'`` into ``tornado_settings['headers']``
(``jupyterhub/singleuser/extension.py``; ``mixins.py`` adds a ``report-uri``), and Jupyter's
``set_default_headers`` puts that on every answer. Kept on a preview answer it blanks the
preview tab. These tests run a real Jupyter server configured as the hub configures it and a
real dev server on 127.0.0.1, and look at what the browser would get: the preview answers
may be framed by Lab's origin only, while Lab's and Terax's own pages keep the hub's policy.
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

import pytest
from jupyterhub.singleuser.extension import JupyterHubSingleUser

from terax_jupyter.services.preview.headers import SANDBOX

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .conftest import Upstream

    Fetch = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url

# What jupyterhub-singleuser 6.1.1 sets (mixins.py, with the hub's report URI).
HUB_POLICY = "frame-ancestors 'none';report-uri /hub/security/csp-report"
PORTAL = "https://portal.example"


@pytest.fixture
def operator_policy() -> str:
    return HUB_POLICY


@pytest.fixture
def terax_config(operator_policy: str) -> dict[str, Any]:
    # As the hub does it: ServerApp.tornado_settings['headers'], which Jupyter's handlers
    # apply in set_default_headers.
    headers = {"Content-Security-Policy": operator_policy, "X-JupyterHub-Version": "6.1.1"}
    # A hub's server listens for the hub's proxy and answers the hub's public host name.
    # (It also trusts X-Forwarded-Proto, which makes request.protocol "https" behind TLS;
    # the test server has no xheaders, so that case is tested on frame_ancestors itself.)
    return {"ServerApp": {"tornado_settings": {"headers": headers}, "allow_remote_access": True}}


def policies(response: Any) -> list[str]:
    return list(response.headers.get_list("Content-Security-Policy"))


def test_the_hub_sets_frame_ancestors_none_as_these_tests_do() -> None:
    """The premise, read from the installed JupyterHub: its single-user extension puts
    ``frame-ancestors 'none'`` into the server's default headers."""
    source = inspect.getsource(JupyterHubSingleUser.initialize)
    assert 'headers.setdefault("Content-Security-Policy", "frame-ancestors \'none\'")' in source


async def test_a_preview_page_is_framable_by_lab_under_the_hub_policy(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    jp_http_port: int,
) -> None:
    prefix = await capability(upstream.port)
    # The dev server's page forbids framing itself (X-Frame-Options, frame-ancestors 'none').
    page = await capability_fetch(prefix, "framed", headers={"Sec-Fetch-Dest": "iframe"})
    assert page.code == 200
    assert page.body == b"<p>framed</p>"
    assert "X-Frame-Options" not in page.headers
    assert page.headers["X-JupyterHub-Version"] == "6.1.1"  # the hub's other headers stand
    assert sorted(policies(page)) == sorted(
        [
            # Framable by Lab's page (the origin the request came to) and nothing else.
            f"{SANDBOX}; frame-ancestors http://127.0.0.1:{jp_http_port}",
            # The dev server's own policy, without its frame-ancestors.
            "default-src 'self'",
        ]
    )


async def test_the_ancestor_is_the_origin_the_browser_asked(
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
) -> None:
    """Behind the hub's proxy the Host is the hub's public one: that is Lab's origin."""
    prefix = await capability(upstream.port)
    page = await capability_fetch(prefix, "page", headers={"Host": "hub.example:8443"})
    assert policies(page) == [f"{SANDBOX}; frame-ancestors http://hub.example:8443"]


async def test_the_token_route_and_errors_are_framable_by_lab_too(
    proxy_fetch: Fetch,
    capability: Callable[[int], Awaitable[str]],
    capability_fetch: Fetch,
    upstream: Upstream,
    jp_http_port: int,
) -> None:
    lab_only = f"frame-ancestors http://127.0.0.1:{jp_http_port}"
    proxied = await proxy_fetch(upstream.port, "page")
    assert policies(proxied) == [f"{SANDBOX}; {lab_only}"]
    # An error page (the dev server is gone) shows in the tab as well.
    prefix = await capability(upstream.port)
    missing = await capability_fetch(
        prefix.replace(f"/{upstream.port}~", "/1~"), "", raise_error=False
    )
    assert missing.code == 403  # the capability is for another target
    gone = await proxy_fetch(
        "65533", "", raise_error=False, headers={"Accept": "text/html", "Sec-Fetch-Dest": "iframe"}
    )
    assert gone.code == 502  # nothing listening
    for response in (missing, gone):
        [policy] = policies(response)
        assert policy.startswith("sandbox; default-src 'none'")
        assert policy.endswith(f"; {lab_only}")
        assert "frame-ancestors 'none'" not in policy


async def test_lab_and_terax_pages_keep_the_hub_policy(
    jp_fetch: Callable[..., Awaitable[Any]],
) -> None:
    """Only preview answers get their own policy; Jupyter's and Terax's API stay unframable."""
    status = await jp_fetch("api", "status")
    assert policies(status)[0].startswith(HUB_POLICY)
    servers = await jp_fetch("terax", "api", "preview", "servers")
    assert json.loads(servers.body) is not None
    assert policies(servers)[0].startswith(HUB_POLICY)
    issued = await jp_fetch(
        "terax",
        "api",
        "preview",
        "capabilities",
        method="POST",
        body=json.dumps({"target": "5173"}),
    )
    assert policies(issued)[0].startswith(HUB_POLICY)


class TestAnEmbeddedLab:
    """An operator who lets a portal frame Lab (``frame-ancestors 'self' <portal>``): the
    preview frame has the portal as an ancestor too, so the portal is allowed there, and
    nothing wider than named origins is ever copied."""

    @pytest.fixture
    def operator_policy(self) -> str:
        return (
            f"frame-ancestors 'self' {PORTAL} https://*.example.org https: * "
            "http://127.0.0.1:9/; report-uri /hub/security/csp-report"
        )

    async def test_the_portal_may_frame_the_preview(
        self,
        capability: Callable[[int], Awaitable[str]],
        capability_fetch: Fetch,
        upstream: Upstream,
        jp_http_port: int,
    ) -> None:
        prefix = await capability(upstream.port)
        page = await capability_fetch(prefix, "page")
        assert policies(page) == [
            f"{SANDBOX}; frame-ancestors http://127.0.0.1:{jp_http_port} {PORTAL} "
            "http://127.0.0.1:9"
        ]
