"""`haconform ingest --engine spark`: a corpus written as an ingested dataset (`traces.dataset`).

The rows are read and judged by the Spark loader (`spark_trace_check.job.load_judged`, the same row
judgement as the Python reader), then `repartition(N, bucket) + sortWithinPartitions(bucket, trace_id, file,
line)` and each task writes its buckets with pyarrow in the dataset's exact format (one file per bucket,
each file written under a temporary name and renamed). The driver collects the quarantine and the
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
from spark_trace_check.job import load_judged
from spark_trace_check.session import build_session
from traces import dataset as fmt
from traces import ingest as ingestion
from traces.io import TraceFileError
from traces.schema import FIELD_NAMES, arrow_schema

_WRITTEN_DDL = "bucket int, path string, rows bigint"


def _session(args: argparse.Namespace) -> tuple[SparkSession, bool]:
    owned = SparkSession.getActiveSession() is None  # embedded callers (tests) keep their session
    partitions = getattr(args, "partitions", 0) or 2 * (os.cpu_count() or 2)
    return build_session(args.master, partitions=partitions), owned


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
        judged = load_judged(spark, paths, stage_dir, files)
        loaded, rows_read = judged.loaded, judged.rows_read
        if rows_read == 0:
            raise TraceFileError(
                f"no events: {len(loaded.files)} trace file(s) read, {len(loaded.skipped)} skipped, 0 rows; "
                "a dataset of nothing is not written"
            )
        events = loaded.events.withColumn("bucket", F.pmod(F.crc32(F.col("trace_id").cast("binary")), F.lit(files)))
        written = (
            events.repartition(files, "bucket")
            .sortWithinPartitions("bucket", "trace_id", "file_rank", "line")
            .mapInArrow(functools.partial(_write_buckets, str(tmp)), _WRITTEN_DDL)
            .collect()
        )
        quarantine = [
            {"file": loaded.files[r["file_rank"]], "line": r["line"], "field": r["field"], "reason": r["reason"]}
            for r in loaded.quarantine.orderBy("file_rank", "line").collect()
        ]
        repeated = events.groupBy("event_id").count().where("count > 1").select("event_id")
        dup_rows = events.join(F.broadcast(repeated), "event_id").orderBy("file_rank", "line").select(*FIELD_NAMES)
        dups = pa.Table.from_pylist([r.asDict() for r in dup_rows.collect()], schema=arrow_schema())
        loaded.unpersist()
        for stale in tmp.glob(".part-*.tmp"):  # left by a task attempt that failed and was retried
            stale.unlink()
        manifest = ingestion.finish(
            tmp,
            buckets=files,
            written=sorted((r["bucket"], r["path"], r["rows"]) for r in written),
            quarantine=pa.Table.from_pylist(quarantine, schema=fmt.QUARANTINE_SCHEMA),
            duplicates=dups,
            input_files=loaded.files,
            skipped=loaded.skipped,
            rows_read=rows_read,
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
