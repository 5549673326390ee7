"""Finding the keychain without loading keyring where none can exist (issue 17, item 8).

Each case runs in a fresh interpreter, as a server does: what is imported is what the probe
loaded, and the environment is the account's. With no D-Bus session bus, no keyring
configuration and no other package's backend, keyring (and cryptography under it, 9 MiB) is
never imported; a bus, a configured backend or a third-party backend hands the choice to
keyring, which then finds the configured or installed backend.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux probe")

PROBE = """
import json, sys
from terax_jupyter.services.secrets.store import real_keyring
found = real_keyring()
print(json.dumps({
    "found": None if found is None else type(found).__module__ + "." + type(found).__name__,
    "keyring_imported": "keyring" in sys.modules,
    "cryptography_imported": "cryptography" in sys.modules,
}))
"""

# A keychain some other package provides: keyring would pick it by its priority.
BACKEND = """
from keyring.backend import KeyringBackend


class Keyring(KeyringBackend):
    priority = 20

    def get_password(self, service, username):
        return None

    def set_password(self, service, username, password):
        pass

    def delete_password(self, service, username):
        pass
"""


def probe(tmp_path: Path, extra_env: dict[str, str] | None = None, pythonpath: str = "") -> dict:
    home = tmp_path / "home"
    runtime = tmp_path / "runtime"  # an XDG_RUNTIME_DIR with no bus socket in it
    home.mkdir(exist_ok=True)
    runtime.mkdir(exist_ok=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND", "XDG_CONFIG_HOME")
    }
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(runtime), PYTHONPATH=pythonpath)
    env.update(extra_env or {})
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_backend(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "third_party_keychain.py").write_text(BACKEND)


def test_no_bus_no_configuration_no_backend_loads_nothing(tmp_path: Path) -> None:
    result = probe(tmp_path)
    assert result == {"found": None, "keyring_imported": False, "cryptography_imported": False}


def test_a_session_bus_hands_the_choice_to_keyring(tmp_path: Path) -> None:
    # A bus address that leads nowhere: keyring is asked, and finds no working keychain.
    result = probe(tmp_path, {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus"})
    assert result["keyring_imported"] is True
    assert result["found"] is None


def test_a_bus_socket_in_the_runtime_dir_hands_the_choice_to_keyring(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "bus").touch()
    assert probe(tmp_path)["keyring_imported"] is True


def test_a_configured_backend_is_used(tmp_path: Path) -> None:
    modules = tmp_path / "modules"
    write_backend(modules)
    config = tmp_path / "config" / "python_keyring"
    config.mkdir(parents=True)
    (config / "keyringrc.cfg").write_text(
        "[backend]\ndefault-keyring=third_party_keychain.Keyring\n"
    )
    result = probe(tmp_path, {"XDG_CONFIG_HOME": str(tmp_path / "config")}, str(modules))
    assert result["found"] == "third_party_keychain.Keyring"


def test_the_environment_s_backend_is_used(tmp_path: Path) -> None:
    modules = tmp_path / "modules"
    write_backend(modules)
    result = probe(
        tmp_path, {"PYTHON_KEYRING_BACKEND": "third_party_keychain.Keyring"}, str(modules)
    )
    assert result["found"] == "third_party_keychain.Keyring"


def test_a_backend_another_package_installs_is_found(tmp_path: Path) -> None:
    modules = tmp_path / "modules"
    write_backend(modules)
    dist = modules / "third_party_keychain-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: third-party-keychain\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[keyring.backends]\nthird_party = third_party_keychain\n"
    )
    result = probe(tmp_path, pythonpath=str(modules))
    assert result["found"] == "third_party_keychain.Keyring"
