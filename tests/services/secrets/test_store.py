"""The stores: the 0600 file (atomic, refused when others may read it) and the keychain."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from typing import TYPE_CHECKING

import keyring
import pytest
from keyring.backends import chainer, fail, null

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.security import storage
from terax_jupyter.services.secrets.store import (
    FileStore,
    KeyringStore,
    is_real_backend,
    real_keyring,
)

from .helpers import KEY, MemoryKeyring, unregister

if TYPE_CHECKING:
    from pathlib import Path

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(str(tmp_path / "state" / "secrets.json"))


def mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- the file ------------------------------------------------------------------------------


def test_file_store_round_trip(store: FileStore) -> None:
    assert store.names() == []
    assert store.get("OPENAI_API_KEY") is None
    store.set("OPENAI_API_KEY", KEY)
    store.set("GROQ_API_KEY", "gsk-other-value")
    assert store.names() == ["GROQ_API_KEY", "OPENAI_API_KEY"]
    assert store.get("OPENAI_API_KEY") == KEY
    with open(store.path, encoding="utf-8") as handle:
        data = json.load(handle)
    assert data == {
        "version": 1,
        "keys": {"GROQ_API_KEY": "gsk-other-value", "OPENAI_API_KEY": KEY},
    }
    assert store.delete("OPENAI_API_KEY") is True
    assert store.delete("OPENAI_API_KEY") is False
    assert store.names() == ["GROQ_API_KEY"]
    assert store.describe() == {"kind": "file", "path": store.path}


@posix_only
def test_file_and_folder_are_private(store: FileStore) -> None:
    store.set("OPENAI_API_KEY", KEY)
    assert mode(store.path) == 0o600
    assert mode(os.path.dirname(store.path)) == 0o700


@posix_only
def test_temp_file_is_private_from_creation_in_the_same_folder(
    store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("A", "first-value")
    seen: list[tuple[int, str]] = []
    real_fsync = os.fsync

    def watching_fsync(fd: int) -> None:
        # Before the rename: the data is in the temp file, which nobody else may read.
        seen.append((stat.S_IMODE(os.fstat(fd).st_mode), os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    monkeypatch.setattr(storage.os, "fsync", watching_fsync)
    store.set("B", KEY)
    assert len(seen) == 1
    temp_mode, temp_path = seen[0]
    assert temp_mode == 0o600
    assert os.path.dirname(temp_path) == os.path.dirname(store.path)
    assert temp_path != store.path


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    store: FileStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.set("A", "first-value")

    def broken_replace(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage.os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        store.set("B", KEY)
    monkeypatch.undo()
    assert store.names() == ["A"]
    assert os.listdir(os.path.dirname(store.path)) == ["secrets.json"]


def test_concurrent_sets_lose_nothing_and_never_leave_a_partial_file(store: FileStore) -> None:
    names = [f"KEY_{index}" for index in range(40)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def writer(batch: list[str]) -> None:
        start.wait()
        try:
            for name in batch:
                store.set(name, f"value-of-{name}-0123456789")
                # A reader at any moment sees a whole file.
                with open(store.path, encoding="utf-8") as handle:
                    json.load(handle)
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(names[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert store.names() == sorted(names)
    assert all(store.get(name) == f"value-of-{name}-0123456789" for name in names)
    assert os.listdir(os.path.dirname(store.path)) == ["secrets.json"]


@posix_only
@pytest.mark.parametrize("bad_mode", [0o644, 0o640, 0o604, 0o620, 0o666])
def test_a_file_others_may_read_is_refused_not_repaired(store: FileStore, bad_mode: int) -> None:
    store.set("OPENAI_API_KEY", KEY)
    os.chmod(store.path, bad_mode)
    for operation in (store.names, lambda: store.get("OPENAI_API_KEY")):
        with pytest.raises(Unavailable) as caught:
            operation()
        assert caught.value.reason == "insecure_file"
        assert f"mode {bad_mode:04o}" in caught.value.message
        assert "chmod 600" in caught.value.message
        assert KEY not in caught.value.message
    with pytest.raises(Unavailable):
        store.set("OTHER", "another-value")
    assert mode(store.path) == bad_mode, "the mode is left for a person to look at"
    os.chmod(store.path, 0o600)
    assert store.get("OPENAI_API_KEY") == KEY


@posix_only
def test_symlink_fifo_and_folder_are_refused(store: FileStore, tmp_path: Path) -> None:
    os.makedirs(os.path.dirname(store.path), mode=0o700)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"version": 1, "keys": {}}')
    os.chmod(target, 0o600)
    os.symlink(target, store.path)
    with pytest.raises(Unavailable, match="symbolic link"):
        store.names()
    os.unlink(store.path)
    os.mkfifo(store.path, 0o600)
    with pytest.raises(Unavailable, match="not a regular file"):
        store.names()  # and it does not hang on the FIFO
    os.unlink(store.path)
    os.mkdir(store.path, 0o700)
    with pytest.raises((Unavailable, OSError)):
        store.names()


@pytest.mark.parametrize(
    "text", ["not json", "[]", '{"keys": []}', '{"keys": {"A": 1}}', '{"version": 1}']
)
def test_a_file_that_is_not_a_key_file_is_never_overwritten(store: FileStore, text: str) -> None:
    os.makedirs(os.path.dirname(store.path), mode=0o700)
    fd = os.open(store.path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, text.encode())
    os.close(fd)
    with pytest.raises(Unavailable) as caught:
        store.set("OPENAI_API_KEY", KEY)
    assert caught.value.reason == "secrets_store_corrupt"
    with open(store.path, encoding="utf-8") as handle:
        assert handle.read() == text


# -- the keychain ----------------------------------------------------------------------------


def test_keyring_store_round_trip_keeps_an_index_of_names(memory_keyring: MemoryKeyring) -> None:
    store = KeyringStore(memory_keyring, "terax-test")
    assert store.names() == []
    store.set("OPENAI_API_KEY", KEY)
    store.set("MY.KEY", "another-value")
    assert store.names() == ["MY.KEY", "OPENAI_API_KEY"]
    assert store.get("OPENAI_API_KEY") == KEY
    assert memory_keyring.entries[("terax-test", "OPENAI_API_KEY")] == KEY
    index = memory_keyring.entries[("terax-test-index", "names")]
    assert json.loads(index) == ["MY.KEY", "OPENAI_API_KEY"]
    assert KEY not in index
    assert store.delete("OPENAI_API_KEY") is True
    assert store.delete("OPENAI_API_KEY") is False
    assert store.names() == ["MY.KEY"]
    assert store.describe()["kind"] == "keyring"
    assert store.describe()["backend"].endswith("MemoryKeyring")


def test_keyring_entry_removed_outside_terax_leaves_the_listing(
    memory_keyring: MemoryKeyring,
) -> None:
    store = KeyringStore(memory_keyring, "terax-test")
    store.set("OPENAI_API_KEY", KEY)
    del memory_keyring.entries[("terax-test", "OPENAI_API_KEY")]
    assert store.names() == []
    assert store.delete("OPENAI_API_KEY") is False
    assert json.loads(memory_keyring.entries[("terax-test-index", "names")]) == []


class PlaintextKeyring(MemoryKeyring):
    """Looks like keyrings.alt's plain-text file backend."""


PlaintextKeyring.__module__ = "keyrings.alt.file"
unregister(PlaintextKeyring)


def test_no_real_keychain_on_fail_null_plaintext_or_a_chain_of_them(
    restore_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = [fail.Keyring(), null.Keyring(), PlaintextKeyring()]
    for backend in refused:
        assert not is_real_backend(backend)
        keyring.set_keyring(backend)
        assert real_keyring() is None, backend
    chain = chainer.ChainerBackend()
    monkeypatch.setattr(chainer.ChainerBackend, "backends", refused)
    keyring.set_keyring(chain)
    assert real_keyring() is None


def test_a_real_keychain_is_used_and_taken_out_of_a_chain(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert is_real_backend(memory_keyring)
    assert real_keyring() is memory_keyring
    plaintext = PlaintextKeyring()
    chain = chainer.ChainerBackend()
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [plaintext, memory_keyring])
    keyring.set_keyring(chain)
    # Used directly: the chain would fall back to the plain-text member on a failure.
    assert real_keyring() is memory_keyring


def test_this_machine_detection_does_not_crash() -> None:
    # Containers and CI have no keychain: keyring answers with its "fail" backend here.
    found = real_keyring()
    assert found is None or is_real_backend(found)
