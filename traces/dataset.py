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

This module is the format: the manifest, verifying a dataset (`open_dataset`) and typing its rows as
events (`table_events`); `traces.ingest` writes it, `conformance.dataset_check` streams it into the folds.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from traces.io import TraceFileError
from traces.schema import FIELD_NAMES, SCHEMA_VERSION, Event, arrow_schema

MANIFEST = "_haconform.json"
QUARANTINE = "_quarantine.arrow"
DUPLICATES = "_duplicates.arrow"
FORMAT = "haconform-dataset"
FORMAT_VERSION = 1
if TYPE_CHECKING:
    import pyarrow as pa
# pyarrow loads where Parquet (or a dataset) is read or written, not at import: a check of JSON Lines needs
# neither pyarrow nor numpy (issue 32, session 15: about 0.25 s of its start).


def quarantine_schema() -> pa.Schema:
    """The Arrow schema of the dataset's quarantine file (`QUARANTINE`)."""
    import pyarrow as pa

    return pa.schema([("file", pa.string()), ("line", pa.int64()), ("field", pa.string()), ("reason", pa.string())])


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


def table_events(table: pa.Table | pa.RecordBatch) -> list[Event]:
    """Rows of the trace schema as Events, without validation (the dataset's schema is verified)."""
    cols = [table.column(n).to_pylist() for n in FIELD_NAMES]
    loads = json.loads
    return [
        Event(trace, seq, eid, ts, node, mech, entity, kind, loads(text), sv)
        for sv, trace, seq, eid, ts, node, mech, entity, kind, text in zip(*cols, strict=True)
    ]


def id_hash(event_id: str) -> int:
    return hash(event_id) & 0xFFFF_FFFF_FFFF_FFFF


def file_facts(path: Path) -> dict[str, Any]:
    return {"bytes": path.stat().st_size, "sha256": sha256_of(path)}


def write_ipc(path: Path, table: pa.Table) -> None:
    import pyarrow as pa

    with pa.ipc.new_file(str(path), table.schema) as writer:
        writer.write_table(table)


_FEW = 1 << 16  # up to this many hashes, `repeated_hashes` finds the repeated ones in a set when numpy is not loaded


def repeated_hashes(hashes: array) -> set[int]:
    """The hashes that occur more than once. Up to `_FEW` hashes with numpy not loaded (a check of a few JSON
    Lines files), in a set. Otherwise sorts `hashes` in place (callers drop it afterwards): the
    array's own memory is viewed, not copied, so the corpus-wide check costs its 8 bytes per event and a
    byte per event for the comparison, not a Python int per event (`pa.array` of an `array` builds one:
    4.8 GB for 2*10^7 hashes, 18.5 GB peak for a 10^8-event check)."""
    if not hashes:
        return set()
    if len(hashes) <= _FEW and "numpy" not in sys.modules:  # a small check: a set, not numpy's 0.1 s import
        return repeated_in_set(hashes)
    return repeated_sorted(hashes)


def repeated_in_set(hashes: array) -> set[int]:
    """`repeated_hashes` of a few hashes, one pass over a set."""
    seen: set[int] = set()
    repeated: set[int] = set()
    for h in hashes:
        if h in seen:
            repeated.add(h)
        else:
            seen.add(h)
    return repeated


def repeated_sorted(hashes: array) -> set[int]:
    """`repeated_hashes` by numpy: `hashes` sorted in place, equal neighbours compared."""
    import numpy as np  # pyarrow's and pandas' own dependency

    view = np.frombuffer(hashes, dtype=np.uint64)
    view.sort()
    same = view[1:] == view[:-1]
    if not same.any():  # the clean corpus: `np.unique` of nothing would still load numpy.ma (17 ms; session 14)
        return set()
    return {int(h) for h in np.unique(view[1:][same])}


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
        return read_ipc(self.root / QUARANTINE).to_pylist()

    def duplicates(self) -> list[Event]:
        return table_events(read_ipc(self.root / DUPLICATES))


def read_ipc(path: Path) -> pa.Table:
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def open_dataset(path: Path | str, *, verify_hashes: bool = True) -> Dataset:
    """Read the manifest and verify the dataset against it: format and schema, every file present with its
    size, row count and SHA-256. Raises DatasetError naming the first file that does not match."""
    import pyarrow as pa
    import pyarrow.parquet as pq

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
