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
from typing import Annotated, Any

import msgspec
import numpy as np
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
_Int64 = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]
# attrs typed as `traces.rows` allows them, checked by msgspec while it decodes (no Python per value): a string,
# a 64-bit integer, a boolean, null, or an array of strings and integers (one kind per array is left to
# `_one_kind`: msgspec takes one array type per union)
_decode = msgspec.json.Decoder(dict[str, str | _Int64 | bool | list[str | _Int64] | None]).decode
_encode = msgspec.json.Encoder(order="sorted").encode


def canonical_value(text: str | bytes) -> Any:
    """The value of `text` when it is canonical JSON (`traces.schema.canonical_attrs`: sorted keys, no spaces,
    each key once), as every attrs text this checker writes is, and every value is of a type `traces.rows`
    allows (an array's items may still mix strings and integers: `_one_kind`); else None. msgspec decodes it,
    checking the types as it goes, and encodes the value back: the same bytes prove the decoding exact (a
    repeated key, a space, `-0` or `1E2` would not come back the same; benchmarks/README.md, sessions 10, 12)."""
    data = text if type(text) is bytes else text.encode()  # type: ignore[union-attr]
    try:
        value = _decode(data)
    except msgspec.DecodeError:  # not JSON, or a value of another type (ValidationError is a DecodeError)
        return None
    return value if _encode(value) == data else None


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


def _one_kind(value: dict[str, Any]) -> bool:
    """Every array of a canonically decoded attrs dict holds items of one type (strings, or integers)."""
    for item in value.values():
        if type(item) is list and len(item) > 1:
            first = type(item[0])
            for x in item:
                if type(x) is not first:
                    return False
    return True


def _plain_values(value: dict[str, Any]) -> bool:
    """Every value of a scanned attrs dict is of a type `traces.rows` allows (the scan checks no type)."""
    for item in value.values():
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not INT64_MIN <= item <= INT64_MAX:
                return False
            continue
        if kind is not list:
            return False
        if not item:
            continue
        first = type(item[0])
        if first is not str and first is not int:
            return False
        for x in item:
            if type(x) is not first or (first is int and not INT64_MIN <= x <= INT64_MAX):
                return False
    return True


def plain_attrs(text: str | bytes) -> dict[str, Any] | None:
    """The attrs dict when the text (UTF-8 bytes, or str) is plainly valid by `traces.rows`, else None (judge
    the row in full): canonical text decoded and typed by msgspec (`canonical_value`, inline: once per
    distinct text), any other scanned by the standard library.

    The canonical path needs neither the scan's depth bound nor its test for `\\u` escapes (session 14, a
    third of this function's cost): the typed decoding takes no value deeper than an array of scalars, and a
    lone surrogate's escape is not decoded by msgspec (the scan's path, which does decode it, keeps both);
    an array is looked into (`_one_kind`) only when the text holds a `[`."""
    data = text if type(text) is bytes else text.encode()  # type: ignore[union-attr]
    try:
        value = _decode(data)
    except msgspec.DecodeError:
        value = None
    if value is not None and _encode(value) == data:
        return value if b"[" not in data or _one_kind(value) else None
    if b"\\u" in data or data.count(b"[") + data.count(b"{") > MAX_DEPTH:
        return None
    value = scanned_value(data.decode())
    return value if value is not None and _plain_values(value) else None


def fast_mask(batch: pa.RecordBatch) -> pa.Array:
    """Per row: every check but attrs passes (True), or the row must be judged in full (False). A column read as
    a dictionary (`DICTIONARY_COLUMNS`) is checked once per value of its dictionary, each row taking its value's
    outcome (a null index: null, so False)."""
    cols = {name: batch.column(name) for name in batch.schema.names}

    def per_value(name: str, check: Any) -> pa.Array:
        col = cols[name]
        if pa.types.is_dictionary(col.type):
            return pc.take(check(col.dictionary), col.indices)
        return check(col)

    ok = None
    for name in FIELD_NAMES:
        valid = per_value(name, pc.is_valid)
        ok = valid if ok is None else pc.and_(ok, valid)
    for name, col in cols.items():
        if name not in FIELD_NAMES:
            ok = pc.and_(ok, pc.is_null(col))
    for name in ("trace_id", "event_id", "node"):
        ok = pc.and_(ok, per_value(name, _not_empty))
    ok = pc.and_(ok, pc.equal(cols["schema_version"], SCHEMA_VERSION))
    ok = pc.and_(ok, pc.greater_equal(cols["seq"], 0))
    ok = pc.and_(ok, pc.greater_equal(cols["ts_ms"], 0))
    ok = pc.and_(ok, per_value("mechanism", _a_mechanism))
    ok = pc.and_(ok, per_value("kind", _a_kind))
    return pc.fill_null(ok, False)


def _not_empty(col: pa.Array) -> pa.Array:
    return pc.greater(pc.binary_length(col), 0)


def _a_mechanism(col: pa.Array) -> pa.Array:
    return pc.is_in(col, value_set=_MECHANISMS)


def _a_kind(col: pa.Array) -> pa.Array:
    return pc.match_substring_regex(col, KIND_PATTERN)


def _utf8_ok(col: pa.Array) -> bool:
    """Valid UTF-8 throughout (a dictionary column: its dictionary's values, and its indices in range)."""
    try:
        col.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


# The text columns `traces.io.iter_parquet` reads as dictionaries (session 24): a Parquet file keeps them
# dictionary-encoded, so each batch arrives with its distinct values and an index per row, instead of one string per
# row that `_values` and `_distinct` then hashed to find the distinct values again.
DICTIONARY_COLUMNS = ("trace_id", "node", "mechanism", "entity", "kind", "attrs")
_REPEATED = frozenset({"trace_id", "node", "mechanism", "entity", "kind"})  # few distinct values per batch


def _taken(values: list[Any], indices: pa.Array) -> list[Any]:
    """`[values[i] for i in indices]` (indices without a null) by one numpy take: no Python per row."""
    table = np.fromiter(values, dtype=object, count=len(values))  # (each item as it is: no nested list read)
    return table[indices.to_numpy()].tolist()  # type: ignore[no-any-return]


def _values(col: pa.Array, name: str) -> list[Any]:
    """The column as Python values; a column of few distinct strings yields one shared `str` per value
    (dictionary-encoded first, unless read so): less memory per event and fewer objects built; an integer column
    through numpy (`tolist` builds Python ints a third faster than `to_pylist`)."""
    if pa.types.is_dictionary(col.type):
        if col.null_count:  # (its rows fail `fast_mask`)
            return col.dictionary_decode().to_pylist()  # type: ignore[no-any-return]
        return _taken(col.dictionary.to_pylist(), col.indices)
    if col.null_count:
        return col.to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_integer(col.type):
        return col.to_numpy().tolist()  # type: ignore[no-any-return]
    if name not in _REPEATED:
        return col.to_pylist()  # type: ignore[no-any-return]
    encoded = pc.dictionary_encode(col)
    return _taken(encoded.dictionary.to_pylist(), encoded.indices)


_UNPARSED = object()  # an attrs text of the batch not parsed yet
Judged = tuple[list[Event], list[tuple[int, Problem]]]  # the valid rows' events; (row from 0, problem) of others


class FileTexts:
    """The attrs texts of one file's batches read as dictionaries, each parsed once for the file (session 24).

    A Parquet reader gives each batch of a row group the dictionary of the values read so far (measured on the
    10^6 corpus: 20,887, then 47,851, 64,986 and 65,073 texts for its four batches of one row group), so a batch's
    dictionary extends the one before it: the texts already parsed are kept by position, and only the new ones are
    parsed (`update`, after checking that the old dictionary is the new one's prefix; any other dictionary starts
    afresh). `rejected` counts the texts parsed to None (not plain): while it is 0, no row needs asking about."""

    __slots__ = ("dictionary", "parsed", "rejected", "texts")

    def __init__(self) -> None:
        self.dictionary: pa.Array | None = None
        self.texts: list[bytes | None] = []
        self.parsed: list[Any] = []
        self.rejected = 0  # texts parsed to None

    def update(self, dictionary: pa.Array) -> None:
        """Hold `dictionary`'s texts, the new ones not parsed yet."""
        n = len(self.texts)
        if self.dictionary is None or len(dictionary) < n or not dictionary.slice(0, n).equals(self.dictionary):
            n, self.texts, self.parsed, self.rejected = 0, [], [], 0
        if len(dictionary) > n:
            binary = pa.large_binary() if pa.types.is_large_string(dictionary.type) else pa.binary()
            fresh = dictionary.slice(n).cast(binary).to_pylist()
            self.texts += fresh
            self.parsed += [_UNPARSED] * len(fresh)
        self.dictionary = dictionary

    def parse_all(self) -> None:
        """Every text not parsed yet, parsed (`plain_attrs`)."""
        parsed, texts = self.parsed, self.texts
        for j in range(len(parsed)):  # (the new texts are at the end: those of the batches before are parsed)
            if parsed[j] is _UNPARSED:
                text = texts[j]
                value = parsed[j] = None if text is None else plain_attrs(text)
                self.rejected += value is None


def _distinct(col: pa.Array, texts: FileTexts | None) -> tuple[FileTexts, pa.Array]:
    """The column's distinct values as UTF-8 bytes (what msgspec decodes; no `str` built) and, per row, the
    position of its value among them (a null is a value too: its rows fail `fast_mask`, judged in full); from the
    file's texts when the column was read as a dictionary without a null, else from the batch alone."""
    if texts is not None and pa.types.is_dictionary(col.type) and not col.null_count and not col.dictionary.null_count:
        texts.update(col.dictionary)
        return texts, col.indices
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    encoded = pc.dictionary_encode(col, null_encoding="encode")
    own = FileTexts()
    own.update(encoded.dictionary)
    return own, encoded.indices


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def judge_columns(batch: pa.RecordBatch, texts: FileTexts | None = None) -> Judged:
    """The events of a batch's valid rows, in row order, and (row index from 0, problem) for each other row;
    `texts`: the attrs texts of the file's batches before (`FileTexts`, when the file is read with its text
    columns as dictionaries, `DICTIONARY_COLUMNS`).

    A batch whose rows all pass `fast_mask` and whose distinct attrs texts are all plain (the usual batch) is
    built column-wise: every distinct text parsed once, its dict shared by the rows that hold it (an Event's
    attrs are never changed, `traces.schema.Event`; in the corpus of benchmarks/README.md, session 10, 63% of
    the rows repeat a text of their batch), then one `Event` per row from the columns, no Python loop of ours
    per row (benchmarks/README.md, session 12). Any other batch is judged row by row (`_row_by_row`).

    Session 14 parsed texts once per batch: a file's batches share 12% of their distinct texts in the 10^6 corpus,
    and looking each text up in the batch before's parsed texts cost what it saved. Read as dictionaries (session
    24), a batch's dictionary extends the batch before's, so the file's texts are kept by position at no cost."""
    raw = {n for n in batch.schema.names if _is_text(batch.schema.field(n).type) and not _utf8_ok(batch.column(n))}
    if raw:  # invalid UTF-8 in a column: every row judged in full, the judgement says where
        return _row_by_row(batch, [False] * batch.num_rows, [], [], [], [], raw)
    mask = fast_mask(batch)
    known, which = _distinct(batch.column("attrs"), texts)
    cols = [_values(batch.column(n), n) for n in FIELD_NAMES[1:-1]]  # trace_id .. kind, Event's order
    if pc.all(mask).as_py() is not False:
        known.parse_all()
        if not known.rejected or not _uses_rejected(known, which):
            attrs = _taken(known.parsed, which)  # schema_version is the current one (`fast_mask`): Event's default
            return list(map(Event, *cols, attrs)), []
        return _row_by_row(batch, [True] * batch.num_rows, cols, known.texts, known.parsed, which.to_pylist(), raw)
    return _row_by_row(batch, mask.to_pylist(), cols, known.texts, list(known.parsed), which.to_pylist(), raw)


def _uses_rejected(known: FileTexts, which: pa.Array) -> bool:
    """Whether a row of the batch holds a text that is not plain (a file's texts: one of an earlier batch may be)."""
    rejected = pa.array([j for j, p in enumerate(known.parsed) if p is None], which.type)
    return bool(pc.any(pc.is_in(which, value_set=rejected)).as_py())


def _row_by_row(
    batch: pa.RecordBatch,
    mask: list[bool],
    cols: list[list[Any]],
    texts: list[bytes | None],
    parsed: list[Any],
    which: list[int],
    raw: set[str],
) -> Judged:
    """Each row: built from the columns when it passed `fast_mask` and its attrs text is plain (`parsed[j]` for
    text `texts[j]`, j = `which[row]`; `_UNPARSED` until parsed), else judged in full by `check_typed_row` (a
    column of invalid UTF-8, `raw`, read as bytes; a dictionary column decoded first)."""
    slow = {n: _plain_column(batch.column(n), n in raw) for n in batch.schema.names}
    events: list[Event] = []
    problems: list[tuple[int, Problem]] = []
    rows = zip(*cols, which, strict=True) if cols else iter(())
    for i, ok in enumerate(mask):
        values = next(rows, None)
        if ok:
            *fields, j = values  # type: ignore[misc]
            attrs = parsed[j]
            if attrs is _UNPARSED:
                attrs = parsed[j] = plain_attrs(texts[j])  # type: ignore[arg-type]
            if attrs is not None:
                events.append(Event(*fields, attrs))
                continue
        row, problem = check_typed_row({n: col[i].as_py() for n, col in slow.items()})
        if problem is None:
            events.append(Event.from_row(row))  # type: ignore[arg-type]
        else:
            problems.append((i, problem))
    return events, problems


def _plain_column(col: pa.Array, raw: bool) -> pa.Array:
    """A column as `check_typed_row` reads it: a dictionary decoded; one of invalid UTF-8 (`raw`) as bytes."""
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col.cast(pa.binary()) if raw else col


def judge_batch(batch: pa.RecordBatch) -> Iterator[tuple[Event | None, Problem | None]]:
    """(event, None) or (None, problem) for each row of a batch, in row order (`judge_columns`)."""
    events, problems = judge_columns(batch)
    bad = dict(problems)
    made = iter(events)
    for i in range(batch.num_rows):
        problem = bad.get(i)
        yield (None, problem) if problem is not None else (next(made), None)
