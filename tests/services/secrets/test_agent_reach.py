"""What stands between the agent's commands and the keys: the key-store guard, which refuses
commands that name where keys are, and the redactor, which finds a known key in the
encodings one standard command gives. Real key values, real bash, base64, xxd and od."""

from __future__ import annotations

import base64
import os
import subprocess
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import CommandDenied
from terax_jupyter.security.redact import REDACTED, Redactor
from terax_jupyter.services.secrets.guard import KeyStoreGuard
from terax_jupyter.services.secrets.manager import SecretsManager

from .helpers import KEY

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

# A key with the characters base64 and URLs treat specially.
ODD_KEY = "AbC+dEf/GhI=jKl-mNo_pQr~sTu.vWx%yZ09"


@pytest.fixture
def manager(terax_security: Callable[..., SecurityLayer], tmp_path: Path) -> SecretsManager:
    (tmp_path / "root").mkdir()
    security = terax_security(tmp_path / "root")
    return SecretsManager(security, str(tmp_path / "state"), backend="file")


def shell(command: str, data: bytes) -> str:
    """What ``command`` prints for ``data`` on its stdin (real tools, as the agent has them)."""
    done = subprocess.run(["bash", "-c", command], input=data, capture_output=True, check=True)
    return done.stdout.decode("ascii")


def key_windows(encoded: str, start: int, end: int, width: int = 10) -> list[str]:
    """Every ``width``-character piece of ``encoded[start:end]``: what a reader could use."""
    region = encoded[start:end]
    return [region[i : i + width] for i in range(len(region) - width + 1)]


def hex_digits(text: str) -> str:
    """The hex digits of ``text`` run together (``0x``, ``\\x``, ``%``, spaces dropped)."""
    return "".join(c for c in text.lower().replace("0x", "") if c in "0123456789abcdef")


def b64_region(offset: int, length: int) -> tuple[int, int]:
    """The base64 characters that depend only on bytes ``offset .. offset+length``."""
    return -(-8 * offset // 6), (8 * (offset + length)) // 6


# -- the redactor: a real key in the encodings of real commands --------------------------------


@pytest.mark.parametrize("key", [KEY, ODD_KEY], ids=["provider-key", "odd-characters"])
@pytest.mark.parametrize("before", [0, 1, 2, 3, 40, 71, 77])
def test_base64_of_a_key_at_every_offset_is_redacted(
    manager: SecretsManager, key: str, before: int
) -> None:
    manager.set("SOME_KEY", key, user="alice")
    redactor = manager._redactor
    data = b"x" * before + key.encode() + b"\n# the rest of the file\n"
    start, end = b64_region(before, len(key))
    for command in ("base64", "base64 -w0", "base64 -w 60", "basenc --base64url"):
        printed = shell(command, data)
        flat = printed.replace("\n", "")
        assert key_windows(flat, start, end)[0] in flat  # the test sees the key's encoding
        shown = redactor.redact(printed).replace("\n", "")
        assert REDACTED in shown, command
        for window in key_windows(flat, start, end):
            assert window not in shown, (command, window)
        # The bytes around the key are still readable.
        if before >= 6:
            assert flat[:8] in shown


_PY = "python3 -c 'import sys; data = sys.stdin.buffer.read(); print({})'"


@pytest.mark.parametrize(
    "command",
    [
        "xxd -p",
        "xxd -p -u",
        "od -An -tx1",
        "od -An -tx1 -v -w8",
        _PY.format("data.hex()"),
        _PY.format('data.hex(" ")'),
        _PY.format('"".join("\\\\x%02x" % b for b in data)'),
        _PY.format('"".join("%%%02X" % b for b in data)'),
        _PY.format('", ".join("0x%02x" % b for b in data)'),
    ],
)
def test_hex_of_a_key_is_redacted(manager: SecretsManager, command: str) -> None:
    manager.set("SOME_KEY", KEY, user="alice")
    data = b"prefix=" + KEY.encode() + b";suffix"
    printed = shell(command, data)
    digits = hex_digits(printed)
    # The key's hex digits are in what the command printed (the test is not vacuous)...
    hexed = KEY.encode().hex()
    assert hexed in digits
    shown = manager._redactor.redact(printed)
    assert REDACTED in shown
    shown_digits = hex_digits(shown)
    # ... and no 12-digit piece of it is in what the model would read.
    for i in range(len(hexed) - 12 + 1):
        assert hexed[i : i + 12] not in shown_digits, (command, i)
    assert "7072656669" in shown_digits  # "prefi": the bytes around it are still there


def test_url_encoding_of_a_key_is_redacted(manager: SecretsManager) -> None:
    manager.set("ODD_KEY", ODD_KEY, user="alice")
    for command in (
        "python3 -c 'import sys, urllib.parse as u; print(u.quote(sys.stdin.read(), safe=\"\"))'",
        "python3 -c 'import sys, urllib.parse as u; print(u.quote_plus(sys.stdin.read()))'",
    ):
        printed = shell(command, ODD_KEY.encode())
        assert printed.strip() != ODD_KEY
        shown = manager._redactor.redact(printed)
        assert shown.strip() == REDACTED, command


def test_keys_from_configuration_and_environment_are_found_encoded_too(
    terax_security: Callable[..., SecurityLayer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-0a1b2c3d4e5f6a7b8c9d")
    (tmp_path / "root").mkdir()
    security = terax_security(tmp_path / "root")
    SecretsManager(security, str(tmp_path / "state"), keys={"CORP_KEY": "corp-0f1e2d3c4b5a6978"})
    for value in ("sk-env-key-0a1b2c3d4e5f6a7b8c9d", "corp-0f1e2d3c4b5a6978"):
        for offset in range(3):
            encoded = base64.b64encode(b"#" * offset + value.encode()).decode()
            assert REDACTED in security.redactor.redact(encoded), (value, offset)
        assert security.redactor.redact(value.encode().hex()) == REDACTED


def test_encoded_forms_leave_ordinary_data_alone() -> None:
    redactor = Redactor()
    redactor.add_secret(KEY)
    redactor.add_secret("short-key")  # under 12 characters: matched as itself only
    noise = base64.b64encode(os.urandom(30_000)).decode() + os.urandom(20_000).hex()
    assert redactor.redact(noise) == noise
    text = "The build passed; the digest is " + ("ab" * 40) + "."
    assert redactor.redact(text) == text
    assert redactor.redact(base64.b64encode(b"short-key").decode()) == "c2hvcnQta2V5"
    # keep_lines: a wrapped encoding leaves its line breaks.
    wrapped = shell("base64 -w 16", b"..." + KEY.encode())
    kept = redactor.redact(wrapped, keep_lines=True)
    assert kept.count("\n") == wrapped.count("\n")
    assert REDACTED in kept


def test_forgetting_a_key_forgets_its_encodings() -> None:
    redactor = Redactor()
    redactor.add_secret(KEY)
    encoded = base64.b64encode(KEY.encode()).decode()
    assert REDACTED in redactor.redact(encoded)
    redactor.forget_secret(KEY)
    assert redactor.redact(encoded) == encoded


# -- the key-store guard ---------------------------------------------------------------------


@pytest.fixture
def guard(manager: SecretsManager) -> KeyStoreGuard:
    return manager.command_guard


def test_commands_naming_the_key_store_are_refused(
    manager: SecretsManager, guard: KeyStoreGuard, tmp_path: Path
) -> None:
    folder = os.path.dirname(manager.file_path)
    for command in (
        f"cat {manager.file_path}",
        f"base64 -w0 {manager.file_path} | rev",
        f"ls {folder}",
        f"cd {folder} && python3 -c 'print(open(\"secrets.json\").read())'",
        f"cat '{folder}'/\"secrets\".json",
        "find / -name secrets.json -exec cat {} +",
        "cat /pr''oc/$PPID/environ",
        f"tr '\\0' '\\n' < /proc/{os.getpid()}/environ",
        "cd /proc/self/.. && cat $PPID/environ",
        "xxd /proc/1/mem",
        "ps eww",
        "ps auxe",
        "secret-tool lookup service terax-jupyter username OPENAI_API_KEY",
        'python3 -c \'import keyring; print(keyring.get_password("terax-jupyter", "K"))\'',
    ):
        with pytest.raises(CommandDenied) as caught:
            guard.check(command)
        assert caught.value.reason == "key_store_access", command
        assert manager.file_path not in caught.value.message


def test_the_path_below_home_is_refused_as_well(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = home / ".local" / "share" / "jupyter" / "terax" / "secrets.json"
    guard = KeyStoreGuard(str(store), "terax-jupyter", home=str(home))
    for command in (
        "cat ~/.local/share/jupyter/terax/ai.sqlite3 | strings",
        "cat $HOME/.local/share/jupyter/terax/audit.jsonl",
        "cd && tar czf /tmp/x.tgz .local/share/jupyter/terax",
    ):
        with pytest.raises(CommandDenied):
            guard.check(command)


def test_ordinary_commands_pass_the_guard(guard: KeyStoreGuard) -> None:
    for command in (
        "ls -la",
        "pytest -q tests",
        "ps aux | grep python",
        "ps -eo pid,user,comm",
        "cat /proc/cpuinfo",
        "python3 -c 'import os; print(os.environ.get(\"PATH\"))'",
        "pip show terax-jupyter",
        "git log --oneline -5",
        "grep -rn environment src/",
        "echo memory",
    ):
        assert guard.check(command) == command


def test_the_guard_is_bypassable_and_says_so(guard: KeyStoreGuard) -> None:
    """Not a boundary: a path built at run time gets past a check of the command's text
    (docs/security.md says so, and that the redactor and approvals are what is left)."""
    built = "f=$(printf '%s' 'c2VjcmV0cy5qc29u' | base64 -d); ls ~/.local/share/*/*/\"$f\""
    assert guard.check(built) == built


def test_a_folder_beside_the_store_with_a_longer_name_is_not_the_store(tmp_path: Path) -> None:
    guard = KeyStoreGuard(str(tmp_path / ".terax" / "secrets.json"), "terax-jupyter")
    for command in (
        f"ls {tmp_path}/.terax-projects/app",
        f"cat {tmp_path}/.terax.bak/notes.txt",
        "cat my-secrets.json.example",
    ):
        assert guard.check(command) == command
    for command in (
        f"ls {tmp_path}/.terax",
        f"ls '{tmp_path}/.terax/'",
        f"cd {tmp_path}/.terax;ls",
    ):
        with pytest.raises(CommandDenied):
            guard.check(command)
