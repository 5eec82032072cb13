"""TR-002 when an event ID first repeats, in a state a Spark run saved (issue 32, "one read plus one shuffle of
hashes on Spark"; session 14): each Spark task sends back where it read each event it hashed, the driver puts the
hashes in file order and marks where each part was read (`conformance.locations.Placed`), so a later check, by
either engine, reads only the marks' rows of the earlier files, never every file (`resume.repeated_events`,
TR-002's read of every file, is replaced by a function that fails if called).

The corpus: a Parquet file of five row groups, a gzip JSON Lines file, a plain one with blank lines between its
rows (its marks are lines, counted again: `statedir.LINE_ONLY`) and a file that grows; the append reuses IDs of
every earlier file. Every report equals the full check's. Twin: a state whose Spark run marked nothing (as before
session 14: `statedir.UNKNOWN`) reads every file for TR-002.
"""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance import incremental, pycheck
from conformance.engine import resume, statedir
from spark_trace_check import incremental as spark_incremental
from spark_trace_check.job import check
from tests.engine.test_incremental import _report
from traces import io as trace_io
from traces.corpus import SAMPLES_DIR
from traces.io import read_events

pytestmark = pytest.mark.spark

CLEAN = SAMPLES_DIR / "clean"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (CLEAN / name).read_text().splitlines()]


def _corpus(where: Path) -> Path:
    where.mkdir()
    sr = read_events(CLEAN / "sr-s1.jsonl").events
    table = pa.Table.from_pylist(list(trace_io._rows(sr[:120])), schema=trace_io.arrow_schema())
    pq.write_table(table, where / "b.parquet", row_group_size=25)
    with gzip.open(where / "c.jsonl.gz", "wb") as out:
        out.write((CLEAN / "net-s1.jsonl").read_bytes())
    lines = (CLEAN / "am-s1.jsonl").read_text().splitlines()
    (where / "d.jsonl").write_text("".join(f"{line}\n\n" if i % 3 else f"\n{line}\n" for i, line in enumerate(lines)))
    (where / "a.jsonl").write_bytes((CLEAN / "net-s2.jsonl").read_bytes())
    return where


def _append_repeats(where: Path) -> int:
    """Events of every earlier file used again, appended to a.jsonl; how many."""
    old = _rows("sr-s1.jsonl")[3:120:11] + _rows("net-s1.jsonl")[2::9] + _rows("am-s1.jsonl")[1::7]
    again = [{**r, "trace_id": f"again-{n}", "seq": 0} for n, r in enumerate(old)]
    with (where / "a.jsonl").open("a") as out:
        out.writelines(json.dumps(r) + "\n" for r in again)
    return len(again)


def _assert_full(outcome, where: Path, n: int, spark) -> None:
    """The report of a full check by the engine that made the last run; TR-002 found on every repeat."""
    full = check(spark, [str(where)]) if outcome.engine == "spark" else pycheck.check_paths([str(where)])
    assert _report(outcome) == _report(full)
    dup = [v for v in outcome.violations if v["rule"] == "event-id-unique"]
    assert len(dup) == n and all(len(v["events"]) == 2 for v in dup)


@pytest.mark.parametrize("second", ["spark", "python"])
def test_a_first_repeat_after_a_spark_run_reads_only_marked_rows(spark, tmp_path, monkeypatch, second):
    monkeypatch.setattr(statedir, "CHUNK", 7)  # several marks a file
    where, state = _corpus(tmp_path / "in"), tmp_path / "state"
    spark_incremental.check_incremental(spark, [str(where)], state, cap=pycheck.DEFAULT_CAP)
    n = _append_repeats(where)
    monkeypatch.setattr(resume, "repeated_events", None)  # TR-002's read of every file: not called
    if second == "spark":
        outcome = spark_incremental.check_incremental(spark, [str(where)], state, cap=pycheck.DEFAULT_CAP)
    else:
        outcome = incremental.check_incremental([str(where)], state, cap=pycheck.DEFAULT_CAP)
    monkeypatch.undo()
    _assert_full(outcome, where, n, spark)


def test_twin_a_spark_state_without_marks_reads_every_file(spark, tmp_path, monkeypatch):
    where, state = _corpus(tmp_path / "in"), tmp_path / "state"
    spark_incremental.check_incremental(spark, [str(where)], state, cap=pycheck.DEFAULT_CAP)
    with (state / "locations.pickle").open("rb") as handle:
        marks = statedir.Marks.load(pickle.load(handle))
    marks.file = type(marks.file)("q", [statedir.UNKNOWN] * len(marks.file))  # as a Spark run marked before
    with (state / "locations.pickle").open("wb") as handle:
        pickle.dump(marks.dump(), handle)
    n = _append_repeats(where)
    calls: list[int] = []
    real = resume.repeated_events
    monkeypatch.setattr(resume, "repeated_events", lambda *a: calls.append(1) or real(*a))
    outcome = spark_incremental.check_incremental(spark, [str(where)], state, cap=pycheck.DEFAULT_CAP)
    monkeypatch.undo()
    assert calls, "a state without marks must read every file for TR-002"
    _assert_full(outcome, where, n, spark)
