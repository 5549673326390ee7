"""On a real hub, Terax terminal traffic counts as activity for jupyterhub-idle-culler
(issue 17 item 7).

The culler reads each server's ``last_activity`` from the hub API; a single-user server
reports its own (``ServerApp.web_app.last_activity()``) every JUPYTERHUB_ACTIVITY_INTERVAL
seconds. Lab's terminals count there; Terax's WebSocket traffic must too, or a user typing in a
Terax terminal for an hour is culled as idle. The hub in these tests neither polls the proxy
for activity nor rounds it (tests/hub/hub.py), so only the server's reports move it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from terax_jupyter import activity
from terax_jupyter.testing.model_stub import slow, text
from tests.hub.client import UserClient, read_until
from tests.hub.hub import ACTIVITY_INTERVAL, ADMIN_KEY

CULL_TIMEOUT = 10  # seconds without activity after which the culler stops a server

if TYPE_CHECKING:
    from terax_jupyter.testing.model_stub import ModelStub
    from tests.hub.hub import Hub


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _server_activity(hub: Hub, user: str, server: str = "") -> datetime:
    return _parse(hub.user(user)["servers"][server]["last_activity"])


def test_terminal_traffic_moves_the_hubs_last_activity(hub: Hub, bob: UserClient) -> None:
    created = bob.post("terax/api/pty/sessions", {"name": "activity"})
    assert created.status == 201, created
    session = created.json()["id"]
    try:
        with bob.websocket(f"terax/api/pty/{session}/stream") as stream:
            read_until(stream, b"$")  # the prompt: the shell is up
            # Everything HTTP is over; from here on only the WebSocket carries anything.
            time.sleep(ACTIVITY_INTERVAL + 1)
            typed_at = datetime.now(timezone.utc)
            stream.send(b"echo terax-act$((40+2))\r")
            assert b"terax-act42" in read_until(stream, b"terax-act42")
            # The server's own view (what jupyterhub-singleuser reports to the hub).
            status = bob.get("api/status?no_track_activity=1").json()
            assert _parse(status["last_activity"]) >= typed_at - timedelta(milliseconds=50)
            # And the hub's, which jupyterhub-idle-culler reads.
            deadline = time.monotonic() + 6 * ACTIVITY_INTERVAL + 10
            seen = _server_activity(hub, "hub-bob")
            while seen < typed_at and time.monotonic() < deadline:
                time.sleep(0.5)
                seen = _server_activity(hub, "hub-bob")
            assert seen >= typed_at - timedelta(milliseconds=50), (seen, typed_at)
    finally:
        bob.request("DELETE", f"terax/api/pty/sessions/{session}")


def _wait_hub_activity(hub: Hub, user: str, since: datetime, server: str = "") -> datetime:
    """The server's last_activity in the hub once it is past ``since`` (or at the deadline)."""
    deadline = time.monotonic() + 6 * ACTIVITY_INTERVAL + 10
    seen = _server_activity(hub, user, server)
    while seen <= since and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = _server_activity(hub, user, server)
    return seen


def test_an_agent_run_keeps_the_server_active(
    hub: Hub, bob: UserClient, model_stub: ModelStub
) -> None:
    # An answer that streams for about three of Terax's busy marks, with no request from here
    # while it does: only the run itself can count as activity.
    chunks = 20
    delay = 3 * activity.BUSY_EVERY_SECONDS / chunks
    model_stub.reset()
    model_stub.script([slow(text("tick " * chunks, chunk=5), delay)])
    created = bob.post("terax/api/ai/sessions", {})
    assert created.status == 201, created
    session = created.json()["id"]
    try:
        started = bob.post(f"terax/api/ai/sessions/{session}/runs", {"prompt": "count slowly"})
        assert started.status == 202, started
        requested_at = datetime.now(timezone.utc)  # after the request's own activity
        time.sleep(3 * activity.BUSY_EVERY_SECONDS + 2)
        status = bob.get("api/status?no_track_activity=1").json()
        assert _parse(status["last_activity"]) > requested_at
        assert _wait_hub_activity(hub, "hub-bob", requested_at) > requested_at
        # The run really went to the model (and the operator's key went nowhere with it).
        received = model_stub.requests
        assert received, "the agent run asked no model"
        assert all(ADMIN_KEY not in json.dumps(r.headers) + json.dumps(r.body) for r in received)
    finally:
        bob.post(f"terax/api/ai/sessions/{session}/cancel")
        bob.request("DELETE", f"terax/api/ai/sessions/{session}")


def test_the_idle_culler_keeps_a_terax_terminal_user_and_culls_the_idle(
    hub: Hub, bob: UserClient
) -> None:
    """jupyterhub-idle-culler itself: a server someone types into in a Terax terminal stays,
    an untouched one is culled. Only named servers are culled here (--cull-default-servers
    False), so the other tests' servers are left alone."""
    asked = {name: hub.request_start("hub-bob", name) for name in ("busy", "idle")}
    for name, began in asked.items():
        hub.wait_ready("hub-bob", name, began)
    try:
        busy = UserClient(hub.server_url("hub-bob", "busy"), bob.token)
        created = busy.post("terax/api/pty/sessions", {"name": "typing"})
        assert created.status == 201, created
        session = created.json()["id"]
        with busy.websocket(f"terax/api/pty/{session}/stream") as stream:
            read_until(stream, b"$")
            count = 0

            def type_once() -> None:
                nonlocal count
                count += 1
                marker = f"tick{count}x".encode()
                stream.send(b"echo " + marker + b"\r")
                assert marker in read_until(stream, marker), (
                    "no echo: was the server stopped (culled) while in use?"
                )

            # The culler starts only once the hub has the busy server's current activity (the
            # servers started a while ago, which would already count as idle).
            typed_at = datetime.now(timezone.utc)
            type_once()
            _wait_hub_activity(hub, "hub-bob", typed_at, server="busy")
            culler = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "jupyterhub_idle_culler",
                    f"--url={hub.api_url}",
                    f"--timeout={CULL_TIMEOUT}",
                    "--cull-every=2",
                    "--cull-default-servers=False",
                ],
                env={**os.environ, "JUPYTERHUB_API_TOKEN": hub.admin_token},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            try:
                # Type for well past the culler's timeout (with the reports' lag on top).
                deadline = time.monotonic() + 2 * CULL_TIMEOUT + 3 * ACTIVITY_INTERVAL
                while time.monotonic() < deadline:
                    type_once()
                    time.sleep(1)
                servers = hub.user("hub-bob")["servers"]
                # The untouched server went (it had no activity for longer than the timeout).
                waited = time.monotonic() + 30
                while "idle" in servers and time.monotonic() < waited:
                    time.sleep(0.5)
                    servers = hub.user("hub-bob")["servers"]
                assert "idle" not in servers, "the culler did not cull the idle server"
                assert servers.get("busy", {}).get("ready"), (
                    "the culler culled a server in use through a Terax terminal"
                )
            finally:
                culler.terminate()
                output, _ = culler.communicate(timeout=30)
                print(f"\nidle culler log:\n{output[-3000:]}")
    finally:
        for name in ("busy", "idle"):
            hub.stop("hub-bob", name)
