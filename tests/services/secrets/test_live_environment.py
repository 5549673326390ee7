"""A real server started with an administrator's key in its environment and another in a key
file: a real kernel (started through the REST API), a real Lab terminal and a real Terax
terminal see neither, nor does the server's ``/proc/<pid>/environ``; the server still has
both for their providers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from tornado.websocket import websocket_connect

from tests.live_server import LiveTerax, _wait_until_ready, environment_for, free_port

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ENV_KEY = "sk-live-environment-key-4f5e6d7c8b9a0123"
FILE_KEY = "sk-ant-live-file-key-0a9b8c7d6e5f4321"
CORP_ENV_KEY = "corp-live-environment-key-13572468"
KEYS = (ENV_KEY, FILE_KEY, CORP_ENV_KEY)
NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CORP_LLM_KEY", "TERAX_ADMIN_KEYS_FILE")

# What the kernel reports: the names and values it inherited, and whether its own and its
# parent's (the server's) /proc environ still show a key.
KERNEL_PROBE = """
import json, os
keys = KEYS_HERE
def shows(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return type(error).__name__
    return [key for key in keys if key.encode() in data]
print("PROBE" + json.dumps({
    "names": sorted(n for n in os.environ if n in NAMES_HERE),
    "values": [k for k in keys if k in os.environ.values()],
    "own_environ": shows("/proc/self/environ"),
    "server_environ": shows(f"/proc/{os.getppid()}/environ"),
    "parent_is_server": os.getppid(),
}))
""".replace("KEYS_HERE", repr(KEYS)).replace("NAMES_HERE", repr(NAMES))


@pytest.fixture
def live(tmp_path: Path) -> Iterator[LiveTerax]:
    """``jupyter server`` with Terax, as a spawner would start it: one key in the
    environment, the key file's path in TERAX_ADMIN_KEYS_FILE."""
    home, root = tmp_path / "home", tmp_path / "root"
    home.mkdir()
    root.mkdir()
    key_file = tmp_path / "admin-keys.env"
    key_file.write_text(f"ANTHROPIC_API_KEY={FILE_KEY}\n")
    key_file.chmod(0o400)
    config = home / "terax_config.json"
    config.write_text(
        json.dumps(
            {
                "SecretsManager": {
                    "environment_names": ["OPENAI_API_KEY", "CORP_LLM_KEY"],
                    # Kernels and terminals still work with a server that is not dumpable.
                    "protect_memory": True,
                }
            }
        )
    )
    port, token = free_port(), os.urandom(16).hex()
    runtime_dir = home / "runtime"
    env = environment_for(
        home,
        runtime_dir,
        OPENAI_API_KEY=ENV_KEY,
        CORP_LLM_KEY=CORP_ENV_KEY,
        TERAX_ADMIN_KEYS_FILE=str(key_file),
        TERAX_TEST_PLAIN="still-here",
    )
    log = home / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_server",
                # Lab's terminals too (no config files are read here to enable them).
                "--ServerApp.jpserver_extensions="
                "{'terax_jupyter': True, 'jupyter_server_terminals': True}",
                f"--IdentityProvider.token={token}",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--ServerApp.root_dir={root}",
                "--ServerApp.open_browser=False",
                "--allow-root",
                "--TeraxApp.allow_user_roots=False",
                "--SecretsManager.backend=file",
                f"--config={config}",
            ],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
        )
    server = LiveTerax(f"http://127.0.0.1:{port}/", token, root, home, runtime_dir, process, log)
    try:
        _wait_until_ready(server)
        yield server
    finally:
        server.stop()


async def kernel_probe(live: LiveTerax) -> dict[str, Any]:
    """Start a kernel through the REST API and run the probe over its WebSocket, as Lab does."""
    async with httpx.AsyncClient(base_url=live.url, headers=live.headers, timeout=30) as http:
        kernel = await http.post("api/kernels", json={"name": "python3"})
        assert kernel.status_code == 201, kernel.text
        kernel_id = kernel.json()["id"]
        socket = await websocket_connect(
            f"ws{live.url[len('http') :]}api/kernels/{kernel_id}/channels?token={live.token}"
        )
        try:
            msg_id = uuid.uuid4().hex
            await socket.write_message(
                json.dumps(
                    {
                        "header": {
                            "msg_id": msg_id,
                            "msg_type": "execute_request",
                            "session": uuid.uuid4().hex,
                            "username": "test",
                            "version": "5.3",
                            "date": "",
                        },
                        "parent_header": {},
                        "metadata": {},
                        "channel": "shell",
                        "content": {"code": KERNEL_PROBE, "silent": False, "store_history": False,
                                    "user_expressions": {}, "allow_stdin": False},
                    }
                )
            )  # fmt: skip
            output, status, idle = "", None, False
            deadline = time.monotonic() + 60
            # The reply (shell) and the output (iopub) come on two channels, in no set order:
            # the output is complete once the kernel says it is idle again.
            while status is None or not idle:
                assert time.monotonic() < deadline, output
                message = await asyncio.wait_for(socket.read_message(), 60)
                assert message is not None, live.log_tail()
                reply = json.loads(message)
                if reply.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if reply["msg_type"] == "stream":
                    output += reply["content"]["text"]
                elif reply["msg_type"] == "error":
                    raise AssertionError(reply["content"])
                elif reply["msg_type"] == "execute_reply":
                    status = reply["content"]["status"]
                elif reply["msg_type"] == "status":
                    idle = reply["content"]["execution_state"] == "idle"
            assert status == "ok"
        finally:
            socket.close()
            await http.delete(f"api/kernels/{kernel_id}")
    lines = [line for line in output.splitlines() if line.startswith("PROBE")]
    assert len(lines) == 1, output
    return json.loads(lines[0][len("PROBE") :])  # type: ignore[no-any-return]


async def lab_terminal_env(live: LiveTerax) -> str:
    """``env`` in a terminal of Lab's own (jupyter_server_terminals, terminado)."""
    async with httpx.AsyncClient(base_url=live.url, headers=live.headers, timeout=30) as http:
        created = await http.post("api/terminals")
        assert created.status_code == 200, created.text
        name = created.json()["name"]
        socket = await websocket_connect(
            f"ws{live.url[len('http') :]}terminals/websocket/{name}?token={live.token}"
        )
        try:
            await socket.write_message(json.dumps(["stdin", "env; echo DONE-$((40+2))\r"]))
            seen = ""
            deadline = time.monotonic() + 30
            while "DONE-42" not in seen:
                assert time.monotonic() < deadline, seen
                message = await asyncio.wait_for(socket.read_message(), 30)
                assert message is not None, seen
                kind, *content = json.loads(message)
                if kind == "stdout":
                    seen += content[0]
        finally:
            socket.close()
            await http.delete(f"api/terminals/{name}")
    return seen


def terax_terminal_env(live: LiveTerax) -> str:
    with live.api() as api:
        session = api.post("pty/sessions", {"shell": "bash"})
        deadline = time.monotonic() + 30
        while api.get(f"pty/sessions/{session['id']}")["phase"] != "input":
            assert time.monotonic() < deadline, "no prompt"
            time.sleep(0.1)
        result = api.post(f"pty/sessions/{session['id']}/run", {"command": "env"})
        assert result["block"]["exit_code"] == 0
        return str(result["text"])


def test_no_process_the_server_starts_inherits_the_administrators_keys(
    live: LiveTerax,
) -> None:
    probe = asyncio.run(kernel_probe(live))
    assert probe["parent_is_server"] == live.process.pid
    assert probe == {
        "names": [],
        "values": [],
        "own_environ": [],
        # Deleting the variables is not enough there: their values are blanked too.
        "server_environ": [],
        "parent_is_server": live.process.pid,
    }
    lab = asyncio.run(lab_terminal_env(live))
    assert "TERAX_TEST_PLAIN=still-here" in lab
    terax = terax_terminal_env(live)
    assert "TERAX_TEST_PLAIN=still-here" in terax
    for text in (lab, terax):
        for secret in (*KEYS, *NAMES):
            assert secret not in text
    # Read as the test (root): the server's initial environment no longer holds a key.
    with open(f"/proc/{live.process.pid}/environ", "rb") as handle:
        environ = handle.read()
    assert b"TERAX_TEST_PLAIN=still-here" in environ
    for key in KEYS:
        assert key.encode() not in environ
    # The server has them all, bound to their providers, and says so without a value.
    with live.api() as api:
        entries = {e["name"]: e for e in api.get("secrets")["keys"]}
        answer = json.dumps(api.get("secrets"))
    assert entries["OPENAI_API_KEY"]["source"] == "environment"
    assert entries["CORP_LLM_KEY"]["source"] == "environment"
    assert entries["ANTHROPIC_API_KEY"]["source"] == "admin_file"
    assert all(entries[n]["read_only"] for n in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"))
    log = live.log.read_text(errors="replace")
    for key in KEYS:
        assert key not in answer
        assert key not in log
    assert "Terax read 1 administrator's key(s)" in log
    assert "Terax removed OPENAI_API_KEY, CORP_LLM_KEY, TERAX_ADMIN_KEYS_FILE" in log
    assert "Terax marked the server not dumpable" in log
