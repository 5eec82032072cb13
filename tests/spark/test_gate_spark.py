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
    assert main(["check", "--engine", "spark", str(trace), "--out", str(tmp_path / "s"), "--quiet"]) == 2
    assert "1 group(s) could not be judged" in capsys.readouterr().err
    assert (
        main(["check", "--engine", "spark", str(trace), "--out", str(tmp_path / "a"), "--quiet", "--allow-unknown"])
        == 0
    )
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["unknown_accepted"] is True
    assert (
        main(["check", "--engine", "spark", str(trace), "--engine", "python", "--out", str(tmp_path / "p"), "--quiet"])
        == 2
    )
    for name in ("unknown.jsonl",):
        assert (tmp_path / "s" / name).read_text() == (tmp_path / "p" / name).read_text()


def test_twin_spark_clean_trace_exits_0(tmp_path, spark):
    assert main(["check", "--engine", "spark", str(CLEAN), "--out", str(tmp_path / "s"), "--quiet"]) == 0


@pytest.mark.parametrize("mechanism", ["am", "sr"])
def test_spark_reports_unknown_kinds_as_the_python_engine_does(mechanism, tmp_path, spark):
    """The same unknown-kind notes from both engines (they share GroupFolds); twin in tests/engine."""
    from tests.engine.test_unknown_kinds import EXIT, RENAMED, renamed

    path, _ = renamed(tmp_path, mechanism)
    assert main(["check", "--engine", "spark", str(path), "--out", str(tmp_path / "s"), "--quiet"]) == EXIT[mechanism]
    assert (
        main(["check", "--engine", "spark", str(path), "--engine", "python", "--out", str(tmp_path / "p"), "--quiet"])
        == EXIT[mechanism]
    )
    spark_notes = (tmp_path / "s" / "unknown.jsonl").read_text()
    assert spark_notes == (tmp_path / "p" / "unknown.jsonl").read_text()
    assert repr(RENAMED[mechanism][2]) in spark_notes


def test_spark_no_valid_row_and_cr_line_endings_exit_2(tmp_path, spark, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n', encoding="utf-8")
    assert main(["check", "--engine", "spark", str(bad), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    assert "no valid row" in capsys.readouterr().err
    cr = tmp_path / "cr.jsonl"
    cr.write_bytes(CLEAN.read_bytes().replace(b"\n", b"\r"))
    assert main(["check", "--engine", "spark", str(cr), "--out", str(tmp_path / "c"), "--quiet"]) == 2
    assert "uses CR line endings" in capsys.readouterr().err


@pytest.mark.parametrize("sample", ["am-s1.jsonl", "sr-s3.parquet"])
def test_spark_names_a_version_1_trace(sample, tmp_path, spark, capsys):
    """The JVM fast path sends a version-1 row to the Python judgement, whose reason stops the check (exit 2);
    twin: the same trace at version 2 is judged clean."""
    from tests.unit.test_schema_version import CLEAN as SAMPLES
    from tests.unit.test_schema_version import at_version

    old = at_version(SAMPLES / sample, tmp_path / f"old-{sample}", 1)
    assert main(["check", "--engine", "spark", str(old), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "of trace schema version 1, not 2" in capsys.readouterr().err
    new = at_version(SAMPLES / sample, tmp_path / f"new-{sample}", 2)
    assert main(["check", "--engine", "spark", str(new), "--out", str(tmp_path / "n"), "--quiet"]) == 0
