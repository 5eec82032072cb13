"""Task errors as values, and the one shuffle of event-ID hashes (TR-002) of the Spark units plans.

A task's `TraceFileError` or `InternalError` comes back as a value (`_guarded`) and is raised again in the
driver with its own type (`_raise_errors`), so exit codes stay right. Each task hands on its event IDs'
64-bit hashes by bucket (`_buckets`, 8 bytes an event); one shuffle by bucket (`_shuffled`) puts each
bucket's hashes in one reduce task, which names those seen more than once (`_reduce_task`), and, for
hashes tagged with where they came from, the tags that hold one. `exact_duplicates` then reads the files
again for the events of those hashes when the events kept in the one read cannot tell. `hashes_again` is a job of
hashes alone (each Parquet file's `event_id` column), for a plan whose tasks left some files' IDs unhashed (IDs that
name their own event: `probed_units`, `units`) when the corpus turns out to need them.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from conformance.engine.driver import InternalError
from conformance.engine.outcome import duplicates_among, repeated_events
from conformance.engine.trace_index import all_own, hash_ids, index_file
from spark_trace_check.progress import PLAN_GROUP, job_group
from traces.io import TraceFile, TraceFileError

_ERROR = "error"


def _guarded(fn):
    """Run a task's work; its TraceFileError or InternalError comes back as a value (see the module)."""

    def run(items: Iterator[Any]) -> Iterator[Any]:
        try:
            yield from fn(items)
        except (TraceFileError, InternalError) as exc:
            yield (_ERROR, type(exc).__name__, str(exc))

    return run


def _raise_errors(rows: list) -> None:
    for row in rows:
        if isinstance(row, tuple) and row and row[0] == _ERROR:
            raise (TraceFileError if row[1] != "InternalError" else InternalError)(row[2])


def _buckets(hashes: array, bits: int, tag: int | None = None) -> Iterator[tuple[int, Any]]:
    """(bucket, packed hashes) of a task's event-ID hashes: what the one shuffle of hashes moves; with `tag`
    (what the hashes came from: `probed_units`' component), (bucket, (packed hashes, tag)), so the reduce
    names the tags that hold a repeated hash."""
    view = np.frombuffer(hashes, dtype=np.uint64)
    buckets = view >> np.uint64(64 - bits)
    for b in np.unique(buckets).tolist():
        packed = view[buckets == b].tobytes()
        yield b, packed if tag is None else (packed, tag)


def _shuffled(judged, bits: int, tags: set[int] | None = None) -> tuple[list[Any], set[int]]:
    """A job's results (key -1) and the hashes its buckets hold more than once: the one shuffle of hashes;
    `tags` gets the tags (`_buckets`) that hold one of them (-1: hashes without a tag hold one)."""
    keyed = judged.map(lambda row: (_ERROR, row) if row[0] == _ERROR else row)
    out = keyed.partitionBy((1 << bits) + 1, lambda k: 0 if not isinstance(k, int) or k < 0 else k + 1)
    results: list[Any] = []
    repeated: set[int] = set()
    for kind, value in out.mapPartitions(_reduce_task).collect():
        if kind == "d":
            repeated.update(value)
        elif kind == "t":
            if tags is not None:
                tags.update(value)
        elif isinstance(value, tuple) and value and value[0] == _ERROR:
            _raise_errors([value])
        else:
            results.append(value)
    return results, repeated


SAMPLE_ROWS = 4_096  # rows of each file `own_sampled` looks at
HASHES_PER_BUCKET = 8_000_000  # 64 MB of hashes: what one reduce task sorts at most (in expectation)


def _bucket_bits(slots: int, events: int) -> int:
    """Buckets of ID hashes: at least two per task slot, and enough that none holds much more than
    `HASHES_PER_BUCKET` (a 10^8-event corpus: 16 buckets of 50 MB)."""
    return max(1, (2 * slots - 1).bit_length(), math.ceil(math.log2(max(1, events / HASHES_PER_BUCKET))))


def _reduce_task(items: Iterator[tuple[int, Any]]) -> Iterator[Any]:
    """The units' results pass through; a bucket's hashes give those it holds more than once."""
    blobs: list[bytes] = []
    tags: list[int] = []  # each blob's tag (-1: none)
    for key, value in items:
        if key == -1 or (isinstance(key, str) and key == _ERROR):
            yield "r", value
        elif isinstance(value, tuple):
            blobs.append(value[0])
            tags.append(value[1])
        else:
            blobs.append(value)
            tags.append(-1)
    if blobs:
        whole = np.frombuffer(b"".join(blobs), dtype=np.uint64)
        view = np.sort(whole)
        same = view[1:] == view[:-1]
        repeated = np.unique(view[1:][same])
        yield "d", repeated.tolist()
        if repeated.size:  # which tags hold them: read again for their events, the others not
            owner = np.repeat(np.array(tags, dtype=np.int64), [len(b) // 8 for b in blobs])
            yield "t", np.unique(owner[np.isin(whole, repeated)]).tolist()


def _hash_task(files: list[TraceFile], bits: int, hash_of: Callable[[str], int]):
    def run(items: Iterator[list[int]]) -> Iterator[Any]:
        for ranks in items:
            hashes = array("Q")
            for rank in ranks:  # a Parquet file's `event_id` column alone; any other file's index
                tf = files[rank]
                hashes.extend(hash_ids(tf, hash_of) if tf.kind == "parquet" else index_file(tf, hash_of=hash_of).ids)
            yield from _buckets(hashes, bits, ranks[0])

    return run


def own_sampled(files: list[TraceFile]) -> bool:
    """Whether the first rows (`SAMPLE_ROWS`) of the first, middle and last files (by rank) are Parquet rows whose
    every ID names its own event (`trace_index.all_own`): a prediction, not a verdict, and never an error (a file
    that cannot be read is a no; its task says why). A job whose tasks skip own IDs must hash every file again when
    the corpus mixes them with others (`hashes_again`: about 7% of a 10^7 check, session 30), so a corpus that shows
    other IDs here is hashed in its tasks as before."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for rank in sorted({0, len(files) // 2, len(files) - 1} if files else set()):
        tf = files[rank]
        if tf.kind != "parquet":
            return False
        try:
            columns = ["trace_id", "seq", "event_id"]
            first = next(pq.ParquetFile(tf.path).iter_batches(batch_size=SAMPLE_ROWS, columns=columns), None)
        except (OSError, pa.ArrowException):
            return False
        if first is None or set(columns) - set(first.schema.names):  # (a column missing is no error of the read)
            return False
        if not all_own(pa.Table.from_batches([first])):
            return False
    return bool(files)


def hashes_again(
    sc, files: list[TraceFile], groups: list[list[int]], bits: int, hash_of: Callable[[str], int], partitions: int
) -> tuple[set[int], set[int]]:
    """TR-002's repeated hashes over every file of `groups` (each group's hashes tagged with its first file), from
    a Parquet file's `event_id` column alone, in one job and one shuffle: the hashes seen more than once, and the
    tags of the groups that hold one."""
    holders: set[int] = set()
    got = sc.parallelize(groups, max(1, min(len(groups), 2 * partitions)))
    with job_group(sc, PLAN_GROUP):
        _, repeated = _shuffled(got.mapPartitions(_guarded(_hash_task(files, bits, hash_of))), bits, holders)
    return repeated, holders


def _exact_task(files: list[TraceFile], repeated: set[int], hash_of: Callable[[str], int]):
    def run(items: Iterator[int]) -> Iterator[Any]:
        for rank in items:
            yield rank, repeated_events(files[rank], repeated, hash_of)

    return run


def exact_duplicates(
    sc,
    files: list[TraceFile],
    repeated: set[int],
    hash_of: Callable[[str], int],
    partitions: int,
    ranks: list[int] | None = None,
) -> tuple[list[dict], dict]:
    """TR-002 exactly, when the events kept in the one read cannot tell: the files (`ranks`, default every
    one) read again in parallel for the events of the `repeated` hashes, in recording order."""
    ranks = list(range(len(files))) if ranks is None else sorted(ranks)
    got = sc.parallelize(ranks, max(1, min(len(ranks), 2 * partitions)))
    with job_group(sc, PLAN_GROUP):
        found = got.mapPartitions(_guarded(_exact_task(files, repeated, hash_of))).collect()
    _raise_errors(found)
    return duplicates_among([e for _, evs in sorted(found, key=lambda r: r[0]) for e in evs])
