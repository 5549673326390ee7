"""docs/configuration.md holds every configurable trait, as the generator writes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from traitlets import Bool, Int, Unicode, default
from traitlets.config import LoggingConfigurable

from terax_jupyter.app import TeraxApp
from terax_jupyter.devtools import config_docs
from terax_jupyter.services.pty.manager import PtyManager

DOCUMENT = Path(config_docs.DEFAULT_PATH)


def test_the_checked_in_reference_is_what_the_generator_writes() -> None:
    current = DOCUMENT.read_text(encoding="utf-8")
    assert current == config_docs.rewrite(current, config_docs.render_reference()), (
        "docs/configuration.md is stale: run python -m terax_jupyter.devtools.config_docs"
    )


def test_check_exits_non_zero_with_a_diff_when_the_file_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "configuration.md"
    text = DOCUMENT.read_text(encoding="utf-8").replace("| `max_sessions` |", "| `gone` |")
    stale.write_text(text, encoding="utf-8")
    assert config_docs.main(["--check", "--path", str(stale)]) == 1
    assert "+| `max_sessions` |" in capsys.readouterr().out
    assert config_docs.main(["--path", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOCUMENT.read_text(encoding="utf-8")
    assert config_docs.main(["--check", "--path", str(stale)]) == 0


def test_every_config_trait_of_the_package_is_documented() -> None:
    classes = config_docs.configurable_classes()
    assert classes[0] is TeraxApp
    assert PtyManager in classes
    reference = config_docs.render_reference(classes)
    for cls in classes:
        assert f"### `{cls.__name__}`" in reference
        for name in cls.class_own_traits(config=True):
            assert f"| `{name}` |" in reference, f"{cls.__name__}.{name}"
    # Found by import, not by a list: the agent's and the browser's managers load lazily.
    assert {"AiManager", "BrowserManager", "SecretsManager"} <= {c.__name__ for c in classes}


def test_rows_give_type_default_and_help_and_machine_defaults_stay_stable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = str(tmp_path / "someone")

    class Sample(LoggingConfigurable):
        """A sample."""

        size = Int(4096, help="Bytes | per read.").tag(config=True)
        folder = Unicode(home + "/cache", help="Where.").tag(config=True)
        computed = Unicode(help="Per machine.").tag(config=True)
        hidden = Bool(True)

        @default("computed")
        def _computed_default(self) -> str:
            return home

    monkeypatch.setenv("HOME", home)
    reference = config_docs.render_reference([Sample])
    assert "| `size` | `Int` | `4096` | Bytes \\| per read. |" in reference
    assert "| `folder` | `Unicode` | `'~/cache'` | Where. |" in reference
    assert "| `computed` | `Unicode` | computed at start (see help) | Per machine. |" in reference
    assert "hidden" not in reference


def test_only_the_text_between_the_markers_is_rewritten() -> None:
    document = f"intro\n{config_docs.BEGIN}\nold\n{config_docs.END}\noutro\n"
    assert config_docs.rewrite(document, "new") == (
        f"intro\n{config_docs.BEGIN}\n\nnew\n\n{config_docs.END}\noutro\n"
    )
    with pytest.raises(ValueError, match="markers"):
        config_docs.rewrite("no markers", "new")
