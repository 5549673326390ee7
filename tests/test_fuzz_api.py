"""Fuzz every REST operation of a live ``jupyter server`` from its own OpenAPI document.

No input may cause a 5xx, and every response must be one the document describes.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Verbosity, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from terax_jupyter.pytest_plugin import BASE_URLS
from tests.live_server import LiveTerax, start_live_server

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.live

WEBSOCKET_PATH = "/terax/api/fs/watch"
# A handshake-only WebSocket with no parameters, as the watch: a plain GET gets tornado's 400.
LIVE_NOTEBOOKS_PATH = "/terax/api/kernels/live"
# The preview proxy answers whatever the previewed server answers (and 502 when nothing
# listens): it is no API to hold to the document. tests/services/preview fuzzes its refusals.
PASS_THROUGH_PREFIX = "/terax/proxy/"
# Likewise, a browser tab shows whatever page it was sent to: a page that fails to load is a
# 502 of that page, not of the API. tests/services/browser/test_api.py covers its refusals.
BROWSER_TAB_ACTIONS = "/terax/api/browser/tabs/{tab}/{action}"
# No 5xx, and every answer is one the document describes (status, content type, schema).
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# Examples per operation: data that fits the document, and data that does not. Behind the
# hub's prefix the same handlers answer: fewer examples there prove the routing and the URLs.
EXAMPLES = {GenerationMode.POSITIVE: 25, GenerationMode.NEGATIVE: 15}
PREFIXED_EXAMPLES = {GenerationMode.POSITIVE: 8, GenerationMode.NEGATIVE: 6}


def sample_project(root: Path) -> None:
    files = {
        "src/app.py": "def main():\n    print('hello terax')\n",
        "README.md": "# Demo\n",
        "docs/guide.md": "hello guide\n",
        ".env": "API_TOKEN=never-read-me\n",
        "image.bin": "\0\1\2",
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)


@pytest.fixture(scope="module", params=BASE_URLS, ids=["root", "hub"])
def live_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveTerax]:
    home = tmp_path_factory.mktemp("fuzz-home")
    root = home / "workspace"
    root.mkdir()
    sample_project(root)
    server = start_live_server(home, root, str(request.param))
    yield server
    server.stop()


def fuzz(operation: Any, server: LiveTerax, mode: GenerationMode, examples: int) -> Counter[int]:
    """Run one operation's generated cases; a server error fails with the shrunk case."""
    statuses: Counter[int] = Counter()

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        # Negative cases may mangle the token header; the fuzzing is of the API behind it.
        case.headers = {**(case.headers or {}), **server.headers}
        response = case.call(base_url=server.url.rstrip("/"), timeout=30)
        statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    run()
    return statuses


@pytest.mark.parametrize("mode", list(GenerationMode), ids=str)
def test_no_server_errors(live_server: LiveTerax, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(
        live_server.url + "terax/api/openapi.json", headers=live_server.headers
    )
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {operation.label for operation in operations}
    assert f"GET {WEBSOCKET_PATH}" in labels
    assert len(labels) >= 14
    statuses = {}
    prefixed = live_server.url.rstrip("/").count("/") > 2
    examples = (PREFIXED_EXAMPLES if prefixed else EXAMPLES)[mode]
    try:
        for operation in operations:
            if operation.path not in (
                WEBSOCKET_PATH,
                LIVE_NOTEBOOKS_PATH,
                BROWSER_TAB_ACTIONS,
            ) and not operation.path.startswith(PASS_THROUGH_PREFIX):
                statuses[operation.label] = fuzz(operation, live_server, mode, examples)
    except BaseException:
        print(f"server log:\n{live_server.log_tail()}")
        raise
    # Not a vacuous pass: every operation was reached, and the API answered past the auth layer.
    assert all(sum(counts.values()) >= 5 for counts in statuses.values()), statuses
    succeeded = {label for label, counts in statuses.items() if any(200 <= s < 300 for s in counts)}
    assert {
        "GET /terax/api/info",
        "GET /terax/api/workspace/roots",
        "GET /terax/api/fs/list",
    } <= succeeded
    assert len(succeeded) >= 6, statuses


def test_unauthenticated_fuzz_target_refuses(live_server: LiveTerax) -> None:
    request = urllib.request.Request(live_server.url + "terax/api/openapi.json")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 403
