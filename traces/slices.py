"""Reading one slice of a trace file: the rows of some traces, judged, the other rows passed over unjudged.

A check that splits a corpus into units of whole traces (`conformance.engine.units`) may give the traces of one
file to several units. Each unit reads the file and judges only its slice: the rows whose trace, told
cheaply before the row is judged (the Parquet `trace_id` column; for JSON Lines `jsonl_trace`, a scan of
the line for its top-level `"trace_id"`), is one of the unit's traces, and, for the file's owner, the rows
whose trace cannot be told or that the file's index does not hold (`known`). The slices of a file's units
are disjoint and cover it, so every row is judged and counted exactly once however the traces are split
(TR-005), and a row keeps its number in the file. A judged row whose trace differs from the one told
beforehand reaches its unit's check, which refuses it (the reader never guesses).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from traces.io import ReadResult, RowError, TraceFile, TraceFileError, check_parquet_schema, iter_jsonl
from traces.rows import parse_json

if TYPE_CHECKING:
    import pyarrow as pa
# pyarrow loads where Parquet is read, not at import: a check of JSON Lines needs neither pyarrow nor numpy
# (issue 32, session 15: about 0.25 s of its start).

_KEY = re.compile(rb'"trace_id"\s*:')
_VALUE = re.compile(rb'"trace_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def jsonl_trace(line: bytes) -> str | None:
    """The trace a JSON Lines row names, when it can be told; None for a row that is not valid anyway."""
    if len(_KEY.findall(line)) == 1:
        found = _VALUE.search(line)
        if found is None:
            return None
        try:
            value = json.loads(b'"' + found.group(1) + b'"')
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    try:
        row, problem = parse_json(line.decode("utf-8"))  # depth-bounded: never recurses deeply
    except UnicodeDecodeError:
        return None
    if problem is not None:
        return None
    trace = row.get("trace_id") if isinstance(row, dict) else None
    return trace if isinstance(trace, str) else None


@dataclass(frozen=True)
class Slice:
    """The rows of `traces`, and with `known` (the owner's slice) every row whose trace is not in `known`
    or cannot be told. `known` None: not the owner."""

    traces: frozenset[str]
    known: frozenset[str] | None = None

    def keeps(self, trace: str | None) -> bool:
        if trace is not None and trace in self.traces:
            return True
        return self.known is not None and (trace is None or trace not in self.known)


def iter_slice(tf: TraceFile, part_of: Slice, batch_size: int = 65_536) -> Iterator[ReadResult]:
    """The rows of one slice of a file, judged, in row order, with their numbers in the whole file;
    `rows_read` counts the slice's rows only."""
    if tf.kind == "parquet":
        return _parquet_slice(tf, part_of, batch_size)
    return _jsonl_slice(tf, part_of, batch_size)


def _jsonl_slice(tf: TraceFile, part_of: Slice, chunk: int) -> Iterator[ReadResult]:
    return iter_jsonl(tf, chunk, keep=lambda raw: part_of.keeps(jsonl_trace(raw)))


def _kept(column: pa.Array, part_of: Slice) -> pa.Array:
    """The rows of a batch's `trace_id` column the slice keeps (a column that is not valid UTF-8 is read as
    bytes, as the index reads it: its rows match no trace name)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(column.type):  # (read so, `_parquet_slice`): the names judged per row as before
        column = column.dictionary_decode()
    try:
        values = column.cast(pa.string()) if not pa.types.is_string(column.type) else column
        values.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        values = column.cast(pa.binary())
    names = pa.array(sorted(part_of.traces), pa.string())
    hit = pc.fill_null(pc.is_in(values, value_set=names.cast(values.type)), False)
    if part_of.known is None:
        return hit
    known = pa.array(sorted(part_of.known), pa.string()).cast(values.type)
    orphan = pc.fill_null(pc.invert(pc.is_in(values, value_set=known)), True)
    return pc.or_(hit, orphan)


def _parquet_slice(tf: TraceFile, part_of: Slice, batch_size: int) -> Iterator[ReadResult]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from traces.columnar import DICTIONARY_COLUMNS, FileTexts, judge_columns

    check_parquet_schema(tf.path, tf.name)
    start = 0
    texts = FileTexts()  # as `traces.io.iter_parquet` reads a file (session 24): the chosen rows keep the dictionaries
    try:
        for batch in pq.ParquetFile(tf.path, read_dictionary=DICTIONARY_COLUMNS).iter_batches(batch_size=batch_size):
            where = pc.indices_nonzero(_kept(batch.column("trace_id"), part_of))
            chosen = batch.take(where)
            events, problems = judge_columns(chosen, texts)
            rows = where.to_pylist() if problems else []  # the batch's row of each chosen row
            errors = [RowError(tf.name, start + rows[i] + 1, p.field, p.reason) for i, p in problems]
            start += batch.num_rows
            yield ReadResult(events, errors, chosen.num_rows)
    except (OSError, pa.ArrowException) as exc:
        raise TraceFileError(f"{tf.name}: cannot read Parquet data past row {start}: {exc}") from exc
