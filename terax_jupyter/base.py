"""Handler base classes: typed access to the services, request parsing, one error format."""

from __future__ import annotations

import json
import weakref
from http.client import responses
from typing import TYPE_CHECKING, Any, overload

from jupyter_core.utils import ensure_async
from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketHandler

from terax_jupyter.exceptions import InvalidRequest, TeraxError, Unavailable, http_status_for

if TYPE_CHECKING:
    from terax_jupyter.context import TeraxContext

    # The mixins below are mixed into jupyter_server's handlers: a checker reads them as one.
    _Handler = JupyterHandler
else:
    _Handler = object

SETTINGS_KEY = "terax"
# The tornado setting that holds the server's ConnectionSlots (set by app.py).
CONNECTIONS_KEY = "terax_connections"
DEFAULT_WEBSOCKETS_PER_USER = 128
# Which Terax client sends a request (the MCP bridge says "mcp").
CLIENT_HEADER = "X-Terax-Client"

_MISSING: Any = object()


class TeraxMixin:
    """Typed access to the objects ``app.py`` put in the tornado settings."""

    settings: dict[str, Any]

    @property
    def terax(self) -> TeraxContext:
        return self.settings[SETTINGS_KEY]


class JsonErrorsMixin(TeraxMixin, _Handler):
    """Errors as ``{"message", "reason"}`` with the status the error tree maps them to."""

    def send_error(self, status_code: int = 500, **kwargs: Any) -> None:
        error = _terax_error(kwargs.get("exc_info"))
        if error is not None:
            status_code = http_status_for(error)
        super().send_error(status_code, **kwargs)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, TeraxError) and http_status_for(value) < 500:
            self.log.info(
                "%s %s: %s", http_status_for(value), self._request_summary(), value.message
            )
            return
        super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        exc_info = kwargs.get("exc_info")
        error = exc_info[1] if exc_info else None
        if isinstance(error, TeraxError):
            reply = {
                "message": self.terax.security.redactor.redact(error.message),
                "reason": error.reason,
            }
        elif isinstance(error, web.HTTPError):
            message = (
                error.log_message % error.args
                if error.log_message and error.args
                else error.log_message
            )
            reply = {
                "message": self.terax.security.redactor.redact(
                    message or responses.get(status_code, "Error")
                ),
                "reason": _reason_code(error.reason or responses.get(status_code, "error")),
            }
        else:
            # Never echo an unexpected exception to the client: it may carry paths or secrets.
            reply = {
                "message": "The server hit an unexpected error; the server log has the details.",
                "reason": "internal_error",
            }
        self.finish(json.dumps(reply))


class TeraxAPIHandler(JsonErrorsMixin, APIHandler):
    """Base of every REST handler: JSON in, JSON out, errors as ``{"message", "reason"}``."""

    auth_resource = "terax"

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if self.request.headers.get(CLIENT_HEADER, "") == "mcp":
            # Terax's MCP bridge says who it is; the switch also stops it at its start.
            self.terax.security.policy.require("mcp")

    # -- request parsing -------------------------------------------------------------

    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object, or InvalidRequest."""
        raw = self.request.body
        if not raw:
            raise InvalidRequest("The request needs a JSON body.", reason="missing_body")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise InvalidRequest(
                "The request body is not valid JSON.", reason="invalid_json"
            ) from None
        if not isinstance(body, dict):
            raise InvalidRequest("The request body must be a JSON object.", reason="invalid_json")
        return body

    @overload
    def string_argument(self, name: str) -> str: ...
    @overload
    def string_argument(self, name: str, default: str) -> str: ...
    @overload
    def string_argument(self, name: str, default: None) -> str | None: ...

    def string_argument(self, name: str, default: str | None = _MISSING) -> str | None:
        """A query parameter exactly as sent (``default`` when absent; required without one).

        Not ``get_query_argument``: it strips spaces (a search for " x" is not one for "x")
        and turns control characters into spaces, hiding them from the path checks.
        """
        values = self.request.query_arguments.get(name)
        if not values:
            if default is _MISSING:
                raise InvalidRequest(
                    f"The query parameter '{name}' is required.", reason="missing_parameter"
                )
            return default
        try:
            return values[-1].decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidRequest(
                f"'{name}' is not valid UTF-8.", reason="invalid_parameter"
            ) from None

    def bool_argument(self, name: str, default: bool = False) -> bool:
        value = self.get_query_argument(name, None)
        if value is None:
            return default
        return parse_bool(value, name)

    def int_argument(self, name: str, default: int, *, minimum: int, maximum: int) -> int:
        value = self.get_query_argument(name, None)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise InvalidRequest(
                f"'{name}' must be an integer.", reason="invalid_parameter"
            ) from None
        if not minimum <= number <= maximum:
            raise InvalidRequest(
                f"'{name}' must be between {minimum} and {maximum}.", reason="invalid_parameter"
            )
        return number

    def finish_json(self, payload: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(payload))

    @property
    def user_name(self) -> str | None:
        user = self.current_user
        return getattr(user, "username", None) or (user if isinstance(user, str) else None)


class ConnectionSlots:
    """How many of Terax's WebSockets each user has open, against a per-user limit.

    A slot is taken in the handshake, before the socket's handler allocates anything, and
    given back when the socket closes or the handshake fails. The count lives on the event
    loop's thread only, so taking and giving back need no lock.
    """

    def __init__(self, per_user: int) -> None:
        self.per_user = per_user  # 0 or less: no limit
        self._open: dict[str, int] = {}

    def take(self, user: str) -> bool:
        count = self._open.get(user, 0)
        if self.per_user > 0 and count >= self.per_user:
            return False
        self._open[user] = count + 1
        return True

    def release(self, user: str) -> None:
        count = self._open.get(user, 0) - 1
        if count > 0:
            self._open[user] = count
        else:
            self._open.pop(user, None)

    def count(self, user: str) -> int:
        return self._open.get(user, 0)


class TeraxWebSocketHandler(JsonErrorsMixin, WebSocketMixin, WebSocketHandler, JupyterHandler):
    """Base of every WebSocket: authenticated, origin-checked, ``execute`` on its resource,
    and one of the user's connection slots (``TeraxApp.max_websockets_per_user``)."""

    auth_resource = "terax"
    # Gives the slot back once: on close, on a failed handshake, or (a path tornado does
    # not report, such as ``open()`` raising) when the handler is collected.
    _slot: weakref.finalize[Any, Any] | None = None

    def set_default_headers(self) -> None:
        """WebSockets take no CSP or cache headers (JupyterHandler sets them)."""

    async def authorize_execute(self) -> None:
        """Call first in ``get()``: the handshake needs ``execute`` on this resource and a
        free connection slot of the user's (else 503 ``too_many_connections``)."""
        user = self.current_user
        if user is None:
            raise web.HTTPError(403, "Authentication required.")
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, user, "execute", self.auth_resource)
        )
        if not allowed:
            raise web.HTTPError(403, f"Not authorized to use {self.auth_resource}.")
        self._take_slot(user)

    def _take_slot(self, user: Any) -> None:
        if self._slot is not None:
            return
        slots = self.connection_slots
        name = self._slot_owner(user)
        if not slots.take(name):
            raise Unavailable(
                f"You have {slots.count(name)} Terax connections open (terminal views, file "
                "watches, agent panels, previews), the most one user may have at once. Close "
                "some tabs or views, or ask the administrator to raise "
                "TeraxApp.max_websockets_per_user.",
                reason="too_many_connections",
            )
        self._slot = weakref.finalize(self, slots.release, name)

    def _slot_owner(self, user: Any) -> str:
        """Whose allowance a socket counts against: the user's, by username."""
        if type(self.identity_provider) in (IdentityProvider, PasswordIdentityProvider):
            # Jupyter's own token or password login makes up a new random user at each
            # login (or each request with the token in a header) for the server's one
            # owner: all of them share one allowance, or the cap would be no cap.
            return "\0token"
        return getattr(user, "username", None) or str(user)

    @property
    def connection_slots(self) -> ConnectionSlots:
        slots = self.settings.get(CONNECTIONS_KEY)
        if slots is None:
            slots = self.settings[CONNECTIONS_KEY] = ConnectionSlots(DEFAULT_WEBSOCKETS_PER_USER)
        return slots

    def _release_slot(self) -> None:
        if self._slot is not None:
            self._slot()  # a finalizer runs at most once

    def on_finish(self) -> None:
        # 101 is the handshake done: the slot is the socket's until it closes.
        if self.get_status() != 101:
            self._release_slot()
        super().on_finish()

    def on_connection_close(self) -> None:
        try:
            super().on_connection_close()
        finally:
            self._release_slot()
            # Jupyter's keep-alive timer would hold the closed handler (and all it refers
            # to) until its next tick; nothing is left to ping.
            ping = getattr(self, "ping_callback", None)
            if ping is not None:
                ping.stop()
                self.ping_callback = None

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, TeraxError) and value.reason == "too_many_connections":
            self.log.warning("%s refused: %s", self._request_summary(), value.message)
            return
        super().log_exception(typ, value, tb)

    def send_json(self, payload: Any) -> None:
        if self.ws_connection is not None and not self.ws_connection.is_closing():
            self.write_message(json.dumps(payload))


def parse_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise InvalidRequest(f"'{name}' must be true or false.", reason="invalid_parameter")


def _terax_error(exc_info: Any) -> TeraxError | None:
    if exc_info and isinstance(exc_info[1], TeraxError):
        return exc_info[1]
    return None


def _reason_code(text: str) -> str:
    return "_".join(text.lower().split()) or "error"
