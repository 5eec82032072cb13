"""Trace IO: round trips, schema agreement, quarantine with file/line/field, reconciled counts."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from model.kernel.workload import simulate
from traces.io import TraceFileError, read_events, write_events
from traces.schema import SCHEMA_PATH, arrow_schema, json_schema

pytestmark = pytest.mark.unit

GOOD = {
    "schema_version": 2,
    "trace_id": "t",
    "seq": 0,
    "event_id": "t:0",
    "ts_ms": 5,
    "node": "n",
    "mechanism": "core",
    "entity": "t",
    "kind": "TRACE_START",
    "attrs": {"seed": 1, "xs": [1, 2]},
}

# (line text, expected field, fragment of the reason); shared with the Spark parity tests
BAD_ROWS = [
    ("not json at all", "", "not valid JSON"),
    ("[1, 2]", "", "expected an object"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "seq"}), "seq", "missing"),
    (json.dumps({**GOOD, "seq": "7"}), "seq", ""),
    (json.dumps({**GOOD, "seq": -1}), "seq", ""),
    (json.dumps({**GOOD, "ts_ms": 1.5}), "ts_ms", ""),
    (json.dumps({**GOOD, "mechanism": "xx"}), "mechanism", ""),
    (json.dumps({**GOOD, "kind": "9bad kind"}), "kind", ""),
    (json.dumps({**GOOD, "node": ""}), "node", ""),
    (json.dumps({**GOOD, "schema_version": 3}), "schema_version", ""),
    (json.dumps({**GOOD, "schema_version": 1}), "schema_version", "an older trace contract: schema version 1"),
    (json.dumps({**GOOD, "extra": 1}), "extra", "unknown"),
    (json.dumps({**GOOD, "attrs": {"a": {"nested": 1}}}), "attrs", ""),
    (json.dumps({**GOOD, "attrs": {"a": [1, "x"]}}), "attrs", ""),
    (json.dumps({**GOOD, "attrs": "not an object"}), "attrs", ""),
]


def write_mixed(path):
    """A JSONL file: good rows, blank lines, and every kind of bad row, at known lines."""
    lines, expected = [], {}
    for i, (text, field, reason) in enumerate(BAD_ROWS):
        lines.append(json.dumps({**GOOD, "seq": 2 * i, "event_id": f"t:{2 * i}"}))
        lines.append(text)
        expected[len(lines)] = (field, reason)
        lines.append("")
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return expected, len(BAD_ROWS)


def test_json_schema_file_is_generated_from_the_code():
    assert json.loads(SCHEMA_PATH.read_text()) == json_schema()


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_round_trip_keeps_every_event(tmp_path, suffix):
    events = simulate(4)
    path = tmp_path / f"t.{suffix}"
    write_events(path, events)
    result = read_events(path)
    assert result.events == events and not result.errors and result.reconciles()


def test_bad_rows_are_quarantined_with_line_field_and_reason(tmp_path):
    path = tmp_path / "mixed.jsonl"
    expected, n_good = write_mixed(path)
    result = read_events(path)
    assert result.reconciles()
    assert len(result.events) == n_good and result.rows_read == n_good + len(expected)
    got = {e.line: (e.field, e.reason) for e in result.errors}
    assert set(got) == set(expected)
    for line, (field, fragment) in expected.items():
        assert got[line][0] == field, (line, got[line])
        assert fragment.lower() in got[line][1].lower(), (line, got[line])
    assert all(e.file == str(path) for e in result.errors)


def test_parquet_nulls_and_bad_attrs_are_quarantined_by_row(tmp_path):
    rows = [dict(GOOD, attrs=json.dumps(GOOD["attrs"])), dict(GOOD, seq=None, attrs="{}"), dict(GOOD, attrs="{bad")]
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    result = read_events(path)
    assert [(e.line, e.field) for e in result.errors] == [(2, "seq"), (3, "attrs")]
    assert len(result.events) == 1 and result.reconciles()


def test_unusable_files_raise_naming_the_file(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1]}), path)
    with pytest.raises(TraceFileError, match=r"t.parquet.*lacks required column"):
        read_events(path)
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(TraceFileError, match=r"junk\.parquet"):
        read_events(junk)
    with pytest.raises(TraceFileError, match="unknown trace format"):
        read_events(tmp_path / "t.csv")
