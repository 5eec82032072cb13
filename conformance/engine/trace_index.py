"""The index of a streaming check: which traces live in which files, their seq spans, and each file's rows.

Both engines plan units of whole traces from it (`conformance.engine.units`: core rules TR-001..TR-006 and every
monitor need a trace, or an entity of it, whole), and incremental checking sizes new segments. Before reading,
each file is indexed cheaply: Parquet by its `trace_id` column alone; JSON Lines by a scan of each line for
its `"trace_id": "..."` key (a line holding that key more than once is decoded in full). The index is a
plan, not a verdict: rows are validated when the unit is read, and a valid row whose trace the index
missed is an internal error, never a dropped row.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from typing import Any, NamedTuple

from traces.dataset import id_hash
from traces.io import TraceFile, TraceFileError, check_parquet_schema, jsonl_lines
from traces.slices import jsonl_trace as _jsonl_trace  # the index's and the slices' one reading

GROUP_EVENTS = 500_000  # events of whole traces held at once (a trace larger than this is a group alone)
_SEQ_KEY = re.compile(rb'"seq"\s*:')
_SEQ = re.compile(rb'"seq"\s*:\s*(-?[0-9]+)\s*[,}]')
_ID_KEY = re.compile(rb'"event_id"\s*:')
_ID_VALUE = re.compile(rb'"event_id"\s*:\s*"((?:[^"\\]|\\.)*)"')
_MASK = 0xFFFF_FFFF_FFFF_FFFF  # `traces.dataset.id_hash`'s
Span = tuple[int, int, bool]  # a trace's rows in one file: first seq, last seq, strictly increasing between


class FileIndex(NamedTuple):
    """Rows per trace in one file, each trace's span, the rows the file holds (non-blank lines), and the
    hashes of the event IDs it holds (`index_file(..., hash_of=)`: TR-002's candidates known before the
    units are read, `conformance.pycheck`; empty otherwise). `own` (session 29): every row names its own event
    (`<trace_id>:<seq>` or `<trace_id>-<seq>`, `conformance.engine.event_ids.own_id`, seq at least 0), found
    column-wise, and its IDs were not hashed (`index_file(..., skip_own=True)`; see `unique_ids`)."""

    counts: Counter[str]
    spans: dict[str, Span]
    rows: int
    ids: array = array("Q")
    own: bool = False


class SeqOrder:
    """Whether each trace's rows are in strictly increasing seq order across files read one after another
    (TR-001): the spans of each file are given in reading order (`add`); `ok[trace]` says so per trace."""

    __slots__ = ("last", "ok")

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.ok: dict[str, bool] = {}

    def add(self, spans: dict[str, Span]) -> None:
        last, ok = self.last, self.ok
        for trace, (first, end, inside) in spans.items():
            before = last.get(trace)
            ok[trace] = ok.get(trace, True) and inside and (before is None or first > before)
            last[trace] = end

    def ordered(self) -> set[str]:
        return {t for t, ok in self.ok.items() if ok}


def file_index(tf: TraceFile, start: int = 0, first_line: int = 1) -> tuple[Counter[str], dict[str, Span]]:
    """Rows per trace in one file, and each trace's span: first and last seq in row order and whether its
    seqs strictly increase row by row (a row whose seq cannot be told counts as out of order)."""
    entry = index_file(tf, start, first_line)
    return entry.counts, entry.spans


def index_file(
    tf: TraceFile,
    start: int = 0,
    first_line: int = 1,
    hash_of: Callable[[str], int] | None = None,
    skip_own: bool = False,
) -> FileIndex:
    """`file_index`, the rows the file holds (every row a reader must account for, TR-005), and with
    `hash_of` the hash of every event ID the index can tell (a row whose ID it cannot tell is not valid,
    or is found by the exact check's fallback, `conformance.pycheck`); `skip_own`: a Parquet file whose every
    row names its own event is not hashed (`FileIndex.own`: the caller decides with `unique_ids`)."""
    if tf.kind == "parquet":
        return _parquet_index(tf, hash_of, skip_own)
    out: Counter[str] = Counter()
    spans: dict[str, Span] = {}
    rows = 0
    ids = array("Q")
    for _, line in jsonl_lines(tf, start, first_line):
        rows += 1
        if hash_of is not None and (event_id := _jsonl_event_id(line)) is not None:
            ids.append(hash_of(event_id))
        trace = _jsonl_trace(line)
        if trace is None:
            continue
        out[trace] += 1
        seq = _jsonl_seq(line)
        span = spans.get(trace)
        if span is None:
            spans[trace] = (seq, seq, seq >= 0)
        else:
            spans[trace] = (span[0], seq, span[2] and seq > span[1])
    return FileIndex(out, spans, rows, ids)


def _jsonl_event_id(line: bytes) -> str | None:
    """The event ID a JSON Lines row names when it is plainly one string key, else None."""
    if len(_ID_KEY.findall(line)) != 1:
        return None
    found = _ID_VALUE.search(line)
    if found is None:
        return None
    raw = found.group(1)
    try:
        value = raw.decode("utf-8") if b"\\" not in raw else json.loads(b'"' + raw + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _jsonl_seq(line: bytes) -> int:
    """The seq a JSON Lines row names when it is plainly one integer key, else -1 (out of order)."""
    if len(_SEQ_KEY.findall(line)) != 1:
        return -1
    found = _SEQ.search(line)
    return int(found.group(1)) if found is not None else -1


def unique_ids(index: list[FileIndex]) -> bool:
    """Whether no two rows of the corpus share an event ID, known from the index alone (session 29): every file
    `own` (each row's ID names its own event) and every trace's seqs strictly increasing across its files in
    reading order (`SeqOrder`). Two equal own IDs name the same trace and seq (`event_ids.own_id`'s proof), which
    such a corpus never holds twice: TR-002 has nothing to find, and nothing needs hashing."""
    return bool(index) and all(entry.own for entry in index) and all(seq_order(index).ok.values())


def seq_order(index: list[FileIndex]) -> SeqOrder:
    """TR-001's order of every trace across the files of an index, read in rank order (the units' streamed traces,
    `conformance.engine.units`, and `unique_ids`)."""
    order = SeqOrder()
    for entry in index:
        order.add(entry.spans)
    return order


def all_own(table: Any) -> bool:
    """Whether every row of a table with the columns `trace_id`, `seq` and `event_id` has a trace, a seq of at least
    0 and the event ID `<trace_id>:<seq>` or `<trace_id>-<seq>`, compared column-wise (Arrow's decimal text of a seq is
    Python's `str`); an Arrow error (a column of another type, invalid UTF-8) is a no: the file is hashed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    trace, seq, eid = table["trace_id"], table["seq"], table["event_id"]
    if trace.null_count or seq.null_count or eid.null_count:
        return False
    try:
        if pc.min(seq).as_py() < 0:
            return False
        text = pc.cast(seq, pa.string())
        colon = pc.equal(eid, pc.binary_join_element_wise(trace, text, ":"))
        if pc.all(colon).as_py():
            return True
        dash = pc.equal(eid, pc.binary_join_element_wise(trace, text, "-"))
        return bool(pc.all(pc.or_(colon, dash)).as_py())
    except (pa.ArrowException, TypeError, ValueError):
        return False


def hash_ids(tf: TraceFile, hash_of: Callable[[str], int]) -> array:
    """The hashes of a Parquet file's event IDs alone (its `event_id` column): a file the index found `own` whose
    IDs must meet the others' after all (`conformance.pycheck`: a corpus not `unique_ids`)."""
    return _hashed(_columns(tf, ["event_id"])["event_id"], hash_of)


def _columns(tf: TraceFile, names: list[str]) -> Any:
    """A Parquet file's columns `names` as an Arrow table; any Arrow failure is the file's `TraceFileError`."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(tf.path, columns=names)
    except Exception as exc:  # any Arrow failure: the file cannot be read
        raise TraceFileError(f"{tf.name}: cannot read Parquet data: {exc}") from exc


def _hashed(column: Any, hash_of: Callable[[str], int]) -> array:
    """The hashes of every event ID of an Arrow column the index can tell (none when it is not valid UTF-8: such
    rows are quarantined when read)."""
    import pyarrow as pa

    ids = array("Q")
    with suppress(pa.ArrowException, UnicodeDecodeError):
        told = column.to_pylist()
        if column.null_count:
            told = [i for i in told if isinstance(i, str)]
        # `id_hash` inlined (C loops, no call per ID), as `conformance.engine.driver.Engine.read` does
        ids.extend([h & _MASK for h in map(hash, told)] if hash_of is id_hash else map(hash_of, told))
    return ids


def _parquet_index(tf: TraceFile, hash_of: Callable[[str], int] | None, skip_own: bool = False) -> FileIndex:
    """A Parquet file's index from its columns. numpy and pyarrow load here, not at import: a check of JSON Lines
    needs neither (issue 32, session 15: about 0.25 s of its start)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    check_parquet_schema(tf.path, tf.name)
    table = _columns(tf, ["trace_id", "seq", *(["event_id"] if hash_of else [])])
    rows = table.num_rows
    if rows == 0:
        return FileIndex(Counter(), {}, 0, own=hash_of is not None and skip_own)
    own = hash_of is not None and skip_own and all_own(table)
    ids = _hashed(table["event_id"], hash_of) if hash_of is not None and not own else array("Q")
    if table["trace_id"].null_count:  # a row without a trace is not valid: not counted
        table = table.filter(pc.is_valid(table["trace_id"]))
    column = table["trace_id"]
    try:
        encoded = pc.dictionary_encode(column).combine_chunks()
    except Exception:  # invalid UTF-8: such rows are judged (and quarantined) when read
        encoded = pc.dictionary_encode(column.cast(pa.binary())).combine_chunks()
    names = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy()
    seqs = pc.fill_null(pc.cast(table["seq"], pa.int64()), -1).to_numpy()
    order = np.argsort(codes, kind="stable")  # each trace's rows together, in row order
    c, q = codes[order], seqs[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    ends = np.r_[starts[1:] - 1, len(c) - 1]
    broken = q < 0
    broken[1:] |= (c[1:] == c[:-1]) & (q[1:] <= q[:-1])
    bad = np.add.reduceat(broken, starts) > 0
    out: Counter[str] = Counter()
    spans: dict[str, Span] = {}
    for lo, hi, is_bad in zip(starts.tolist(), ends.tolist(), bad.tolist(), strict=True):
        name = names[int(c[lo])]
        if not isinstance(name, str):
            continue
        out[name] += hi - lo + 1
        spans[name] = (int(q[lo]), int(q[hi]), not is_bad)
    return FileIndex(out, spans, rows, ids, own)
