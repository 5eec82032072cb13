"""A Parquet file's text columns read as dictionaries (`traces.columnar.DICTIONARY_COLUMNS`, session 24): the
events and row errors of `traces.io.iter_parquet` are still those of the full judgement of each row, and the attrs
texts of a file are parsed once for its batches (`FileTexts`) only while each batch's dictionary extends the one
before it."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import traces.columnar as columnar
from tests.engine.test_columnar import GOOD  # a valid row
from traces.columnar import FileTexts, judge_columns
from traces.io import TraceFile, iter_parquet
from traces.rows import check_typed_row
from traces.schema import Event, arrow_schema

pytestmark = pytest.mark.unit

BAD_UTF8 = b"\xff\xfe"

# every column nullable, so a file can hold the nulls and invalid bytes another writer might leave
SCHEMA = pa.schema([f.with_nullable(True) for f in arrow_schema()])


def _rows(n: int, odd: dict[int, dict]) -> list[dict]:
    texts = ['{"a":1}', '{"a":2,"b":"x"}', GOOD["attrs"], '{"c":[1,2,3]}']
    rows = []
    for i in range(n):
        row = {**GOOD, "seq": i, "event_id": f"e{i}", "attrs": texts[i % 4] if i % 7 else f'{{"n":{i}}}'}
        row["node"], row["entity"], row["kind"] = f"n{i % 3}", f"m{i % 5}", f"K_{i % 6}"
        rows.append({**row, **odd.get(i, {})})
    return rows


def _write(path, rows: list[dict], row_group_size: int, utf8_bad: dict[int, str] | None = None) -> None:
    """`rows` as a Parquet file of row groups of `row_group_size`; `utf8_bad`: row -> a text column given
    invalid UTF-8 bytes there (written through a binary view: pyarrow builds no such string otherwise)."""
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    for row, name in (utf8_bad or {}).items():
        values = table[name].to_pylist()
        raw = [BAD_UTF8 if i == row else (None if v is None else v.encode()) for i, v in enumerate(values)]
        column = pa.array(raw, pa.binary()).view(pa.string())
        table = table.set_column(table.schema.get_field_index(name), name, column)
    pq.write_table(table, path, row_group_size=row_group_size)


def _oracle(path) -> tuple[list[Event], list[tuple[int, str, str]]]:
    """Each row judged in full (`traces.rows.check_typed_row`), the columns read plainly, invalid UTF-8 as bytes."""
    table = pq.read_table(path)
    columns = {}
    for name in table.column_names:
        col = table[name].combine_chunks()
        if pa.types.is_string(col.type):
            try:
                col.validate(full=True)
            except pa.ArrowInvalid:
                col = col.cast(pa.binary())
        columns[name] = col.to_pylist()
    events, errors = [], []
    for i in range(table.num_rows):
        row, problem = check_typed_row({n: columns[n][i] for n in table.column_names})
        if problem is None:
            events.append(Event.from_row(row))
        else:
            errors.append((i + 1, problem.field, problem.reason))
    return events, errors


def _read(path, batch_size: int) -> tuple[list[Event], list[tuple[int, str, str]], int]:
    parts = list(iter_parquet(TraceFile("t.parquet", str(path), "parquet"), batch_size=batch_size))
    assert all(p.reconciles() for p in parts)
    return (
        [e for p in parts for e in p.events],
        [(e.line, e.field, e.reason) for p in parts for e in p.errors],
        sum(p.rows_read for p in parts),
    )


ODD = {
    3: {"attrs": '{"a":1.5}'},  # not plain: in batch 1, and again in batch 4 (row 33)
    33: {"attrs": '{"a":1.5}'},
    5: {"trace_id": None},
    12: {"kind": "1bad"},
    14: {"mechanism": "xx"},
    17: {"node": ""},
    21: {"attrs": None},
    26: {"entity": None},
    40: {"attrs": '{"a":1,"a":2}'},
}


@pytest.mark.parametrize("row_group_size, batch_size", [(1000, 10), (16, 10), (7, 64), (1000, 1000)])
def test_a_file_read_as_dictionaries_gives_the_full_judgement_of_each_row(tmp_path, row_group_size, batch_size):
    """Nulls, empty names, a bad kind or mechanism, texts that are not plain (one in two batches, one used once)
    in files of several row groups and batches: the events and the errors (row, field, reason) are the full
    judgement's, row by row. With invalid UTF-8 in a dictionary column the same holds (its rows quarantined)."""
    rows = _rows(50, ODD)
    path = tmp_path / "t.parquet"
    _write(path, rows, row_group_size)
    events, errors, read = _read(path, batch_size)
    want_events, want_errors = _oracle(path)
    assert (events, errors, read) == (want_events, want_errors, 50)
    assert len(want_errors) == len(ODD) and len(events) == 50 - len(ODD)
    _write(path, rows, row_group_size, utf8_bad={8: "attrs", 30: "kind"})
    events, errors, _ = _read(path, batch_size)
    want_events, want_errors = _oracle(path)
    assert (events, errors) == (want_events, want_errors)
    assert {line for line, _, _ in errors} >= {9, 31}


def test_a_text_that_is_not_plain_sends_only_the_batches_that_hold_it_row_by_row(tmp_path, monkeypatch):
    """The file's dictionary keeps a rejected text for every later batch of its row group; a batch that does not
    hold it is still built column-wise. Twin: the batch that holds it again goes row by row and reports its row."""
    calls = []
    real = columnar._row_by_row

    def counted(batch, *args):
        calls.append(batch.num_rows)
        return real(batch, *args)

    monkeypatch.setattr(columnar, "_row_by_row", counted)
    path = tmp_path / "t.parquet"
    _write(path, _rows(40, {3: {"attrs": '{"a":1.5}'}}), 1000)
    events, errors, _ = _read(path, 10)
    assert [line for line, _, _ in errors] == [4] and len(events) == 39
    assert calls == [10]  # batch 1 only
    calls.clear()
    _write(path, _rows(40, {3: {"attrs": '{"a":1.5}'}, 33: {"attrs": '{"a":1.5}'}}), 1000)
    events, errors, _ = _read(path, 10)
    assert [line for line, _, _ in errors] == [4, 34] and calls == [10, 10]


def _dictionary_batch(texts: list[str], rows: list[int]) -> pa.RecordBatch:
    """A batch of good rows whose attrs column is a dictionary of `texts`, row i holding `texts[rows[i]]`."""
    attrs = pa.DictionaryArray.from_arrays(pa.array(rows, pa.int32()), pa.array(texts, pa.string()))
    columns = [pa.array([GOOD[name]] * len(rows), SCHEMA.field(name).type) for name in SCHEMA.names[:-1]]
    columns[2] = pa.array(range(len(rows)), pa.int64())
    return pa.RecordBatch.from_arrays([*columns, attrs], names=SCHEMA.names)


class _PositionsOnly(FileTexts):
    """A mutant: keeps the texts by position whatever the new dictionary is (no check that it extends the old)."""

    def update(self, dictionary: pa.Array) -> None:
        n = len(self.texts)
        if len(dictionary) > n:
            fresh = dictionary.slice(n).cast(pa.binary()).to_pylist()
            self.texts += fresh
            self.parsed += [columnar._UNPARSED] * len(fresh)
        self.dictionary = dictionary


def test_file_texts_are_kept_only_while_each_dictionary_extends_the_one_before():
    """A dictionary that extends the one before keeps its parsed texts (the same objects); one that does not (a
    new row group) starts afresh. Twin: texts kept by position alone give the first dictionary's values to rows of
    the second, and the events differ from the full judgement's."""
    first = _dictionary_batch(['{"a":1}', '{"a":2}'], [0, 1, 1])
    extended = _dictionary_batch(['{"a":1}', '{"a":2}', '{"a":3}'], [2, 0, 1])
    other = _dictionary_batch(['{"b":1}', '{"b":2}', '{"b":3}'], [0, 1, 2])
    texts = FileTexts()
    a = judge_columns(first, texts)[0]
    b = judge_columns(extended, texts)[0]
    assert b[1].attrs is a[0].attrs and [e.attrs for e in b] == [{"a": 3}, {"a": 1}, {"a": 2}]
    c = judge_columns(other, texts)[0]
    assert [e.attrs for e in c] == [{"b": 1}, {"b": 2}, {"b": 3}]
    assert texts.texts == [b'{"b":1}', b'{"b":2}', b'{"b":3}']
    mutant = _PositionsOnly()
    judge_columns(first, mutant)
    judge_columns(extended, mutant)
    assert [e.attrs for e in judge_columns(other, mutant)[0]] == [{"a": 1}, {"a": 2}, {"a": 3}]  # wrong, as planted


@pytest.mark.parametrize("known", [None, frozenset({"t0", "t1", "t2"})])
def test_a_slice_read_as_dictionaries_gives_the_full_judgement_of_its_rows(tmp_path, known):
    """`traces.slices.iter_slice` reads the same dictionaries and keeps the file's texts across its batches: the
    rows of the traces a slice keeps (and, for the owner, the rows of no known trace, a null trace among them) give
    the full judgement's events and errors, at their rows of the file."""
    from traces.slices import Slice, iter_slice

    rows = _rows(60, ODD)
    for i, row in enumerate(rows):
        if row["trace_id"] is not None:
            row["trace_id"] = f"t{i % 4}"
    path = tmp_path / "t.parquet"
    _write(path, rows, 25)
    part = Slice(frozenset({"t1", "t3"}), known)
    parts = list(iter_slice(TraceFile("t.parquet", str(path), "parquet"), part, batch_size=10))
    events = [e for p in parts for e in p.events]
    errors = [(e.line, e.field, e.reason) for p in parts for e in p.errors]
    want_events, want_errors = _oracle(path)
    kept = {i + 1 for i, row in enumerate(rows) if part.keeps(row["trace_id"])}
    assert events == [e for e in want_events if part.keeps(e.trace_id)]
    assert errors == [err for err in want_errors if err[0] in kept]
    assert sum(p.rows_read for p in parts) == len(kept) and len(errors) >= 3
