"""The workspace-roots API: list, add (audited), remove, and the admin's lock."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    Api = Callable[..., Awaitable[Any]]

pytestmark = pytest.mark.every_base_url


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A project outside the server root."""
    folder = tmp_path / "elsewhere"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib/tool.py").write_text("TOOL = 'hello'\n")
    (folder / ".env").write_text("KEY=outside-secret\n")
    return folder


async def failure(api: Api, path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as caught:
        await api(path, **kwargs)
    body = error_of(caught.value)
    assert set(body) == {"message", "reason"}
    return caught.value.code, body["reason"]


@pytest.fixture
def server_root(workspace: Path) -> str:
    return os.path.realpath(workspace)


async def test_roots_list_the_server_root(server_root: str, terax_api: Api) -> None:
    listing = await terax_api("workspace/roots")
    assert listing["allow_user_roots"] is True
    assert listing["roots"] == [
        {"path": server_root, "kind": "server", "added_by": None, "added_at": None}
    ]


async def test_add_use_and_remove_a_root(
    workspace: Path, elsewhere: Path, terax_api: Api, jp_serverapp: Any
) -> None:
    tool = str(elsewhere / "lib/tool.py")
    code, reason = await failure(terax_api, "fs/file", params={"path": tool})
    assert (code, reason) == (403, "outside_workspace")

    added = await terax_api("workspace/roots", method="POST", body={"path": str(elsewhere)})
    assert added["added"]["path"] == str(elsewhere)
    assert added["added"]["kind"] == "user"
    assert isinstance(added["added"]["added_by"], str)
    assert added["added"]["added_at"]
    assert [root["kind"] for root in added["roots"]] == ["server", "user"]

    read = await terax_api("fs/file", params={"path": tool})
    assert (read["content"], read["path"], read["root"]) == (
        "TOOL = 'hello'\n",
        tool,
        str(elsewhere),
    )
    code, reason = await failure(terax_api, "fs/file", params={"path": str(elsewhere / ".env")})
    assert (code, reason) == (403, "path_denied")
    found = await terax_api("fs/search", params={"q": "tool", "path": str(elsewhere)})
    assert [r["path"] for r in found["results"]] == [tool]

    audit = jp_serverapp.web_app.settings["terax"].security.audit
    added_entries = [e for e in audit.entries() if e["action"] == "workspace.root_added"]
    assert [e["path"] for e in added_entries] == [str(elsewhere)]
    assert added_entries[0]["user"] == added["added"]["added_by"]

    code, reason = await failure(
        terax_api, "workspace/roots", method="POST", body={"path": str(elsewhere / "lib")}
    )
    assert (code, reason) == (409, "already_exists")

    removed = await terax_api("workspace/roots", method="DELETE", params={"path": str(elsewhere)})
    assert [root["kind"] for root in removed["roots"]] == ["server"]
    code, reason = await failure(terax_api, "fs/file", params={"path": tool})
    assert (code, reason) == (403, "outside_workspace")
    assert [e["path"] for e in audit.entries() if e["action"] == "workspace.root_removed"] == [
        str(elsewhere)
    ]


async def test_roots_refusals(workspace: Path, tmp_path: Path, terax_api: Api) -> None:
    (tmp_path / "home/.ssh").mkdir(parents=True)
    (tmp_path / "plain.txt").write_text("x")
    for body, expected in [
        ({"path": str(tmp_path / "missing")}, (404, "not_found")),
        ({"path": str(tmp_path / "plain.txt")}, (400, "invalid_path")),
        ({"path": "/"}, (403, "protected_path")),
        ({"path": str(tmp_path / "home/.ssh")}, (403, "path_denied")),
        ({"path": str(workspace / "src")}, (409, "already_exists")),
        ({"path": 7}, (400, "invalid_parameter")),
        ({}, (400, "invalid_parameter")),
        ({"path": "bad\x00path"}, (400, "invalid_path")),
    ]:
        assert await failure(terax_api, "workspace/roots", method="POST", body=body) == expected, (
            body
        )
    for params, expected in [
        ({"path": str(workspace)}, (403, "protected_path")),
        ({"path": str(tmp_path)}, (404, "not_found")),
        ({}, (400, "missing_parameter")),
    ]:
        assert (
            await failure(terax_api, "workspace/roots", method="DELETE", params=params) == expected
        ), params
    assert len((await terax_api("workspace/roots"))["roots"]) == 1


@pytest.mark.parametrize("terax_config", [{"TeraxApp": {"allow_user_roots": False}}])
async def test_admin_can_lock_the_roots(
    workspace: Path, elsewhere: Path, terax_api: Api, jp_serverapp: Any
) -> None:
    listing = await terax_api("workspace/roots")
    assert listing["allow_user_roots"] is False
    code, reason = await failure(
        terax_api, "workspace/roots", method="POST", body={"path": str(elsewhere)}
    )
    assert (code, reason) == (403, "roots_locked")
    assert len((await terax_api("workspace/roots"))["roots"]) == 1
    audit = jp_serverapp.web_app.settings["terax"].security.audit
    assert not [e for e in audit.entries() if e["action"] == "workspace.root_added"]
