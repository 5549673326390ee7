"""The JSON-file stores' shared read: no file, a good one, a corrupt one, an insecure one."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import pytest

from terax_jupyter.exceptions import Unavailable
from terax_jupyter.security.storage import read_private_json, write_private_file

if TYPE_CHECKING:
    from pathlib import Path

CORRUPT = "{path} is not a test file; move it away to start over."


def test_no_path_or_no_file_reads_as_missing(tmp_path: Path) -> None:
    assert read_private_json(None) is None
    assert read_private_json(str(tmp_path / "absent.json")) is None
    assert read_private_json(str(tmp_path / "absent.json"), missing={"keys": {}}) == {"keys": {}}


def test_reads_what_write_private_file_wrote(tmp_path: Path) -> None:
    path = str(tmp_path / "state" / "store.json")
    write_private_file(path, '{"version": 1, "items": [1, 2]}')
    assert read_private_json(path, CORRUPT, reason="test_store_corrupt") == {
        "version": 1,
        "items": [1, 2],
    }
    assert os.stat(path).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("text", ["", "{not json", "\x00"])
def test_a_store_that_must_not_be_overwritten_refuses_text_that_is_not_json(
    tmp_path: Path, text: str
) -> None:
    path = str(tmp_path / "store.json")
    write_private_file(path, text)
    with pytest.raises(Unavailable) as refused:
        read_private_json(path, CORRUPT, reason="test_store_corrupt")
    assert refused.value.reason == "test_store_corrupt"
    assert str(refused.value) == f"{path} is not a test file; move it away to start over."


def test_a_store_that_may_start_over_reads_text_that_is_not_json_as_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = str(tmp_path / "store.json")
    write_private_file(path, "{not json")
    with caplog.at_level(logging.WARNING):
        assert read_private_json(path, "The test store {path} is not valid JSON; ignored.") is None
    assert f"The test store {path} is not valid JSON; ignored." in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert read_private_json(path) is None
    assert caplog.text == ""


def test_an_insecure_file_is_refused_even_where_corrupt_text_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    path.write_text('{"version": 1}')
    path.chmod(0o644)
    with pytest.raises(Unavailable) as refused:
        read_private_json(str(path))
    assert refused.value.reason == "insecure_file"
