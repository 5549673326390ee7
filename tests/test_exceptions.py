"""The error tree, its HTTP status table, and what an error looks like on the wire."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError

import terax_jupyter
from terax_jupyter import exceptions
from terax_jupyter.exceptions import (
    HTTP_STATUS,
    AccessDenied,
    NotFound,
    StaleVersion,
    TeraxError,
    http_status_for,
)
from terax_jupyter.pytest_plugin import error_of

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

# Error classes defined outside exceptions.py; each needs a reason to exist there.
DEFINED_ELSEWHERE: dict[str, str] = {
    "terax_jupyter.services.git.runner.GitFailed": (
        "a Conflict that also carries git's exit code and stderr, for callers to classify"
    ),
    "terax_jupyter.services.git.runner.GitNoPermission": (
        "a GitFailed (callers that catch git's failures still do) that is 403 like any read "
        "the account may not make"
    ),
}


def all_subclasses(cls: type) -> Iterator[type]:
    for sub in cls.__subclasses__():
        yield sub
        yield from all_subclasses(sub)


def project_error_classes() -> list[type[TeraxError]]:
    """Every TeraxError subclass in the package (every module imported first)."""
    for module in pkgutil.walk_packages(terax_jupyter.__path__, "terax_jupyter."):
        if module.name.endswith("__main__") or ".labextension" in module.name:
            continue
        importlib.import_module(module.name)
    return sorted(
        {cls for cls in all_subclasses(TeraxError) if cls.__module__.startswith("terax_jupyter.")},
        key=lambda cls: f"{cls.__module__}.{cls.__qualname__}",
    )


def test_every_error_class_has_a_status() -> None:
    classes = project_error_classes()
    assert len(classes) >= 18
    for cls in classes:
        name = f"{cls.__module__}.{cls.__qualname__}"
        if cls.__module__ == "terax_jupyter.exceptions":
            assert cls in HTTP_STATUS, f"{name} has no HTTP_STATUS entry"
        else:
            assert name in DEFINED_ELSEWHERE, f"{name} belongs in exceptions.py"
        assert 400 <= http_status_for(cls("x")) <= 599


def test_table_has_only_project_classes_and_real_statuses() -> None:
    for cls, status in HTTP_STATUS.items():
        assert issubclass(cls, TeraxError)
        assert 400 <= status <= 599
    assert HTTP_STATUS[TeraxError] == 500


def test_lookup_follows_the_class_hierarchy() -> None:
    class Newcomer(StaleVersion):
        pass

    class Orphan(TeraxError):
        pass

    class Both(NotFound, AccessDenied):
        pass

    assert Newcomer not in HTTP_STATUS
    assert http_status_for(Newcomer("x")) == 409
    assert http_status_for(Orphan("x")) == 500
    assert http_status_for(Both("x")) == 404
    assert Newcomer("x").reason == "stale_version"
    assert Newcomer("x", reason="custom").reason == "custom"


def test_docstring_draws_the_whole_tree() -> None:
    doc = exceptions.__doc__ or ""
    tree = dict(re.findall(r"^[\s│├└─]*([A-Z]\w+)\s+(\d{3})\s", doc, flags=re.MULTILINE))
    declared = [
        cls for cls in all_subclasses(TeraxError) if cls.__module__ == "terax_jupyter.exceptions"
    ]
    for cls in [TeraxError, *declared]:
        assert cls.__name__ in tree, f"{cls.__name__} is missing from the docstring"
        assert int(tree[cls.__name__]) == HTTP_STATUS[cls], (
            f"{cls.__name__}: docstring and table disagree"
        )
        parent = cls.__mro__[1]
        if parent is not Exception:
            # Drawn under its parent: the parent's line comes first and is less indented.
            lines = doc.splitlines()
            own = next(
                i for i, line in enumerate(lines) if re.search(rf"\b{cls.__name__}\s+\d{{3}}", line)
            )
            above = [
                line for line in lines[:own] if re.search(rf"\b{parent.__name__}\s+\d{{3}}", line)
            ]
            assert above, f"{cls.__name__} is not drawn under {parent.__name__}"
            assert lines[own].index(cls.__name__) > above[-1].index(parent.__name__)
    assert set(tree) == {cls.__name__ for cls in [TeraxError, *declared]}


def test_reasons_are_stable_codes() -> None:
    reasons = {}
    for cls in [TeraxError, *all_subclasses(TeraxError)]:
        if cls.__module__.startswith("terax_jupyter."):
            assert re.fullmatch(r"[a-z]+(_[a-z]+)*", cls.reason), cls
            reasons.setdefault(cls.reason, cls)
            assert reasons[cls.reason] is cls, f"{cls} reuses the reason of {reasons[cls.reason]}"


# -- on the wire ----------------------------------------------------------------------------------


async def fetch_error(jp_fetch: Any, *parts: str, **kwargs: Any) -> tuple[int, dict[str, Any], str]:
    kwargs.setdefault("allow_nonstandard_methods", True)
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch(*parts, **kwargs)
    response = caught.value.response
    assert response is not None
    assert response.headers["Content-Type"].startswith("application/json")
    return caught.value.code, error_of(caught.value), response.body.decode()


@pytest.mark.parametrize("terax_config", [{"FileManager": {"max_read_bytes": 10}}])
async def test_every_error_status_is_message_and_reason(workspace: Path, jp_fetch: Any) -> None:
    (workspace / "blob.bin").write_bytes(b"\0\1\2")
    api = ("terax", "api")
    cases: list[tuple[tuple[str, ...], dict[str, Any], int]] = [
        ((*api, "fs", "file"), {}, 400),
        ((*api, "fs", "file"), {"params": {"path": ".env"}}, 403),
        ((*api, "fs", "file"), {"params": {"path": "ghost"}}, 404),
        ((*api, "fs", "file"), {"method": "PATCH", "body": "{}"}, 405),
        ((*api, "fs", "create"), {"method": "POST", "body": json.dumps({"path": "src"})}, 409),
        ((*api, "fs", "file"), {"params": {"path": "README.md"}}, 413),
        ((*api, "fs", "file"), {"params": {"path": "blob.bin", "format": "text"}}, 415),
        ((*api, "fs", "grep"), {"params": {"pattern": "(", "regex": "1"}}, 400),
        ((*api, "workspace", "roots"), {"method": "DELETE", "params": {"path": "/"}}, 404),
        ((*api, "info"), {"method": "POST", "body": "{}"}, 405),
    ]
    for parts, kwargs, status in cases:
        code, body, _ = await fetch_error(jp_fetch, *parts, **kwargs)
        assert code == status, (parts, kwargs)
        assert set(body) == {"message", "reason"}
        assert isinstance(body["message"], str)
        assert body["message"]
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", body["reason"]), body


async def test_unexpected_error_is_500_without_details(
    workspace: Path,
    jp_fetch: Any,
    jp_serverapp: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret-detail /home/someone/.ssh/id_rsa")

    monkeypatch.setattr(jp_serverapp.web_app.settings["terax"].files, "read", broken)
    code, body, raw = await fetch_error(
        jp_fetch, "terax", "api", "fs", "file", params={"path": "README.md"}
    )
    assert code == 500
    assert body["reason"] == "internal_error"
    for detail in ("secret-detail", "id_rsa", "Traceback"):
        assert detail not in raw
    assert "secret-detail" in caplog.text, "the server log keeps the details"


async def test_error_messages_are_redacted(
    workspace: Path, jp_fetch: Any, jp_serverapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-ant-api03-" + "A1b2C3d4" * 5

    async def leaky(*args: Any, **kwargs: Any) -> Any:
        raise NotFound(f"No provider accepts {key}.")

    monkeypatch.setattr(jp_serverapp.web_app.settings["terax"].files, "stat", leaky)
    code, body, raw = await fetch_error(
        jp_fetch, "terax", "api", "fs", "stat", params={"path": "x"}
    )
    assert (code, body["reason"]) == (404, "not_found")
    assert key not in raw
    assert "[REDACTED]" in body["message"]
