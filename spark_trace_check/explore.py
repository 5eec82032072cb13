"""`haconform explore --engine spark` (issue 33, "On Spark"): level-synchronous BFS on any Spark master.

The plan of `conformance.explore.levels`, one shuffle a level:

    frontier ──mapPartitions(expand, end)──partitionBy(P, Buckets)──┐   (the shuffle: candidates by fingerprint)
    the level before's settled partitions (cached) ───────────┴─union (partitioner-aware: narrow)
        ──mapPartitions(settle: least key per fingerprint)──> per partition: Settled, frontier' pieces

The visited set is kept per partition, one Python set in each, and never shuffled: the union of two RDDs with the
one partitioner pairs partition i of each without moving a row (`PartitionerAwareUnionRDD`; checked, a plan
whose sides are not co-partitioned is an internal error). Each level's Settled RDD is cached and its lineage cut
(`localCheckpoint`), so a deep search does not replan every level before it. A new state's fairness end is judged
where its edge made it, before the shuffle, on its live session (session 12; `levels.expand`): the verdict crosses
the shuffle with the candidate, and at the bound's last level the blob does not. Session 14: where an end costs
more than a copy (`Job.settles_ends`), it is judged after the shuffle instead, once per new state, where the state
settles (`levels.settle`): its blob crosses the shuffle, also at the last level. The driver collects one summary
per partition (counts and the least violating keys) and, only at the level where the search stops, the keys it
needs to cut it where the single-process BFS stops (`cut.account`).

Session 13: the driver also keeps the set of every visited fingerprint (collected from each level's new states)
and broadcasts it to the next level's tasks (`levels.Known`, `Job.skip_known`): an edge into a state visited
before the level is judged in place, as `Explorer.run` judges it, and makes no candidate (no blob, no fairness
end, nothing shuffled). The visited sets per partition still decide what is new; the broadcast only spares work
(about 100 bytes a state in the driver and in each Python worker: 10^6 states fit; a cluster exploring far more
turns it off and keeps the plan of sessions 10-12).

Session 15 (benchmarks/README.md, "Session 15: Spark's cost per state"): one Python task a partition settles. A
child's node crosses as one pickle (`levels.packed`), the candidates are not merged before the shuffle (a task
makes each child once), the union reads the level before's cached partitions as they are (no copy, no task that
extracts the visited sets first), and a settled partition is its `Settled` with no node in it, then its
frontier's rows pickled in pieces: the summary reads the one, the next level the other. 48 Python tasks a level
at 16 partitions, not 80.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark import RDD, StorageLevel

from conformance.explore.bfs import Result
from conformance.explore.cut import Key, Probe, Summary, account, summarize, upto
from conformance.explore.levels import (
    Buckets,
    Job,
    Progress,
    Settled,
    expand_all,
    kin_bucket,
    kin_up,
    packing,
    settle,
    start,
)
from spark_trace_check.cluster import ship_code
from spark_trace_check.session import build_session

# Settings of an exploration's session. A level's RDDs hold pickled states (5-20 KB each): cached blocks are
# compressed by the JVM (lz4, cheaper than zlib in Python; shuffle files already are by default). Python workers
# are reused between tasks and levels (Spark's default, stated), so each builds its explorer once (`Job.expander`).
CONF = {"spark.rdd.compress": "true", "spark.python.worker.reuse": "true"}


def session(master: str, conf: dict[str, str] | None = None) -> Any:
    """The session `haconform explore --engine spark` runs on (`spark_trace_check.session`)."""
    return build_session(master, app_name="haconform-explore", conf={**CONF, **(conf or {})})


FRONTIER_CHUNK = 64 << 20  # bytes of packed nodes per pickled piece of a settled partition's frontier


class CoPartitionError(RuntimeError):
    """The visited sets and a level's candidates are not co-partitioned (a bug of ours: exit 3)."""


def _expander(job: Job) -> Any:
    return job.expander()


def _expand_partition(job: Job, last: bool, before: Any):
    def run(rows: Iterable[tuple[str, Key, Any]]) -> Iterator[tuple[str, tuple[Any, ...]]]:
        yield from expand_all(_expander(job), rows, job.ends, last, before.value, job.settles_ends())

    return run


def _settle_partition(job: Job, last: bool, piece: int = FRONTIER_CHUNK):
    """A partition's visited set and candidates settled; the pending fairness ends (session 14,
    `Job.settles_ends`) judged there, once per new state, by this worker's expander. It reads the level before's
    cached partition as it is (its `Settled` for the visited set, its frontier's bytes passed over) beside the
    shuffled candidates, and yields its own: the `Settled` with no node in it, then the new states' rows pickled
    in pieces (`_frontier`), so a reader of the one does not load the other (session 15)."""

    def run(rows: Iterable[Any]) -> Iterator[Any]:
        visited: set[str] = set()
        records = []
        for row in rows:
            if isinstance(row, Settled):
                visited = row.visited
            elif isinstance(row, set):  # level 0's
                visited |= row
            elif not isinstance(row, bytes):  # bytes: the level before's frontier
                records.append(row)
        ex = _expander(job)
        s = settle(visited, records, ex.end_of if job.settles_ends() else None, last)
        if job.settles_ends():
            ex.check_fixed()
        rows = [(n.fingerprint, n.key, n.node) for n in s.new if n.node is not None]
        s.new = [n._replace(node=None) for n in s.new]
        yield s
        chunk, size = [], 0
        for row in rows:  # pieces of about `piece` bytes: a JVM array holds at most 2 GB
            chunk.append(row)
            size += len(row[2])
            if size >= piece:
                yield pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
                chunk, size = [], 0
        if chunk:
            yield pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)

    return run


def _kin_of(s: Settled, up: int) -> list[int]:
    """The ancestor groups of a settled partition's new states (`levels.kin_bucket`), from its keys alone."""
    return [kin_bucket(n.key, up) for n in s.new]


def _frontier(parts: Iterable[Any]) -> Iterator[tuple[str, Key, bytes]]:
    """A settled partition's new states as frontier rows (their nodes still `packed`)."""
    for part in parts:
        if isinstance(part, bytes):
            yield from pickle.loads(part)


def _heads(parts: Iterable[Any]) -> Iterator[Settled]:
    """A settled partition's `Settled` (its frontier's bytes read past, not loaded as rows)."""
    for part in parts:
        if isinstance(part, Settled):
            yield part


def _summaries(fingerprints: bool):
    """A partition's summary, with its new states' fingerprints when the next level is told them."""

    def run(parts: Iterable[Any]) -> Iterator[tuple[Summary, list[str]]]:
        for s in _heads(parts):
            yield summarize(s), [x.fingerprint for x in s.new] if fingerprints else []

    return run


def _as_read(rdd: Any, like: Any) -> Any:
    """`rdd`'s cached partitions read as the shuffle's output is read (pickled batches, the same deserializer and
    partitioner), so that their union is read by one Python task, with no copy of either side first (pyspark's
    union re-serializes two RDDs whose deserializers differ)."""
    out = RDD(rdd._jrdd, rdd.ctx, like._jrdd_deserializer)
    out.partitioner = like.partitioner
    return out


class SparkProbe(Probe):
    def __init__(self, settled: Any) -> None:
        self.settled = settled

    def nth_new_key(self, n: int) -> Key:
        return self.settled.mapPartitions(_heads).flatMap(lambda s: [n.key for n in s.new]).takeOrdered(n)[-1]

    def first_edge(self) -> Key:
        return (*self.settled.mapPartitions(_heads).flatMap(lambda s: [k for k, d in s.degrees if d]).min(), 0)

    def upto(self, cut: Key) -> tuple[int, int]:
        counts = self.settled.mapPartitions(_heads).map(lambda s: upto(s, cut)).collect()
        return sum(c[0] for c in counts), sum(c[1] for c in counts)


def run_spark(
    spark: Any,
    job: Job,
    max_states: int | None = None,
    partitions: int | None = None,
    buckets: Buckets | None = None,
    progress: Progress | None = None,
) -> Result:
    """Explore `job` on `spark`'s master; the same Result as `Explorer.run` (counts, verdict, shortest path)."""
    began = time.monotonic()
    sc = spark.sparkContext
    ship_code(spark)
    n = partitions or 2 * sc.defaultParallelism
    buckets = buckets or Buckets()
    res, roots = start(job, job.expander())  # level 0: one root per resolution of the construction's choices
    visited = (
        sc.parallelize([(fp0, None) for fp0, _, _ in roots], 1)
        .partitionBy(n, buckets)
        .mapPartitions(lambda rows: [{k for k, _ in rows}], preservesPartitioning=True)
    )
    frontier = sc.parallelize(roots, 1)
    size, level, old = len(roots), 0, None
    known = {fp0 for fp0, _, _ in roots} if job.skip_known else set()  # visited before the level (`levels.Known`)
    before = sc.broadcast(known)
    while size and res.found is None and level < job.bound.depth:
        t = time.monotonic()
        buckets.next_level()
        last = level + 1 >= job.bound.depth  # its new states are not expanded: not kept (`levels.expand`)
        cands = frontier.mapPartitions(_expand_partition(job, last, before)).partitionBy(n, buckets)
        both = _as_read(visited, cands).union(cands)
        if both.getNumPartitions() != n or both._jrdd.rdd().getClass().getSimpleName() != "PartitionerAwareUnionRDD":
            raise CoPartitionError(f"level {level + 1}: visited sets and candidates are not co-partitioned")
        settled = both.mapPartitions(_settle_partition(job, last), preservesPartitioning=True)
        settled.persist(StorageLevel.MEMORY_AND_DISK)  # cached: read by the summary, the next level and its union
        settled.localCheckpoint()
        summary, fresh = Summary(), []
        keep = job.skip_known and not last  # the next level's tasks skip the states visited so far (`levels.Known`)
        for s, fps in settled.mapPartitions(_summaries(keep)).collect():  # materialises the level
            summary = summary.merge(s)
            fresh.extend(fps)
        if old is not None:
            old.unpersist()
        old = settled
        going = account(res, level, summary, max_states, SparkProbe(settled))
        size = summary.new if going else 0
        visited = settled  # its `Settled` holds the partition's visited set (`_settle_partition`)
        if size and keep:
            known.update(fresh)
            before.unpersist()
            before = sc.broadcast(known)
        frontier = settled.mapPartitions(_frontier, preservesPartitioning=True)
        up = kin_up(job, res.per_level, n) if size and not last else 0
        if up:  # kin in one task (`levels.kin_bucket`), the groups packed: one more shuffle, of the frontier's rows
            counts = settled.mapPartitions(_heads).flatMap(lambda s, up=up: _kin_of(s, up)).countByValue()
            where = packing(counts, n)
            keyed = frontier.keyBy(lambda row, up=up: kin_bucket(row[1], up))
            frontier = keyed.partitionBy(n, where.__getitem__).values()
        level += 1
        if progress:
            progress(level, res, summary.new, time.monotonic() - t, summary.bytes)
    if old is not None:
        old.unpersist()
    before.unpersist()
    res.seconds = time.monotonic() - began
    return res
