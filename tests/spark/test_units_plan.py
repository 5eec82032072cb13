"""The Spark job's units plan (`spark_trace_check.units`) on traces spread over files read in slices, against
the single-process engine; and the plan's choice: units while the corpus's units would read it at most
`MAX_AMPLIFICATION` times, one shuffle of the rows by trace above (the twin: the same corpus with the bound
lowered must take the shuffle, and still give the same report)."""

from __future__ import annotations

import pytest

import spark_trace_check.job as job
import spark_trace_check.units as units
from conformance.pycheck import check_paths
from tests.engine.test_units import spread_corpus

pytestmark = pytest.mark.spark


def _same(a, b) -> None:
    assert a.summary() | {"engine": ""} == b.summary() | {"engine": ""}
    assert a.violations == b.violations and a.quarantine == b.quarantine and a.unknown == b.unknown


def test_units_cut_into_slices_give_the_python_report(spark, tmp_path, monkeypatch):
    paths = spread_corpus(tmp_path / "in")
    monkeypatch.setattr(units, "FIXED_BUDGET", 1)  # a budget of one event: every trace a unit
    planned = units.plan(spark, paths, 4)
    assert len(planned.units) >= 4 and any(u.slices for u in planned.units) and planned.amplification > 1
    outcome = job.check(spark, paths, plan="units")
    python = check_paths(paths)
    assert python.violations_total > 0 and python.rows_quarantined == 2
    _same(outcome, python)


def test_auto_takes_the_shuffle_when_the_units_would_read_too_much(spark, tmp_path, monkeypatch, capsys):
    paths = spread_corpus(tmp_path / "in")
    monkeypatch.setattr(units, "FIXED_BUDGET", 1)  # every trace a unit: each reads all three files
    monkeypatch.setattr(units, "MAX_AMPLIFICATION", 100.0)
    outcome = job.check(spark, paths, plan="auto", announce=True)
    said = capsys.readouterr().err
    assert "unit(s) of whole traces" in said and "one shuffle" not in said
    monkeypatch.setattr(units, "MAX_AMPLIFICATION", 1.5)
    shuffled = job.check(spark, paths, plan="auto", announce=True)
    assert "one shuffle of the rows by trace instead" in capsys.readouterr().err
    _same(outcome, shuffled)
