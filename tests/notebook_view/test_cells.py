"""Parsing a notebook: an unchanged notebook is parsed once, a changed one again, and what is
kept is never changed by a caller."""

from __future__ import annotations

import dataclasses
import json

import nbformat
import pytest

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.notebook_view.cells import PARSED_NOTEBOOKS, parse_notebook


def notebook_text(*sources: str) -> str:
    book = nbformat.v4.new_notebook()
    for number, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source)
        cell.id = f"c{number}"
        book.cells.append(cell)
    return json.dumps(book)


def test_the_same_text_at_the_same_path_is_parsed_once() -> None:
    text = notebook_text("a = 1", "b = 2")
    first = parse_notebook("kept.ipynb", text)
    assert parse_notebook("kept.ipynb", "".join(list(text))) is first  # an equal, new string
    assert parse_notebook("elsewhere.ipynb", text) is not first  # the path is in the answer
    assert parse_notebook("elsewhere.ipynb", text).path == "elsewhere.ipynb"
    edited = parse_notebook("kept.ipynb", notebook_text("a = 1", "b = 3"))
    assert edited is not first
    assert [cell.source for cell in edited.cells] == ["a = 1", "b = 3"]
    assert [cell.source for cell in first.cells] == ["a = 1", "b = 2"]


def test_what_is_kept_cannot_be_changed_by_a_caller() -> None:
    book = parse_notebook("frozen.ipynb", notebook_text("x = 1"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        book.cells[0].source = "x = 2"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        book.cells.append(book.cells[0])  # type: ignore[attr-defined]


def test_only_a_few_parses_are_kept() -> None:
    first = parse_notebook("n0.ipynb", notebook_text("0"))
    for number in range(1, PARSED_NOTEBOOKS + 1):
        parse_notebook(f"n{number}.ipynb", notebook_text(str(number)))
    assert parse_notebook("n0.ipynb", notebook_text("0")) is not first


def test_a_bad_notebook_is_refused_each_time() -> None:
    for _ in range(2):
        with pytest.raises(InvalidRequest):
            parse_notebook("bad.ipynb", "{not json")


def test_multi_line_strings_on_disk_are_joined_as_nbformat_joins_them() -> None:
    book = json.loads(notebook_text("print(1)"))
    book["cells"][0]["source"] = ["print(1)\n", "print(2)"]
    book["cells"][0]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": ["1\n", "2\n"]},
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {
                "text/plain": ["   a  b\n", "0  1  2"],
                "image/png": ["iVBOR\n", "w0KG"],
                "application/json": {"rows": ["x", "y"]},
                "application/vnd.custom+json": ["x", "y"],
            },
        },
    ]
    [cell] = parse_notebook("lines.ipynb", json.dumps(book)).cells
    assert cell.source == "print(1)\nprint(2)"
    stream, display = cell.outputs
    assert stream["text"] == "1\n2\n"
    assert display["data"]["text/plain"] == "   a  b\n0  1  2"
    assert display["data"]["image/png"] == "iVBOR\nw0KG"
    assert display["data"]["application/json"] == {"rows": ["x", "y"]}
    assert display["data"]["application/vnd.custom+json"] == ["x", "y"]  # JSON stays JSON
