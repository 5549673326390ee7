"""The administrator's key file, and the provider keys taken out of the server's environment.

Without a server: the file's formats and every way it is refused (all or nothing, never a
crash), its keys bound to their providers' addresses (real listeners on 127.0.0.1), and
the environment a process started after the manager inherits (a real child process).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import terax_jupyter
from terax_jupyter.exceptions import Conflict
from terax_jupyter.security import SecurityLayer
from terax_jupyter.services.ai.providers.catalog import ProviderCatalog
from terax_jupyter.services.ai.providers.factory import ProviderFactory
from terax_jupyter.services.ai.providers.retry import RetryPolicy
from terax_jupyter.services.secrets.manager import SecretsManager
from terax_jupyter.services.secrets.startup import FILE_VARIABLE
from terax_jupyter.testing import model_stub as turns
from terax_jupyter.testing.model_stub import ModelStub

from .helpers import assert_no_key

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    Factory = Callable[..., SecretsManager]

FILE_KEY = "sk-admin-file-7a1c9e3b5d0f2468ace"
CORP_FILE_KEY = "corp-file-key-13579bdf02468ace"
ENV_KEY = "sk-admin-env-0b2d4f6a8c1e3579bdf"


def key_file(tmp_path: Path, text: str, name: str = "admin-keys") -> str:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o400)
    return str(path)


def entry_of(manager: SecretsManager, name: str) -> dict[str, Any]:
    return next(entry for entry in manager.list() if entry["name"] == name)


# -- reading the file ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"OPENAI_API_KEY": FILE_KEY, "CORP_KEY": CORP_FILE_KEY}),
        f"# the administrator's keys\n\nOPENAI_API_KEY={FILE_KEY}\n"
        f"export CORP_KEY='{CORP_FILE_KEY}'\n",
        f'OPENAI_API_KEY = "{FILE_KEY}"\r\nCORP_KEY={CORP_FILE_KEY}',
    ],
    ids=["json", "dotenv", "dotenv-crlf-quoted"],
)
def test_the_key_file_gives_read_only_administrator_keys(
    make: Factory, tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "test.secrets")
    manager = make(admin_keys_file=key_file(tmp_path, text))
    found = manager.find("OPENAI_API_KEY")
    assert found is not None
    assert (found.value, found.source, found.user) == (FILE_KEY, "admin_file", False)
    assert manager.get("CORP_KEY") == CORP_FILE_KEY
    entry = entry_of(manager, "CORP_KEY")
    assert (entry["set"], entry["source"], entry["read_only"]) == (True, "admin_file", True)
    with pytest.raises(Conflict) as caught:
        manager.delete("OPENAI_API_KEY")
    assert caught.value.reason == "read_only_key"
    assert "administrator's key file" in caught.value.message
    assert manager.get("OPENAI_API_KEY") == FILE_KEY
    # Registered with the redactor from the start; never in an answer or the log.
    assert security_redacts(manager, FILE_KEY)
    assert_no_key(json.dumps(manager.overview()), caplog.text)
    assert FILE_KEY not in caplog.text
    assert CORP_FILE_KEY not in caplog.text
    assert "read 2 administrator's key(s)" in caplog.text


def test_the_key_file_is_deleted_once_read_when_asked(
    make: Factory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file(tmp_path, f"OPENAI_API_KEY={FILE_KEY}\n")
    manager = make(admin_keys_file=path, remove_admin_keys_file=True)
    assert manager.get("OPENAI_API_KEY") == FILE_KEY  # kept in memory
    assert not os.path.exists(path)  # nothing the user starts later can open it
    # A malformed copy is deleted too (it may still hold keys), and no key of it is used.
    bad = key_file(tmp_path, f"OPENAI_API_KEY={FILE_KEY}\nnot an entry\n", name="bad")
    assert make(admin_keys_file=bad, remove_admin_keys_file=True).get("OPENAI_API_KEY") is None
    assert not os.path.exists(bad)
    # Left in place unless asked; a file that cannot be deleted is said in the log.
    kept = key_file(tmp_path, f"OPENAI_API_KEY={FILE_KEY}\n", name="kept")
    make(admin_keys_file=kept)
    assert os.path.exists(kept)
    # One that cannot be deleted (a folder where the file should be) is said in the log.
    caplog.set_level(logging.ERROR, "test.secrets")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert make(admin_keys_file=str(folder), remove_admin_keys_file=True).get("X") is None
    assert "could not be deleted" in caplog.text
    assert folder.is_dir()


def security_redacts(manager: SecretsManager, value: str) -> bool:
    return value not in manager._redactor.redact(f"x {value} y")


def test_precedence_user_then_config_then_file_then_environment(
    make: Factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    path = key_file(tmp_path, f"OPENAI_API_KEY={FILE_KEY}\nCORP_KEY={CORP_FILE_KEY}\n")
    manager = make(admin_keys_file=path, keys={"CORP_KEY": "cfg-value-0123456789"})
    assert entry_of(manager, "OPENAI_API_KEY")["source"] == "admin_file"
    assert entry_of(manager, "OPENAI_API_KEY")["overrides"] == ["environment"]
    assert entry_of(manager, "CORP_KEY")["source"] == "config"
    assert entry_of(manager, "CORP_KEY")["overrides"] == ["admin_file"]
    manager.set("OPENAI_API_KEY", "sk-users-own-0123456789")
    assert manager.find("OPENAI_API_KEY").user  # type: ignore[union-attr]
    manager.delete("OPENAI_API_KEY")
    assert manager.get("OPENAI_API_KEY") == FILE_KEY


def test_the_spawners_variable_names_the_file_and_is_then_removed(
    make: Factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FILE_VARIABLE, key_file(tmp_path, f"ANTHROPIC_API_KEY={FILE_KEY}\n"))
    manager = make()
    assert manager.get("ANTHROPIC_API_KEY") == FILE_KEY
    # A kernel started later cannot learn where the file is from its environment.
    assert FILE_VARIABLE not in os.environ


def test_the_configured_file_wins_over_the_spawners_variable(
    make: Factory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FILE_VARIABLE, key_file(tmp_path, "GROQ_API_KEY=gsk-from-variable-01234"))
    manager = make(admin_keys_file=key_file(tmp_path, f"GROQ_API_KEY={FILE_KEY}", "other"))
    assert manager.get("GROQ_API_KEY") == FILE_KEY


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (f"OPENAI_API_KEY={FILE_KEY}\nthis line has no equals sign\n", "line 2 is not NAME=value"),
        (f"OPENAI_API_KEY={FILE_KEY}\nbad name!={FILE_KEY}x\n", "line 2"),
        (f"OPENAI_API_KEY={FILE_KEY}\nCORP_KEY=\n", "The key is empty"),
        (f"OPENAI_API_KEY={FILE_KEY}\nOPENAI_API_KEY={FILE_KEY}x\n", "sets OPENAI_API_KEY twice"),
        (f'{{"OPENAI_API_KEY": "{FILE_KEY}", "CORP_KEY": 12}}', "is not a string"),
        (f'{{"OPENAI_API_KEY": "{FILE_KEY}", "OPENAI_API_KEY": "x{FILE_KEY}"}}', "twice"),
        (f'{{"OPENAI_API_KEY": "{FILE_KEY}",', "is not valid JSON (line 1"),
        (f'{{"OPENAI_API_KEY": "{FILE_KEY}\\u0000"}}', "(entry OPENAI_API_KEY): The key contains"),
        ("{" * 100000, "larger than 64 KiB"),
    ],
    ids=[
        "no-equals",
        "bad-name",
        "empty",
        "twice",
        "not-string",
        "json-twice",
        "json",
        "nul",
        "large",
    ],
)
def test_a_malformed_file_gives_no_key_at_all_and_says_why(
    make: Factory,
    tmp_path: Path,
    text: str,
    said: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = key_file(tmp_path, text)
    manager = make(admin_keys_file=path)
    # All or nothing: the valid first entry is not used either.
    assert manager.get("OPENAI_API_KEY") is None
    assert not entry_of(manager, "OPENAI_API_KEY")["set"]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    message = errors[0].getMessage()
    assert path in message
    assert said in message
    assert "no key of the file is used" in message.lower()
    assert FILE_KEY not in caplog.text


def test_a_deeply_nested_json_file_is_refused(
    make: Factory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file(tmp_path, '{"A":' * 20000 + '"x"' + "}" * 20000)
    manager = make(admin_keys_file=path)
    assert manager.get("A") is None
    assert "no key of the file is used" in caplog.text


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "not-utf8"])
def test_an_unreadable_file_gives_no_key_and_the_server_still_starts(
    make: Factory, tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "keys"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        # Opened without blocking: a FIFO nobody writes to does not hang the start.
        os.mkfifo(path)
    elif kind == "not-utf8":
        path.write_bytes(b"OPENAI_API_KEY=\xff\xfe-not-text")
    manager = make(admin_keys_file=str(path))
    assert manager.get("OPENAI_API_KEY") is None
    assert manager.overview()["keys"]  # the API still answers
    said = {
        "missing": "cannot be read (No such file or directory)",
        "directory": "is not a regular file",
        "fifo": "is not a regular file",
        "not-utf8": "is not UTF-8 text",
    }[kind]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        f"The administrator's key file {path} {said}; no key of the file is used."
    ]


def test_a_file_the_servers_user_may_not_read_gives_no_key(second_user: Any) -> None:
    """A real EACCES: the file is read as another Unix user, who may not read it."""
    folder = tempfile.mkdtemp(prefix="terax-keys-")  # traversable, unlike tmp_path's parents
    try:
        os.chmod(folder, 0o755)
        path = key_file(Path(folder), f"OPENAI_API_KEY={FILE_KEY}\n")  # 0400, owned by root
        script = (
            "import sys; sys.path.insert(0, sys.argv[1])\n"
            "from terax_jupyter.services.secrets import startup\n"
            "from terax_jupyter.exceptions import TeraxError\n"
            "try:\n"
            "    startup.read_admin_keys(sys.argv[2], str, str)\n"
            "except TeraxError as e:\n"
            "    print(e.reason, '|', e.message)\n"
        )
        project = str(Path(terax_jupyter.__file__).resolve().parents[1])
        result = second_user.run(["/usr/bin/python3", "-c", script, project, path])
    finally:
        shutil.rmtree(folder)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        f"admin_keys_file_unreadable | The administrator's key file {path} cannot be read "
        "(Permission denied); no key of the file is used."
    )


def test_a_file_everyone_can_read_is_used_with_a_warning(
    make: Factory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file(tmp_path, f"OPENAI_API_KEY={FILE_KEY}\n")
    os.chmod(path, 0o644)
    manager = make(admin_keys_file=path)
    assert manager.get("OPENAI_API_KEY") == FILE_KEY
    assert "can be read by every user of this system" in caplog.text
    caplog.clear()
    os.chmod(path, 0o440)  # a Kubernetes secret with the pod's fsGroup
    assert make(admin_keys_file=path).get("OPENAI_API_KEY") == FILE_KEY
    assert "every user" not in caplog.text


# -- the environment ----------------------------------------------------------------------


def test_the_environments_keys_are_kept_and_removed_from_it(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("CORP_LLM_KEY", "corp-llm-env-key-0123456789")
    monkeypatch.setenv("TERAX_TEST_PLAIN", "still-here")
    manager = make(environment_names=["OPENAI_API_KEY", "CORP_LLM_KEY"])
    for name in ("OPENAI_API_KEY", "CORP_LLM_KEY"):
        assert name not in os.environ
    assert os.environ["TERAX_TEST_PLAIN"] == "still-here"
    # The server keeps them, bound as environment keys.
    found = manager.find("OPENAI_API_KEY")
    assert found is not None
    assert (found.value, found.source) == (ENV_KEY, "environment")
    assert entry_of(manager, "CORP_LLM_KEY")["source"] == "environment"
    # A real child process started afterwards (what jupyter_client does for a kernel).
    child = subprocess.run(["env"], capture_output=True, text=True, check=True).stdout
    assert ENV_KEY not in child
    assert "CORP_LLM_KEY" not in child
    assert "TERAX_TEST_PLAIN=still-here" in child


def test_with_stripping_off_the_environment_is_left_alone(
    make: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    manager = make(strip_environment_keys=False)
    assert os.environ["OPENAI_API_KEY"] == ENV_KEY
    assert manager.get("OPENAI_API_KEY") == ENV_KEY


def test_the_initial_environment_block_no_longer_shows_the_key() -> None:
    """``/proc/<pid>/environ`` (and ``ps e``) show the environment a process was started
    with, which deleting a variable does not change: the values are blanked there too.
    A fresh interpreter, so the key is in its initial block as a server's would be."""
    script = (
        "import os\n"
        "from terax_jupyter.services.secrets.startup import remove_from_environment\n"
        "before = open('/proc/self/environ', 'rb').read()\n"
        "removed = remove_from_environment(['OPENAI_API_KEY', 'ABSENT_KEY'])\n"
        "after = open('/proc/self/environ', 'rb').read()\n"
        f"print(removed, {ENV_KEY!r}.encode() in before, {ENV_KEY!r}.encode() in after,"
        " len(before) == len(after), os.environ['TERAX_TEST_PLAIN'])\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": ENV_KEY, "TERAX_TEST_PLAIN": "still-here"}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["['OPENAI_API_KEY']", "True", "False", "True", "still-here"]


# -- the file's keys go only to their providers' addresses ----------------------------------


@pytest.fixture
def listener() -> Iterator[ModelStub]:
    """A listener a user points a provider at: it records whatever it is sent."""
    with ModelStub(models=["m"]) as stub:
        yield stub


@pytest.fixture
def admin_endpoint() -> Iterator[ModelStub]:
    """The administrator's provider, which wants the key of the file."""
    with ModelStub(models=["m"], require_key=CORP_FILE_KEY) as stub:
        yield stub


async def test_a_file_key_is_never_sent_to_an_address_a_user_chose(
    make: Factory,
    tmp_path: Path,
    listener: ModelStub,
    admin_endpoint: ModelStub,
    security: SecurityLayer,
) -> None:
    secrets = make(
        admin_keys_file=key_file(tmp_path, f"CORP_KEY={CORP_FILE_KEY}\nOPENAI_API_KEY={FILE_KEY}\n")
    )
    corp = {"kind": "openai", "base_url": admin_endpoint.url, "key_name": "CORP_KEY"}
    catalog = ProviderCatalog(
        {"corp": {**corp, "local": True}}, str(tmp_path / "providers.json"), security.audit
    )
    factory = ProviderFactory(security, secrets, catalog, RetryPolicy(), timeout=5.0)
    try:
        # A user's provider naming the file's key, and the built-in moved to the listener.
        catalog.put(
            "mine",
            {"kind": "openai", "base_url": listener.url, "key_name": "CORP_KEY", "local": True},
            user="mallory",
        )
        catalog.put("openai", {"base_url": listener.url, "local": True}, user="mallory")
        for provider in ("mine", "openai"):
            listener.script([turns.text("x")])
            assert (await factory.test_connection(provider))["ok"] is True
        assert len(listener.requests) == 2
        assert [r.headers.get("authorization") for r in listener.requests] == [None, None]
        assert FILE_KEY not in repr(listener.requests)
        assert CORP_FILE_KEY not in repr(listener.requests)
        # The administrator's own provider does get it, and the built-in's official
        # address is the only one the file's OPENAI_API_KEY is for.
        admin_endpoint.script([turns.text("admin answer")])
        assert (await factory.test_connection("corp"))["ok"] is True
        assert [r.headers.get("authorization") for r in admin_endpoint.requests] == [
            f"Bearer {CORP_FILE_KEY}"
        ]
        assert catalog.key_origins("OPENAI_API_KEY") == {"https://api.openai.com:443"}
    finally:
        await factory.aclose()


HOLDER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from terax_jupyter.services.secrets.startup import make_undumpable, remove_from_environment
held = os.environ["OPENAI_API_KEY"]  # what a server keeps for its provider
remove_from_environment(["OPENAI_API_KEY"])
protected = make_undumpable() if sys.argv[2] == "protect" else None
print(os.getpid(), protected, flush=True)
sys.stdin.read()
"""

READER = """
import re, sys
pid, key = sys.argv[1], sys.argv[2].encode()
def environ():
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return key in handle.read()
    except OSError as error:
        return type(error).__name__
def memory():
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                match = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
                if match:
                    start, end = int(match[1], 16), int(match[2], 16)
                    try:
                        mem.seek(start)
                        if key in mem.read(end - start):
                            return True
                    except OSError:
                        pass
        return False
    except OSError as error:
        return type(error).__name__
print(environ(), memory())
"""


@pytest.mark.parametrize("protect", [False, True], ids=["default", "protect_memory"])
def test_what_a_process_of_the_same_user_can_read_of_the_servers_keys(
    second_user: Any, protect: bool
) -> None:
    """Measured as a non-root user (root may read any process): once removed, the key is
    not in ``/proc/<pid>/environ``; it stays in the server's memory, which another process
    of the same user reads through ``/proc/<pid>/mem`` unless the server is not dumpable."""
    project = str(Path(terax_jupyter.__file__).resolve().parents[1])
    holder = second_user.popen(
        ["/usr/bin/env", f"OPENAI_API_KEY={ENV_KEY}", "/usr/bin/python3", "-c", HOLDER,
         project, "protect" if protect else "plain"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        pid, protected = holder.stdout.readline().split()
        assert protected == ("True" if protect else "None")
        result = second_user.run(["/usr/bin/python3", "-c", READER, pid, ENV_KEY])
    finally:
        holder.communicate("", timeout=30)
    assert result.returncode == 0, result.stderr
    if protect:
        assert result.stdout.split() == ["PermissionError", "PermissionError"]
    else:
        assert result.stdout.split() == ["False", "True"]
