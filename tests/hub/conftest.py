"""Fixtures of the hub tests: one real JupyterHub for the whole session (``tests/hub/hub.py``).

hub-alice's server runs under an operator policy (no terminals, no agent, read-only) that her
own ``~/.jupyter`` config tries to lift; hub-bob's server has no policy. Both get a provider
key in their environment from the spawner, as an operator's deployment would.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.testing.model_stub import ModelStub
from tests.hub.client import UserClient
from tests.hub.hub import Hub, start_hub

if TYPE_CHECKING:
    from collections.abc import Iterator

POLICY = {
    "read_only": True,
    "features": {
        "terminals": False,
        "agent": False,
        "mcp": False,
        "browser": False,
        "git_push": False,
    },
}


def _own(path: Path, user: str) -> None:
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)


@pytest.fixture(scope="session")
def policy_dir() -> Iterator[Path]:
    """The operator's policy folder (readable by every user, writable by root only)."""
    folder = Path(tempfile.mkdtemp(prefix="terax-hub-policy-"))
    folder.chmod(0o755)
    (folder / "terax_policy.json").write_text(json.dumps(POLICY))
    (folder / "terax_policy.json").chmod(0o644)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def model_stub() -> Iterator[ModelStub]:
    """A model server on 127.0.0.1 that bob's ``stub`` provider talks to (agent runs)."""
    with ModelStub(models=["stub-model"]) as stub:
        yield stub


@pytest.fixture(scope="session")
def hub(
    tmp_path_factory: pytest.TempPathFactory, policy_dir: Path, model_stub: ModelStub
) -> Iterator[Hub]:
    began = time.monotonic()
    running = start_hub(tmp_path_factory.mktemp("hub"))
    running.start_seconds["hub"] = time.monotonic() - began
    try:
        if running.real_users:
            # Alice's own config tries to lift the operator's read-only policy.
            home = Path(pwd.getpwnam("hub-alice").pw_dir)
            config_dir = home / ".jupyter"
            config_dir.mkdir(exist_ok=True)
            config = config_dir / "jupyter_server_config.json"
            config.write_text(json.dumps({"TeraxApp": {"read_only": False}}))
            for path in (config_dir, config):
                _own(path, "hub-alice")
        running.profile("hub-alice", env={"TERAX_POLICY_DIRS": str(policy_dir)})
        running.profile("hub-bob", "noterm", args=["--ServerApp.terminals_enabled=False"])
        providers = {
            "stub": {"kind": "openai", "label": "Stub", "base_url": model_stub.url, "local": True}
        }
        running.profile(
            "hub-bob",
            args=[
                f"--AiManager.providers={providers!r}",
                "--AiManager.default_provider=stub",
                "--AiManager.default_model=stub-model",
                # The browser test drives Lab's commands (tests/hub/test_preview_chromium.py).
                "--LabApp.expose_app_in_browser=True",
            ],
        )
        # Both at once: each start is mostly the single-user server importing.
        asked = {user: running.request_start(user) for user in ("hub-alice", "hub-bob")}
        for user, began in asked.items():
            running.wait_ready(user, "", began)
        print(f"\nHUB TESTS: start times (s): {running.start_seconds}")
        yield running
    finally:
        running.close()
        if os.environ.get("TERAX_HUB_LOG"):
            print(running.log_tail(40000))


@pytest.fixture(scope="session")
def alice(hub: Hub) -> UserClient:
    """hub-alice on her own server (under the operator's policy)."""
    return UserClient(hub.server_url("hub-alice"), hub.token_for("hub-alice"))


@pytest.fixture(scope="session")
def bob(hub: Hub) -> UserClient:
    """hub-bob on his own server (no policy)."""
    return UserClient(hub.server_url("hub-bob"), hub.token_for("hub-bob"))


@pytest.fixture(scope="session")
def bob_at_alice(hub: Hub) -> UserClient:
    """hub-bob's credentials sent to hub-alice's server."""
    return UserClient(hub.server_url("hub-alice"), hub.token_for("hub-bob"))


@pytest.fixture(scope="session")
def alice_at_bob(hub: Hub) -> UserClient:
    """hub-alice's credentials sent to hub-bob's server."""
    return UserClient(hub.server_url("hub-bob"), hub.token_for("hub-alice"))
