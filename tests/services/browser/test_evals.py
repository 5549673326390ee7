"""The browser evals end to end: a real Chromium, the local app, every case's expectations."""

from __future__ import annotations

import pytest

from terax_jupyter.services.browser.evals.__main__ import main
from terax_jupyter.services.browser.evals.cases import CASES, EXPECTED_REFUSALS, run_evals


def test_every_case_meets_its_expectations() -> None:
    report = run_evals(runs=2)
    assert [case.name for case in report.cases] == [name for name, _ in CASES]
    for case in report.cases:
        assert case.failures == [], case.name
        assert case.model_calls == 0, case.name
        assert case.hit, case.name
        assert len(case.warm_ms) == 2, case.name
        assert (case.cold_ms or 0) > 0, case.name
        assert case.steps > 0, case.name
        assert case.refusals == EXPECTED_REFUSALS.get(case.name, []), case.name
    assert report.ok
    data = report.to_json()
    assert data["ok"] is True
    assert {c["case"]: c["model_calls"] for c in data["cases"]} == {n: 0 for n, _ in CASES}
    assert "delete (approved)" in report.table()


def test_runs_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--runs", "0"])
    assert exited.value.code == 2
    assert "at least 1" in capsys.readouterr().err
