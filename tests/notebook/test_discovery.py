"""Finding the server a kernel runs under: the server that started it first, then the
environment, then the running servers; and what the error says when there is none."""

from __future__ import annotations

from typing import Any

import pytest

from terax_jupyter.client.api import TeraxAPIError
from terax_jupyter.client.discovery import Candidate, candidates
from terax_jupyter.notebook import kernel
from terax_jupyter.notebook.discovery import HINT, DiscoveryError, find_server


def server(pid: int, root: str, port: int, token: str | None = "") -> dict[str, Any]:
    return {
        "pid": pid,
        "root_dir": root,
        "url": f"http://127.0.0.1:{port}/",
        "base_url": "/",
        "token": f"token-{pid}" if token == "" else token,
        "sock": "",
    }


RUNNING = [
    server(11, "/home/me/project", 8011),  # holds the kernel's folder
    server(22, "/srv/lab", 8022),  # started the kernel
]


def answering(*urls: str) -> Any:
    def check(candidate: Candidate) -> dict[str, Any]:
        if candidate.url in urls:
            return {"server_root": "/", "version": "0"}
        raise TeraxAPIError("nothing there", status=None, reason="unreachable")

    return check


def test_the_server_that_started_the_kernel_comes_first() -> None:
    found = candidates(
        environ={}, folders=["/home/me/project/notebooks"], running=RUNNING, parent_pid=22
    )
    assert [c.url for c in found] == ["http://127.0.0.1:8022/", "http://127.0.0.1:8011/"]
    assert found[0].token == "token-22"
    assert "started this kernel (pid 22)" in found[0].source


def test_the_parent_pid_comes_from_jpy_parent_pid() -> None:
    target = find_server(
        environ={"JPY_PARENT_PID": "22"},
        folders=["/home/me/project"],
        running=RUNNING,
        check=answering("http://127.0.0.1:8022/", "http://127.0.0.1:8011/"),
    )
    assert target.url == "http://127.0.0.1:8022/"
    assert target.token == "token-22"


def test_a_kernel_started_elsewhere_finds_the_server_by_its_folder() -> None:
    # nbclient and papermill start kernels themselves: JPY_PARENT_PID is theirs.
    target = find_server(
        environ={"JPY_PARENT_PID": "99999"},
        folders=["/home/me/project/notebooks"],
        running=RUNNING,
        check=answering("http://127.0.0.1:8022/", "http://127.0.0.1:8011/"),
    )
    assert target.url == "http://127.0.0.1:8011/"


def test_a_hub_server_without_a_token_in_its_runtime_file_uses_the_hub_token() -> None:
    found = candidates(
        environ={"JUPYTERHUB_API_TOKEN": "hub-token"},
        running=[server(22, "/home/alice", 8022, token=None)],
        parent_pid=22,
    )
    assert (found[0].url, found[0].token) == ("http://127.0.0.1:8022/", "hub-token")


def test_jupyter_server_url_with_jupyter_token_or_the_runtime_token() -> None:
    env = {"JUPYTER_SERVER_URL": "http://0.0.0.0:8011/", "JUPYTER_TOKEN": "given"}
    found = candidates(environ=env, running=RUNNING)
    assert (found[0].url, found[0].token, found[0].source) == (
        "http://127.0.0.1:8011/",
        "given",
        "JUPYTER_SERVER_URL",
    )
    found = candidates(environ={"JUPYTER_SERVER_URL": "http://127.0.0.1:8011/lab"}, running=RUNNING)
    assert (found[0].url, found[0].token) == ("http://127.0.0.1:8011/", "token-11")


def test_a_server_is_not_tried_twice_with_the_same_token() -> None:
    found = candidates(environ={}, folders=["/home/me/project"], running=RUNNING, parent_pid=11)
    assert [c.url for c in found] == ["http://127.0.0.1:8011/", "http://127.0.0.1:8022/"]


def test_explicit_url_and_token_win_and_nothing_else_is_tried() -> None:
    tried: list[str] = []

    def check(candidate: Candidate) -> dict[str, Any]:
        tried.append(candidate.url)
        return {"server_root": "/x"}

    target = find_server(
        "http://127.0.0.1:9999/lab?token=pasted",
        environ={"JPY_PARENT_PID": "22"},
        running=RUNNING,
        check=check,
    )
    assert (target.url, target.token, tried) == (
        "http://127.0.0.1:9999/",
        "pasted",
        ["http://127.0.0.1:9999/"],
    )


def test_no_server_says_what_to_pass_in_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DiscoveryError) as raised:
        find_server(environ={}, folders=[], running=[])
    message = str(raised.value)
    assert "No running Terax server found" in message
    assert "terax.connect(url=" in message
    assert "TERAX_URL and TERAX_TOKEN" in message
    assert HINT in message


def test_servers_that_do_not_answer_are_listed_with_the_hint() -> None:
    with pytest.raises(DiscoveryError) as raised:
        find_server(environ={}, folders=[], running=RUNNING, check=answering())
    message = str(raised.value)
    assert "http://127.0.0.1:8011/" in message
    assert "http://127.0.0.1:8022/" in message
    assert "token-" not in message  # a token never shows in a message
    assert "terax.connect(url=" in message


@pytest.mark.parametrize(
    ("value", "expected"), [("1234", 1234), ("", None), ("abc", None), ("-3", None)]
)
def test_parent_pid(value: str, expected: int | None) -> None:
    assert kernel.parent_pid({"JPY_PARENT_PID": value}) == expected
