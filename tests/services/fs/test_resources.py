"""What file operations cost the server: a copy streams instead of holding the file, and
watch sockets are capped and cannot stall the server."""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

import terax_jupyter
from terax_jupyter.pytest_plugin import error_of
from terax_jupyter.security import fileio
from tests.live_server import start_live_server

if TYPE_CHECKING:
    from pathlib import Path

    from tornado.websocket import WebSocketClientConnection

    from tests.live_server import LiveTerax

MIB = 1024 * 1024
FILE_SIZE = 256 * MIB
# Far below the file's size: a copy that held the file (or a sizeable part) would pass it.
MAX_GROWTH = 64 * MIB

# Runs in a fresh interpreter so that its peak RSS is the copy's and nothing else's.
COPY_SCRIPT = """
import asyncio, errno, json, resource, sys
from terax_jupyter.security import SecurityLayer, fileio
from terax_jupyter.services.fs.manager import FileManager

root, state, mode = sys.argv[1:4]
if mode == "buffer":
    # As on a system without copy_file_range and sendfile: the bounded read/write loop.
    def unavailable(reader, writer):
        raise OSError(errno.ENOSYS, "not here")
    fileio._copy_file_range = fileio._sendfile = unavailable
files = FileManager(SecurityLayer.build(root, state))

async def main():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    await files.copy("big.bin", "copy.bin")
    await files.copy("big.bin", "copy.bin", overwrite=True)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"growth_kib": after - before}))

asyncio.run(main())
"""


def _write_big_file(path: Path) -> str:
    """FILE_SIZE bytes that differ from MiB to MiB; returns their SHA-256."""
    digest = hashlib.sha256()
    block = bytearray(os.urandom(MIB))
    with path.open("wb") as output:
        for index in range(FILE_SIZE // MIB):
            block[:8] = index.to_bytes(8, "little")
            output.write(block)
            digest.update(block)
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(4 * MIB):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("copy-root")
    expected = _write_big_file(root / "big.bin")
    os.chmod(root / "big.bin", 0o640)
    yield root, expected
    for name in ("big.bin", "copy.bin"):
        (root / name).unlink(missing_ok=True)


@pytest.mark.parametrize("mode", ["kernel", "buffer"])
def test_copying_a_large_file_streams_it(
    big_tree: tuple[Path, str], tmp_path: Path, mode: str
) -> None:
    """A 256 MiB copy (new, then over the old one) stays far below the file in memory."""
    root, expected = big_tree
    (root / "copy.bin").unlink(missing_ok=True)
    project = os.path.dirname(os.path.dirname(terax_jupyter.__file__))
    result = subprocess.run(
        [sys.executable, "-c", COPY_SCRIPT, str(root), str(tmp_path / "state"), mode],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": project},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    growth = json.loads(result.stdout.strip().splitlines()[-1])["growth_kib"] * 1024
    assert growth < MAX_GROWTH, f"the copy grew the process by {growth // MIB} MiB"
    copied = root / "copy.bin"
    assert copied.stat().st_size == FILE_SIZE
    assert _sha256(copied) == expected
    assert oct(copied.stat().st_mode & 0o777) == oct(0o640)  # the mode came along
    # Nothing of the temporary file is left beside the target.
    assert sorted(p.name for p in root.iterdir()) == ["big.bin", "copy.bin"]


def test_the_copy_primitive_carries_on_where_the_kernel_stopped(tmp_path: Path) -> None:
    """A kernel copy that fails part-way (or is missing) leaves the rest to the next way."""
    data = os.urandom(3 * MIB + 123)
    (tmp_path / "in").write_bytes(data)
    calls = {"range": 0}

    def range_then_fail(reader: int, writer: int) -> int:
        calls["range"] += 1
        if calls["range"] > 1:
            raise OSError(errno.EXDEV, "cross-device")  # after one chunk
        return os.copy_file_range(reader, writer, MIB)

    def no_sendfile(reader: int, writer: int) -> int:
        raise OSError(errno.ENOSYS, "no sendfile")

    original = fileio._copy_file_range, fileio._sendfile
    fileio._copy_file_range, fileio._sendfile = range_then_fail, no_sendfile
    try:
        reader = os.open(tmp_path / "in", os.O_RDONLY)
        writer = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            assert fileio.copy_descriptor(reader, writer) == len(data)
        finally:
            os.close(reader)
            os.close(writer)
    finally:
        fileio._copy_file_range, fileio._sendfile = original
    assert (tmp_path / "out").read_bytes() == data


def test_a_real_failure_of_the_kernel_copy_is_not_hidden(tmp_path: Path) -> None:
    """ENOSPC is not "this way does not work here": no silent fallback, no short copy."""
    (tmp_path / "in").write_bytes(b"x" * 100)

    def disk_full(reader: int, writer: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    original = fileio._copy_file_range
    fileio._copy_file_range = disk_full
    reader = os.open(tmp_path / "in", os.O_RDONLY)
    writer = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with pytest.raises(OSError, match="No space left") as caught:
            fileio.copy_descriptor(reader, writer)
        assert caught.value.errno == errno.ENOSPC
    finally:
        fileio._copy_file_range = original
        os.close(reader)
        os.close(writer)


# -- watch sockets --------------------------------------------------------------------------------

WATCH_CAP = 40
FOLDERS = 20


async def _status(server: LiveTerax, client: AsyncHTTPClient) -> None:
    """/api/status answers (a generous bound: a stall used to last 30 s, or forever)."""
    response = await client.fetch(
        f"{server.url}api/status", headers=server.headers, request_timeout=5
    )
    assert response.code == 200


async def _watch(server: LiveTerax, folder: str) -> WebSocketClientConnection:
    url = server.url.replace("http://", "ws://") + "terax/api/fs/watch"
    socket = await websocket_connect(HTTPRequest(url, headers=server.headers))
    socket.write_message(json.dumps({"op": "subscribe", "id": "a", "path": folder}))
    reply = json.loads(await asyncio.wait_for(socket.read_message(), 10))
    assert reply["type"] == "subscribed", reply
    return socket


def _churn(root: Path, stop: threading.Event) -> None:
    """Change files in every watched folder until told to stop (bounded: at most ~60 s)."""
    for round_ in range(6000):
        if stop.is_set():
            return
        for index in range(FOLDERS):
            (root / f"d{index}" / f"f{round_ % 5}.txt").write_text(str(round_))
        time.sleep(0.01)


def test_watch_sockets_up_to_the_cap_leave_the_server_answering(tmp_path: Path) -> None:
    """The cap's worth of watch sockets, files changing all the while, sockets closing in the
    middle of it: the server keeps answering, and the socket past the cap is refused.

    Closing a socket unscheduled its watch while holding the lock the observer's thread
    takes to dispatch an event, with the observer's own lock held: the event loop froze.
    """
    home, root = tmp_path / "home", tmp_path / "root"
    home.mkdir()
    for index in range(FOLDERS):
        (root / f"d{index}").mkdir(parents=True)
    server = start_live_server(
        home, root, config={"TeraxApp": {"max_websockets_per_user": WATCH_CAP}}
    )
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(root, stop), daemon=True)

    async def scenario() -> None:
        client = AsyncHTTPClient()
        sockets = [await _watch(server, f"d{i % FOLDERS}") for i in range(WATCH_CAP)]
        with pytest.raises(HTTPClientError) as caught:
            await _watch(server, "d0")
        assert caught.value.code == 503
        body = error_of(caught.value)
        assert body["reason"] == "too_many_connections"
        assert "TeraxApp.max_websockets_per_user" in body["message"]
        churn.start()
        await asyncio.sleep(0.5)
        await _status(server, client)
        # Close them while events keep coming, and keep asking the server.
        for index, socket in enumerate(sockets):
            socket.close()
            if index % 5 == 4:
                await asyncio.sleep(0.05)
                await _status(server, client)
        await asyncio.sleep(0.5)
        await _status(server, client)
        # Every slot came back: the cap's worth opens again, events still flow.
        sockets = [await _watch(server, f"d{i % FOLDERS}") for i in range(WATCH_CAP)]
        message = json.loads(await asyncio.wait_for(sockets[-1].read_message(), 10))
        assert message["type"] in ("changes", "overflow"), message
        await _status(server, client)
        for socket in sockets:
            socket.close()

    try:
        asyncio.run(scenario())
    except BaseException:
        print(server.log_tail())
        raise
    finally:
        stop.set()
        if churn.is_alive():
            churn.join(timeout=10)
        server.stop()
