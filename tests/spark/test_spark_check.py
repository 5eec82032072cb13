"""The Spark job: clean corpora pass, planted violations are flagged by the right rule, bad rows are
quarantined with the same file/line/field as the pure-Python reader, counts reconcile, exit codes hold,
and the Spark and Python engines agree on every sample."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.cli import main
from conformance.pycheck import check_paths
from model.kernel.workload import MUTANTS, simulate
from spark_trace_check.job import check
from tests.unit.test_check_core import EXPECTED
from tests.unit.test_traces_io import GOOD, write_mixed
from traces.corpus import SAMPLES_DIR
from traces.io import TraceFileError, read_events, write_events
from traces.schema import arrow_schema

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("spark_plan")]  # both plans of the job


def _rules(outcome) -> set[str]:
    return {r["rule"] for r in outcome.violations_by_rule}


def test_clean_sample_corpus_passes(spark):
    outcome = check(spark, [str(SAMPLES_DIR / "clean")])
    assert outcome.verdict == "valid", outcome.violations[:3]
    assert outcome.rows_read > 0 and outcome.rows_quarantined == 0


def test_each_mutant_is_flagged_with_its_rule(spark, tmp_path):
    for name, run in MUTANTS.items():
        write_events(tmp_path / f"{name}.jsonl", run(1))
    outcome = check(spark, [str(tmp_path)])
    by_trace = {}
    for v in outcome.violations:
        by_trace.setdefault(v["trace_id"].split("~")[1], set()).add(v["rule"])
    assert by_trace == {name: {rule} for name, rule in EXPECTED.items()}
    for v in outcome.violations:
        assert v["events"] and {e["event_id"] for e in v["events"]} == set(v["event_ids"])


def test_quarantine_matches_the_python_reader_and_counts_reconcile(spark, tmp_path):
    path = tmp_path / "mixed.jsonl"
    write_mixed(path)
    py = read_events(path)
    outcome = check(spark, [str(path)])
    assert outcome.rows_read == py.rows_read == outcome.rows_checked + outcome.rows_quarantined
    assert outcome.rows_quarantined == len(py.errors)
    spark_q = {(q["line"], q["field"]) for q in outcome.quarantine}
    assert spark_q == {(e.line, e.field) for e in py.errors}
    assert all(q["file"] == str(path) for q in outcome.quarantine)


def test_parquet_rows_are_numbered_and_quarantined(spark, tmp_path):
    rows = [dict(GOOD, attrs=json.dumps(GOOD["attrs"])), dict(GOOD, seq=None, attrs="{}"), dict(GOOD, attrs="{bad")]
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    outcome = check(spark, [str(path)])
    assert sorted((q["line"], q["field"]) for q in outcome.quarantine) == [(2, "seq"), (3, "attrs")]
    assert outcome.rows_checked == 1


def test_line_numbers_survive_many_blocks(spark, tmp_path):
    """A file split into several blocks still reports the true line of a bad row."""
    events = simulate(7, duration_ms=3_600_000)
    lines = [e.to_json() for e in events]
    bad_at = len(lines) - 3
    lines[bad_at] = "{broken"
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(max(4096, path.stat().st_size // 7)))
    try:
        outcome = check(spark, [str(path)])
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert [(q["line"], q["field"]) for q in outcome.quarantine] == [(bad_at + 1, "")]


def test_engines_agree_on_the_sample_corpus(spark):
    for sub in ("clean", "mutants"):
        sp = check(spark, [str(SAMPLES_DIR / sub)])
        py = check_paths([str(SAMPLES_DIR / sub)])
        assert sp.summary() | {"engine": ""} == py.summary() | {"engine": ""}
        strip = [{k: v for k, v in x.items() if k != "events"} for x in sp.violations]
        assert strip == [{k: v for k, v in x.items() if k != "events"} for x in py.violations]


def test_unusable_input_raises(spark, tmp_path):
    with pytest.raises(TraceFileError):
        check(spark, [str(tmp_path / "missing")])
    pq.write_table(pa.table({"x": [1]}), tmp_path / "wrong.parquet")
    with pytest.raises(TraceFileError, match=r"wrong\.parquet"):
        check(spark, [str(tmp_path / "wrong.parquet")])
    typed = pa.table({n: pa.array(["x"]) for n in arrow_schema().names})
    pq.write_table(typed, tmp_path / "typed.parquet")
    with pytest.raises(TraceFileError, match=r"typed\.parquet: column 'schema_version' has type string"):
        check(spark, [str(tmp_path / "typed.parquet")])


def test_cli_exit_codes_and_report_files(tmp_path, spark):
    out = tmp_path / "out"
    assert main(["check", "--engine", "spark", str(SAMPLES_DIR / "clean"), "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "valid" and summary["counts_reconcile"]
    bad = tmp_path / "bad"
    bad.mkdir()
    write_events(bad / "m.jsonl", MUTANTS["recv-without-send"](2))
    assert main(["check", "--engine", "spark", str(bad), "--out", str(out), "--quiet"]) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["violations_by_rule"][0]["requirement"] == "TR-003"
    assert main(["check", "--engine", "spark", str(tmp_path / "nothing-here"), "--out", str(out), "--quiet"]) == 2


def test_skew_check_agrees_between_engines(spark, tmp_path):
    from tests.unit.test_skew_check import shifted

    write_events(tmp_path / "shifted.jsonl", shifted(3_600_000))
    write_events(tmp_path / "clean.jsonl", simulate(2))
    sp = check(spark, [str(tmp_path)], skew_ms=50)
    py = check_paths([str(tmp_path)], skew_ms=50)
    assert sp.summary() | {"engine": ""} == py.summary() | {"engine": ""}
    assert {r["requirement"] for r in sp.violations_by_rule} == {"TR-003"}
    assert "skew" in sp.monitors


def test_spark_runs_the_registry_monitor_list(spark):
    """Both engines take the one list of `model.registry.monitor_factories`: msgtrk and skew included."""
    from model.registry import monitor_runs

    paths = [str(SAMPLES_DIR / "clean" / "net-s1.jsonl")]
    sp, py = check(spark, paths, skew_ms=50), check_paths(paths, skew_ms=50)
    assert sp.monitors == py.monitors == [name for name, _ in monitor_runs(50)]
    assert {"msgtrk", "skew"} <= set(sp.monitors)


def test_monitor_groups_get_the_trace_context_as_in_python(spark, tmp_path):
    from conformance.check import run_monitor
    from spark_trace_check.raw import read_raw
    from spark_trace_check.trace_pass import trace_pass
    from tests.unit.context_probe import ContextProbe
    from tests.unit.test_monitor_context import traces

    events = traces()
    results = run_monitor(ContextProbe(), events)
    py = sorted((v.trace_id, v.entity, v.explanation) for r in results for v in r.violations)
    (tmp_path / "stage").mkdir()
    raw = read_raw(spark, [str(_write(events, tmp_path))], str(tmp_path / "stage"))
    found = trace_pass(raw.rows, 2, None, extra=[("probe", ContextProbe)]).collect()
    sp = sorted((r["trace_id"], r["entity"], r["explanation"]) for r in found if r["rule"] == "probe")
    assert sp == py and any("NET_CONFIG" in x[2] for x in sp)


def _write(events, where):
    path = where / "ctx.jsonl"
    write_events(path, events)
    return path
