"""The gate's exit statuses through the Spark engine (it shares `conformance.report.run_and_report` with the
single-process engine): an unjudged group exits 2, `--allow-unknown` accepts it, and the twin, the same
trace with its configuration, exits 0. Both engines give the same summary and unknown notes."""

from __future__ import annotations

import json

import pytest

from conformance.cli import main
from tests.unit.test_gate_exit import CLEAN, unjudgeable

pytestmark = pytest.mark.spark


def test_spark_unknown_exits_2_unless_accepted(tmp_path, spark, capsys):
    trace = unjudgeable(tmp_path)
    assert main(["check", str(trace), "--out", str(tmp_path / "s"), "--quiet"]) == 2
    assert "1 group(s) could not be judged" in capsys.readouterr().err
    assert main(["check", str(trace), "--out", str(tmp_path / "a"), "--quiet", "--allow-unknown"]) == 0
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["unknown_accepted"] is True
    assert main(["check", str(trace), "--engine", "python", "--out", str(tmp_path / "p"), "--quiet"]) == 2
    for name in ("unknown.jsonl",):
        assert (tmp_path / "s" / name).read_text() == (tmp_path / "p" / name).read_text()


def test_twin_spark_clean_trace_exits_0(tmp_path, spark):
    assert main(["check", str(CLEAN), "--out", str(tmp_path / "s"), "--quiet"]) == 0
