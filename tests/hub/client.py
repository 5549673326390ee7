"""HTTP and WebSocket clients of a user's single-user server through the hub's proxy."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import websockets.sync.client
from websockets.exceptions import ConnectionClosed, InvalidStatus


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer to look at (the hub's login), not one to follow."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        return json.loads(self.text)


@dataclass(frozen=True)
class UserClient:
    """Requests to ``base`` (a server's URL, ending in /) with ``token`` (a hub API token)."""

    base: str
    token: str

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> Answer:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path.lstrip("/"),
            data=data,
            method=method,
            headers={**self._headers(), **(headers or {})},
        )
        try:
            with _OPENER.open(request, timeout=timeout) as response:
                return Answer(
                    response.status,
                    dict(response.headers),
                    response.read().decode("utf-8", "replace"),
                )
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), error.read().decode("utf-8", "replace"))

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.token:  # no token: an anonymous request (a sandboxed preview page's)
            headers["Authorization"] = f"token {self.token}"
        return headers

    def get(self, path: str) -> Answer:
        return self.request("GET", path)

    def post(self, path: str, body: Any = None) -> Answer:
        return self.request("POST", path, {} if body is None else body)

    def ws_url(self, path: str) -> str:
        return "ws" + (self.base + path.lstrip("/")).removeprefix("http")

    def websocket(self, path: str) -> websockets.sync.client.ClientConnection:
        return websockets.sync.client.connect(
            self.ws_url(path),
            additional_headers={"Authorization": f"token {self.token}"},
            open_timeout=30,
            max_size=None,
        )

    def websocket_refusal(self, path: str) -> int | None:
        """The handshake's status when it is refused, None when it opens."""
        try:
            with self.websocket(path):
                return None
        except InvalidStatus as error:
            return error.response.status_code


def read_until(connection: websockets.sync.client.ClientConnection, marker: bytes) -> bytes:
    """Terminal output until ``marker`` shows (or 30 s pass: the caller's assert says so)."""
    seen = b""
    deadline = time.monotonic() + 30
    while marker not in seen and time.monotonic() < deadline:
        try:
            frame = connection.recv(timeout=max(0.1, deadline - time.monotonic()))
        except (TimeoutError, ConnectionClosed):  # the caller's assert says what is missing
            break
        if isinstance(frame, bytes):
            seen += frame
    return seen
