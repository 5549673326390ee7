"""The area registry (services/registry.py) and the managers an administrator may swap."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tornado.httpclient import HTTPClientError
from traitlets import TraitError

import terax_jupyter
from terax_jupyter.app import HANDLER_MODULES, TeraxApp
from terax_jupyter.base import SETTINGS_KEY
from terax_jupyter.services import registry
from terax_jupyter.services.ai.manager import AiManager
from terax_jupyter.services.git.manager import GitManager

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    Api = Callable[..., Awaitable[Any]]

SERVICES = Path(terax_jupyter.__file__).parent / "services"


class RecordingGit(GitManager):
    """A hub's own source control manager: counts the repository lookups it answers."""

    lookups = 0

    async def repository(self, path: str, *, may_write: bool = False) -> dict[str, Any]:
        RecordingGit.lookups += 1
        return await super().repository(path, may_write=may_write)


class OwnAi(AiManager):
    pass


class NotAGitManager:
    pass


def test_every_area_package_is_in_the_registry() -> None:
    packages = sorted(path.parent.name for path in SERVICES.glob("*/__init__.py"))
    assert sorted(registry.AREA_NAMES) == packages
    for area in registry.areas():
        assert area.name == area.package.rsplit(".", 1)[1]


def test_the_handler_modules_are_the_registrys() -> None:
    names = [module.__name__ for module in HANDLER_MODULES]
    assert names == [
        f"{area.package}.{module}" for area in registry.areas() for module in area.handlers
    ]
    assert "terax_jupyter.services.git.history_handlers" in names
    assert names[-1] == "terax_jupyter.services.meta.handlers"


def test_each_manager_has_a_trait_that_defaults_to_its_class_by_name() -> None:
    traits = TeraxApp.class_own_traits()
    managed = [area for area in registry.areas() if area.build is not None]
    assert {area.name for area in managed} == {
        "fs", "pty", "git", "secrets", "kernels", "ai", "browser", "preview"
    }  # fmt: skip
    for area in managed:
        trait = traits[area.manager_trait]
        assert isinstance(trait, registry.ManagerClass)
        assert trait.default_value == area.manager_class_name
        assert trait.metadata.get("config") is True
        assert trait.help
    # Areas without a manager have no trait.
    assert "workspace_manager_class" not in traits
    assert "meta_manager_class" not in traits


def test_the_default_stays_a_name_until_resolved() -> None:
    app = TeraxApp()
    assert app.ai_manager_class == "terax_jupyter.services.ai.manager.AiManager"
    trait = app.traits()["ai_manager_class"]
    assert trait.resolve(app) is AiManager


def test_a_subclass_is_accepted_and_anything_else_refused() -> None:
    assert TeraxApp(git_manager_class=RecordingGit).git_manager_class is RecordingGit
    with pytest.raises(TraitError, match=r"TeraxApp\.git_manager_class must be a subclass of "):
        TeraxApp(git_manager_class=NotAGitManager)
    # A dotted name is imported and checked when it is set, not on first use.
    with pytest.raises(TraitError, match=r"services/ai/.*JSONDecoder"):
        TeraxApp(ai_manager_class="json.JSONDecoder")
    with pytest.raises(TraitError, match="could not be imported"):
        TeraxApp(git_manager_class="terax_jupyter.services.git.no_such.Manager")


def test_terminals_do_not_import_the_preview() -> None:
    """The preview depends on the terminals, not the other way: the app passes the detector."""
    for path in (SERVICES / "pty").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith("terax_jupyter.services.preview"), (path, name)


# -- on a live server -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "terax_config",
    [{"TeraxApp": {"git_manager_class": RecordingGit, "ai_manager_class": OwnAi}}],
)
async def test_the_server_uses_the_configured_managers(
    jp_serverapp: Any, terax_api: Api, workspace: Path
) -> None:
    context = jp_serverapp.web_app.settings[SETTINGS_KEY]
    assert type(context.git) is RecordingGit
    before = RecordingGit.lookups
    with pytest.raises(HTTPClientError) as answered:  # the sample project has no repository
        await terax_api("git/repository", params={"path": "README.md"})
    assert answered.value.code == 404
    assert RecordingGit.lookups == before + 1
    # The agent's is built on its first use, from the configured class.
    assert context.built("ai") is None
    await terax_api("ai/providers")
    assert type(context.built("ai")) is OwnAi


class TestAManagerOfTheWrongKind:
    @pytest.fixture
    def terax_config(self) -> dict[str, Any]:
        return {"TeraxApp": {"git_manager_class": NotAGitManager}}

    async def test_leaves_terax_off_and_says_why(
        self, capsys: pytest.CaptureFixture[str], jp_serverapp: Any, jp_fetch: Any
    ) -> None:
        # jupyter_server's way with an extension that fails: the server runs on without it
        # (not with the stock manager in place of the administrator's).
        assert SETTINGS_KEY not in jp_serverapp.web_app.settings
        with pytest.raises(HTTPClientError) as missing:
            await jp_fetch("terax", "api", "info")
        assert missing.value.code == 404
        logged = capsys.readouterr().err
        assert "terax_jupyter | extension failed loading" in logged
        assert "TeraxApp.git_manager_class must be a subclass of" in logged
