"""Readers and writers for traces in JSON Lines and Parquet, both against the schema in `traces.schema`.

Reading never drops a row silently: every row is either returned as an `Event` or reported as a
`RowError` naming the file, the line (JSONL) or row (Parquet, 1-based), the field and the reason, and
`ReadResult` reconciles the counts (rows read = rows accepted + rows quarantined). A file that cannot be
read at all (missing, not Parquet, wrong columns) raises `TraceFileError` (requirement TR-005).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq

from traces.schema import FIELD_NAMES, Event, arrow_schema, canonical_attrs, json_schema

_VALIDATOR = jsonschema.Draft202012Validator(json_schema())
# fastjsonschema compiles the schema to Python: the fast yes/no for every row; jsonschema explains the rare no.
_FAST = fastjsonschema.compile(json_schema())
TRACE_SUFFIXES = (".jsonl", ".ndjson", ".parquet")


class TraceFileError(ValueError):
    """A whole file is unusable; the message names the file and the reason."""


@dataclass(frozen=True, slots=True)
class RowError:
    file: str
    line: int  # 1-based line (JSONL) or row (Parquet)
    field: str  # "" when the row as a whole is bad (e.g. not JSON)
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}: field {self.field!r}: {self.reason}" if self.field else f"{where}: {self.reason}"


@dataclass
class ReadResult:
    events: list[Event] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    rows_read: int = 0

    @property
    def rows_quarantined(self) -> int:
        return len(self.errors)

    def reconciles(self) -> bool:
        return self.rows_read == len(self.events) + len(self.errors)

    def extend(self, other: ReadResult) -> None:
        self.events.extend(other.events)
        self.errors.extend(other.errors)
        self.rows_read += other.rows_read


def _error_field(err: jsonschema.ValidationError) -> str:
    if err.validator == "required":
        missing = sorted(name for name in err.validator_value if name not in err.instance)
        return missing[0] if missing else ""
    if err.validator == "additionalProperties" and not err.absolute_path:
        extra = sorted(set(err.instance) - set(FIELD_NAMES))
        return extra[0] if extra else ""
    return ".".join(str(p) for p in err.absolute_path)


def validate_row(row: Any) -> tuple[str, str] | None:
    """Check one decoded row against the schema; return (field, reason) of the first problem or None."""
    if not isinstance(row, dict):
        return ("", f"row is a JSON {type(row).__name__}, expected an object")
    try:
        _FAST(row)
        return None
    except fastjsonschema.JsonSchemaException:
        pass
    # A fixed order shared with the Spark validator: unknown field, missing field, then wrong types or
    # values, fields in alphabetical order.
    rank = {"additionalProperties": 0, "required": 1}
    errors = sorted(_VALIDATOR.iter_errors(row),
                    key=lambda e: (rank.get(e.validator, 2) if not e.absolute_path else 2,
                                   [str(p) for p in e.absolute_path], e.validator))
    if not errors:
        return None
    err = errors[0]
    name = _error_field(err)
    if err.validator == "required":
        return (name, "required field is missing")
    if err.validator == "additionalProperties" and not err.absolute_path:
        return (name, "unknown field")
    path = [str(p) for p in err.absolute_path]
    if len(path) > 1:  # report the top-level field; say where inside it the problem is
        return (path[0], f"{'.'.join(path)}: {err.message}")
    return (name, err.message)


def _check_row(row: Any, file: str, line: int, result: ReadResult) -> None:
    problem = validate_row(row)
    if problem is not None:
        result.errors.append(RowError(file, line, problem[0], problem[1]))
        return
    result.events.append(Event.from_row(row))


def read_jsonl(path: Path | str) -> ReadResult:
    path = Path(path)
    result = ReadResult()
    try:
        handle = path.open("r", encoding="utf-8-sig")
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot open: {exc.strerror}") from exc
    with handle:
        for lineno, text in enumerate(handle, start=1):
            if not text.strip():
                continue  # blank lines are not rows
            result.rows_read += 1
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                reason = f"not valid JSON: {exc.msg} at column {exc.colno}"
                result.errors.append(RowError(str(path), lineno, "", reason))
                continue
            _check_row(row, str(path), lineno, result)
    return result


def check_parquet_schema(path: Path | str) -> None:
    """From the footer alone: the file is Parquet, has every column, each of a usable type."""
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise TraceFileError(f"{path}: not a readable Parquet file: {exc}") from exc
    missing = [name for name in FIELD_NAMES if name not in schema.names]
    if missing:
        raise TraceFileError(f"{path}: Parquet file lacks required column(s) {missing}")
    for want in arrow_schema():
        got = schema.field(want.name).type
        if got != want.type and not (pa.types.is_integer(got) and pa.types.is_integer(want.type)):
            raise TraceFileError(f"{path}: column {want.name!r} has type {got}, expected {want.type}")


def read_parquet(path: Path | str) -> ReadResult:
    path = Path(path)
    check_parquet_schema(path)
    table = pq.read_table(path)
    result = ReadResult()
    for rowno, row in enumerate(table.select(list(FIELD_NAMES)).to_pylist(), start=1):
        result.rows_read += 1
        row = {k: v for k, v in row.items() if v is not None}  # a null cell is an absent field
        attrs = row.get("attrs")
        if isinstance(attrs, str):
            try:
                row["attrs"] = json.loads(attrs)
            except json.JSONDecodeError as exc:
                result.errors.append(RowError(str(path), rowno, "attrs", f"not valid JSON: {exc.msg}"))
                continue
        _check_row(row, str(path), rowno, result)
    return result


def read_events(path: Path | str) -> ReadResult:
    """Read one trace file, choosing the format by extension."""
    path = Path(path)
    if path.suffix == ".parquet":
        return read_parquet(path)
    if path.suffix in (".jsonl", ".ndjson"):
        return read_jsonl(path)
    raise TraceFileError(f"{path}: unknown trace format (expected one of {TRACE_SUFFIXES})")


def expand_paths(paths: Iterable[Path | str]) -> list[Path]:
    """Files named directly, and trace files found (recursively, sorted) under named directories."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*") if q.suffix in TRACE_SUFFIXES and q.is_file()))
        elif p.exists():
            out.append(p)
        else:
            raise TraceFileError(f"{p}: no such file or directory")
    return out


def read_corpus(paths: Iterable[Path | str]) -> ReadResult:
    result = ReadResult()
    for p in expand_paths(paths):
        result.extend(read_events(p))
    return result


def _rows(events: Iterable[Event]) -> Iterator[Mapping[str, Any]]:
    for e in events:
        row = e.to_row()
        row["attrs"] = canonical_attrs(e.attrs)
        yield row


def write_jsonl(path: Path | str, events: Iterable[Event]) -> None:
    with Path(path).open("w", encoding="utf-8", newline="\n") as handle:
        for e in events:
            handle.write(e.to_json())
            handle.write("\n")


def write_parquet(path: Path | str, events: Iterable[Event]) -> None:
    table = pa.Table.from_pylist(list(_rows(events)), schema=arrow_schema())
    pq.write_table(table, Path(path), compression="zstd", write_statistics=True)


def write_events(path: Path | str, events: Iterable[Event]) -> None:
    """Write events to JSONL or Parquet, by extension; the same events give byte-identical files."""
    path = Path(path)
    if path.suffix == ".parquet":
        write_parquet(path, events)
    elif path.suffix in (".jsonl", ".ndjson"):
        write_jsonl(path, events)
    else:
        raise TraceFileError(f"{path}: unknown trace format (expected one of {TRACE_SUFFIXES})")
