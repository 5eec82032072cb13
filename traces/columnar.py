"""Column-wise validation of Parquet batches: the fast path of the one definition of a valid row.

`traces.rows` defines a valid row; judging a Parquet row through it builds a dict per row and checks each
field in Python. Here the same checks run per column with pyarrow compute (types come from the Arrow
schema, already checked by `traces.io.check_parquet_schema`): no null cell, no value in a column outside
the schema, valid UTF-8, non-empty `trace_id`/`event_id`/`node`, `seq` and `ts_ms` >= 0,
`schema_version` equal to the current version, `kind` matching `KIND_PATTERN`, `mechanism` in the set.
Only `attrs` is parsed in Python, once per distinct text of a batch (its rows share the dict), with the
checks of `traces.rows` for JSON text that is plain (no escapes of lone surrogates, shallow, no float, no
duplicate key): canonical text by msgspec, any other by the standard library's scanner (issue 32).

The fast path is a sufficient condition: a row it does not accept is handed to `check_typed_row`, which
either accepts it too or gives the exact field and reason, so the quarantine is the same as before
(requirement TR-005).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from traces.rows import INT64_MAX, INT64_MIN, MAX_DEPTH, Problem, check_typed_row
from traces.schema import FIELD_NAMES, KIND_PATTERN, MECHANISMS, SCHEMA_VERSION, Event

_MECHANISMS = pa.array(MECHANISMS)


class _Reject(ValueError):
    """The attrs text is not plainly valid: the row goes to the full judgement."""


def _constant(_: str) -> Any:
    raise _Reject


# Objects decode to tuples of (key, value) pairs (a C call, no Python hook per object): the top level is
# turned into a dict below, where a duplicate key shows as fewer keys than pairs; a nested object stays a
# tuple, which no plain value is. The C scanner is called directly: text it does not consume whole, or
# that begins with whitespace, is not plain (the full judgement decides).
_scan = json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_constant).scan_once
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder(order="sorted").encode


def canonical_value(text: str) -> Any:
    """The value of `text` when it is canonical JSON (`traces.schema.canonical_attrs`: sorted keys, no spaces,
    each key once), as every attrs text this checker writes is; else None. msgspec decodes it and encodes the
    value back: the same bytes prove the decoding exact (a repeated key, a space, `-0` or `1E2` would not come
    back the same); it costs a third of the pairs scan below (benchmarks/README.md, session 10, issue 32)."""
    data = text.encode()
    try:
        value = _decode(data)
    except msgspec.DecodeError:
        return None
    return value if type(value) is dict and _encode(value) == data else None


def scanned_value(text: str) -> dict[str, Any] | None:
    """The object of any JSON `text` without a repeated key, a nested object or a constant (NaN, Infinity)
    left as a tuple of pairs so no plain value matches it; else None."""
    try:
        pairs, end = _scan(text, 0)
    except (_Reject, ValueError, StopIteration):
        return None
    if end != len(text) or type(pairs) is not tuple:
        return None
    value = dict(pairs)
    return value if len(value) == len(pairs) else None


def plain_attrs(text: str) -> dict[str, Any] | None:
    """The attrs dict when the text is plainly valid by `traces.rows`, else None (judge the row in full)."""
    if "\\u" in text or text.count("[") + text.count("{") > MAX_DEPTH:
        return None
    value = canonical_value(text)
    if value is None:
        value = scanned_value(text)
        if value is None:
            return None
    for item in value.values():
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not INT64_MIN <= item <= INT64_MAX:
                return None
            continue
        if kind is not list or not item:
            if kind is list:
                continue
            return None
        first = type(item[0])
        if first is not str and first is not int:
            return None
        for x in item:
            if type(x) is not first or (first is int and not INT64_MIN <= x <= INT64_MAX):
                return None
    return value


def fast_mask(batch: pa.RecordBatch) -> pa.Array:
    """Per row: every check but attrs passes (True), or the row must be judged in full (False)."""
    cols = {name: batch.column(name) for name in batch.schema.names}
    ok = None
    for name in FIELD_NAMES:
        valid = pc.is_valid(cols[name])
        ok = valid if ok is None else pc.and_(ok, valid)
    for name, col in cols.items():
        if name not in FIELD_NAMES:
            ok = pc.and_(ok, pc.is_null(col))
    for name in ("trace_id", "event_id", "node"):
        ok = pc.and_(ok, pc.greater(pc.binary_length(cols[name]), 0))
    ok = pc.and_(ok, pc.equal(cols["schema_version"], SCHEMA_VERSION))
    ok = pc.and_(ok, pc.greater_equal(cols["seq"], 0))
    ok = pc.and_(ok, pc.greater_equal(cols["ts_ms"], 0))
    ok = pc.and_(ok, pc.is_in(cols["mechanism"], value_set=_MECHANISMS))
    ok = pc.and_(ok, pc.match_substring_regex(cols["kind"], KIND_PATTERN))
    return pc.fill_null(ok, False)


def _utf8_ok(col: pa.Array) -> bool:
    try:
        col.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


_REPEATED = frozenset({"trace_id", "node", "mechanism", "entity", "kind"})  # few distinct values per batch


def _values(col: pa.Array, name: str) -> list[Any]:
    """The column as Python values; a column of few distinct strings yields one shared `str` per value
    (dictionary-encoded first): less memory per event and fewer objects built."""
    if name not in _REPEATED or col.null_count:
        return col.to_pylist()
    encoded = pc.dictionary_encode(col)
    values = encoded.dictionary.to_pylist()
    return [values[i] for i in encoded.indices.to_pylist()]


_UNPARSED = object()  # an attrs text of the batch not parsed yet


def _distinct(col: pa.Array) -> tuple[list[str], list[int]]:
    """The column's distinct values and, per row, the position of its value among them (a null is a value
    too: its rows fail `fast_mask` and are judged in full)."""
    encoded = pc.dictionary_encode(col, null_encoding="encode")
    return encoded.dictionary.to_pylist(), encoded.indices.to_pylist()


def judge_batch(batch: pa.RecordBatch) -> Iterator[tuple[Event | None, Problem | None]]:
    """(event, None) or (None, problem) for each row of a batch, in row order."""
    names = batch.schema.names
    strings = [
        n
        for n in names
        if pa.types.is_string(batch.schema.field(n).type) or pa.types.is_large_string(batch.schema.field(n).type)
    ]
    raw = {n for n in strings if not _utf8_ok(batch.column(n))}
    mask = fast_mask(batch).to_pylist() if not raw else [False] * batch.num_rows
    cols = [_values(batch.column(n), n) if not raw else [None] * batch.num_rows for n in FIELD_NAMES[:-1]]
    # attrs: each distinct text of the batch parsed once, its dict shared by the rows that hold it (an Event's
    # attrs are never changed, `traces.schema.Event`); in the corpus of benchmarks/README.md, session 10, 63% of
    # the rows repeat a text of their batch
    texts, which = _distinct(batch.column("attrs")) if not raw else ([], [0] * batch.num_rows)
    parsed: list[Any] = [_UNPARSED] * len(texts)
    # for the rows judged in full; invalid UTF-8 in a column: read as bytes, the judgement says where
    slow = {n: batch.column(n).cast(pa.binary()) if n in raw else batch.column(n) for n in names}
    for i, (ok, sv, trace, seq, eid, ts, node, mech, entity, kind, j) in enumerate(
        zip(mask, *cols, which, strict=True)
    ):
        if ok:
            attrs = parsed[j]
            if attrs is _UNPARSED:
                attrs = parsed[j] = plain_attrs(texts[j])
            if attrs is not None:
                yield Event(trace, seq, eid, ts, node, mech, entity, kind, attrs, sv), None
                continue
        row, problem = check_typed_row({n: col[i].as_py() for n, col in slow.items()})
        yield (Event.from_row(row), None) if problem is None else (None, problem)  # type: ignore[arg-type]
