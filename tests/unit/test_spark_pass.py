"""The Spark trace pass's Python side (`spark_trace_check.trace_pass.make_runner`) driven without Spark: Arrow
batches of raw rows in, report rows out. A trace streamed in order gives the single-process engine's
violations; a row whose shuffle key differs from its parsed trace ID (JSON the JVM read otherwise) is never
folded where it landed: its trace is named for the whole-trace pass (the twin: the same rows with the right
key stream with no such row); a trace out of seq order is named too. Parquet and JSONL rows in one batch are
judged each by its own reader. Violations carry their events from the pass (twin: an engine that keeps none)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from conformance.engine import driver
from conformance.pycheck import check_paths
from model.kernel.workload import MUTANTS
from spark_trace_check.raw import RAW_COLUMNS, RAW_DDL, judge_rows
from spark_trace_check.trace_pass import HELD_KIND, make_runner
from traces.io import write_events
from traces.schema import FIELD_NAMES

pytestmark = pytest.mark.unit
_TYPES = {"bigint": pa.int64(), "string": pa.string(), "binary": pa.binary(), "int": pa.int32()}
# as `monitors.trace_pass` hands them over: the key as bytes (Spark's order)
SCHEMA = pa.schema(
    [(c.split(" ")[0], _TYPES["binary" if c.startswith("key ") else c.split(" ")[1]]) for c in RAW_DDL.split(", ")]
)


def _rows(lines: list[bytes], keys: list[str | None]) -> pa.RecordBatch:
    rows = [
        {"key": k.encode() if k is not None else None, "file_rank": 0, "line": i + 1, "raw": raw}
        for i, (raw, k) in enumerate(zip(lines, keys, strict=True))
    ]
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["key"] is not None, rows[i]["key"] or b"", i))
    return pa.RecordBatch.from_pylist([rows[i] for i in order], schema=SCHEMA)


def _run(batch: pa.RecordBatch) -> list[dict]:
    return [r for out in make_runner(None, None)(iter([batch])) for r in out.to_pylist()]


def _lines(tmp_path, events) -> list[bytes]:
    write_events(tmp_path / "t.jsonl", events)
    return (tmp_path / "t.jsonl").read_bytes().splitlines()


def test_a_streamed_trace_gives_the_single_process_violations(tmp_path):
    events = MUTANTS["recv-without-send"](2)
    lines = _lines(tmp_path, events)
    out = _run(_rows(lines, [json.loads(x)["trace_id"] for x in lines]))
    got = sorted((r["rule"], tuple(r["event_ids"])) for r in out if r["kind"] == "v")
    py = check_paths([str(tmp_path / "t.jsonl")])
    assert got == sorted((v["rule"], tuple(v["event_ids"])) for v in py.violations) and got
    assert not [r for r in out if r["kind"] == HELD_KIND]
    assert sum(r["count"] for r in out if r["kind"] == "n") == len(events)


def test_a_row_under_another_key_holds_its_trace_and_the_twin_streams(tmp_path):
    events = MUTANTS["recv-without-send"](2)
    lines = _lines(tmp_path, events)
    right = [json.loads(x)["trace_id"] for x in lines]
    wrong = [*right[:5], None, *right[6:]]  # the JVM could not read row 6's trace ID
    held = [r for r in _run(_rows(lines, wrong)) if r["kind"] == HELD_KIND]
    assert held == [{**held[0], "trace_id": right[5], "entity": None}]
    assert not [r for r in _run(_rows(lines, right)) if r["kind"] == HELD_KIND]  # the twin


def test_a_trace_out_of_seq_order_is_held(tmp_path):
    events = MUTANTS["recv-without-send"](2)
    lines = _lines(tmp_path, events)
    lines[3], lines[4] = lines[4], lines[3]
    out = _run(_rows(lines, [json.loads(x)["trace_id"] for x in lines]))
    assert [r["trace_id"] for r in out if r["kind"] == HELD_KIND] == [events[0].trace_id]


def test_parquet_and_jsonl_rows_in_one_batch_are_each_judged(tmp_path):
    events = MUTANTS["recv-without-send"](2)[:4]
    lines = _lines(tmp_path, events)
    batch = _rows(lines, [e.trace_id for e in events]).to_pylist()
    for row, e in zip(batch[:2], events[:2], strict=True):  # the first two as Parquet cells
        cells = e.to_row() | {"attrs": json.dumps(e.attrs)}
        row.update({n: cells[n] for n in FIELD_NAMES}, raw=None)
    batch[1]["seq"] = -1  # a bad Parquet cell
    batch[3]["raw"] = b"{not json"  # a bad JSONL line
    judged = judge_rows(pa.RecordBatch.from_pylist(batch, schema=SCHEMA))
    assert [e is not None for e, _ in judged] == [True, False, True, False]
    assert judged[1][1].field == "seq" and judged[0][0] == events[0] and judged[2][0] == events[2]
    assert RAW_COLUMNS[0] == "key"


def test_violations_carry_their_events_from_the_pass_and_the_twin_keeps_none(tmp_path, monkeypatch):
    """The pass attaches each violation's events from the events the engine kept while reading its trace
    (`Engine.close`), so the driver fetches none; twin: an engine that keeps nothing sends none, and the
    driver would fetch them (`job._check`)."""
    events = MUTANTS["recv-without-send"](2)
    lines = _lines(tmp_path, events)
    batch = _rows(lines, [json.loads(x)["trace_id"] for x in lines])
    py = {tuple(v["event_ids"]): v["events"] for v in check_paths([str(tmp_path / "t.jsonl")]).violations}
    got = {tuple(r["event_ids"]): json.loads(r["events"]) for r in _run(batch) if r["kind"] == "v"}
    assert got == py and all(got.values())
    monkeypatch.setattr(driver, "KEEP_EVENTS", 0)
    assert [r["events"] for r in _run(batch) if r["kind"] == "v"] == [None] * len(got)
