"""Every handler is authenticated and authorized, and the checks hold on a live server."""

from __future__ import annotations

import inspect
import json
import re
import warnings
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import JupyterServerAuthWarning
from tornado import web
from tornado.httpclient import HTTPClientError
from tornado.websocket import WebSocketHandler

from terax_jupyter.app import HANDLER_MODULES
from terax_jupyter.base import TeraxWebSocketHandler
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.services.preview.proxy import CapabilityProxyHandler

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator
    from pathlib import Path

# Inherited verbs that are not Terax's, with the reason they may skip authentication.
INHERITED_ALLOWED = {
    (APIHandler, "options"): "jupyter_server's CORS preflight: headers only, no data",
}
# Handlers whose credential is not Jupyter's, with the reason. Their every verb is
# @allow_unauthenticated (so Jupyter lets the request in) over the check of their own
# credential, which runs before anything else.
OWN_CREDENTIAL = {
    CapabilityProxyHandler: (
        "capability_required",
        "a previewed page runs sandboxed and sends no cookies: the capability in its path is "
        "its credential, for one dev server, and Jupyter's API does not accept it",
    ),
}


def declared_handlers() -> list[tuple[str, type[web.RequestHandler]]]:
    return [
        (pattern, handler)
        for module in HANDLER_MODULES
        for pattern, handler, *_ in module.default_handlers
    ]


def registered_handlers(serverapp: Any) -> list[tuple[str, type[web.RequestHandler]]]:
    """The /terax/ rules the running server routes, with the base URL taken off."""
    prefix = serverapp.base_url + "terax/"
    found = []

    def walk(router: Any) -> None:
        for rule in router.rules:
            if hasattr(rule.target, "rules"):
                walk(rule.target)
                continue
            regex = getattr(rule.matcher, "regex", None)
            if regex is not None and regex.pattern.startswith(prefix):
                found.append(
                    ("/" + regex.pattern[len(serverapp.base_url) :].removesuffix("$"), rule.target)
                )

    walk(serverapp.web_app.default_router)
    return found


def implemented_verbs(handler: type[web.RequestHandler]) -> Iterator[tuple[str, Any]]:
    for verb in handler.SUPPORTED_METHODS:
        method = getattr(handler, verb.lower())
        if method is not web.RequestHandler._unimplemented_method:
            yield verb, method


def defined_by_terax(handler: type, name: str) -> bool:
    owner = next(cls for cls in handler.__mro__ if name in vars(cls))
    return owner.__module__.startswith("terax_jupyter.")


def test_declared_handlers_are_all_registered(jp_serverapp: Any) -> None:
    declared = declared_handlers()
    assert declared, "no handler modules"
    assert sorted(registered_handlers(jp_serverapp), key=repr) == sorted(declared, key=repr)


@pytest.mark.parametrize(
    ("pattern", "handler"), declared_handlers(), ids=lambda value: getattr(value, "__name__", value)
)
def test_every_verb_is_authenticated_then_authorized(
    pattern: str, handler: type[web.RequestHandler]
) -> None:
    assert handler.auth_resource.startswith("terax."), handler  # type: ignore[attr-defined]
    verbs = dict(implemented_verbs(handler))
    terax_verbs = {
        verb: method for verb, method in verbs.items() if defined_by_terax(handler, verb.lower())
    }
    assert terax_verbs, f"{pattern} implements no verb"
    for verb in verbs:
        if verb not in terax_verbs:
            owner = next(cls for cls in handler.__mro__ if verb.lower() in vars(cls))
            assert (owner, verb.lower()) in INHERITED_ALLOWED, (
                f"{handler.__name__}.{verb} comes from {owner}"
            )
    if handler in OWN_CREDENTIAL:
        check, _why = OWN_CREDENTIAL[handler]
        for verb, method in terax_verbs.items():
            assert method.__code__.co_qualname.startswith("allow_unauthenticated"), verb
            assert method.__wrapped__.__code__.co_qualname.startswith(check), verb
            inner = method.__wrapped__.__wrapped__
            assert inner.__code__.co_qualname == f"{handler.__name__}.{verb.lower()}", verb
        return
    if issubclass(handler, WebSocketHandler):
        assert issubclass(handler, TeraxWebSocketHandler)
        assert list(terax_verbs) == ["GET"], "a WebSocket only answers the handshake"
        get = terax_verbs["GET"]
        assert get.__code__.co_qualname.startswith("ws_authenticated"), get.__code__.co_qualname
        # The handshake asks for "execute" before anything else happens.
        inner = get.__wrapped__
        assert "authorize_execute" in inner.__code__.co_names
        source = inspect.getsource(inner)
        body = source[source.index("async def get") :]
        assert body.splitlines()[1].strip() == "await self.authorize_execute()"
        return
    for verb, method in terax_verbs.items():
        assert method.__code__.co_qualname.startswith("authenticated"), (
            f"{handler.__name__}.{verb}: outer"
        )
        inner = method.__wrapped__
        assert inner.__code__.co_qualname.startswith("authorized"), (
            f"{handler.__name__}.{verb}: inner"
        )
        # @authorized: the action comes from the HTTP verb, or is named (the proxy: execute).
        assert inner.__wrapped__.__code__.co_qualname == f"{handler.__name__}.{verb.lower()}"


@pytest.mark.parametrize("module", HANDLER_MODULES, ids=lambda module: module.__name__)
def test_each_area_has_one_resource(module: Any) -> None:
    assert module.AUTH_RESOURCE.startswith("terax.")
    resources = {handler.auth_resource for _, handler, *_ in module.default_handlers}
    assert resources == {module.AUTH_RESOURCE}


def test_areas_do_not_share_a_resource() -> None:
    # An area (services/<area>/) may split its handlers over modules; they share its resource.
    areas = {module.__name__.rsplit(".", 1)[0]: module.AUTH_RESOURCE for module in HANDLER_MODULES}
    resources = list(areas.values())
    assert len(resources) == len(set(resources))
    for module in HANDLER_MODULES:
        assert areas[module.__name__.rsplit(".", 1)[0]] == module.AUTH_RESOURCE


# -- on a live server -----------------------------------------------------------------------------


class DenyingAuthorizer(Authorizer):
    """Allows everything except the (action, resource) pairs in ``denied``."""

    denied: frozenset[tuple[str, str]] = frozenset()

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return (action, resource) not in self.denied and (action, "*") not in self.denied


class NoExecute(DenyingAuthorizer):
    denied = frozenset({("execute", "*")})


class NoFileWrites(DenyingAuthorizer):
    denied = frozenset({("write", "terax.fs")})


def unauthenticated_request(method: str) -> dict[str, Any]:
    """No token, but a matching XSRF cookie and header: only the authentication can refuse."""
    body = json.dumps({"path": "README.md", "new_path": "moved.md", "content": "x"})
    return {
        "method": method,
        "headers": {"Authorization": "", "Cookie": "_xsrf=probe", "X-XSRFToken": "probe"},
        "body": body if method in ("POST", "PUT", "PATCH") else None,
        "allow_nonstandard_methods": True,
        "follow_redirects": False,
    }


# A value for each named group of a route, so that every route can be requested.
ROUTE_SAMPLES = {
    "session_id": "0123456789ab",
    "block_id": "1",
    "name": "OPENAI_API_KEY",
    "approval_id": "0123456789ab",
    "provider_id": "openai",
    "port": "8000",
    "capability": "not-a-capability",
    "path": "index.html",
    "workflow": "sign-in",
    "tab": "t1",
    "action": "open",
    "shot": "0123456789ab",
}


def concrete_url(pattern: str) -> str:
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: ROUTE_SAMPLES[m.group(1)], pattern)


async def test_no_token_no_access(
    workspace: Path, jp_serverapp: Any, jp_fetch: Callable[..., Awaitable[Any]], jp_ws_fetch: Any
) -> None:
    checked = 0
    for pattern, handler in registered_handlers(jp_serverapp):
        parts = concrete_url(pattern).strip("/").split("/")
        for verb, _ in implemented_verbs(handler):
            if verb == "OPTIONS":
                continue
            if issubclass(handler, WebSocketHandler):
                with pytest.raises(HTTPClientError) as caught:
                    await jp_ws_fetch(*parts, headers={"Authorization": ""})
                assert caught.value.code == 403, pattern
            else:
                with pytest.raises(HTTPClientError) as caught:
                    await jp_fetch(
                        *parts, params={"path": "README.md"}, **unauthenticated_request(verb)
                    )
                assert caught.value.code == 403, (verb, pattern)
                if verb != "HEAD":  # an answer to HEAD has no body (the preview proxy takes HEAD)
                    body = error_of(caught.value)
                    assert set(body) == {"message", "reason"}
                    assert "xsrf" not in body["message"].lower(), body
            checked += 1
    assert checked >= 14
    assert (workspace / "README.md").read_text() == "# Demo\n\nhello readme\n"
    assert not (workspace / "moved.md").exists()


@pytest.mark.parametrize("terax_config", [{"ServerApp": {"authorizer_class": NoExecute}}])
async def test_websocket_needs_execute(workspace: Path, jp_fetch: Any, jp_ws_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch("terax", "api", "fs", "watch")
    assert caught.value.code == 403
    response = await jp_fetch("terax", "api", "fs", "file", params={"path": "README.md"})
    assert json.loads(response.body)["content"].startswith("# Demo")


@pytest.mark.parametrize("terax_config", [{"ServerApp": {"authorizer_class": NoFileWrites}}])
async def test_denied_action_is_403_on_rest(workspace: Path, terax_api: Any) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await terax_api(
            "fs/file", method="PUT", body={"path": "README.md", "content": "x", "overwrite": True}
        )
    assert caught.value.code == 403
    assert set(error_of(caught.value)) == {"message", "reason"}
    with pytest.raises(HTTPClientError) as caught:
        await terax_api("fs/file", method="DELETE", params={"path": "README.md"})
    assert caught.value.code == 403
    assert (workspace / "README.md").read_text() == "# Demo\n\nhello readme\n"
    assert (await terax_api("fs/file", params={"path": "README.md"}))["content"].startswith(
        "# Demo"
    )
    # Another area's writes are a different resource.
    await terax_api("workspace/roots")


async def test_websocket_checks_the_origin(
    workspace: Path, jp_fetch: Any, jp_ws_fetch: Any, jp_serverapp: Any, jp_http_port: int
) -> None:
    # A token in a header cannot be forged cross-site, so the server skips the origin check
    # for it; the browser's way in is the login cookie, and that is what an origin guards.
    token = jp_serverapp.identity_provider.token
    login = await jp_fetch("api", "status", params={"token": token}, headers={"Authorization": ""})
    cookie = "; ".join(c.split(";", 1)[0] for c in login.headers.get_list("Set-Cookie"))
    assert cookie
    # The cookie is named after the host it was set for; the WebSocket must present that host.
    host = f"127.0.0.1:{jp_http_port}"
    with_cookie = {"Authorization": "", "Cookie": cookie, "Host": host}
    same_origin = await jp_ws_fetch(
        "terax", "api", "fs", "watch", headers={**with_cookie, "Origin": f"http://{host}"}
    )
    same_origin.write_message(json.dumps({"op": "subscribe", "id": "a", "path": "src"}))
    assert json.loads(await same_origin.read_message())["type"] == "subscribed"
    same_origin.close()
    for origin in ("http://evil.example", f"https://{host}.evil.example", "null"):
        with pytest.raises(HTTPClientError) as caught:
            await jp_ws_fetch(
                "terax", "api", "fs", "watch", headers={**with_cookie, "Origin": origin}
            )
        assert caught.value.code == 403, origin
    with pytest.raises(HTTPClientError) as caught:
        await jp_ws_fetch(
            "terax",
            "api",
            "fs",
            "watch",
            headers={"Authorization": "", "Host": host, "Origin": f"http://{host}"},
        )
    assert caught.value.code == 403


@pytest.mark.parametrize("terax_config", [{"ServerApp": {"allow_unauthenticated_access": False}}])
def test_strict_server_raises_no_auth_warning(
    jp_configurable_serverapp: Callable[..., Any], jp_server_config: dict[str, Any]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app = jp_configurable_serverapp(config=jp_server_config)
    assert app.allow_unauthenticated_access is False
    assert "terax_jupyter" in app.extension_manager.extensions
    assert [
        str(w.message) for w in caught if issubclass(w.category, JupyterServerAuthWarning)
    ] == []

    # The check is real: a handler without decorators is reported.
    class Careless(APIHandler):
        def get(self) -> None:
            self.finish("{}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        app.web_app.add_handlers(".*$", [(app.base_url + "careless", Careless)])
    assert [w for w in caught if issubclass(w.category, JupyterServerAuthWarning)]
