"""The probe of a file's trace names from its `trace_id` dictionaries (`conformance.engine.trace_probe`), which
decides the Spark check's one-job units plan (`spark_trace_check.probed_units`) before any row is read.

The claim it must hold: never fewer names than the index (`index_file`) counts in the file, so files the probe
keeps apart share no trace. Checked on Parquet files of the sample traces (several traces per file, a row
without a trace, a row group per few rows) against the index; twin: a dictionary that holds a name no row uses
gives a superset, never a subset, and joins two files that share nothing (safe: one task judges both). A file
the probe cannot answer for gives None (JSON Lines; a trace_id column of integers; no such column), and one such
file makes the whole corpus's probe None. `components` joins files transitively.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.engine.trace_index import index_file
from conformance.engine.trace_probe import file_traces, probe_traces
from conformance.engine.units import components
from traces.corpus import SAMPLES_DIR
from traces.io import discover, read_events, write_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.unit

SOURCES = ("clean/sr-s1.jsonl", "clean/am-s1.jsonl", "clean/pf-s1.jsonl")


def _rows(names: tuple[str, ...]) -> list[dict]:
    rows = []
    for name in names:
        for e in read_events(SAMPLES_DIR / name).events:
            row = e.to_row()
            row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
            rows.append(row)
    return rows


def _write(path: Path, rows: list[dict], row_group_size: int | None = None) -> Path:
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=row_group_size)
    return path


def test_the_probe_names_every_trace_the_index_counts(tmp_path):
    rows = _rows(SOURCES)
    rows[3]["trace_id"] = None  # a row without a trace: in neither
    _write(tmp_path / "a.parquet", rows, row_group_size=7)  # many row groups, a dictionary each
    _write(tmp_path / "b.parquet", rows[:5])
    for tf in discover([str(tmp_path)]).files:
        counted = set(index_file(tf).counts)
        assert counted and file_traces(tf) == counted


def test_a_dictionary_with_an_unused_name_gives_a_superset_and_joins_files(tmp_path):
    rows = _rows(SOURCES[:1])
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    table = pa.Table.from_pylist(rows, schema=schema)
    names = table["trace_id"].combine_chunks()
    dictionary = pa.array(sorted({*names.to_pylist(), "never-a-row"}))
    codes = pa.compute.index_in(names, value_set=dictionary)
    column = pa.DictionaryArray.from_arrays(codes, dictionary)
    with_codes = table.set_column(table.schema.get_field_index("trace_id"), "trace_id", column)
    pq.write_table(with_codes, tmp_path / "a.parquet", store_schema=False)  # read back as strings
    other = _rows(SOURCES[1:2])
    other[0]["trace_id"] = "never-a-row"  # a real trace of b, named (unused) in a's dictionary
    _write(tmp_path / "b.parquet", other)
    files = discover([str(tmp_path)]).files
    probed = probe_traces(files)
    assert probed is not None
    index = [set(index_file(tf).counts) for tf in files]
    assert probed[0] > index[0] and "never-a-row" not in index[0]
    assert components(index) == [[0], [1]] and components(probed) == [[0, 1]]


def test_files_the_probe_cannot_answer_for(tmp_path):
    write_events(tmp_path / "a.jsonl", read_events(SAMPLES_DIR / SOURCES[0]).events)
    pq.write_table(pa.table({"trace_id": [1, 2], "seq": [1, 2]}), tmp_path / "ints.parquet")
    pq.write_table(pa.table({"seq": [1, 2]}), tmp_path / "none.parquet")
    _write(tmp_path / "ok.parquet", _rows(SOURCES[:1]))
    files = {Path(tf.name).name: tf for tf in discover([str(tmp_path)]).files}
    assert file_traces(files["ok.parquet"])
    for name in ("a.jsonl", "ints.parquet", "none.parquet"):
        assert file_traces(files[name]) is None, name
    assert probe_traces(list(files.values())) is None
    assert probe_traces([files["ok.parquet"]]) == [file_traces(files["ok.parquet"])]


def test_components_join_files_transitively():
    assert components([{"a"}, {"b"}, {"a", "c"}, {"c"}, set()]) == [[0, 2, 3], [1], [4]]
    assert components([{"x", "y"}, {"y"}, {"z", "x"}]) == [[0, 1, 2]]
