"""FileManager, FileSearch, GrepSearch and WatchService without a server, on real files."""

from __future__ import annotations

import asyncio
import base64
import codecs
import os
import stat
import time
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.exceptions import (
    AlreadyExists,
    InvalidPattern,
    InvalidRequest,
    NotEmpty,
    NotFound,
    PathDenied,
    ProtectedPath,
    ReadOnlyMode,
    StaleVersion,
    TooLarge,
    Unsupported,
)
from terax_jupyter.services.fs import ripgrep
from terax_jupyter.services.fs.encoding import decode
from terax_jupyter.services.fs.grep import GrepQuery, GrepSearch
from terax_jupyter.services.fs.manager import FileManager
from terax_jupyter.services.fs.search import FileSearch
from terax_jupyter.services.fs.watch import WatchService

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from terax_jupyter.security import SecurityLayer

NO_RIPGREP = "/nonexistent/bin/rg"
ENGINES = {"ripgrep": "", "python": NO_RIPGREP}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project: sources, docs, a secret, ignored output, vendored and VCS folders."""
    root = tmp_path / "project"
    files = {
        "src/app.py": "def main():\n    print('hello terax')\n",
        "src/util.py": "HELLO = 'hello'\n",
        "README.md": "# Demo\n\nhello readme\n",
        ".env": "API_TOKEN=never-read-me hello\n",
        ".gitignore": "build/\n*.log\n",
        "debug.log": "hello log\n",
        "build/out.py": "hello build\n",
        "node_modules/pkg/index.js": "hello module\n",
        ".git/config": "[core]\nhello = git\n",
        "docs/guide.md": "hello guide\n",
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture
def security(terax_security: Callable[..., SecurityLayer], project: Path) -> SecurityLayer:
    return terax_security(project)


@pytest.fixture
def files(security: SecurityLayer) -> FileManager:
    return FileManager(security)


@pytest.fixture(params=sorted(ENGINES))
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tree(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*"))


async def wait_for(predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


# -- reading --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "encoding", "text"),
    [
        ("héllo wörld\n".encode(), "utf-8", "héllo wörld\n"),
        (codecs.BOM_UTF8 + "bom ✓\n".encode(), "utf-8-sig", "bom ✓\n"),
        ("utf sixteen ✓\n".encode("utf-16"), "utf-16", "utf sixteen ✓\n"),
        ("utf sixteen BE\n".encode("utf-16-be"), None, None),
    ],
    ids=["utf-8", "utf-8-bom", "utf-16", "utf-16-be-no-bom"],
)
async def test_read_detects_unicode_encodings(
    files: FileManager, project: Path, data: bytes, encoding: str | None, text: str | None
) -> None:
    (project / "sample.txt").write_bytes(data)
    result = await files.read("sample.txt")
    if encoding is None:
        # Without a BOM, UTF-16 has NUL bytes: it is binary, and returned byte for byte.
        assert result["binary"] is True
        assert base64.b64decode(result["content"]) == data
    else:
        assert (result["content"], result["encoding"], result["binary"]) == (text, encoding, False)


@pytest.mark.parametrize(
    "text",
    [
        "café crème à la française, où êtes-vous? Déjà vu.\n",
        "Hola señor, ¿qué tal? Año nuevo, mañana.\n",
        "naïve résumé\n",
    ],
)
async def test_read_detects_latin_1(files: FileManager, project: Path, text: str) -> None:
    (project / "legacy.txt").write_bytes(text.encode("latin-1"))
    result = await files.read("legacy.txt")
    assert result["binary"] is False
    assert result["content"] == text
    assert codecs.lookup(result["encoding"]).name != "utf-8"


async def test_read_binary_is_base64_and_text_format_refuses_it(
    files: FileManager, project: Path
) -> None:
    data = bytes(range(256)) * 4
    (project / "blob.bin").write_bytes(data)
    result = await files.read("blob.bin")
    assert (result["binary"], result["encoding"]) == (True, "base64")
    assert base64.b64decode(result["content"]) == data
    with pytest.raises(Unsupported) as caught:
        await files.read("blob.bin", format="text")
    assert caught.value.reason == "binary_file"
    as_base64 = await files.read("src/util.py", format="base64")
    assert base64.b64decode(as_base64["content"]) == b"HELLO = 'hello'\n"
    with pytest.raises(InvalidRequest):
        await files.read("src/util.py", format="hex")


async def test_read_survives_a_broken_byte_order_mark(files: FileManager, project: Path) -> None:
    # A UTF-16 BOM followed by an odd number of bytes cannot be UTF-16.
    data = codecs.BOM_UTF16_LE + b"A"
    (project / "odd.txt").write_bytes(data)
    result = await files.read("odd.txt")
    if result["binary"]:
        assert base64.b64decode(result["content"]) == data
    else:
        assert result["encoding"] not in ("utf-16", "utf-32")
    assert decode(codecs.BOM_UTF32_LE + b"\0\0").binary is True


async def test_read_size_cap_names_the_limit(security: SecurityLayer, project: Path) -> None:
    capped = FileManager(security, max_read_bytes=100)
    (project / "big.txt").write_text("x" * 101)
    (project / "fits.txt").write_text("x" * 100)
    with pytest.raises(TooLarge) as caught:
        await capped.read("big.txt")
    assert "100 bytes" in caught.value.message
    assert (await capped.read("fits.txt"))["size"] == 100


async def test_etag_follows_the_content(files: FileManager, project: Path) -> None:
    first = (await files.read("README.md"))["etag"]
    assert (await files.read("README.md"))["etag"] == first
    (project / "README.md").write_text("# Changed\n")
    assert (await files.read("README.md"))["etag"] != first


async def test_read_refuses_secrets_and_missing_files(files: FileManager) -> None:
    with pytest.raises(PathDenied):
        await files.read(".env")
    with pytest.raises(PathDenied):
        await files.read(".git/config")
    with pytest.raises(NotFound):
        await files.read("src/missing.py")
    with pytest.raises(Unsupported):
        await files.read("src")


# -- writing --------------------------------------------------------------------------------------


async def test_write_new_file_then_update_with_its_etag(files: FileManager, project: Path) -> None:
    created = await files.write("src/new.py", "x = 1\n")
    assert (project / "src/new.py").read_text() == "x = 1\n"
    assert created["etag"] == (await files.read("src/new.py"))["etag"]
    updated = await files.write("src/new.py", "x = 2\n", etag=created["etag"])
    assert (project / "src/new.py").read_text() == "x = 2\n"
    assert updated["etag"] != created["etag"]


async def test_write_existing_needs_etag_or_overwrite(files: FileManager, project: Path) -> None:
    with pytest.raises(AlreadyExists) as caught:
        await files.write("README.md", "lost\n")
    assert caught.value.reason == "already_exists"
    assert (project / "README.md").read_text() == "# Demo\n\nhello readme\n"
    await files.write("README.md", "replaced\n", overwrite=True)
    assert (project / "README.md").read_text() == "replaced\n"


async def test_write_with_a_stale_etag_changes_nothing(files: FileManager, project: Path) -> None:
    etag = (await files.read("README.md"))["etag"]
    (project / "README.md").write_text("someone else\n")
    with pytest.raises(StaleVersion):
        await files.write("README.md", "mine\n", etag=etag)
    assert (project / "README.md").read_text() == "someone else\n"
    (project / "README.md").unlink()
    with pytest.raises(StaleVersion):
        await files.write("README.md", "mine\n", etag=etag)
    assert not (project / "README.md").exists()


async def test_write_is_atomic_and_keeps_the_mode(files: FileManager, project: Path) -> None:
    target = project / "src/app.py"
    target.chmod(0o640)
    inode = target.stat().st_ino
    etag = (await files.read("src/app.py"))["etag"]
    result = await files.write("src/app.py", "print('new')\n", etag=etag)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert result["mode"] == "640"
    # Replaced by rename (a new inode), and no temporary file is left beside it.
    assert target.stat().st_ino != inode
    assert sorted(os.listdir(project / "src")) == ["app.py", "util.py"]


async def test_write_base64_and_encodings(files: FileManager, project: Path) -> None:
    data = b"\x00\x01binary\xff"
    await files.write("blob.bin", base64.b64encode(data).decode(), encoding="base64")
    assert (project / "blob.bin").read_bytes() == data
    await files.write("latin.txt", "café\n", encoding="latin-1")
    assert (project / "latin.txt").read_bytes() == b"caf\xe9\n"
    with pytest.raises(InvalidRequest):
        await files.write("bad.bin", "not base64!", encoding="base64")


@pytest.mark.parametrize(
    ("content", "encoding", "reason"),
    [
        ("naïve", "ascii", "unencodable"),
        ("€", "latin-1", "unencodable"),
        ("x", "no-such-codec", "unknown_encoding"),
        ("x", "utf\x00-8", "unknown_encoding"),
        ("x", "rot13", "unknown_encoding"),
        ("a..b", "idna", "unencodable"),
        ("x", "undefined", "unencodable"),
        ("\ud800", "utf-8", "unencodable"),
    ],
)
async def test_write_refuses_what_the_encoding_cannot_store(
    files: FileManager, project: Path, content: str, encoding: str, reason: str
) -> None:
    with pytest.raises(Unsupported) as caught:
        await files.write("enc.txt", content, encoding=encoding)
    assert caught.value.reason == reason
    assert not (project / "enc.txt").exists()


async def test_write_size_cap(security: SecurityLayer, project: Path) -> None:
    capped = FileManager(security, max_write_bytes=10)
    with pytest.raises(TooLarge) as caught:
        await capped.write("big.txt", "x" * 11)
    assert "10" in caught.value.message
    assert not (project / "big.txt").exists()


async def test_read_only_layer_refuses_every_mutation(
    terax_security: Callable[..., SecurityLayer], project: Path
) -> None:
    files = FileManager(terax_security(project, read_only=True))
    before = tree(project)
    mutations = [
        files.write("README.md", "x", overwrite=True),
        files.write("new.txt", "x"),
        files.create("newdir", kind="directory"),
        files.rename("README.md", "README2.md"),
        files.copy("README.md", "README2.md"),
        files.delete("README.md"),
    ]
    for mutation in mutations:
        with pytest.raises(ReadOnlyMode):
            await mutation
    assert tree(project) == before
    assert (project / "README.md").read_text() == "# Demo\n\nhello readme\n"
    assert (await files.read("README.md"))["content"].startswith("# Demo")


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", ".env", ".env.local", "src/id_rsa"]
)
async def test_write_into_protected_paths_is_denied(
    files: FileManager, project: Path, path: str
) -> None:
    with pytest.raises(PathDenied):
        await files.write(path, "x", overwrite=True)
    assert (project / ".env").read_text() == "API_TOKEN=never-read-me hello\n"
    assert not (project / ".git/hooks").exists()
    assert not (project / "src/id_rsa").exists()


# -- stat and list --------------------------------------------------------------------------------


async def test_stat_describes_a_symlink_without_following_it(
    files: FileManager, project: Path
) -> None:
    (project / "link.md").symlink_to(project / "README.md")
    assert (await files.stat("link.md"))["type"] == "symlink"
    assert (await files.stat("README.md"))["type"] == "file"
    assert (await files.stat("src"))["type"] == "directory"
    with pytest.raises(NotFound):
        await files.stat("nothing-here")


async def test_list_flags_and_order(files: FileManager, project: Path) -> None:
    (project / "link-to-src").symlink_to(project / "src", target_is_directory=True)
    listing = await files.list("")
    rows = {row["name"]: row for row in listing["entries"]}
    names = [row["name"] for row in listing["entries"]]
    directories = [row["name"] for row in listing["entries"] if row["type"] == "directory"]
    assert names[: len(directories)] == directories, "folders come first"
    assert directories == sorted(directories, key=str.lower)
    assert (rows[".env"]["denied"], rows[".env"]["hidden"]) == (True, True)
    assert rows[".git"]["denied"] is True
    assert (rows["README.md"]["denied"], rows["README.md"]["hidden"]) == (False, False)
    assert rows["debug.log"]["ignored"] is True
    assert rows["build"]["ignored"] is True
    assert rows["node_modules"]["ignored"] is True
    assert rows["src"]["ignored"] is False
    assert (rows["link-to-src"]["type"], rows["link-to-src"]["target_type"]) == (
        "symlink",
        "directory",
    )
    hidden_off = await files.list("", show_hidden=False)
    assert not [row for row in hidden_off["entries"] if row["name"].startswith(".")]
    inner = await files.list("src")
    assert inner["path"] == "src"
    assert [row["path"] for row in inner["entries"]] == ["src/app.py", "src/util.py"]


async def test_list_refuses_a_file_and_a_secret_folder(files: FileManager) -> None:
    with pytest.raises(InvalidRequest) as caught:
        await files.list("README.md")
    assert caught.value.reason == "not_a_directory"
    with pytest.raises(PathDenied):
        await files.list(".git")


# -- create, rename, copy, delete -----------------------------------------------------------------


async def test_create_files_and_folders(files: FileManager, project: Path) -> None:
    await files.create("notes.txt", kind="file", content="hi\n")
    assert (project / "notes.txt").read_text() == "hi\n"
    await files.create("a", kind="directory")
    assert (project / "a").is_dir()
    await files.create("deep/er/dir", kind="directory", parents=True)
    assert (project / "deep/er/dir").is_dir()
    await files.create("nested/file.txt", kind="file", parents=True)
    assert (project / "nested/file.txt").read_text() == ""
    with pytest.raises(AlreadyExists):
        await files.create("notes.txt", kind="file")
    with pytest.raises(AlreadyExists):
        await files.create("a", kind="directory")
    with pytest.raises(NotFound):
        await files.create("x/y/z", kind="directory")
    with pytest.raises(NotFound):
        await files.create("missing/file.txt", kind="file")
    with pytest.raises(InvalidRequest):
        await files.create("thing", kind="socket")
    with pytest.raises(PathDenied):
        await files.create(".env.production", kind="file")


async def test_rename_and_its_overwrite_rules(files: FileManager, project: Path) -> None:
    result = await files.rename("src/util.py", "src/helpers.py")
    assert result["path"] == "src/helpers.py"
    assert not (project / "src/util.py").exists()
    assert (project / "src/helpers.py").read_text() == "HELLO = 'hello'\n"
    with pytest.raises(AlreadyExists):
        await files.rename("src/helpers.py", "src/app.py")
    assert (project / "src/app.py").read_text().startswith("def main")
    await files.rename("src/helpers.py", "src/app.py", overwrite=True)
    assert (project / "src/app.py").read_text() == "HELLO = 'hello'\n"
    with pytest.raises(AlreadyExists):
        await files.rename("README.md", "docs", overwrite=True)
    with pytest.raises(InvalidRequest) as caught:
        await files.rename("docs", "docs/inner")
    assert caught.value.reason == "move_into_self"
    with pytest.raises(ProtectedPath):
        await files.rename(str(project), "elsewhere")
    with pytest.raises(PathDenied):
        await files.rename("README.md", ".env.backup")
    with pytest.raises(PathDenied):
        await files.rename(".env", "not-secret.txt")
    with pytest.raises(NotFound):
        await files.rename("ghost.txt", "ghost2.txt")


async def test_copy_files_and_folders(files: FileManager, project: Path) -> None:
    await files.copy("README.md", "README.copy.md")
    assert (project / "README.copy.md").read_text() == (project / "README.md").read_text()
    with pytest.raises(AlreadyExists):
        await files.copy("src/app.py", "src/util.py")
    assert (project / "src/util.py").read_text() == "HELLO = 'hello'\n"
    await files.copy("src/app.py", "src/util.py", overwrite=True)
    assert (project / "src/util.py").read_text().startswith("def main")
    # A folder copy leaves the secrets out.
    (project / "src/.env.local").write_text("SECRET=1\n")
    (project / "src/key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    await files.copy("src", "src-copy")
    assert sorted(os.listdir(project / "src-copy")) == ["app.py", "util.py"]
    with pytest.raises(InvalidRequest) as caught:
        await files.copy("docs", "docs/inner")
    assert caught.value.reason == "copy_into_self"
    assert not (project / "docs/inner").exists()
    with pytest.raises(PathDenied):
        await files.copy(".env", "env.txt")
    assert not (project / "env.txt").exists()


async def test_delete_rules(terax_security: Callable[..., SecurityLayer], project: Path) -> None:
    inner_root = project / "packages" / "inner"
    inner_root.mkdir(parents=True)
    files = FileManager(terax_security(project, extra_roots=(str(inner_root),)))
    await files.delete("debug.log")
    assert not (project / "debug.log").exists()
    (project / "empty").mkdir()
    await files.delete("empty")
    assert not (project / "empty").exists()
    with pytest.raises(NotEmpty):
        await files.delete("docs")
    assert (project / "docs/guide.md").exists()
    await files.delete("docs", recursive=True)
    assert not (project / "docs").exists()
    with pytest.raises(ProtectedPath):
        await files.delete(str(project), recursive=True)
    with pytest.raises(ProtectedPath):
        await files.delete("packages", recursive=True)
    with pytest.raises(ProtectedPath):
        await files.delete(str(inner_root), recursive=True)
    assert inner_root.is_dir()
    with pytest.raises(NotFound):
        await files.delete("ghost.txt")
    with pytest.raises(PathDenied):
        await files.delete(".env")
    assert (project / ".env").exists()


async def test_delete_a_symlink_removes_the_link_only(files: FileManager, project: Path) -> None:
    (project / "link-to-docs").symlink_to(project / "docs", target_is_directory=True)
    await files.delete("link-to-docs")
    assert not (project / "link-to-docs").is_symlink()
    assert (project / "docs/guide.md").exists()


async def test_mutations_tell_the_listeners(files: FileManager, project: Path) -> None:
    heard: list[tuple[str, str]] = []

    def broken(kind: str, path: str) -> None:
        raise RuntimeError("a listener bug must not undo a write")

    files.listeners += [broken, lambda kind, path: heard.append((kind, path))]
    await files.write("a.txt", "x")
    await files.create("dir", kind="directory")
    await files.rename("a.txt", "dir/b.txt")
    await files.copy("dir/b.txt", "c.txt")
    await files.delete("c.txt")
    root = str(project)
    assert heard == [
        ("modified", f"{root}/a.txt"),
        ("created", f"{root}/dir"),
        ("deleted", f"{root}/a.txt"),
        ("created", f"{root}/dir/b.txt"),
        ("created", f"{root}/c.txt"),
        ("deleted", f"{root}/c.txt"),
    ]
    assert (project / "dir/b.txt").read_text() == "x"
    with pytest.raises(AlreadyExists):
        await files.write("dir/b.txt", "y")
    assert len(heard) == 6, "a refused change is not announced"


# -- fuzzy search and glob ------------------------------------------------------------------------


_SEARCHES: list[FileSearch] = []


def make_search(security: SecurityLayer, engine: str, **config: Any) -> FileSearch:
    search = FileSearch(security, ripgrep_path=ENGINES[engine], **config)
    _SEARCHES.append(search)
    return search


@pytest.fixture(autouse=True)
def _close_searches(jp_asyncio_loop: Any) -> Iterator[None]:
    """Index builds a test left running are stopped before its event loop goes away."""
    yield
    while _SEARCHES:
        jp_asyncio_loop.run_until_complete(_SEARCHES.pop().close())


async def test_search_finds_by_subsequence_and_hides_what_it_must(
    security: SecurityLayer, engine: str
) -> None:
    search = make_search(security, engine)
    result = await search.search("sapp")
    assert result["engine"] == engine
    assert result["results"][0]["path"] == "src/app.py"
    assert result["results"][0]["positions"][0] == 0
    everything = {r["path"] for r in (await search.search("", limit=1000))["results"]}
    assert everything == {"src/app.py", "src/util.py", "README.md", ".gitignore", "docs/guide.md"}
    for query in ("env", "config", "debug", "out", "index"):
        found = {r["path"] for r in (await search.search(query))["results"]}
        assert not found & {
            ".env",
            ".git/config",
            "debug.log",
            "build/out.py",
            "node_modules/pkg/index.js",
        }


async def test_search_ranks_file_name_matches_first(
    security: SecurityLayer, project: Path, engine: str
) -> None:
    (project / "reader").mkdir()
    (project / "reader/x.py").write_text("")
    (project / "src/thread_pool.py").write_text("")
    search = make_search(security, engine)
    paths = [r["path"] for r in (await search.search("read"))["results"]]
    assert paths.index("README.md") < paths.index("reader/x.py")
    assert paths.index("src/thread_pool.py") < paths.index("reader/x.py")


async def test_search_in_a_subfolder_and_refusals(security: SecurityLayer, engine: str) -> None:
    search = make_search(security, engine)
    result = await search.search("py", path="src")
    assert {r["path"] for r in result["results"]} == {"src/app.py", "src/util.py"}
    with pytest.raises(InvalidRequest):
        await search.search("x", path="README.md")
    with pytest.raises(PathDenied):
        await search.search("x", path=".git")


async def test_index_refreshes_after_its_time_to_live(
    security: SecurityLayer, project: Path, engine: str
) -> None:
    search = make_search(security, engine, index_ttl=0.2)
    assert not (await search.search("fresh"))["results"]
    (project / "src/fresh_module.py").write_text("")

    async def found() -> bool:
        return any(
            r["path"] == "src/fresh_module.py" for r in (await search.search("fresh"))["results"]
        )

    deadline = time.monotonic() + 5
    while not await found():
        assert time.monotonic() < deadline, "the new file never appeared in the index"
        await asyncio.sleep(0.1)


async def test_a_small_index_is_fresh_on_the_first_query_after_a_change(
    security: SecurityLayer, project: Path, engine: str
) -> None:
    search = make_search(security, engine)
    await search.search("x")
    (project / "docs/added.md").write_text("")
    search.invalidate(str(project / "docs"))
    result = await search.search("added")
    assert [r["path"] for r in result["results"]] == ["docs/added.md"]


async def test_a_slow_index_answers_from_the_old_list_while_it_rebuilds(
    security: SecurityLayer, project: Path
) -> None:
    # fresh_wait=0: every tree counts as too big to wait for.
    search = make_search(security, "ripgrep", fresh_wait=0.0)
    await search.search("x")
    (project / "docs/added.md").write_text("")
    search.invalidate(str(project / "docs"))
    first = await search.search("added")
    assert first["results"] == []
    assert first["refreshing"] is True

    deadline = time.monotonic() + 5
    while not (await search.search("added"))["results"]:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)


async def test_a_change_during_a_rebuild_is_not_lost(
    security: SecurityLayer, project: Path
) -> None:
    search = make_search(security, "ripgrep", fresh_wait=0.0)
    await search.search("x")
    search.invalidate()
    await search.search("x")  # starts a rebuild, answers from the old list
    (project / "docs/late.md").write_text("")
    search.invalidate(str(project / "docs"))  # lands while that rebuild may still run
    deadline = time.monotonic() + 5
    while not (await search.search("late"))["results"]:
        assert time.monotonic() < deadline, "a change made during a rebuild was forgotten"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("**/*.py", ["src/app.py", "src/util.py"]),
        ("*.md", ["README.md"]),
        ("**/*.md", ["README.md", "docs/guide.md"]),
        ("src/{app,util}.py", ["src/app.py", "src/util.py"]),
        ("{README,docs/guide}.md", ["README.md", "docs/guide.md"]),
        ("**/.env*", []),
        (".git/**", []),
    ],
)
async def test_glob(
    security: SecurityLayer, engine: str, pattern: str, expected: list[str]
) -> None:
    result = await make_search(security, engine).glob(pattern)
    assert result["paths"] == expected


@pytest.mark.parametrize("pattern", ["", "   ", "{1..99999999}"])
async def test_glob_refuses_unusable_patterns(security: SecurityLayer, pattern: str) -> None:
    with pytest.raises(InvalidPattern):
        await make_search(security, "python").glob(pattern)


async def test_glob_limit_truncates(security: SecurityLayer) -> None:
    result = await make_search(security, "python").glob("**/*", limit=2)
    assert len(result["paths"]) == 2
    assert result["truncated"] is True


# -- grep -----------------------------------------------------------------------------------------


async def grep_all(
    grep: GrepSearch, pattern: str, **options: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    options.setdefault("regex", False)
    items = [item async for item in grep.search(GrepQuery(pattern=pattern, **options))]
    assert items[-1]["type"] == "summary"
    assert all(item["type"] == "file" for item in items[:-1])
    return items[:-1], items[-1]


def hits(found: list[dict[str, Any]]) -> dict[str, list[tuple[int, str, list[list[int]]]]]:
    return {f["path"]: [(m["line"], m["text"], m["ranges"]) for m in f["matches"]] for f in found}


@pytest.fixture
def grep(security: SecurityLayer, engine: str) -> GrepSearch:
    searcher = GrepSearch(security, ripgrep_path=ENGINES[engine])
    assert searcher.engine() == engine
    return searcher


async def test_grep_reports_files_lines_and_ranges(grep: GrepSearch, engine: str) -> None:
    found, summary = await grep_all(grep, "hello")
    assert hits(found) == {
        "src/app.py": [(2, "    print('hello terax')", [[11, 16]])],
        "src/util.py": [(1, "HELLO = 'hello'", [[0, 5], [9, 14]])],
        "README.md": [(3, "hello readme", [[0, 5]])],
        "docs/guide.md": [(1, "hello guide", [[0, 5]])],
    }
    # "matches" counts lines; a line holds one or more ranges.
    assert (summary["files"], summary["matches"], summary["truncated"]) == (4, 4, False)
    assert summary["engine"] == engine


async def test_grep_ranges_count_characters_not_bytes(grep: GrepSearch, project: Path) -> None:
    (project / "intl.txt").write_text("héllo wörld — 日本語 wörld\n")
    found, _ = await grep_all(grep, "wörld")
    assert hits(found) == {"intl.txt": [(1, "héllo wörld — 日本語 wörld", [[6, 11], [18, 23]])]}
    found, _ = await grep_all(grep, "日本")
    assert hits(found)["intl.txt"][0][2] == [[14, 16]]


async def test_grep_utf16_file_with_bom(grep: GrepSearch, project: Path) -> None:
    (project / "wide.txt").write_bytes("first\nsecond wörd\n".encode("utf-16"))
    found, _ = await grep_all(grep, "wörd")
    assert hits(found) == {"wide.txt": [(2, "second wörd", [[7, 11]])]}


async def test_grep_regex_versus_literal(grep: GrepSearch, project: Path) -> None:
    (project / "dots.txt").write_text("h.llo\nhxllo\n")
    literal, _ = await grep_all(grep, "h.llo", regex=False, include=["dots.txt"])
    assert hits(literal) == {"dots.txt": [(1, "h.llo", [[0, 5]])]}
    regex, _ = await grep_all(grep, "h.llo", regex=True, include=["dots.txt"])
    assert hits(regex) == {"dots.txt": [(1, "h.llo", [[0, 5]]), (2, "hxllo", [[0, 5]])]}
    anchored, _ = await grep_all(grep, r"^HELLO\s=", regex=True)
    assert list(hits(anchored)) == ["src/util.py"]


@pytest.mark.parametrize(
    ("pattern", "case", "lines"),
    [
        ("hello", "smart", ["HELLO = 'hello'"]),
        ("HELLO", "smart", ["HELLO = 'hello'"]),
        ("hello", "sensitive", ["HELLO = 'hello'"]),
        ("HELLO", "insensitive", ["HELLO = 'hello'"]),
    ],
)
async def test_grep_case_modes(grep: GrepSearch, pattern: str, case: str, lines: list[str]) -> None:
    found, _ = await grep_all(grep, pattern, case=case, include=["util.py"])
    ranges = hits(found)["src/util.py"][0][2]
    expected = {
        ("hello", "smart"): [[0, 5], [9, 14]],
        ("HELLO", "smart"): [[0, 5]],
        ("hello", "sensitive"): [[9, 14]],
        ("HELLO", "insensitive"): [[0, 5], [9, 14]],
    }
    assert ranges == expected[(pattern, case)]
    assert [m[1] for m in hits(found)["src/util.py"]] == lines


async def test_grep_smart_case_ignores_escapes(grep: GrepSearch, project: Path) -> None:
    (project / "mixed.txt").write_text("Value x\n")
    found, _ = await grep_all(grep, r"value\sx", regex=True, include=["mixed.txt"])
    assert hits(found) == {"mixed.txt": [(1, "Value x", [[0, 7]])]}


async def test_grep_whole_words(grep: GrepSearch, project: Path) -> None:
    (project / "words.txt").write_text("hell\nhello\nshell\nfoo(bar\nxfoo(\nfoo(\n")
    found, _ = await grep_all(grep, "hell", whole_word=True, include=["words.txt"])
    assert hits(found) == {"words.txt": [(1, "hell", [[0, 4]])]}
    found, _ = await grep_all(grep, "foo(", whole_word=True, include=["words.txt"])
    assert hits(found) == {"words.txt": [(6, "foo(", [[0, 4]])]}


async def test_grep_include_and_exclude_globs(grep: GrepSearch) -> None:
    found, _ = await grep_all(grep, "hello", include=["*.md"])
    assert set(hits(found)) == {"README.md", "docs/guide.md"}
    found, _ = await grep_all(grep, "hello", include=["src/*.py"])
    assert set(hits(found)) == {"src/app.py", "src/util.py"}
    found, _ = await grep_all(grep, "hello", exclude=["*.md"])
    assert set(hits(found)) == {"src/app.py", "src/util.py"}
    # A folder name excludes the folder, at any depth.
    found, _ = await grep_all(grep, "hello", exclude=["docs", "src"])
    assert set(hits(found)) == {"README.md"}
    # Ignored files stay ignored even when a glob names them.
    found, _ = await grep_all(grep, "hello", include=["*.log", "*.py"])
    assert set(hits(found)) == {"src/app.py", "src/util.py"}


async def test_grep_max_results_truncates(grep: GrepSearch) -> None:
    found, summary = await grep_all(grep, "hello", max_results=2)
    assert sum(len(f["matches"]) for f in found) == 2
    assert (summary["matches"], summary["truncated"]) == (2, True)
    found, summary = await grep_all(grep, "e", max_per_file=1, include=["app.py"])
    assert found[0]["truncated"] is True
    assert [m["line"] for m in found[0]["matches"]] == [1]


@pytest.mark.parametrize(
    ("pattern", "regex"),
    [
        ("(unclosed", True),
        ("a{2,1}", True),
        ("", False),
        ("a\0b", False),
        ("x" * 1001, False),
        ("two\nlines", False),
    ],
)
async def test_grep_bad_pattern_raises_before_any_result(
    grep: GrepSearch, pattern: str, regex: bool
) -> None:
    stream = grep.search(GrepQuery(pattern=pattern, regex=regex))
    with pytest.raises(InvalidPattern):
        await stream.__anext__()
    await stream.aclose()


async def test_grep_bad_options_raise(grep: GrepSearch) -> None:
    with pytest.raises(InvalidRequest):
        await grep.search(GrepQuery(pattern="x", case="loud")).__anext__()
    with pytest.raises(PathDenied):
        await grep.search(GrepQuery(pattern="x", path=".git")).__anext__()
    with pytest.raises(NotFound):
        await grep.search(GrepQuery(pattern="x", path="no-such-folder")).__anext__()
    with pytest.raises(InvalidRequest) as caught:
        await grep.search(GrepQuery(pattern="x", path="README.md")).__anext__()
    assert caught.value.reason == "not_a_directory"


async def test_grep_never_reads_secrets_vcs_binaries_or_ignored(
    grep: GrepSearch, project: Path
) -> None:
    (project / "blob.bin").write_bytes(b"hello\x00binary")
    (project / "src/.env.local").write_text("hello secret\n")
    (project / "src/server.pem").write_text("hello pem\n")
    found, _ = await grep_all(grep, "hello")
    assert set(hits(found)) == {"src/app.py", "src/util.py", "README.md", "docs/guide.md"}
    found, summary = await grep_all(grep, "never-read-me")
    assert (found, summary["matches"]) == ([], 0)


async def test_grep_lines_split_only_on_newlines(grep: GrepSearch, project: Path) -> None:
    (project / "feeds.txt").write_text("a\x0cb hello\nc\u2028d hello\r\nlast hello")
    found, _ = await grep_all(grep, "hello")
    assert hits(found)["feeds.txt"] == [
        (1, "a\x0cb hello", [[4, 9]]),
        (2, "c\u2028d hello", [[4, 9]]),
        (3, "last hello", [[5, 10]]),
    ]


async def test_grep_long_lines_are_clipped_around_the_match(
    grep: GrepSearch, project: Path
) -> None:
    (project / "long.txt").write_text("x" * 1000 + "needle" + "y" * 1000 + "\n")
    found, _ = await grep_all(grep, "needle")
    match = found[0]["matches"][0]
    assert len(match["text"]) == 400
    start, end = match["ranges"][0]
    assert match["text"][start:end] == "needle"
    assert match["offset"] + start == 1000


async def test_grep_in_a_subfolder_keeps_the_root_gitignore(
    grep: GrepSearch, project: Path
) -> None:
    (project / "src/trace.log").write_text("hello trace\n")
    found, _ = await grep_all(grep, "hello", path="src")
    assert set(hits(found)) == {"src/app.py", "src/util.py"}


async def test_both_engines_agree(security: SecurityLayer, project: Path) -> None:
    (project / "intl.txt").write_text("Grüße hello\nsecond HELLO line\n")
    (project / "src/pkg").mkdir()
    (project / "src/pkg/mod.py").write_text("def hello_world():\n    return 'Hello'\n")
    engines = {name: GrepSearch(security, ripgrep_path=path) for name, path in ENGINES.items()}
    queries: list[dict[str, Any]] = [
        {"pattern": "hello"},
        {"pattern": "Hello"},
        {"pattern": "hello", "case": "insensitive", "whole_word": True},
        {"pattern": r"h\w+o", "regex": True},
        {"pattern": "e", "max_per_file": 2},
        {"pattern": "hello", "include": ["**/*.py"], "exclude": ["pkg"]},
        {"pattern": "ü", "path": "."},
    ]
    for query in queries:
        results = {}
        for name, searcher in engines.items():
            found, summary = await grep_all(searcher, **query)
            results[name] = (sorted(hits(found).items()), summary["files"], summary["matches"])
        assert results["ripgrep"] == results["python"], query


# -- ripgrep discovery ----------------------------------------------------------------------------


def test_find_ripgrep(tmp_path: Path) -> None:
    assert ripgrep.find_ripgrep(NO_RIPGREP) is None
    not_executable = tmp_path / "rg"
    not_executable.write_text("#!/bin/sh\n")
    not_executable.chmod(0o644)
    assert ripgrep.find_ripgrep(str(not_executable)) is None
    assert ripgrep.find_ripgrep(str(tmp_path)) is None
    found = ripgrep.find_ripgrep("")
    assert found is not None
    assert os.access(found, os.X_OK)
    assert ripgrep.find_ripgrep(found) == found


# -- watching -------------------------------------------------------------------------------------


class Batches:
    def __init__(self) -> None:
        self.received: list[list[dict[str, Any]] | None] = []

    def __call__(self, events: list[dict[str, Any]] | None) -> None:
        self.received.append(events)

    def paths(self) -> set[str]:
        return {e["path"] for batch in self.received if batch for e in batch}


@pytest.fixture
def watch(security: SecurityLayer) -> Any:
    service = WatchService(security, debounce=0.4)
    yield service
    service.stop()


async def test_watch_batches_changes(watch: WatchService, project: Path) -> None:
    batches = Batches()
    watch.subscribe("", batches)
    await asyncio.sleep(0.1)
    (project / "docs/new.md").write_text("new\n")
    (project / "README.md").write_text("changed\n")
    (project / "src/util.py").unlink()
    await wait_for(lambda: batches.received)
    await asyncio.sleep(0.6)
    assert len(batches.received) == 1, batches.received
    events = {(e["kind"], e["path"]) for e in batches.received[0] or []}
    assert {
        ("created", "docs/new.md"),
        ("modified", "README.md"),
        ("deleted", "src/util.py"),
    } <= events


async def test_watch_hides_secrets_and_vcs_internals(watch: WatchService, project: Path) -> None:
    batches = Batches()
    listened: list[tuple[str, str]] = []
    watch.listeners.append(lambda kind, path: listened.append((kind, path)))
    watch.subscribe("", batches)
    await asyncio.sleep(0.1)
    (project / ".env").write_text("API_TOKEN=rotated\n")
    (project / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (project / "src/key.pem").write_text("secret\n")
    (project / "visible.txt").write_text("x\n")
    await wait_for(lambda: "visible.txt" in batches.paths())
    await asyncio.sleep(0.5)
    paths = batches.paths()
    assert "visible.txt" in paths
    assert not {
        p for p in paths if ".env" in p or ".git/" in p or p == ".git" or p.endswith(".pem")
    }
    assert str(project / "visible.txt") in {path for _, path in listened}
    assert not [path for _, path in listened if "/.env" in path or "/.git/" in path]


async def test_watch_subfolder_non_recursive_and_unsubscribe(
    watch: WatchService, project: Path
) -> None:
    batches = Batches()
    subscription = watch.subscribe("docs", batches, recursive=False)
    await asyncio.sleep(0.1)
    (project / "docs/sub").mkdir()
    await wait_for(lambda: "docs/sub" in batches.paths())
    (project / "docs/sub/deep.md").write_text("x\n")
    (project / "README.md").write_text("elsewhere\n")
    await asyncio.sleep(0.6)
    assert "docs/sub/deep.md" not in batches.paths()
    assert "README.md" not in batches.paths()
    watch.unsubscribe(subscription)
    count = len(batches.received)
    (project / "docs/after.md").write_text("x\n")
    await asyncio.sleep(0.6)
    assert len(batches.received) == count
    watch.unsubscribe(subscription)  # twice is harmless


async def test_watch_overflow_becomes_a_notice(security: SecurityLayer, project: Path) -> None:
    service = WatchService(security, debounce=0.4, max_pending=5)
    try:
        batches = Batches()
        service.subscribe("", batches)
        await asyncio.sleep(0.1)
        for index in range(30):
            (project / f"flood-{index}.txt").write_text("x")
        await wait_for(lambda: batches.received)
        await asyncio.sleep(0.5)
        assert batches.received[0] is None
        # The next batch starts clean.
        (project / "after-flood.txt").write_text("x")
        await wait_for(lambda: "after-flood.txt" in batches.paths())
    finally:
        service.stop()


async def test_watch_refuses_files_and_protected_folders(watch: WatchService) -> None:
    with pytest.raises(InvalidRequest):
        watch.subscribe("README.md", Batches())
    with pytest.raises(PathDenied):
        watch.subscribe(".git", Batches())
    with pytest.raises(NotFound):
        watch.subscribe("no-such-folder", Batches())
