"""Tab action arguments, read once for the agent's tools and the REST tab actions."""

from __future__ import annotations

from typing import Any

import pytest

from terax_jupyter.exceptions import InvalidRequest
from terax_jupyter.services.browser.arguments import described, element_target, wait_condition


def test_a_target_keeps_ref_role_and_name_and_nothing_else() -> None:
    assert element_target({"ref": "e12", "text": "x"}, reason="r") == {"ref": "e12"}
    assert element_target({"role": "button", "name": "Delete"}, reason="r") == {
        "role": "button",
        "name": "Delete",
    }


@pytest.mark.parametrize("values", [{"ref": 12}, {"role": "button", "name": None}])
def test_a_target_that_is_not_text_is_refused_with_the_callers_reason(
    values: dict[str, Any],
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        element_target(values, reason="invalid_parameter")
    assert caught.value.reason == "invalid_parameter"


def test_a_target_in_words() -> None:
    assert described({"ref": "e3"}) == "e3"
    assert described({"role": "button", "name": "Delete"}) == "the button 'Delete'"


def test_one_condition_and_the_default_wait() -> None:
    assert wait_condition({"title_contains": "Done"}, reason="r") == (
        {"title_contains": "Done"},
        10.0,
    )
    assert wait_condition({"selector": "#ok", "timeout": 2.5}, reason="r") == (
        {"selector": "#ok"},
        2.5,
    )


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"url_contains": "a", "text_contains": "b"},
        {"url_contains": ""},
        {"url_contains": "", "title_contains": "x"},
        {"selector": 7},
        {"title_contains": "x", "timeout": 0},
        {"title_contains": "x", "timeout": 61},
        {"title_contains": "x", "timeout": True},
        {"title_contains": "x", "timeout": "5"},
    ],
)
def test_a_bad_condition_or_wait_is_refused(values: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequest) as caught:
        wait_condition(values, reason="invalid_argument")
    assert caught.value.reason == "invalid_argument"
