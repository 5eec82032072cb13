"""Readers and writers for traces in JSON Lines (plain or gzip) and Parquet, against `traces.rows`.

Reading never drops a row silently: every row is either returned as an `Event` or reported as a
`RowError` naming the file (as the user wrote it), the line (JSONL) or row (Parquet, 1-based), the field
and the reason; `ReadResult` reconciles the counts. Which files are read, and why the others are not, is
`traces.discovery` (`discover`, `TraceFile`, `TraceFileError`: a whole file that cannot be read, requirement
TR-005); its names are importable from here too, as most readers of a corpus discover it first.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from traces.discovery import (
    TRACE_SUFFIXES,
    Discovery,
    TraceFile,
    TraceFileError,
    discover,
    expand_paths,
    sniff,
    trace_kind,
)
from traces.rows import check_line, is_blank
from traces.schema import FIELD_NAMES, Event, arrow_schema, canonical_attrs

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow (with numpy) and the column-wise reader load where Parquet is read or written, not at import: a check of
# JSON Lines needs neither (issue 32, session 15: about 0.25 s of its start).

# the discovery names, also importable from here (`traces.discovery`)
__all__ = [
    "TRACE_SUFFIXES",
    "Discovery",
    "TraceFile",
    "TraceFileError",
    "discover",
    "expand_paths",
    "sniff",
    "trace_kind",
]

_INT_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")  # pyarrow's factories
_STRING_TYPES = ("string", "large_string")


class QuarantineRow(TypedDict):
    """A row that failed validation, as the report lists it (`RowError.row`)."""

    file: str
    line: int
    field: str
    reason: str


@dataclass(frozen=True, slots=True)
class RowError:
    file: str
    line: int  # 1-based line (JSONL) or row (Parquet)
    field: str  # "" when the row as a whole is bad (e.g. not JSON)
    reason: str

    @classmethod
    def of(cls, row: Mapping[str, Any], files: Sequence[str]) -> RowError:
        """A row error from a Spark quarantine row (`file_rank` into `files`, `line`, `field`, `reason`)."""
        return cls(files[row["file_rank"]], row["line"], row["field"], row["reason"])

    def row(self) -> QuarantineRow:
        """The report's quarantine row (TR-005): the one shape every engine writes."""
        return {"file": self.file, "line": self.line, "field": self.field, "reason": self.reason}

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


def jsonl_lines(
    tf: TraceFile, start: int = 0, first_line: int = 1, opened: list | None = None
) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line feed) of every non-blank line; gzip decompressed. `start`: the
    byte offset to begin at (a plain file's appended lines), numbered from `first_line`. `opened`: the open
    handle is appended to it (its `tell()`, between lines, is the byte a later read may begin at)."""
    lineno = first_line - 1
    try:
        with gzip.open(tf.path, "rb") if tf.kind == "jsonl.gz" else open(tf.path, "rb") as handle:
            if opened is not None:
                opened.append(handle)
            if start:
                handle.seek(start)
            for lineno, raw in enumerate(handle, start=first_line):
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if not is_blank(line):
                    yield lineno, line
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceFileError(
            f"{tf.name}: cannot read past line {lineno}: {getattr(exc, 'strerror', None) or exc}"
        ) from exc


def iter_jsonl(
    tf: TraceFile,
    chunk: int = 65_536,
    start: int = 0,
    first_line: int = 1,
    keep: Callable[[bytes], bool] | None = None,
    marks: list[tuple[int, int]] | None = None,
) -> Iterator[ReadResult]:
    """A JSON Lines file in chunks of at most `chunk` rows, each row judged by `traces.rows.check_line`;
    `keep`: only the lines it keeps are read (a slice of the file, `traces.slices`); `marks`: (byte offset,
    line number) where each part begins is appended to it before the part is given, so that a read from
    there with the same `chunk` gives that part again (`conformance.locations`)."""
    part = ReadResult()
    opened: list | None = None
    if marks is not None:
        opened = []
        marks.append((start, first_line))
    for lineno, raw in jsonl_lines(tf, start, first_line, opened):
        if keep is not None and not keep(raw):
            continue
        part.rows_read += 1
        row, problem = check_line(raw, first_line=lineno == 1)
        if problem is not None:
            part.errors.append(RowError(tf.name, lineno, problem.field, problem.reason))
        else:
            part.events.append(Event.from_row(row))  # type: ignore[arg-type]
        if part.rows_read >= chunk:
            if opened:
                marks.append((opened[0].tell(), lineno + 1))  # type: ignore[union-attr]
            yield part
            part = ReadResult()
    yield part


def read_jsonl(path: Path | str | TraceFile) -> ReadResult:
    tf = path if isinstance(path, TraceFile) else TraceFile(str(path), str(path), trace_kind(str(path)) or "jsonl")
    result = ReadResult()
    for part in iter_jsonl(tf):
        result.extend(part)
    return result


def check_parquet_schema(path: Path | str, name: str | None = None) -> pa.Schema:
    """From the footer alone: the file is Parquet, has every column, each of a usable type."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = name or str(path)
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise TraceFileError(f"{name}: not a readable Parquet file: {exc}") from exc
    missing = [n for n in FIELD_NAMES if n not in schema.names]
    if missing:
        raise TraceFileError(f"{name}: Parquet file lacks required column(s) {missing}")
    for want in arrow_schema():
        if schema.names.count(want.name) > 1:
            raise TraceFileError(f"{name}: column {want.name!r} appears more than once")
        got = schema.field(want.name).type
        allowed = _INT_TYPES if pa.types.is_integer(want.type) else _STRING_TYPES
        if got not in [getattr(pa, t)() for t in allowed]:
            raise TraceFileError(f"{name}: column {want.name!r} has type {got}, expected {want.type}")
    return schema


def iter_parquet(tf: TraceFile, batch_size: int = 65_536) -> Iterator[ReadResult]:
    """A Parquet file batch by batch, each judged column-wise (`traces.columnar`); rows numbered from 1. Its text
    columns of few distinct values are read as dictionaries (`traces.columnar.DICTIONARY_COLUMNS`, session 24)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from traces.columnar import DICTIONARY_COLUMNS, FileTexts, judge_columns

    check_parquet_schema(tf.path, tf.name)
    rows = 0
    texts = FileTexts()  # the attrs texts parsed, kept for the file's later batches
    try:
        for batch in pq.ParquetFile(tf.path, read_dictionary=DICTIONARY_COLUMNS).iter_batches(batch_size=batch_size):
            events, problems = judge_columns(batch, texts)
            errors = [RowError(tf.name, rows + i + 1, p.field, p.reason) for i, p in problems]
            rows += batch.num_rows
            yield ReadResult(events, errors, batch.num_rows)
    except (OSError, pa.ArrowException) as exc:
        raise TraceFileError(f"{tf.name}: cannot read Parquet data past row {rows}: {exc}") from exc


def read_parquet(path: Path | str | TraceFile) -> ReadResult:
    tf = path if isinstance(path, TraceFile) else TraceFile(str(path), str(path), "parquet")
    result = ReadResult()
    for part in iter_parquet(tf):
        result.extend(part)
    return result


def iter_trace_file(tf: TraceFile, start: int = 0, first_line: int = 1) -> Iterator[ReadResult]:
    """A trace file in parts (rows judged, counts per part), in row order, in bounded memory; a JSON Lines
    file may be read from byte `start` on (lines appended since an earlier read), numbered from `first_line`."""
    if tf.kind == "parquet":
        if start:
            raise ValueError(f"{tf.name}: a Parquet file is read whole")
        return iter_parquet(tf)
    return iter_jsonl(tf, start=start, first_line=first_line)


def read_trace_file(tf: TraceFile) -> ReadResult:
    return read_parquet(tf) if tf.kind == "parquet" else read_jsonl(tf)


def read_events(path: Path | str) -> ReadResult:
    """Read one trace file, choosing the format by its name and checking its content agrees."""
    name = str(path)
    kind = trace_kind(name)
    if kind is None:
        raise TraceFileError(f"{name}: unknown trace format (expected one of {TRACE_SUFFIXES})")
    tf = TraceFile(name, name, kind)
    sniff(tf)
    return read_trace_file(tf)


def read_corpus(paths: Iterable[Path | str]) -> ReadResult:
    result = ReadResult()
    for tf in discover(paths).files:
        result.extend(read_trace_file(tf))
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
    import pyarrow as pa
    import pyarrow.parquet as pq

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
