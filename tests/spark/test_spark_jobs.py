"""The Spark check's shape, not its speed: a check runs a bounded number of Spark jobs and stages (the core
rules are one aggregation plus the trace pass, not one shuffle and one job per rule), counted from Spark's
status tracker for the check's job group. Its twin puts one shuffle per rule back and must break the bound."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import spark_trace_check.job as job
from model.kernel.workload import MUTANTS, simulate
from spark_trace_check.progress import JOB_GROUP
from spark_trace_check.units import PLAN_GROUP
from traces.io import write_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.spark

# the worst case of a small input: a Parquet file (schema job), a bad row (the Python judgement and the
# quarantine job) and a violation (the events attached to it)
MAX_JOBS, MAX_STAGES = 10, 20


def _corpus(tmp_path):
    write_events(tmp_path / "m.jsonl", MUTANTS["recv-without-send"](2))
    (tmp_path / "m.jsonl").open("a").write('{"not": "an event"}\n')
    rows = [e.to_row() for e in simulate(1)][:50]
    for row in rows:
        row["attrs"] = __import__("json").dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), tmp_path / "c.parquet")
    return [str(tmp_path)]


def _shape(spark, paths, plan: str = "shuffle") -> tuple[int, int, object]:
    tracker = spark.sparkContext.statusTracker()

    def ids() -> set[int]:  # the check's jobs, and the units plan's index and TR-002 jobs
        return {j for g in (JOB_GROUP, PLAN_GROUP) for j in tracker.getJobIdsForGroup(g)}

    before = ids()
    outcome = job.check(spark, paths, plan=plan)
    new = [tracker.getJobInfo(j) for j in ids() - before]
    return len(new), sum(len(j.stageIds) for j in new if j is not None), outcome


@pytest.mark.parametrize("plan", ["shuffle", "units"])
def test_a_check_runs_few_spark_jobs(spark, tmp_path, plan):
    jobs, stages, outcome = _shape(spark, _corpus(tmp_path), plan)
    assert outcome.rows_quarantined == 1 and outcome.violations_total > 0  # every optional job ran
    assert 0 < jobs <= MAX_JOBS and stages <= MAX_STAGES, (jobs, stages)


def test_one_shuffle_per_rule_breaks_the_bound(spark, tmp_path, monkeypatch):
    real = job.trace_pass

    def per_rule(rows, partitions, skew_ms, held=None, extra=()):  # the old shape: a shuffle per rule
        out = real(rows, partitions, skew_ms, held, extra)
        keys = ("key", "id", "file_rank", "line", "node", "entity", "kind", "mechanism", "seq", "trace_id", "event_id")
        for key in (*keys, "ts_ms", "schema_version"):
            again = rows.groupBy(key).count().where("count < 0").select(F.lit("v").alias("kind"))
            out = out.unionByName(again, allowMissingColumns=True)
        return out

    monkeypatch.setattr(job, "trace_pass", per_rule)
    jobs, stages, _ = _shape(spark, _corpus(tmp_path))
    assert jobs > MAX_JOBS or stages > MAX_STAGES, (jobs, stages)


def test_progress_flag_draws_the_bar_without_a_terminal_and_prints_the_rate(spark, tmp_path, capsys):
    from conformance.cli import main

    (tmp_path / "in").mkdir()
    paths = _corpus(tmp_path / "in")
    argv = ["check", "--engine", "spark", *paths, "--out", str(tmp_path / "out"), "--progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "checking (Spark)" in err and "task" in err  # the bar, drawn although stderr is captured
    assert "validated " not in err  # with a bar, no phase lines
    last = err.strip().splitlines()[-1]
    assert last.startswith("checked ") and last.endswith(" events/s"), last
    assert (
        main(["check", "--engine", "spark", *paths, "--out", str(tmp_path / "out2")]) == 1
    )  # not a terminal: phase lines, no bar
    err = capsys.readouterr().err
    assert "checking (Spark)" not in err and "validated" in err and err.strip().endswith(" events/s")
