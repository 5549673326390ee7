"""An idle server holds neither the agent nor the headless browser (issue 17, item 8).

A real ``jupyter server`` with Terax, in a fresh interpreter: after start-up and a first
request, the agent's and the browser's modules, the OpenAPI schema fragments, keyring and
the fuzzy-matching and terminal-emulation libraries are not loaded; each area is built by
its own first request, and only then.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

HEAVY = (
    "terax_jupyter.services.ai.manager",
    "terax_jupyter.services.ai.runner",
    "terax_jupyter.services.ai.providers.base",
    "terax_jupyter.services.browser.manager",
    "terax_jupyter.services.browser.cdp",
    "terax_jupyter.openapi",
    "keyring",
    "cryptography",
    "numpy",
    "rapidfuzz",
    "pyte",
)

SERVER = """
import json, os, sys, threading, time, urllib.request
from jupyter_server.serverapp import ServerApp

HEAVY = {heavy!r}
PORT = {port}


def get(path):
    request = urllib.request.Request(
        f"http://127.0.0.1:{{PORT}}{{path}}", headers={{"Authorization": "token probe"}}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def probe():
    steps = {{}}
    try:
        for _ in range(300):
            try:
                get("/api/status")
                break
            except OSError:
                time.sleep(0.1)
        get("/terax/api/info")
        steps["idle"] = [name for name in HEAVY if name in sys.modules]
        get("/terax/api/ai/providers")
        steps["ai"] = [name for name in HEAVY if name in sys.modules]
        get("/terax/api/browser/workflows")
        steps["browser"] = [name for name in HEAVY if name in sys.modules]
        steps["openapi_paths"] = len(get("/terax/api/openapi.json")["paths"])
        steps["openapi"] = [name for name in HEAVY if name in sys.modules]
    finally:
        print("PROBE " + json.dumps(steps), flush=True)
        os._exit(0)


threading.Thread(target=probe, daemon=True).start()
ServerApp.launch_instance(argv=sys.argv[1:])
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_areas_load_on_their_first_request(tmp_path: Path) -> None:
    port = free_port()
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "XDG_RUNTIME_DIR": str(home / "xdg-runtime"),  # no D-Bus session bus: no keychain
    }
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            SERVER.format(heavy=HEAVY, port=port),
            f"--port={port}",
            "--ip=127.0.0.1",
            "--ServerApp.token=probe",
            "--no-browser",
            "--allow-root",
            f"--ServerApp.root_dir={root}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, done.stderr[-3000:]
    steps = json.loads(lines[-1].removeprefix("PROBE "))
    assert steps["idle"] == [], steps
    ai = "terax_jupyter.services.ai.manager"
    browser = "terax_jupyter.services.browser.manager"
    assert ai in steps["ai"], steps
    assert browser not in steps["ai"], steps
    assert "keyring" not in steps["ai"], steps
    assert "cryptography" not in steps["ai"], steps
    assert browser in steps["browser"], steps
    assert steps["openapi_paths"] > 50, steps
    assert "terax_jupyter.openapi" in steps["openapi"], steps
