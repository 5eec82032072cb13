"""`haconform ingest --engine spark`: a corpus written as an ingested dataset (`traces.dataset`).

The rows are read as `haconform check --engine spark` reads them (`spark_trace_check.raw.read_raw`: raw,
nothing parsed in the JVM) and judged once, in one Python pass, by the trace pass's own function
(`spark_trace_check.raw.judge_rows`, the single-process engine's row definition, TR-005); the valid
ones become rows of the dataset's schema by the Python ingest's own `traces.ingest.events_table` and get
their bucket by `traces.dataset.bucket_of`. The judged rows are kept (persisted), then
`repartition(N, bucket) + sortWithinPartitions(bucket, trace_id, file, line)` and each task writes its
buckets with pyarrow in the dataset's exact format (one file per bucket, each file written under a
temporary name and renamed). The driver collects the quarantine and the
duplicates, hashes nothing but the small side files, and writes the manifest last; the directory is
renamed into place. Checking a dataset: `spark_trace_check.dataset`.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from spark_trace_check.cluster import ship_code
from spark_trace_check.raw import RAW_COLUMNS, judge_rows, read_raw
from spark_trace_check.session import build_session
from traces import dataset as fmt
from traces import ingest as ingestion
from traces.io import RowError, TraceFileError
from traces.schema import FIELD_NAMES, Event, arrow_schema

_WRITTEN_DDL = "bucket int, path string, rows bigint"
_PLACE = [("file_rank", pa.int32()), ("line", pa.int64()), ("bucket", pa.int32())]
_JUDGED_SCHEMA = pa.schema(  # a valid row: the dataset's columns and its place; a bad row: place, field, reason
    [(f.name, f.type) for f in arrow_schema()] + _PLACE + [("field", pa.string()), ("reason", pa.string())]
)
_SPARK_TYPES = {pa.int64(): "bigint", pa.int32(): "int", pa.string(): "string"}
_JUDGED_DDL = ", ".join(f"{f.name} {_SPARK_TYPES[f.type]}" for f in _JUDGED_SCHEMA)


def _session(args: argparse.Namespace) -> tuple[SparkSession, bool]:
    owned = SparkSession.getActiveSession() is None  # embedded callers (tests) keep their session
    partitions = getattr(args, "partitions", 0) or 2 * (os.cpu_count() or 2)
    return build_session(args.master, partitions=partitions), owned


def _judge(buckets: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Inside a task: each raw row judged once (`judge_rows`); a valid one as a row of the dataset's schema
    with its recording position and bucket, a bad one as its position, field and reason (a null bucket)."""
    for batch in batches:
        ranks, lines = batch.column("file_rank").to_pylist(), batch.column("line").to_pylist()
        events: list[Event] = []
        placed: list[tuple[int, int, int]] = []
        bad: list[dict[str, Any]] = []
        for rank, line, (event, problem) in zip(ranks, lines, judge_rows(batch), strict=True):
            if event is not None:
                events.append(event)
                placed.append((rank, line, fmt.bucket_of(event.trace_id, buckets)))
            else:
                assert problem is not None  # judge_rows gives an event or a problem for every row
                bad.append({"file_rank": rank, "line": line, "field": problem.field, "reason": problem.reason})
        if events:
            table = ingestion.events_table(events)  # the Python ingest's own rows (attrs as read, in key order)
            place = [pa.array(c, type=t) for c, (_, t) in zip(zip(*placed, strict=True), _PLACE, strict=True)]
            strings = [pa.nulls(len(events), pa.string())] * 2
            columns = [c.combine_chunks() for c in table.columns] + place + strings
            yield pa.RecordBatch.from_arrays(columns, schema=_JUDGED_SCHEMA)
        if bad:
            yield pa.RecordBatch.from_pylist(bad, schema=_JUDGED_SCHEMA)


def _write_buckets(out_dir: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Inside a task: rows sorted by (bucket, trace, recording order) -> one Parquet file per bucket."""
    schema = arrow_schema()
    current: int | None = None
    writer: pq.ParquetWriter | None = None
    rows = 0
    done: list[tuple[int, str, int]] = []

    def close() -> None:
        if writer is not None:
            writer.close()
            name = f"part-{current:05d}.parquet"
            os.replace(os.path.join(out_dir, f".{name}.{os.getpid()}.tmp"), os.path.join(out_dir, name))
            done.append((current, name, rows))

    for batch in batches:
        buckets = batch.column("bucket").to_pylist()
        start = 0
        while start < len(buckets):
            b = buckets[start]
            end = start
            while end < len(buckets) and buckets[end] == b:
                end += 1
            if b != current:
                close()
                current, rows = b, 0
                tmp = os.path.join(out_dir, f".part-{b:05d}.parquet.{os.getpid()}.tmp")
                writer = pq.ParquetWriter(tmp, schema, compression="zstd")
            part = pa.Table.from_batches([batch.slice(start, end - start)]).select(list(FIELD_NAMES)).cast(schema)
            writer.write_table(part)  # type: ignore[union-attr]
            rows += end - start
            start = end
    close()
    if done:
        yield pa.RecordBatch.from_pylist(
            [{"bucket": b, "path": p, "rows": n} for b, p, n in done],
            schema=pa.schema([("bucket", pa.int32()), ("path", pa.string()), ("rows", pa.int64())]),
        )


def ingest(spark: SparkSession, paths: list[str], out: Path, *, files: int) -> dict[str, Any]:
    if files < 1:
        raise TraceFileError(f"--files must be at least 1, got {files}")
    ingestion.prepare_out(out, paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-")).resolve()
    base = os.environ.get("HACONFORM_STAGE_DIR") or tempfile.gettempdir()
    stage_dir = tempfile.mkdtemp(prefix="haconform-stage-", dir=base if re.fullmatch(r"[\w./-]+", base) else "/tmp")
    try:
        ship_code(spark)
        raw = read_raw(spark, paths, stage_dir)
        if raw.rows_read == 0:
            raise TraceFileError(
                f"no events: {len(raw.files)} trace file(s) read, {len(raw.skipped)} skipped, 0 rows; "
                "a dataset of nothing is not written"
            )
        rows = raw.rows.select(*(c for c in RAW_COLUMNS if c not in ("key", "id")))
        judged = rows.mapInArrow(functools.partial(_judge, files), _JUDGED_DDL).persist()  # each row judged once
        events = judged.where("bucket is not null")
        written = (
            events.repartition(files, "bucket")
            .sortWithinPartitions("bucket", "trace_id", "file_rank", "line")
            .mapInArrow(functools.partial(_write_buckets, str(tmp)), _WRITTEN_DDL)
            .collect()
        )
        quarantine = [
            RowError.of(r, raw.files).row()
            for r in judged.where("bucket is null").orderBy("file_rank", "line").collect()
        ]
        repeated = events.groupBy("event_id").count().where("count > 1").select("event_id")
        dup_rows = events.join(F.broadcast(repeated), "event_id").orderBy("file_rank", "line").select(*FIELD_NAMES)
        dups = pa.Table.from_pylist([r.asDict() for r in dup_rows.collect()], schema=arrow_schema())
        judged.unpersist()
        for stale in tmp.glob(".part-*.tmp"):  # left by a task attempt that failed and was retried
            stale.unlink()
        manifest = ingestion.finish(
            tmp,
            buckets=files,
            written=sorted((r["bucket"], r["path"], r["rows"]) for r in written),
            quarantine=pa.Table.from_pylist(quarantine, schema=fmt.quarantine_schema()),
            duplicates=dups,
            input_files=raw.files,
            skipped=raw.skipped,
            rows_read=raw.rows_read,
        )
        ingestion.publish(tmp, out)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def run_ingest(args: argparse.Namespace) -> dict[str, Any]:
    spark, owned = _session(args)
    try:
        return ingest(spark, args.paths, Path(args.dataset), files=args.files)
    finally:
        if owned:
            spark.stop()
