"""Handler base classes: typed access to the services, request parsing, one error format."""

from __future__ import annotations

import json
from http.client import responses
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web
from tornado.websocket import WebSocketHandler

from terax_jupyter.exceptions import InvalidRequest, TeraxError, http_status_for

if TYPE_CHECKING:
    from terax_jupyter.context import TeraxContext

SETTINGS_KEY = "terax"

_MISSING: Any = object()


class TeraxMixin:
    """Typed access to the objects ``app.py`` put in the tornado settings."""

    settings: dict[str, Any]

    @property
    def terax(self) -> TeraxContext:
        return self.settings[SETTINGS_KEY]  # type: ignore[no-any-return]


class JsonErrorsMixin(TeraxMixin):
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


class TeraxAPIHandler(JsonErrorsMixin, APIHandler):  # type: ignore[misc]
    """Base of every REST handler: JSON in, JSON out, errors as ``{"message", "reason"}``."""

    auth_resource = "terax"

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

    def string_argument(self, name: str, default: str | None = _MISSING) -> str:
        """A query parameter exactly as sent.

        Not ``get_query_argument``: it strips spaces (a search for " x" is not one for "x")
        and turns control characters into spaces, hiding them from the path checks.
        """
        values = self.request.query_arguments.get(name)
        if not values:
            if default is _MISSING:
                raise InvalidRequest(
                    f"The query parameter '{name}' is required.", reason="missing_parameter"
                )
            return default  # type: ignore[return-value]
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


class TeraxWebSocketHandler(  # type: ignore[misc]
    JsonErrorsMixin, WebSocketMixin, WebSocketHandler, JupyterHandler
):
    """Base of every WebSocket: authenticated, origin-checked, ``execute`` on its resource."""

    auth_resource = "terax"

    def set_default_headers(self) -> None:
        """WebSockets take no CSP or cache headers (JupyterHandler sets them)."""

    async def authorize_execute(self) -> None:
        """Call first in ``get()``: the handshake needs ``execute`` on this resource."""
        user = self.current_user
        if user is None:
            raise web.HTTPError(403, "Authentication required.")
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, user, "execute", self.auth_resource)
        )
        if not allowed:
            raise web.HTTPError(403, f"Not authorized to use {self.auth_resource}.")

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
        return exc_info[1]  # type: ignore[no-any-return]
    return None


def _reason_code(text: str) -> str:
    return "_".join(text.lower().split()) or "error"
