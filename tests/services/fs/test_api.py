"""The file-system API over HTTP and WebSocket, under a plain and a JupyterHub-style base URL."""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
import os
import stat
import time
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url

NO_RIPGREP = "/nonexistent/bin/rg"


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    """Call the API expecting an error; return the status and the JSON error body."""
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    body = error_of(caught.value)
    assert set(body) == {"message", "reason"}
    return caught.value.code, body


def file_contents(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def ndjson(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    assert text.endswith("\n")
    return [json.loads(line) for line in lines]


# -- read -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "encoding", "text"),
    [
        ("héllo ✓\n".encode(), "utf-8", "héllo ✓\n"),
        (codecs.BOM_UTF8 + b"with bom\n", "utf-8-sig", "with bom\n"),
        ("wide ✓\n".encode("utf-16"), "utf-16", "wide ✓\n"),
        ("café crème à la française\n".encode("latin-1"), "cp1252", "café crème à la française\n"),
    ],
    ids=["utf-8", "utf-8-bom", "utf-16", "latin-1"],
)
async def test_read_text(
    workspace: Path, terax_api: Api, data: bytes, encoding: str, text: str
) -> None:
    (workspace / "sample.txt").write_bytes(data)
    result = await terax_api("fs/file", params={"path": "sample.txt"})
    assert (result["content"], result["encoding"], result["binary"]) == (text, encoding, False)
    assert (result["path"], result["name"], result["type"], result["size"]) == (
        "sample.txt",
        "sample.txt",
        "file",
        len(data),
    )
    assert result["root"] == str(workspace)


async def test_read_binary(workspace: Path, terax_api: Api) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(200))
    (workspace / "image.png").write_bytes(data)
    result = await terax_api("fs/file", params={"path": "image.png"})
    assert (result["binary"], result["encoding"]) == (True, "base64")
    assert base64.b64decode(result["content"]) == data
    code, body = await failure(terax_api, "fs/file", params={"path": "image.png", "format": "text"})
    assert (code, body["reason"]) == (415, "binary_file")
    code, body = await failure(terax_api, "fs/file", params={"path": "image.png", "format": "yaml"})
    assert (code, body["reason"]) == (400, "invalid_parameter")


@pytest.mark.parametrize("terax_config", [{"FileManager": {"max_read_bytes": 64}}])
async def test_read_size_cap(workspace: Path, terax_api: Api) -> None:
    (workspace / "big.txt").write_text("y" * 65)
    code, body = await failure(terax_api, "fs/file", params={"path": "big.txt"})
    assert (code, body["reason"]) == (413, "too_large")
    assert "64 bytes" in body["message"]
    info = await terax_api("info")
    assert info["limits"]["max_read_bytes"] == 64


async def test_read_errors(workspace: Path, terax_api: Api) -> None:
    cases = {
        ".env": (403, "path_denied"),
        "src/../.env": (403, "path_denied"),
        "../outside.txt": (403, "outside_workspace"),
        "/etc/passwd": (403, "path_denied"),
        "src/none.py": (404, "not_found"),
        "src": (415, "not_a_file"),
        "": (400, "invalid_path"),
    }
    for path, expected in cases.items():
        code, body = await failure(terax_api, "fs/file", params={"path": path})
        assert (code, body["reason"]) == expected, path
        assert "never-read-me" not in body["message"]
    code, body = await failure(terax_api, "fs/file")
    assert (code, body["reason"]) == (400, "missing_parameter")


async def test_query_values_arrive_exactly(workspace: Path, terax_api: Api) -> None:
    (workspace / "trailing ").write_text("odd name\n")
    (workspace / "spaced.txt").write_text("x  y\nxy\n")
    assert (await terax_api("fs/file", params={"path": "trailing "}))["content"] == "odd name\n"
    files, _ = await grep(terax_api, pattern=" y", include="spaced.txt")
    assert [m["line"] for f in files for m in f["matches"]] == [1]
    # A control character is refused, not quietly turned into a space.
    code, body = await failure(terax_api, "fs/file", params={"path": "src/app.py\x01"})
    assert (code, body["reason"]) == (400, "invalid_path")
    code, body = await failure(terax_api, "fs/grep", params={"pattern": "a\x00b"})
    assert (code, body["reason"]) == (400, "invalid_pattern")


async def test_etag_changes_with_the_content(workspace: Path, terax_api: Api) -> None:
    first = await terax_api("fs/file", params={"path": "README.md"})
    again = await terax_api("fs/file", params={"path": "README.md"})
    assert first["etag"] == again["etag"]
    (workspace / "README.md").write_text("# Different\n")
    changed = await terax_api("fs/file", params={"path": "README.md"})
    assert changed["etag"] != first["etag"]


# -- write ----------------------------------------------------------------------------------------


async def test_write_create_then_update(workspace: Path, terax_api: Api) -> None:
    created = await terax_api(
        "fs/file", method="PUT", body={"path": "src/new.py", "content": "A = 1\n"}
    )
    assert (workspace / "src/new.py").read_text() == "A = 1\n"
    assert created["path"] == "src/new.py"
    code, body = await failure(
        terax_api, "fs/file", method="PUT", body={"path": "src/new.py", "content": "A = 2\n"}
    )
    assert (code, body["reason"]) == (409, "already_exists")
    updated = await terax_api(
        "fs/file",
        method="PUT",
        body={"path": "src/new.py", "content": "A = 3\n", "etag": created["etag"]},
    )
    assert (workspace / "src/new.py").read_text() == "A = 3\n"
    read = await terax_api("fs/file", params={"path": "src/new.py"})
    assert read["etag"] == updated["etag"]
    await terax_api(
        "fs/file",
        method="PUT",
        body={"path": "src/new.py", "content": "A = 4\n", "overwrite": True},
    )
    assert (workspace / "src/new.py").read_text() == "A = 4\n"


async def test_write_with_stale_etag_leaves_the_file(workspace: Path, terax_api: Api) -> None:
    etag = (await terax_api("fs/file", params={"path": "src/app.py"}))["etag"]
    (workspace / "src/app.py").write_text("edited elsewhere\n")
    code, body = await failure(
        terax_api,
        "fs/file",
        method="PUT",
        body={"path": "src/app.py", "content": "mine\n", "etag": etag},
    )
    assert (code, body["reason"]) == (409, "stale_version")
    assert (workspace / "src/app.py").read_text() == "edited elsewhere\n"


async def test_write_keeps_mode_and_is_atomic(workspace: Path, terax_api: Api) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o750)
    inode = script.stat().st_ino
    etag = (await terax_api("fs/file", params={"path": "run.sh"}))["etag"]
    result = await terax_api(
        "fs/file",
        method="PUT",
        body={"path": "run.sh", "content": "#!/bin/sh\necho new\n", "etag": etag},
    )
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert result["mode"] == "750"
    assert script.stat().st_ino != inode
    assert not [name for name in os.listdir(workspace) if ".terax-" in name]


async def test_write_base64_and_encodings(workspace: Path, terax_api: Api) -> None:
    data = bytes(range(256))
    await terax_api(
        "fs/file",
        method="PUT",
        body={"path": "all.bin", "content": base64.b64encode(data).decode(), "encoding": "base64"},
    )
    assert (workspace / "all.bin").read_bytes() == data
    code, body = await failure(
        terax_api,
        "fs/file",
        method="PUT",
        body={"path": "x.txt", "content": "€", "encoding": "latin-1"},
    )
    assert (code, body["reason"]) == (415, "unencodable")
    code, body = await failure(
        terax_api,
        "fs/file",
        method="PUT",
        body={"path": "x.txt", "content": "x", "encoding": "klingon"},
    )
    assert (code, body["reason"]) == (415, "unknown_encoding")
    assert not (workspace / "x.txt").exists()


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"content": "x"}, "missing_parameter"),
        ({"path": "a.txt"}, "invalid_parameter"),
        ({"path": 3, "content": "x"}, "invalid_parameter"),
        ({"path": "a.txt", "content": "x", "etag": 5}, "invalid_parameter"),
        ({"path": "a.txt", "content": "x", "overwrite": "perhaps"}, "invalid_parameter"),
        ({"path": "a\x00.txt", "content": "x"}, "invalid_path"),
    ],
)
async def test_write_rejects_malformed_bodies(
    workspace: Path, terax_api: Api, body: Any, reason: str
) -> None:
    code, error = await failure(terax_api, "fs/file", method="PUT", body=body)
    assert (code, error["reason"]) == (400, reason)


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]", "null", "\xff"])
async def test_write_rejects_bodies_that_are_not_objects(
    workspace: Path, jp_fetch: Any, raw: str
) -> None:
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(
            "terax",
            "api",
            "fs",
            "file",
            method="PUT",
            body=raw.encode("latin-1"),
            allow_nonstandard_methods=True,
        )
    assert caught.value.code == 400
    assert error_of(caught.value)["reason"] in ("missing_body", "invalid_json")


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/post-checkout", ".env", "config/.env.local"]
)
async def test_write_into_protected_places_is_refused(
    workspace: Path, terax_api: Api, path: str
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git/config").write_text("[core]\n")
    code, body = await failure(
        terax_api, "fs/file", method="PUT", body={"path": path, "content": "x", "overwrite": True}
    )
    assert (code, body["reason"]) == (403, "path_denied")
    assert (workspace / ".git/config").read_text() == "[core]\n"
    assert (workspace / ".env").read_text() == "API_TOKEN=never-read-me\n"
    assert not (workspace / ".git/hooks").exists()


@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"read_only": True}}])
async def test_read_only_server_refuses_writes(workspace: Path, terax_api: Api) -> None:
    before = file_contents(workspace)
    attempts: list[tuple[str, dict[str, Any]]] = [
        (
            "fs/file",
            {"method": "PUT", "body": {"path": "README.md", "content": "x", "overwrite": True}},
        ),
        ("fs/file", {"method": "PUT", "body": {"path": "new.txt", "content": "x"}}),
        ("fs/file", {"method": "DELETE", "params": {"path": "README.md"}}),
        ("fs/create", {"method": "POST", "body": {"path": "dir", "type": "directory"}}),
        ("fs/rename", {"method": "POST", "body": {"path": "README.md", "new_path": "R.md"}}),
        ("fs/copy", {"method": "POST", "body": {"path": "README.md", "new_path": "R.md"}}),
    ]
    for path, kwargs in attempts:
        code, body = await failure(terax_api, path, **kwargs)
        assert (code, body["reason"]) == (403, "read_only"), (path, kwargs)
    assert file_contents(workspace) == before
    assert (await terax_api("fs/file", params={"path": "README.md"}))["content"].startswith(
        "# Demo"
    )
    assert (await terax_api("info"))["read_only"] is True


# -- stat, list, create, rename, copy, delete -----------------------------------------------------


async def test_stat_and_list(workspace: Path, terax_api: Api) -> None:
    (workspace / "build").mkdir()
    (workspace / "to-readme").symlink_to(workspace / "README.md")
    info = await terax_api("fs/stat", params={"path": "to-readme"})
    assert info["type"] == "symlink"
    info = await terax_api("fs/stat", params={"path": "src"})
    assert (info["type"], info["path"]) == ("directory", "src")
    listing = await terax_api("fs/list")
    assert listing["path"] == ""
    rows = {row["name"]: row for row in listing["entries"]}
    kinds = [row["type"] == "directory" for row in listing["entries"]]
    assert kinds == sorted(kinds, reverse=True), "folders first"
    assert (rows[".env"]["denied"], rows[".env"]["hidden"]) == (True, True)
    assert (rows["debug.log"]["ignored"], rows["build"]["ignored"]) == (True, True)
    assert (rows["src"]["ignored"], rows["src"]["denied"]) == (False, False)
    assert (rows["to-readme"]["type"], rows["to-readme"]["target_type"]) == ("symlink", "file")
    no_hidden = await terax_api("fs/list", params={"hidden": "false"})
    assert ".env" not in {row["name"] for row in no_hidden["entries"]}
    code, body = await failure(terax_api, "fs/list", params={"path": "README.md"})
    assert (code, body["reason"]) == (400, "not_a_directory")
    code, body = await failure(terax_api, "fs/list", params={"hidden": "sometimes"})
    assert (code, body["reason"]) == (400, "invalid_parameter")
    code, _ = await failure(terax_api, "fs/stat", params={"path": "absent"})
    assert code == 404


async def test_create(workspace: Path, terax_api: Api) -> None:
    made = await terax_api(
        "fs/create", method="POST", body={"path": "a/b/c", "type": "directory", "parents": True}
    )
    assert made["type"] == "directory"
    assert (workspace / "a/b/c").is_dir()
    made = await terax_api("fs/create", method="POST", body={"path": "a/note.txt", "content": "hi"})
    assert made["type"] == "file"
    assert (workspace / "a/note.txt").read_text() == "hi"
    for body, expected in [
        ({"path": "a/note.txt"}, (409, "already_exists")),
        ({"path": "a", "type": "directory"}, (409, "already_exists")),
        ({"path": "x/y/z", "type": "directory"}, (404, "not_found")),
        ({"path": "thing", "type": "fifo"}, (400, "invalid_parameter")),
        ({"path": ".env.test"}, (403, "path_denied")),
        ({"path": "../escape.txt"}, (403, "outside_workspace")),
    ]:
        code, error = await failure(terax_api, "fs/create", method="POST", body=body)
        assert (code, error["reason"]) == expected, body


async def test_rename_and_copy(workspace: Path, terax_api: Api) -> None:
    moved = await terax_api(
        "fs/rename", method="POST", body={"path": "src/util.py", "new_path": "src/helpers.py"}
    )
    assert moved["path"] == "src/helpers.py"
    assert not (workspace / "src/util.py").exists()
    code, body = await failure(
        terax_api,
        "fs/rename",
        method="POST",
        body={"path": "src/helpers.py", "new_path": "src/app.py"},
    )
    assert (code, body["reason"]) == (409, "already_exists")
    await terax_api(
        "fs/rename",
        method="POST",
        body={"path": "src/helpers.py", "new_path": "src/app.py", "overwrite": True},
    )
    assert (workspace / "src/app.py").read_text() == "HELLO = 'hello'\n"
    code, body = await failure(
        terax_api, "fs/rename", method="POST", body={"path": "src", "new_path": "src/deeper"}
    )
    assert (code, body["reason"]) == (400, "move_into_self")
    code, body = await failure(
        terax_api, "fs/rename", method="POST", body={"path": "", "new_path": "x"}
    )
    assert code == 400

    (workspace / "src/.env.development").write_text("TOKEN=abc\n")
    copied = await terax_api("fs/copy", method="POST", body={"path": "src", "new_path": "src-copy"})
    assert copied["type"] == "directory"
    assert sorted(os.listdir(workspace / "src-copy")) == ["app.py"]
    code, body = await failure(
        terax_api, "fs/copy", method="POST", body={"path": "src", "new_path": "src/again"}
    )
    assert (code, body["reason"]) == (400, "copy_into_self")
    code, body = await failure(
        terax_api, "fs/copy", method="POST", body={"path": "README.md", "new_path": "src/app.py"}
    )
    assert (code, body["reason"]) == (409, "already_exists")
    await terax_api(
        "fs/copy",
        method="POST",
        body={"path": "README.md", "new_path": "src/app.py", "overwrite": True},
    )
    assert (workspace / "src/app.py").read_text() == (workspace / "README.md").read_text()
    code, body = await failure(
        terax_api, "fs/copy", method="POST", body={"path": ".env", "new_path": "leak.txt"}
    )
    assert (code, body["reason"]) == (403, "path_denied")
    assert not (workspace / "leak.txt").exists()


class TestDelete:
    @pytest.fixture
    def terax_config(self, jp_root_dir: Path) -> dict[str, Any]:
        """An admin root inside the server root: neither it nor a folder holding it may go."""
        inner = jp_root_dir / "packages" / "inner"
        inner.mkdir(parents=True)
        return {"TeraxApp": {"extra_roots": [str(inner)]}}

    async def test_delete(self, workspace: Path, terax_api: Api) -> None:
        (workspace / "gone.txt").write_text("x")
        (workspace / "empty").mkdir()
        (workspace / "full").mkdir()
        (workspace / "full/file.txt").write_text("x")
        await terax_api("fs/file", method="DELETE", params={"path": "gone.txt"})
        assert not (workspace / "gone.txt").exists()
        await terax_api("fs/file", method="DELETE", params={"path": "empty"})
        assert not (workspace / "empty").exists()
        code, body = await failure(terax_api, "fs/file", method="DELETE", params={"path": "full"})
        assert (code, body["reason"]) == (409, "not_empty")
        await terax_api("fs/file", method="DELETE", params={"path": "full", "recursive": "true"})
        assert not (workspace / "full").exists()
        for path, expected in [
            ("", (400, "invalid_path")),
            (".", (403, "protected_path")),
            (str(workspace), (403, "protected_path")),
            ("packages", (403, "protected_path")),
            ("packages/inner", (403, "protected_path")),
            ("missing.txt", (404, "not_found")),
            (".env", (403, "path_denied")),
        ]:
            code, body = await failure(
                terax_api, "fs/file", method="DELETE", params={"path": path, "recursive": "true"}
            )
            assert (code, body["reason"]) == expected, path
        assert (workspace / "packages/inner").is_dir()
        assert (workspace / ".env").exists()


# -- fuzzy search and glob ------------------------------------------------------------------------


async def test_search(workspace: Path, terax_api: Api) -> None:
    (workspace / "node_modules/pkg").mkdir(parents=True)
    (workspace / "node_modules/pkg/app.js").write_text("")
    (workspace / ".git").mkdir()
    (workspace / ".git/app-config").write_text("")
    (workspace / "build").mkdir()
    (workspace / "build/app.py").write_text("")
    result = await terax_api("fs/search", params={"q": "sapp"})
    assert result["results"][0]["path"] == "src/app.py"
    paths = {
        r["path"]
        for r in (await terax_api("fs/search", params={"q": "app", "limit": "100"}))["results"]
    }
    assert paths == {"src/app.py"}
    everything = await terax_api("fs/search", params={"q": "", "limit": "1000"})
    listed = {r["path"] for r in everything["results"]}
    assert listed == {"src/app.py", "src/util.py", "README.md", ".gitignore"}
    assert everything["total_files"] == 4
    inner = await terax_api("fs/search", params={"q": "py", "path": "src"})
    assert {r["path"] for r in inner["results"]} == {"src/app.py", "src/util.py"}
    for params, expected in [
        ({"q": "x", "limit": "0"}, (400, "invalid_parameter")),
        ({"q": "x", "limit": "many"}, (400, "invalid_parameter")),
        ({"q": "x", "path": "README.md"}, (400, "not_a_directory")),
        ({"q": "x", "path": ".git"}, (403, "path_denied")),
        ({"q": "x", "path": "nowhere"}, (404, "not_found")),
    ]:
        code, body = await failure(terax_api, "fs/search", params=params)
        assert (code, body["reason"]) == expected, params


async def test_search_sees_files_created_through_the_api(workspace: Path, terax_api: Api) -> None:
    assert not (await terax_api("fs/search", params={"q": "brandnew"}))["results"]
    await terax_api("fs/file", method="PUT", body={"path": "src/brandnew.py", "content": ""})
    await terax_api(
        "fs/rename", method="POST", body={"path": "src/util.py", "new_path": "src/renamed_util.py"}
    )
    deadline = time.monotonic() + 5
    while True:
        paths = {
            r["path"]
            for r in (await terax_api("fs/search", params={"q": "", "limit": "100"}))["results"]
        }
        if (
            "src/brandnew.py" in paths
            and "src/renamed_util.py" in paths
            and "src/util.py" not in paths
        ):
            break
        assert time.monotonic() < deadline, paths
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("terax_config", [{"WatchService": {"debounce": 0.05}}])
async def test_search_sees_files_created_on_disk_while_watched(
    workspace: Path, terax_api: Api, jp_ws_fetch: Any
) -> None:
    assert not (await terax_api("fs/search", params={"q": "fromterminal"}))["results"]
    ws = await jp_ws_fetch("terax", "api", "fs", "watch")
    try:
        ws.write_message(json.dumps({"op": "subscribe", "id": "w", "path": ""}))
        assert (await receive(ws))["type"] == "subscribed"
        (workspace / "src/fromterminal.py").write_text("")
        deadline = time.monotonic() + 5
        while not (await terax_api("fs/search", params={"q": "fromterminal"}))["results"]:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
    finally:
        ws.close()


async def test_glob(workspace: Path, terax_api: Api) -> None:
    (workspace / "docs").mkdir()
    (workspace / "docs/guide.md").write_text("")
    cases = {
        "**/*.py": ["src/app.py", "src/util.py"],
        "*.md": ["README.md"],
        "**/*.md": ["README.md", "docs/guide.md"],
        "src/{app,util}.py": ["src/app.py", "src/util.py"],
        "**/.env": [],
        "*.log": [],
    }
    for pattern, expected in cases.items():
        result = await terax_api("fs/glob", params={"pattern": pattern})
        assert result["paths"] == expected, pattern
        assert result["pattern"] == pattern
    inner = await terax_api("fs/glob", params={"pattern": "*.py", "path": "src"})
    assert inner["paths"] == ["src/app.py", "src/util.py"]
    for params in ({"pattern": ""}, {"pattern": "{1..99999999}"}, {}):
        code, body = await failure(terax_api, "fs/glob", params=params)
        assert code == 400, params
        assert body["reason"] in ("invalid_pattern", "missing_parameter")


# -- grep (both engines) --------------------------------------------------------------------------


ENGINE_CONFIGS = [
    pytest.param({}, id="ripgrep"),
    pytest.param(
        {"GrepSearch": {"ripgrep_path": NO_RIPGREP}, "FileSearch": {"ripgrep_path": NO_RIPGREP}},
        id="python",
    ),
]


@pytest.fixture
def engine(terax_config: dict[str, Any]) -> str:
    return "python" if "GrepSearch" in terax_config else "ripgrep"


async def grep(api: Api, **params: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    items = ndjson(await api("fs/grep", params=params))
    assert items[-1]["type"] == "summary"
    return items[:-1], items[-1]


@pytest.mark.parametrize("terax_config", ENGINE_CONFIGS)
async def test_grep_stream(workspace: Path, terax_api: Api, jp_fetch: Any, engine: str) -> None:
    (workspace / "intl.txt").write_text("héllo wörld\n")
    (workspace / "blob.bin").write_bytes(b"hello\x00\x01")
    response = await jp_fetch("terax", "api", "fs", "grep", params={"pattern": "hello"})
    assert response.headers["Content-Type"] == "application/x-ndjson"
    files, summary = await grep(terax_api, pattern="hello")
    by_path = {f["path"]: f["matches"] for f in files}
    assert set(by_path) == {"src/app.py", "src/util.py", "README.md"}
    assert by_path["src/util.py"] == [
        {"line": 1, "text": "HELLO = 'hello'", "ranges": [[0, 5], [9, 14]], "offset": 0}
    ]
    assert (summary["files"], summary["matches"], summary["engine"]) == (3, 3, engine)
    assert (await terax_api("info"))["grep_engine"] == engine
    files, _ = await grep(terax_api, pattern="wörld")
    assert files == [
        {
            "type": "file",
            "path": "intl.txt",
            "truncated": False,
            "matches": [{"line": 1, "text": "héllo wörld", "ranges": [[6, 11]], "offset": 0}],
        }
    ]


@pytest.mark.parametrize("terax_config", ENGINE_CONFIGS)
async def test_grep_options(workspace: Path, terax_api: Api, engine: str) -> None:
    (workspace / "words.txt").write_text("hell\nHello\nh.llo\nshell\n")
    options: list[tuple[dict[str, Any], list[int]]] = [
        ({"pattern": "h.llo"}, [3]),
        ({"pattern": "h.llo", "regex": "true"}, [2, 3]),
        ({"pattern": "hell", "word": "true"}, [1]),
        ({"pattern": "Hello"}, [2]),
        ({"pattern": "hello", "case": "sensitive"}, []),
        ({"pattern": "HELLO", "case": "insensitive"}, [2]),
    ]
    for params, lines in options:
        files, _ = await grep(terax_api, include="words.txt", **params)
        found = [m["line"] for f in files for m in f["matches"]]
        assert found == lines, (params, engine)
    files, _ = await grep(terax_api, pattern="hello", include="*.md,src/*.py", exclude="util.py")
    assert {f["path"] for f in files} == {"README.md", "src/app.py"}
    # A comma inside braces belongs to the glob, not the list.
    files, _ = await grep(terax_api, pattern="hello", include="*.{md,txt},app.py")
    assert {f["path"] for f in files} == {"README.md", "src/app.py", "words.txt"}
    files, summary = await grep(terax_api, pattern="l", max_results="2")
    assert (sum(len(f["matches"]) for f in files), summary["truncated"]) == (2, True)


@pytest.mark.parametrize("terax_config", ENGINE_CONFIGS)
async def test_grep_refusals(workspace: Path, terax_api: Api, engine: str) -> None:
    for params, expected in [
        ({"pattern": "(", "regex": "true"}, (400, "invalid_pattern")),
        ({"pattern": ""}, (400, "invalid_pattern")),
        ({}, (400, "missing_parameter")),
        ({"pattern": "x", "case": "shouty"}, (400, "invalid_parameter")),
        ({"pattern": "x", "max_results": "0"}, (400, "invalid_parameter")),
        ({"pattern": "x", "path": ".git"}, (403, "path_denied")),
        ({"pattern": "x", "path": "../"}, (403, "outside_workspace")),
        ({"pattern": "x", "path": "nowhere"}, (404, "not_found")),
        ({"pattern": "x", "path": "README.md"}, (400, "not_a_directory")),
        ({"pattern": "x", "include": "{1..99999999}"}, (400, "invalid_pattern")),
    ]:
        code, body = await failure(terax_api, "fs/grep", params=params)
        assert (code, body["reason"]) == expected, (params, engine)
    for pattern in ("never-read-me", "API_TOKEN"):
        files, summary = await grep(terax_api, pattern=pattern)
        assert (files, summary["matches"]) == ([], 0)
    files, _ = await grep(terax_api, pattern="hello log")
    assert files == []


# -- watch WebSocket ------------------------------------------------------------------------------


async def receive(ws: Any, timeout: float = 5.0) -> dict[str, Any]:
    message = await asyncio.wait_for(ws.read_message(), timeout)
    assert message is not None, "the server closed the connection"
    return json.loads(message)  # type: ignore[no-any-return]


async def quiet(ws: Any, seconds: float) -> list[dict[str, Any]]:
    """Everything the server sends within ``seconds``."""
    received = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            received.append(await receive(ws, left))
        except asyncio.TimeoutError:
            break
    return received


@pytest.mark.parametrize("terax_config", [{"WatchService": {"debounce": 0.5}}])
async def test_watch_delivers_one_batch(workspace: Path, jp_ws_fetch: Any) -> None:
    ws = await jp_ws_fetch("terax", "api", "fs", "watch")
    try:
        ws.write_message(json.dumps({"op": "subscribe", "id": "root", "path": ""}))
        assert await receive(ws) == {"type": "subscribed", "id": "root", "path": ""}
        (workspace / "src/new.py").write_text("x = 1\n")
        (workspace / "README.md").write_text("# changed\n")
        (workspace / "src/util.py").unlink()
        (workspace / ".env").write_text("API_TOKEN=rotated\n")
        (workspace / ".git").mkdir()
        (workspace / ".git/HEAD").write_text("ref: refs/heads/main\n")
        batch = await receive(ws)
        more = await quiet(ws, 0.8)
        assert more == [], "changes made together arrive as one batch"
        assert (batch["type"], batch["id"]) == ("changes", "root")
        events = {(e["kind"], e["path"]) for e in batch["events"]}
        assert {
            ("created", "src/new.py"),
            ("modified", "README.md"),
            ("deleted", "src/util.py"),
        } <= events
        assert not [p for _, p in events if p.startswith((".env", ".git"))]
        # git's HEAD changed: the repository (here the root) is named, never its internals.
        assert ("repository", "") in events

        ws.write_message(json.dumps({"op": "unsubscribe", "id": "root"}))
        assert await receive(ws) == {"type": "unsubscribed", "id": "root"}
        (workspace / "after.txt").write_text("x")
        assert await quiet(ws, 0.8) == []
    finally:
        ws.close()


@pytest.mark.parametrize("terax_config", [{"WatchService": {"debounce": 0.3}}])
async def test_watch_tells_a_folder_in_a_repository_about_commits(
    workspace: Path, jp_ws_fetch: Any
) -> None:
    # A commit made outside Terax (a terminal) changes only files under .git: subscribers
    # anywhere in the work tree hear "repository changed", and nothing of .git itself.
    repo = workspace / "proj"
    (repo / "lib").mkdir(parents=True)
    (repo / "lib/a.py").write_text("a = 1\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
    }

    async def git(*args: str) -> None:
        process = await asyncio.create_subprocess_exec("git", "-C", str(repo), *args, env=env)
        assert await process.wait() == 0, args

    await git("init", "-q", "-b", "main")
    await git("add", "-A")
    ws = await jp_ws_fetch("terax", "api", "fs", "watch")
    try:
        ws.write_message(json.dumps({"op": "subscribe", "id": "lib", "path": "proj/lib"}))
        assert (await receive(ws))["type"] == "subscribed"
        await quiet(ws, 0.5)
        await git("commit", "-q", "-m", "first")
        batch = await receive(ws)
        assert batch["type"] == "changes"
        assert [(e["kind"], e["path"]) for e in batch["events"]] == [("repository", "proj")]
        await git("switch", "-q", "-c", "topic")
        batch = await receive(ws)
        assert [(e["kind"], e["path"]) for e in batch["events"]] == [("repository", "proj")]
    finally:
        ws.close()


async def test_watch_bad_messages_get_error_frames(workspace: Path, jp_ws_fetch: Any) -> None:
    ws = await jp_ws_fetch("terax", "api", "fs", "watch")
    try:
        bad: list[tuple[Any, str]] = [
            ("not json", "invalid_json"),
            (json.dumps([1]), "invalid_message"),
            (json.dumps({"op": "subscribe"}), "missing_parameter"),
            (json.dumps({"op": "dance", "id": "a"}), "invalid_message"),
            (json.dumps({"op": "subscribe", "id": "a", "path": 5}), "invalid_parameter"),
            (json.dumps({"op": "subscribe", "id": "a", "recursive": "maybe"}), "invalid_parameter"),
            (json.dumps({"op": "subscribe", "id": "a", "path": ".git"}), "path_denied"),
            (json.dumps({"op": "subscribe", "id": "a", "path": "../.."}), "outside_workspace"),
            (json.dumps({"op": "subscribe", "id": "a", "path": "README.md"}), "not_a_directory"),
            (json.dumps({"op": "subscribe", "id": "a", "path": "nowhere"}), "not_found"),
            (json.dumps({"op": "unsubscribe", "id": "never"}), "unknown_id"),
            (b"\x00binary", "invalid_message"),
            ("x" * (64 * 1024 + 1), "invalid_message"),
        ]
        for message, reason in bad:
            ws.write_message(message, binary=isinstance(message, bytes))
            reply = await receive(ws)
            assert (reply["type"], reply["reason"]) == ("error", reason), message
        ws.write_message(json.dumps({"op": "subscribe", "id": "a", "path": "src"}))
        assert (await receive(ws))["type"] == "subscribed"
        ws.write_message(json.dumps({"op": "subscribe", "id": "a", "path": "src"}))
        assert (await receive(ws))["reason"] == "duplicate_id"
    finally:
        ws.close()


@pytest.mark.parametrize("terax_config", [{"WatchService": {"debounce": 0.4, "max_pending": 5}}])
async def test_watch_flood_becomes_an_overflow_notice(workspace: Path, jp_ws_fetch: Any) -> None:
    ws = await jp_ws_fetch("terax", "api", "fs", "watch")
    try:
        ws.write_message(
            json.dumps({"op": "subscribe", "id": "flood", "path": "", "recursive": True})
        )
        assert (await receive(ws))["type"] == "subscribed"
        for index in range(40):
            (workspace / f"f{index}.txt").write_text("x")
        assert await receive(ws) == {"type": "overflow", "id": "flood"}
    finally:
        ws.close()
