"""An ingested trace dataset: a corpus read and validated once, written for repeated checks (issue 10).

`haconform ingest PATH... --out DATASET` reads every input file with the one definition of a valid row
(`traces.rows`, `traces.columnar`; requirement TR-005) and writes a directory:
- `part-NNNNN.parquet`: the valid events, in the trace schema (`traces.schema.arrow_schema`), bucketed by
  `crc32(UTF-8 trace_id) mod N`, so a trace is whole in one file; each file sorted by trace_id and, within a
  trace, by recording order (file order, then line/row), which is the order TR-001 judges;
- `_quarantine.arrow`: every quarantined row of the original input (file, line/row, field, reason);
- `_duplicates.arrow`: the events whose event ID occurs more than once (TR-002), in recording order;
- `_haconform.json` (written last): format version, schema, partitioning, every file with its row count,
  size and SHA-256, the input files and skipped files, and the counts (rows read, checked, quarantined).
Data files are ordinary trace files: a corpus checker that ignores the manifest reads them as input.

Memory is bounded by one bucket: valid rows are spilled per bucket (Arrow IPC, with their recording
position), then each bucket is sorted and written; event-ID uniqueness keeps an 8-byte hash per event.
The dataset is built in a temporary directory beside `--out` and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traces.io import TraceFileError, discover, iter_trace_file
from traces.schema import FIELD_NAMES, SCHEMA_VERSION, Event, arrow_schema

MANIFEST = "_haconform.json"
QUARANTINE = "_quarantine.arrow"
DUPLICATES = "_duplicates.arrow"
FORMAT = "haconform-dataset"
FORMAT_VERSION = 1
DEFAULT_FILES = 4
_POS = "_pos"
QUARANTINE_SCHEMA = pa.schema(
    [("file", pa.string()), ("line", pa.int64()), ("field", pa.string()), ("reason", pa.string())]
)


class DatasetError(TraceFileError):
    """The dataset cannot be trusted (a file changed, missing, or a manifest of another format): exit 2."""


def bucket_of(trace_id: str, buckets: int) -> int:
    """The file a trace goes to: crc32 of its UTF-8 bytes mod N (stable across runs and engines; Spark's
    `crc32` SQL function gives the same number)."""
    return zlib.crc32(trace_id.encode("utf-8", "surrogatepass")) % buckets


def schema_description(schema: pa.Schema) -> list[dict[str, Any]]:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_dataset(path: Path | str) -> bool:
    """True for a dataset directory; a directory holding a dataset's side files without the manifest is
    refused (DatasetError), never read as a raw corpus that would lose the quarantine."""
    if Path(path, MANIFEST).is_file():
        return True
    if Path(path, QUARANTINE).is_file() or Path(path, DUPLICATES).is_file():
        raise DatasetError(
            f"{Path(path, MANIFEST)}: missing: {path} looks like an ingested dataset without its manifest"
        )
    return False


def _attrs_text(attrs: dict[str, Any]) -> str:
    """Attrs as JSON text in their original key order (the report shows the events as they were read)."""
    return json.dumps(attrs, separators=(",", ":"), ensure_ascii=False)


def events_table(events: list[Event], first_pos: int | None = None) -> pa.Table:
    """Events as a table of the trace schema (plus their recording position when `first_pos` is given)."""
    columns: list[Any] = [
        [e.schema_version for e in events],
        [e.trace_id for e in events],
        [e.seq for e in events],
        [e.event_id for e in events],
        [e.ts_ms for e in events],
        [e.node for e in events],
        [e.mechanism for e in events],
        [e.entity for e in events],
        [e.kind for e in events],
        [_attrs_text(e.attrs) for e in events],
    ]
    schema = arrow_schema()
    if first_pos is not None:
        columns.append(range(first_pos, first_pos + len(events)))
        schema = schema.append(pa.field(_POS, pa.int64(), nullable=False))
    return pa.Table.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema)


def table_events(table: pa.Table | pa.RecordBatch) -> list[Event]:
    """Rows of the trace schema as Events, without validation (the dataset's schema is verified)."""
    cols = [table.column(n).to_pylist() for n in FIELD_NAMES]
    loads = json.loads
    return [
        Event(trace, seq, eid, ts, node, mech, entity, kind, loads(text), sv)
        for sv, trace, seq, eid, ts, node, mech, entity, kind, text in zip(*cols, strict=True)
    ]


def trace_groups(path: Path | str, budget: int = 500_000, batch_size: int = 65_536) -> Iterator[list[Event]]:
    """The events of one data file in groups of whole traces (at most `budget` events unless one trace is
    larger): the file is sorted by trace, so groups are cut where traces end. Memory: about one group."""
    pending: list[Event] = []
    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_size):
        pending.extend(table_events(batch))
        if len(pending) >= budget:
            groups, pending = _cut(pending, budget, final=False)
            yield from groups
    groups, _ = _cut(pending, budget, final=True)
    yield from groups


def _cut(pending: list[Event], budget: int, *, final: bool) -> tuple[list[list[Event]], list[Event]]:
    """Full groups of whole traces, and the rest (the last trace, which may go on, unless `final`)."""
    runs, start = [], 0
    for i in range(1, len(pending) + 1):
        if i == len(pending) or pending[i].trace_id != pending[start].trace_id:
            runs.append((start, i))
            start = i
    groups, first, size = [], 0, 0
    for lo, hi in runs if final else runs[:-1]:
        if size and size + hi - lo > budget:
            groups.append(pending[first:lo])
            first, size = lo, 0
        size += hi - lo
    if final:
        return ([*groups, pending[first:]] if first < len(pending) else groups), []
    return groups, pending[first:]


def _id_hash(event_id: str) -> int:
    return hash(event_id) & 0xFFFF_FFFF_FFFF_FFFF


@dataclass
class IngestResult:
    out: Path
    manifest: dict[str, Any]


def prepare_out(out: Path, paths: Iterable[str] = ()) -> None:
    """Refuse (TraceFileError) an input that is a dataset (its quarantine would be lost), and an `--out` that
    is a file, holds something other than a dataset, or lies inside an input directory."""
    target = out.resolve()
    for p in paths:
        if is_dataset(p):
            raise TraceFileError(f"{p}: already an ingested dataset (check it directly, or ingest its original input)")
        src = Path(p).resolve()
        if src.is_dir() and (target == src or src in target.parents):
            raise TraceFileError(f"--out {out}: inside the input directory {p}; write the dataset elsewhere")
    if out.exists() and not out.is_dir():
        raise TraceFileError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not is_dataset(out):
        raise TraceFileError(f"--out {out}: holds files that are not a haconform dataset; give a new or empty one")


def publish(tmp: Path, out: Path) -> None:
    old = None
    if out.exists():
        old = tmp.with_name(tmp.name.replace(".tmp-", ".old-"))
        os.rename(out, old)
    os.rename(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def ingest(
    paths: Iterable[str],
    out: Path | str,
    *,
    files: int = DEFAULT_FILES,
    progress: Callable[[int], None] | None = None,
) -> IngestResult:
    """Read, validate and write a dataset (see the module docstring). Raises TraceFileError for an unusable
    input or `--out`, and for an input with no rows at all (a dataset of nothing is refused)."""
    if files < 1:
        raise TraceFileError(f"--files must be at least 1, got {files}")
    out, paths = Path(out), list(paths)
    prepare_out(out, paths)
    found = discover(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        manifest = _write(found, tmp, files, progress)
        publish(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return IngestResult(out, manifest)


def _write(found: Any, tmp: Path, buckets: int, progress: Callable[[int], None] | None) -> dict[str, Any]:
    spill_dir = tmp / "_spill"
    spill_dir.mkdir()
    spill_schema = arrow_schema().append(pa.field(_POS, pa.int64(), nullable=False))
    writers: dict[int, pa.ipc.RecordBatchFileWriter] = {}
    bucket_cache: dict[str, int] = {}
    hashes = array("Q")
    q_writer = pa.ipc.new_file(str(tmp / QUARANTINE), QUARANTINE_SCHEMA)
    rows_read = rows_checked = 0
    for tf in found.files:
        for part in iter_trace_file(tf):
            rows_read += part.rows_read
            if part.errors:
                q_writer.write_table(
                    pa.Table.from_pylist(
                        [{"file": e.file, "line": e.line, "field": e.field, "reason": e.reason} for e in part.errors],
                        schema=QUARANTINE_SCHEMA,
                    )
                )
            if not part.events:
                continue
            table = events_table(part.events, rows_checked)
            rows_checked += len(part.events)
            hashes.extend(_id_hash(e.event_id) for e in part.events)
            keys = []
            for e in part.events:
                b = bucket_cache.get(e.trace_id)
                if b is None:
                    b = bucket_cache[e.trace_id] = bucket_of(e.trace_id, buckets)
                keys.append(b)
            key_array = pa.array(keys, type=pa.int32())
            for b in sorted(set(keys)):
                if b not in writers:
                    writers[b] = pa.ipc.new_file(str(spill_dir / f"{b}.arrow"), spill_schema)
                writers[b].write_table(table.filter(pc.equal(key_array, b)))
            if progress is not None:
                progress(part.rows_read)
    q_writer.close()
    for w in writers.values():
        w.close()
    if rows_read == 0:
        raise TraceFileError(
            f"no events: {len(found.files)} trace file(s) read, {len(found.skipped)} skipped, 0 rows; "
            "a dataset of nothing is not written"
        )
    repeated = _repeated(hashes)
    del hashes
    written, candidates = [], []
    for b in sorted(writers):
        spill = spill_dir / f"{b}.arrow"
        with pa.memory_map(str(spill)) as source:
            table = pa.ipc.open_file(source).read_all()
        table = table.sort_by([("trace_id", "ascending"), (_POS, "ascending")])
        if repeated:
            mask = [_id_hash(i) in repeated for i in table.column("event_id").to_pylist()]
            candidates.append(table.filter(pa.array(mask, type=pa.bool_())))
        name = f"part-{b:05d}.parquet"
        pq.write_table(table.drop_columns([_POS]).cast(arrow_schema()), tmp / name, compression="zstd")
        written.append((b, name, table.num_rows))
        del table
        spill.unlink()
    spill_dir.rmdir()
    if sum(n for _, _, n in written) != rows_checked:
        raise RuntimeError(f"ingest wrote {sum(n for _, _, n in written)} rows of {rows_checked} valid rows")
    return finish(
        tmp,
        buckets=buckets,
        written=written,
        quarantine=None,
        duplicates=_exact_duplicates(candidates),
        input_files=[tf.name for tf in found.files],
        skipped=found.skipped,
        rows_read=rows_read,
    )


def finish(
    tmp: Path,
    *,
    buckets: int,
    written: list[tuple[int, str, int]],
    quarantine: pa.Table | None,
    duplicates: pa.Table,
    input_files: list[str],
    skipped: list[dict[str, str]],
    rows_read: int,
) -> dict[str, Any]:
    """Write the side files (the quarantine unless already written) and, last, the manifest of `tmp`.
    `written`: (bucket, file name, rows) of every data file."""
    if quarantine is not None:
        write_ipc(tmp / QUARANTINE, quarantine)
    write_ipc(tmp / DUPLICATES, duplicates)
    entries = []
    for b, name, rows in written:
        meta_rows = pq.ParquetFile(tmp / name).metadata.num_rows
        if meta_rows != rows:
            raise RuntimeError(f"{name}: {meta_rows} rows in the file, {rows} written")
        entries.append({"path": name, "bucket": b, "rows": rows, **_file_facts(tmp / name)})
    rows_quarantined = _read_ipc(tmp / QUARANTINE).num_rows
    rows_checked = sum(e["rows"] for e in entries)
    if rows_read != rows_checked + rows_quarantined:
        raise RuntimeError(f"ingest: {rows_read} rows read, {rows_checked} written, {rows_quarantined} quarantined")
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "schema": schema_description(arrow_schema()),
        "partitioning": {
            "by": "trace_id",
            "function": "crc32(utf-8 trace_id) mod buckets",
            "buckets": buckets,
            "order": "trace_id, then recording order (input file order, then line or row)",
        },
        "files": entries,
        "quarantine": {"path": QUARANTINE, "rows": rows_quarantined, **_file_facts(tmp / QUARANTINE)},
        "duplicates": {"path": DUPLICATES, "rows": duplicates.num_rows, **_file_facts(tmp / DUPLICATES)},
        "input": {
            "files": input_files,
            "files_skipped": skipped,
            "rows_read": rows_read,
            "rows_checked": rows_checked,
            "rows_quarantined": rows_quarantined,
        },
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _file_facts(path: Path) -> dict[str, Any]:
    return {"bytes": path.stat().st_size, "sha256": sha256_of(path)}


def write_ipc(path: Path, table: pa.Table) -> None:
    with pa.ipc.new_file(str(path), table.schema) as writer:
        writer.write_table(table)


def _repeated(hashes: array) -> set[int]:
    if not hashes:
        return set()
    counts = pc.value_counts(pa.array(hashes, type=pa.uint64()))
    return set(counts.field("values").filter(pc.greater(counts.field("counts"), 1)).to_pylist())


def _exact_duplicates(candidates: list[pa.Table]) -> pa.Table:
    """The rows whose event ID occurs more than once, in recording order (hash collisions removed)."""
    if not candidates:
        return arrow_schema().empty_table()
    table = pa.concat_tables(candidates)
    counts = pc.value_counts(table.column("event_id"))
    ids = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    table = table.filter(pc.is_in(table.column("event_id"), value_set=ids)).sort_by(_POS)
    return table.drop_columns([_POS]).cast(arrow_schema())


# --- reading a dataset back ---------------------------------------------------------------------------


@dataclass
class Dataset:
    """A verified dataset: its directory and manifest."""

    root: Path
    manifest: dict[str, Any]

    @property
    def files(self) -> list[dict[str, Any]]:
        return self.manifest["files"]

    @property
    def input(self) -> dict[str, Any]:
        return self.manifest["input"]

    def path(self, entry: dict[str, Any]) -> Path:
        return self.root / entry["path"]

    def quarantine(self) -> list[dict[str, Any]]:
        return _read_ipc(self.root / QUARANTINE).to_pylist()

    def duplicates(self) -> list[Event]:
        return table_events(_read_ipc(self.root / DUPLICATES))


def _read_ipc(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def open_dataset(path: Path | str, *, verify_hashes: bool = True) -> Dataset:
    """Read the manifest and verify the dataset against it: format and schema, every file present with its
    size, row count and SHA-256. Raises DatasetError naming the first file that does not match."""
    root = Path(path)
    name = root / MANIFEST
    try:
        manifest = json.loads(name.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{name}: cannot read the dataset manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DatasetError(f"{name}: not a haconform dataset manifest (format {manifest.get('format')!r})")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{name}: dataset format version {manifest.get('format_version')!r}, this haconform reads "
            f"{FORMAT_VERSION}; ingest the input again"
        )
    if manifest.get("schema") != schema_description(arrow_schema()):
        raise DatasetError(f"{name}: the dataset's schema is not trace schema version {SCHEMA_VERSION}; ingest again")
    entries = [*manifest["files"], manifest["quarantine"], manifest["duplicates"]]
    for entry in entries:
        file = root / entry["path"]
        if not file.is_file():
            raise DatasetError(f"{file}: missing from the dataset (listed in {MANIFEST})")
        if file.stat().st_size != entry["bytes"]:
            raise DatasetError(f"{file}: changed since ingest ({file.stat().st_size} bytes, manifest {entry['bytes']})")
        if verify_hashes and sha256_of(file) != entry["sha256"]:
            raise DatasetError(f"{file}: changed since ingest (SHA-256 differs from {MANIFEST})")
    for entry in manifest["files"]:
        file = root / entry["path"]
        try:
            meta = pq.ParquetFile(file)
        except (OSError, pa.ArrowException) as exc:
            raise DatasetError(f"{file}: not a readable Parquet file: {exc}") from exc
        if meta.metadata.num_rows != entry["rows"]:
            raise DatasetError(f"{file}: {meta.metadata.num_rows} rows, manifest says {entry['rows']}")
        if not meta.schema_arrow.equals(arrow_schema()):
            raise DatasetError(f"{file}: its Arrow schema is not the trace schema")
    listed = {e["path"] for e in entries} | {MANIFEST}
    extra = sorted(p.name for p in root.iterdir() if p.name not in listed)
    if extra:
        raise DatasetError(f"{root / extra[0]}: in the dataset but not in its manifest")
    return Dataset(root, manifest)
