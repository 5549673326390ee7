"""Pytest fixtures for testing Terax (and extensions built on it) against a real server."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from terax_jupyter.security import SecurityLayer

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# Base URLs API tests run under: a plain server, and a JupyterHub single-user server.
BASE_URLS = ("/", "/user/alice/")

# Environment variables that may hold credentials; no test may see the developer's own.
SECRET_ENVIRONMENT = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "CEREBRAS_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "JUPYTERHUB_API_TOKEN",
    "JUPYTER_TOKEN",
)


@pytest.fixture(autouse=True)
def _clear_secret_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SECRET_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    # No administrator's policy of this machine applies to a test (a test names its own).
    monkeypatch.setenv("TERAX_POLICY_DIRS", "")


@pytest.fixture
def terax_config() -> dict[str, Any]:
    """Extra ``TeraxApp`` (and manager) configuration for a test; override to change."""
    return {}


@pytest.fixture
def terax_server_config(terax_config: dict[str, Any]) -> dict[str, Any]:
    """Server configuration with Terax enabled; a conftest returns it as ``jp_server_config``.

    ``terax_config`` is merged section by section, so a test may add ``ServerApp`` options
    without switching the extension off.
    """
    config: dict[str, Any] = {
        "ServerApp": {
            "jpserver_extensions": {"terax_jupyter": True, "jupyter_server_terminals": False},
        },
    }
    for section, values in terax_config.items():
        config[section] = {**config.get(section, {}), **values}
    return config


@pytest.fixture
def terax_security(tmp_path: Path) -> Callable[..., SecurityLayer]:
    """A factory of security layers over a folder, built the way ``TeraxApp`` builds them.

    ``terax_security(root, read_only=False, extra_roots=(), allow_user_roots=True)``; the
    audit log and roots store live in a private folder beside the test's files.
    """

    def build(
        root: Path | str,
        *,
        read_only: bool = False,
        extra_roots: tuple[str, ...] = (),
        allow_user_roots: bool = True,
    ) -> SecurityLayer:
        return SecurityLayer.build(
            str(root),
            str(tmp_path / "terax-state"),
            read_only=read_only,
            extra_roots=extra_roots,
            allow_user_roots=allow_user_roots,
        )

    return build


@pytest.fixture
def workspace(jp_root_dir: Path) -> Path:
    """The server root with a small project in it (and a secret that must stay unread)."""
    (jp_root_dir / "src").mkdir()
    (jp_root_dir / "src" / "app.py").write_text("def main():\n    print('hello terax')\n")
    (jp_root_dir / "src" / "util.py").write_text("HELLO = 'hello'\n")
    (jp_root_dir / "README.md").write_text("# Demo\n\nhello readme\n")
    (jp_root_dir / ".env").write_text("API_TOKEN=never-read-me\n")
    (jp_root_dir / ".gitignore").write_text("build/\n*.log\n")
    (jp_root_dir / "debug.log").write_text("hello log\n")
    return jp_root_dir


@pytest.fixture
def terax_api(jp_fetch: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``await terax_api("fs/file", params={...})`` -> parsed JSON (raises on HTTP errors)."""

    async def call(path: str, *, method: str = "GET", body: Any = None, **kwargs: Any) -> Any:
        if body is not None:
            kwargs["body"] = json.dumps(body)
        elif method in ("POST", "PUT", "PATCH"):
            kwargs["body"] = "{}"
        kwargs.setdefault("allow_nonstandard_methods", True)
        response = await jp_fetch("terax", "api", *path.split("/"), method=method, **kwargs)
        text = response.body.decode("utf-8") if response.body else ""
        return (
            json.loads(text)
            if text
            and "json" in response.headers.get("Content-Type", "")
            and "ndjson" not in response.headers.get("Content-Type", "")
            else text
        )

    return call


def error_of(exc: Any) -> dict[str, Any]:
    """The ``{"message", "reason"}`` body of an HTTPClientError."""
    return json.loads(exc.response.body.decode("utf-8"))


def is_ci() -> bool:
    return bool(os.environ.get("CI"))
