"""The Spark units plan reads every file twice, the index and the unit, and shuffles only hashes (issue 32).

The corpus of `tests/engine/test_read_once.py` (violations of several rules, a duplicate event ID planted across a
JSON Lines and a Parquet file) is checked with `--spark-plan units`; every task of the plan runs inside a wrapper
(`units._guarded` and `hash_shuffle._guarded` replaced on the driver) that counts, in the Python worker, the data
reads of each file as that test counts them (`traces.io` opens, `pq.ParquetFile`, `pq.read_table`) and appends them
to a log. The index hashes the event IDs it reads and one shuffle of those hashes names TR-002's candidates before
the units are judged, so the units keep their events: two reads per file and the single-process report. Twin: an
index that tells no event ID (patched in the workers) leaves the candidates unknown, and TR-002's exact task reads
every file a third time, with the same findings.

The shuffle plan (one shuffle of hashes names the candidates, the trace pass keeps their events): the driver's scans
of the raw rows are counted, none for TR-002; twin: a pass that keeps no candidate makes the driver scan the rows
again, with the same findings.
"""

from __future__ import annotations

import builtins
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

import spark_trace_check.hash_shuffle as hash_shuffle
import spark_trace_check.job as job
import spark_trace_check.units as units
from conformance.pycheck import check_paths
from tests.engine.test_read_once import corpus  # noqa: F401 (the fixture)

pytestmark = pytest.mark.spark


def _counting(fn, log: str, untold: bool):
    """`fn` (a task's work) run with the data reads of each file counted into `log`, in the worker."""

    def run(items):
        import conformance.engine.trace_index as trace_index
        import traces.io as trace_io

        reads: list[str] = []
        real_open, real_file, real_table = builtins.open, pq.ParquetFile, pq.read_table
        real_id = trace_index._jsonl_event_id

        def counted(real):
            def wrapped(path, *args, **kw):
                reads.append(Path(path).name)
                return real(path, *args, **kw)

            return wrapped

        trace_io.open = counted(real_open)
        pq.ParquetFile, pq.read_table = counted(real_file), counted(real_table)
        if untold:
            trace_index._jsonl_event_id = lambda line: None
        try:
            out = list(fn(items))
        finally:
            del trace_io.open
            pq.ParquetFile, pq.read_table = real_file, real_table
            trace_index._jsonl_event_id = real_id
        with real_open(log, "a") as handle:
            handle.write("".join(f"{name}\n" for name in reads))
        return out

    return run


def _check(spark, where: Path, monkeypatch, logs: Path, untold: bool) -> tuple[Counter, object]:
    log = logs / "reads.log"  # outside the corpus
    log.touch()
    real = units._guarded
    for module in (units, hash_shuffle):  # the units' tasks and TR-002's exact task
        monkeypatch.setattr(module, "_guarded", lambda fn: real(_counting(fn, str(log), untold)))
    outcome = job.check(spark, [str(where)], plan="units")
    for module in (units, hash_shuffle):
        monkeypatch.setattr(module, "_guarded", real)
    return Counter(log.read_text().split()), outcome


def _same(a, b) -> None:
    assert a.summary() | {"engine": ""} == b.summary() | {"engine": ""}
    assert a.violations == b.violations


def test_units_plan_reads_every_file_twice_and_shuffles_hashes_only(spark, corpus, monkeypatch, tmp_path_factory):  # noqa: F811
    reads, outcome = _check(spark, corpus, monkeypatch, tmp_path_factory.mktemp("log"), untold=False)
    names = sorted(p.name for p in corpus.iterdir())
    assert reads == dict.fromkeys(names, 2), reads  # the index, the unit: none for TR-002 or the events
    python = check_paths([str(corpus)])
    assert "event-id-unique" in {v["rule"] for v in outcome.violations}
    assert all(v["events"] for v in outcome.violations)
    _same(outcome, python)


def test_twin_an_index_that_tells_no_id_reads_files_a_third_time(spark, corpus, monkeypatch, tmp_path_factory):  # noqa: F811
    reads, outcome = _check(spark, corpus, monkeypatch, tmp_path_factory.mktemp("log"), untold=True)
    assert reads["a.jsonl"] == 3 and reads["b.parquet"] == 3, reads  # TR-002's exact task
    _same(outcome, check_paths([str(corpus)]))


def _scans(spark, corpus, monkeypatch, keep_none: bool) -> tuple[int, object]:  # noqa: F811
    """The shuffle plan's check of `corpus`, with the driver's scans of the raw rows counted (every one goes
    through `job.judged_events`); `keep_none`: the candidates' rows left unmarked, so the pass keeps none."""
    scans: list[int] = []
    real_scan, real_mark = job.judged_events, job.mark_candidates
    monkeypatch.setattr(job, "judged_events", lambda rows: scans.append(1) or real_scan(rows))
    if keep_none:
        monkeypatch.setattr(job, "mark_candidates", lambda rows, hashes, nulls: rows.withColumn("wanted", F.lit(False)))
    outcome = job.check(spark, [str(corpus)], plan="shuffle")
    monkeypatch.setattr(job, "judged_events", real_scan)
    monkeypatch.setattr(job, "mark_candidates", real_mark)
    return len(scans), outcome


def test_shuffle_plan_resolves_duplicate_ids_from_the_pass_without_a_second_scan(spark, corpus, monkeypatch):  # noqa: F811
    scans, outcome = _scans(spark, corpus, monkeypatch, keep_none=False)
    assert "event-id-unique" in {v["rule"] for v in outcome.violations}
    assert scans == 0  # TR-002's candidates' events came back from the one pass; every violation's events too
    _same(outcome, check_paths([str(corpus)]))


def test_twin_a_pass_that_keeps_no_candidate_scans_the_rows_again(spark, corpus, monkeypatch):  # noqa: F811
    scans, outcome = _scans(spark, corpus, monkeypatch, keep_none=True)
    assert scans == 1  # the marked rows did not all come back: TR-002 scans the raw rows for the hashes
    _same(outcome, check_paths([str(corpus)]))
