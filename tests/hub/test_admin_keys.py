"""On a real hub, a provider key the operator puts in the single-user server's environment
(Spawner.environment) reaches neither the user's API answers, nor a Terax terminal, nor a
kernel (issue 17 item 5)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.hub.hub import ADMIN_KEY

if TYPE_CHECKING:
    from tests.hub.client import UserClient
    from tests.hub.hub import Hub

KEY_NAME = "OPENAI_API_KEY"


def _get_routes(client: UserClient) -> list[str]:
    """Every GET route of the API without path parameters (answers about the server)."""
    paths = client.get("terax/api/openapi.json").json()["paths"]
    return [
        path.removeprefix("/")
        for path, item in paths.items()
        if "get" in item and "{" not in path and not path.endswith("/watch")
    ]


def test_admin_key_in_no_api_answer(bob: UserClient) -> None:
    routes = _get_routes(bob)
    assert len(routes) > 20
    leaked = []
    for path in routes:
        answer = bob.get(path)
        if ADMIN_KEY in answer.text or ADMIN_KEY[-12:] in answer.text:
            leaked.append(path)
    assert leaked == [], f"the operator's key is in these answers: {leaked}"


def test_admin_key_not_in_a_terax_terminal(bob: UserClient) -> None:
    created = bob.post("terax/api/pty/sessions", {"name": "env check"})
    assert created.status == 201, created
    session = created.json()["id"]
    try:
        ran = bob.post(f"terax/api/pty/sessions/{session}/run", {"command": "env", "timeout": 30})
        assert ran.status == 200, ran
        text = ran.json()["text"]
        assert "HOME=" in text  # the command ran and printed its environment
        assert ADMIN_KEY not in text
        assert f"{KEY_NAME}=" not in text
    finally:
        bob.request("DELETE", f"terax/api/pty/sessions/{session}")


def _kernel_pid(kernel_id: str) -> int | None:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"kernel-{kernel_id}.json".encode() in cmdline:
            return int(entry.name)
    return None


def test_admin_key_not_in_a_kernel(hub: Hub, bob: UserClient) -> None:
    if os.geteuid() != 0:
        pytest.skip("reading another process's environment needs root")
    started = bob.post("api/kernels", {"name": "python3"})
    assert started.status == 201, started
    kernel = started.json()["id"]
    try:
        pid = None
        deadline = time.monotonic() + 60
        while pid is None and time.monotonic() < deadline:
            pid = _kernel_pid(kernel)
            time.sleep(0.2)
        assert pid is not None, "the kernel process did not show up"
        # What os.environ of the kernel starts from: the process's own environment.
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        names = {item.split(b"=", 1)[0].decode() for item in environ if item}
        assert "HOME" in names
        assert KEY_NAME not in names
        assert not any(ADMIN_KEY.encode() in item for item in environ)
    finally:
        bob.request("DELETE", f"api/kernels/{kernel}")
