"""`haconform ingest`: read and validate a corpus once and write a dataset (`traces.dataset`, issue 10).

Every input file is read with the one definition of a valid row (`traces.rows`, `traces.columnar`;
requirement TR-005), exactly as `haconform check` reads it. Memory is bounded by one bucket: valid rows are
spilled per bucket (Arrow IPC, with their recording position), then each bucket is sorted by trace and
recording position and written as one Parquet file; event-ID uniqueness (TR-002) keeps an 8-byte hash per
event and resolves repeated hashes exactly from the spilled buckets. The quarantine is written as it is
read. The dataset is built in a temporary directory beside `--out`, the manifest written last, and the
directory renamed into place.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from traces.dataset import (
    DUPLICATES,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    QUARANTINE,
    bucket_of,
    file_facts,
    id_hash,
    is_dataset,
    quarantine_schema,
    read_ipc,
    repeated_hashes,
    schema_description,
    write_ipc,
)
from traces.io import TraceFileError, discover, iter_trace_file
from traces.schema import SCHEMA_VERSION, Event, arrow_schema

DEFAULT_FILES = 4
_POS = "_pos"


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
    q_schema = quarantine_schema()
    q_writer = pa.ipc.new_file(str(tmp / QUARANTINE), q_schema)
    rows_read = rows_checked = 0
    for tf in found.files:
        for part in iter_trace_file(tf):
            rows_read += part.rows_read
            if part.errors:
                q_writer.write_table(
                    pa.Table.from_pylist(
                        [e.row() for e in part.errors],
                        schema=q_schema,
                    )
                )
            if not part.events:
                continue
            table = events_table(part.events, rows_checked)
            rows_checked += len(part.events)
            hashes.extend(id_hash(e.event_id) for e in part.events)
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
    repeated = repeated_hashes(hashes)
    del hashes
    written, candidates = [], []
    for b in sorted(writers):
        spill = spill_dir / f"{b}.arrow"
        with pa.memory_map(str(spill)) as source:
            table = pa.ipc.open_file(source).read_all()
        table = table.sort_by([("trace_id", "ascending"), (_POS, "ascending")])
        if repeated:
            mask = [id_hash(i) in repeated for i in table.column("event_id").to_pylist()]
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
        entries.append({"path": name, "bucket": b, "rows": rows, **file_facts(tmp / name)})
    rows_quarantined = read_ipc(tmp / QUARANTINE).num_rows
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
        "quarantine": {"path": QUARANTINE, "rows": rows_quarantined, **file_facts(tmp / QUARANTINE)},
        "duplicates": {"path": DUPLICATES, "rows": duplicates.num_rows, **file_facts(tmp / DUPLICATES)},
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


def _exact_duplicates(candidates: list[pa.Table]) -> pa.Table:
    """The rows whose event ID occurs more than once, in recording order (hash collisions removed)."""
    if not candidates:
        return arrow_schema().empty_table()
    table = pa.concat_tables(candidates)
    counts = pc.value_counts(table.column("event_id"))
    ids = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    table = table.filter(pc.is_in(table.column("event_id"), value_set=ids)).sort_by(_POS)
    return table.drop_columns([_POS]).cast(arrow_schema())
