"""The served OpenAPI document: valid OpenAPI 3.0, and the same API the server routes."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest
from schemathesis.specs.openapi.definitions import OPENAPI_30
from tornado import web
from tornado.httpclient import HTTPClientError

from terax_jupyter.openapi import openapi_document

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.every_base_url

HTTP_VERBS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


async def served_document(jp_fetch: Any) -> dict[str, Any]:
    response = await jp_fetch("terax", "api", "openapi.json")
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.body)  # type: ignore[no-any-return]


def served_routes(serverapp: Any) -> dict[str, set[str]]:
    """Route -> verbs Terax implements (inherited CORS preflight left out), base URL taken off."""
    prefix = serverapp.base_url + "terax/"
    routes: dict[str, set[str]] = {}

    def walk(router: Any) -> None:
        for rule in router.rules:
            if hasattr(rule.target, "rules"):
                walk(rule.target)
                continue
            regex = getattr(rule.matcher, "regex", None)
            if regex is None or not regex.pattern.startswith(prefix):
                continue
            path = "/" + regex.pattern[len(serverapp.base_url) :].removesuffix("$")
            # Named groups are the document's path parameters: (?P<session_id>...) -> {session_id}
            path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)
            handler = rule.target
            routes[path] = {
                verb.lower()
                for verb in handler.SUPPORTED_METHODS
                if getattr(handler, verb.lower()) is not web.RequestHandler._unimplemented_method
                and next(
                    c for c in handler.__mro__ if verb.lower() in vars(c)
                ).__module__.startswith("terax_jupyter.")
            }

    walk(serverapp.web_app.default_router)
    return routes


def references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part]
    return node


# Path-item fields that are not operations (OpenAPI 3.0, "Path Item Object").
PATH_ITEM_FIELDS = frozenset({"parameters", "summary", "description", "servers", "$ref"})


async def test_document_is_valid_openapi_3(jp_fetch: Any) -> None:
    document = await served_document(jp_fetch)
    errors = sorted(jsonschema.Draft4Validator(OPENAPI_30).iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    assert document["openapi"].startswith("3.0.")
    for ref in set(references(document)):
        assert resolve(document, ref) is not None, ref
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft4Validator.check_schema(schema)
    for path, item in document["paths"].items():
        for verb, operation in item.items():
            if verb in PATH_ITEM_FIELDS:
                continue
            assert verb in HTTP_VERBS, (path, verb)
            assert operation["responses"], (path, verb)
            assert operation.get("summary"), (path, verb)
            success = [code for code in operation["responses"] if code.startswith(("1", "2"))]
            assert success, (path, verb)


async def test_document_matches_the_routes(jp_fetch: Any, jp_serverapp: Any) -> None:
    document = await served_document(jp_fetch)
    served = served_routes(jp_serverapp)
    documented = {
        path: {verb for verb in item if verb in HTTP_VERBS}
        for path, item in document["paths"].items()
    }
    assert served, "no /terax/ routes"
    assert sorted(served) == sorted(documented), "routes and documented paths differ"
    for path, verbs in served.items():
        assert verbs == documented[path], path


async def test_document_names_the_base_url_and_the_auth(jp_fetch: Any, jp_base_url: str) -> None:
    document = await served_document(jp_fetch)
    assert document["servers"] == [{"url": jp_base_url.rstrip("/") or "/"}]
    assert document["security"] == [{"token": []}]
    scheme = document["components"]["securitySchemes"]["token"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", "Authorization")
    assert document == openapi_document(jp_base_url)


async def test_error_responses_share_one_schema(jp_fetch: Any) -> None:
    document = await served_document(jp_fetch)
    error = document["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"message", "reason"}
    for item in document["paths"].values():
        for verb, operation in item.items():
            if verb in PATH_ITEM_FIELDS:
                continue
            for code, response in operation["responses"].items():
                if code.startswith(("4", "5")):
                    resolved = (
                        resolve(document, response["$ref"]) if "$ref" in response else response
                    )
                    schema = resolved["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/Error"}


async def test_document_needs_authentication(jp_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("terax", "api", "openapi.json", headers={"Authorization": ""})
    assert caught.value.code == 403
