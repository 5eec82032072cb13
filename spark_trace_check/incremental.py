"""`haconform check PATHS --state DIR --engine spark`: incremental checking, the Spark driver.

The state format is the single-process driver's (`conformance.engine.statedir`; shared parts in
`conformance.engine.resume`), so a state saved by either engine is continued by the other. A first check with a
new DIR is the Spark check of everything whose trace pass (`spark_trace_check.trace_pass`, `Keep`) also
emits each streamed trace's pickled folds before they finish and, per task, the stable hashes of the event
IDs it read; the driver collects them with the report rows and saves the state atomically. A later check
reads only the new segments (`conformance.engine.resume.segments`: new files, lines appended to JSON Lines files;
`spark_trace_check.raw.read_segments`), finds the traces they touch (one small job over the new rows'
keys), broadcasts only those traces' saved folds, and the pass restores and continues them; every other
trace keeps its saved report rows. Traces judged whole (held: out of seq order, or read otherwise by the
JVM) are saved without folds, as the single-process driver saves them, and cannot be continued.

The new rows always go through the shuffle plan's trace pass (`spark_trace_check.trace_pass`), whatever
`--spark-plan` says: it is the pass that carries folds from one run to the next (the units plan,
`spark_trace_check.units`, keeps none yet).

TR-002: the pass sends back the new events of the ID hashes the state saw repeated (`Keep.repeated`,
`CANDIDATE_KIND`), so a check whose new rows repeat no ID for the first time reads no file again. Each task also
sends where it read each event it hashed (file rank, line or row; `conformance.locations.pack_located`): the
driver puts the hashes in file order and marks where each part of at most `Marks.chunk` rows was read
(`locations.Placed`; session 14), so a hash repeated for the first time has only its marks' rows read again
(`locations.resolve_repeats`), by this driver or the single-process one, never every file. A state whose
hashes a Spark run saved before session 14 (marks not known) still has every file read for such a hash.

Refusals are the single-process driver's: a state of another key exits 2 (`statedir.load`); a file changed
otherwise than by appends, a saved trace judged whole or whose new events go back in seq is set aside with
the reason and everything is checked anew. TR-002 over old and new event IDs and the report come from
`conformance.engine.resume.outcome`. Requirements: TR-001, TR-002, TR-005 (see `conformance.engine.resume`).
"""

from __future__ import annotations

import argparse
import pickle
from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome
from conformance.engine.resume import (
    NotContinued,
    Segment,
    attach,
    check_after,
    judged_whole,
    outcome,
    repeated_before,
    resume,
    segments,
)
from conformance.engine.statedir import FileFacts, State
from conformance.engine.tally import RuleCounts
from conformance.locations import Placed, resolve_repeats
from spark_trace_check.cluster import ship_code
from spark_trace_check.job import (
    VIOLATION_COLUMNS,
    fetch_events,
    judge_held,
    partitions_for,
    run_session,
    sorted_out,
    staging,
)
from spark_trace_check.raw import Raw, read_segments
from spark_trace_check.trace_pass import (
    CANDIDATE_KIND,
    FOLDS_KIND,
    HASHES_KIND,
    HELD_KIND,
    TALLY_KIND,
    Keep,
    trace_pass,
    violation_row,
)
from traces.io import discover

STATE_ROWS_PER_TASK = 250_000  # about 14 MB of pickled folds a task


def check_incremental(
    spark: SparkSession,
    paths: list[str],
    state_dir: Path,
    *,
    partitions: int = 4,
    cap: int = DEFAULT_CAP,
    skew_ms: int | None = None,
) -> CheckOutcome:
    """The report of a full check of `paths`, reading with Spark only what the state in `state_dir` has not
    seen (see the module)."""

    def body(state: State, runs: list) -> CheckOutcome:
        with staging(spark) as stage_dir:
            return _check(spark, paths, state_dir, state, runs, stage_dir, partitions, cap, skew_ms)

    return resume(state_dir, skew_ms, body)


def _check(
    spark: SparkSession,
    paths: list[str],
    state_dir: Path,
    state: State,
    runs: list,
    stage_dir: str,
    partitions: int,
    cap: int,
    skew_ms: int | None,
) -> CheckOutcome:
    names = [name for name, _ in runs]
    state.previous = dict(state.results)  # the report rows as saved (their attached events are reused)
    found = discover(paths)
    todo = segments(found.files, state)
    resolve = None
    if todo:  # nothing new: no Spark job at all
        raw = read_segments(spark, found, todo, stage_dir)
        kept, placed = _judge(spark, raw, state, todo, found, partitions, skew_ms)
        new = None
        if kept is not None:  # the pass sent back the new events of the hashes repeated before
            by_name, order = {tf.name: tf for tf in found.files}, {tf.name: i for i, tf in enumerate(found.files)}
            new = [(name, e) for name, _, e in kept]
            indexed = [(name, placed.index(order[name], line), e) for name, line, e in kept]

            def resolve(repeated: set[int]) -> list[tuple[str, object]] | None:
                return resolve_repeats(state, by_name, order, placed.base, indexed, repeated, False)
    else:
        new = []
    for tf, _, _ in todo:
        state.files[tf.name] = FileFacts.of(tf.path, tf.kind)
    return outcome(found, state, names, cap, state_dir, "spark", new, resolve=resolve)


def _judge(
    spark: SparkSession, raw: Raw, state: State, todo: list[Segment], found, partitions, skew_ms
) -> tuple[list[tuple[str, int, object]] | None, Placed]:
    """The new rows through the trace pass (touched saved traces continued), the state brought up to date;
    the new events of the ID hashes the state saw repeated, (file name, line, event) in recording order, sent
    back by the pass (None: the state does not know its repeated hashes), and where the new hashes were put."""
    restored: dict[str, bytes] = {}
    if state.folds:  # the saved traces the new rows touch: their folds alone go to the workers
        order = {tf.name: i for i, tf in enumerate(found.files)}
        keys = raw.rows.groupBy("key").agg(F.min("file_rank").alias("first")).collect()
        for trace, first in sorted((r["key"], r["first"]) for r in keys if r["key"] in state.folds):
            saved = state.folds[trace]
            if saved is None:
                raise judged_whole(trace)
            check_after(trace, raw.files[first], state, order)
            restored[trace] = saved
    partitions = partitions_for(spark, partitions, raw.rows_read)
    # each task returns its traces' pickled folds (about 56 bytes an event): small tasks, so that no result
    # outgrows what a default 1 GiB driver keeps for it (10^7 events in 4 tasks lost a result, session 7)
    partitions = max(partitions, -(-raw.rows_read // STATE_ROWS_PER_TASK))
    ship_code(spark)
    shared = spark.sparkContext.broadcast(restored)
    try:
        repeated = repeated_before(state)
        passed = trace_pass(raw.rows, partitions, skew_ms, keep=Keep(shared, frozenset(repeated or ())))
        by_kind, by_mech, quarantine = sorted_out(passed, raw, stream=True)
        for r in by_kind.get(HELD_KIND, ()):
            if r["trace_id"] in state.folds or r["entity"] in state.folds:
                if r["explanation"]:
                    raise NotContinued(f"trace {r['trace_id']!r}: {r['explanation']}")
                raise judged_whole(r["trace_id"])
        judged = judge_held(spark, raw, by_kind, partitions, skew_ms)
    finally:
        shared.unpersist()
    held = {r["trace_id"] for r in by_kind.get(HELD_KIND, ())}
    fresh: dict[str, list[dict]] = {}
    notes: dict[str, list[dict]] = {}
    for r in by_kind.get(FOLDS_KIND, ()):
        if r["trace_id"] not in held:
            state.folds[r["trace_id"]] = r["blob"]
            state.last_file[r["trace_id"]] = raw.files[r["file_rank"]]
            fresh[r["trace_id"]], notes[r["trace_id"]] = [], []
    for trace in held:
        state.folds[trace] = None
        fresh[trace], notes[trace] = [], []
    counts: dict[str, RuleCounts] = {trace: RuleCounts() for trace in fresh}
    whole = RuleCounts()  # the held traces' pass counts per task: kept with the first held trace
    for r in judged:
        if r["kind"] == "v":
            fresh[r["trace_id"]].append(violation_row(r, VIOLATION_COLUMNS))
        elif r["kind"] == TALLY_KIND:
            if r["trace_id"] is None:
                whole.merge(pickle.loads(r["blob"]))
            elif r["trace_id"] not in held:
                counts[r["trace_id"]] = pickle.loads(r["blob"])
        else:
            notes[r["trace_id"]].append({"mechanism": r["mechanism"], "note": r["explanation"]})
    if held:
        counts[min(held)] = whole
    for trace, rows in fresh.items():
        state.results[trace] = (rows, notes[trace], counts[trace])
    attach(fresh, state, todo, found.files, lambda _todo, missing: _events(raw, missing))
    state.rows_read += raw.rows_read
    state.rows_checked += sum(by_mech.values())
    counts = Counter(state.by_mechanism)
    counts.update(by_mech)
    state.by_mechanism = dict(counts)
    state.quarantine.extend(quarantine)
    # the tasks' hashes, put in file order and marked where they were read (`conformance.locations.Placed`)
    placed = Placed(state, [r["blob"] for r in by_kind.get(HASHES_KIND, ())], found.files)
    if repeated is None:
        return None, placed
    kept = sorted(by_kind.get(CANDIDATE_KIND, ()), key=lambda r: (r["file_rank"], r["line"]))
    return [(raw.files[r["file_rank"]], r["line"], pickle.loads(r["blob"])) for r in kept], placed


def _events(raw: Raw, missing: set[tuple[str, str]]) -> dict[tuple[str, str], list[dict]]:
    """The report rows of the new events `missing` names, read from the new rows by the pass's judge."""
    got: dict[tuple[str, str], list[dict]] = {}
    for _, _, e in fetch_events(raw, ids=sorted({i for _, i in missing})):
        if (e.trace_id, e.event_id) in missing:
            got.setdefault((e.trace_id, e.event_id), []).append(e.to_row())
    return got


def run_check(args: argparse.Namespace) -> int:
    """`haconform check PATHS --state DIR --engine spark`: the report frame of `haconform check`."""
    return run_session(
        args,
        lambda spark, partitions, _lines: check_incremental(
            spark, args.paths, Path(args.state), partitions=partitions, cap=DEFAULT_CAP, skew_ms=args.skew
        ),
    )
