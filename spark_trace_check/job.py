"""`haconform check`: the Spark job. Read, validate and quarantine, check core rules and monitors, report.

Two plans (`check`): the units plan (`spark_trace_check.units`: tasks judge the engine's units of whole
traces, read straight from the files; only ID hashes are shuffled), the default wherever the corpus's files
hold whole traces or nearly; and the shuffle plan, below, for traces spread over many files.

The shuffle plan, one read and one shuffle (issue 20): the raw rows (`spark_trace_check.raw`) go, keyed by trace, to the
Python trace pass (`spark_trace_check.trace_pass`), which judges each row once and feeds the valid ones to the
engine's folds. TR-002: one shuffle of hashes first (the JVM aggregates the raw event IDs' 64-bit hashes,
`candidates_of`), the rows of repeated hashes marked for the pass, which sends their events back from its
one read (`mark_candidates`, issue 32): no second scan of the rows for TR-002. The report is assembled
by the single-process engine's own `conformance.pycheck.finish_outcome`, so the two engines' reports
(summary.json, violations.jsonl with the events involved, quarantine.jsonl) are the same on any corpus.
Progress: a bar (`spark_trace_check.progress`) or one line per phase on stderr; Spark's own logging is kept
to errors (see `session`). `haconform ingest --engine spark` (`spark_trace_check.ingest`) reads the same
raw rows and judges them with the same function as the trace pass (`raw.judge_rows`); no row is
parsed or screened in the JVM by either job.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from conformance.dataset_check import dataset_of
from conformance.driver_choice import input_events
from conformance.engine.outcome import CheckOutcome, attach_events, duplicates_among, finish_outcome, violation_key
from conformance.report import run_and_report
from model.registry import monitor_runs
from spark_trace_check import probed_units, units
from spark_trace_check.cluster import ship_code
from spark_trace_check.dataset import check_dataset
from spark_trace_check.progress import StatusBar, job_group, settle_listeners
from spark_trace_check.raw import Raw, judge_rows, read_raw
from spark_trace_check.session import build_session, client_compiler_only
from spark_trace_check.trace_pass import (
    CANDIDATE_KIND,
    HELD_KIND,
    TALLY_KIND,
    keyed,
    rule_counts,
    trace_pass,
    violation_row,
)
from traces.io import RowError, discover
from traces.schema import FIELD_NAMES, Event

DEFAULT_CAP = 100_000
PLAN = "auto"  # the plan of `check` when none is given (see `check`)
# the columns of a violation row, as both engines report it (conformance.report)
VIOLATION_COLUMNS = ("rule", "requirement", "mechanism", "trace_id", "entity", "event_ids", "explanation")
# the columns of a valid event sent back to the driver by `judged_events`
EVENT_DDL = (
    ", ".join(f"{n} {'bigint' if n in ('schema_version', 'seq', 'ts_ms') else 'string'}" for n in FIELD_NAMES)
    + ", file_rank int, line bigint"
)


def _progress(enabled: bool, t0: float, message: str) -> None:
    if enabled:
        print(f"[{time.monotonic() - t0:6.1f}s] {message}", file=sys.stderr, flush=True)


def _events_of(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    schema = pa.schema(
        [(n, pa.int64() if n in ("schema_version", "seq", "ts_ms") else pa.string()) for n in FIELD_NAMES]
        + [("file_rank", pa.int32()), ("line", pa.int64())]
    )
    for batch in batches:
        rows = []
        ranks, lines = batch.column("file_rank").to_pylist(), batch.column("line").to_pylist()
        for rank, line, (event, _) in zip(ranks, lines, judge_rows(batch), strict=True):
            if event is not None:
                row = event.to_row()
                row["attrs"] = json.dumps(row["attrs"], separators=(",", ":"))
                rows.append({**row, "file_rank": rank, "line": line})
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def judged_events(rows: DataFrame) -> list[tuple[int, int, Event]]:
    """The valid events among a few raw rows (TR-002's candidates, the violations' events), judged by the
    same functions as the pass, with their recording position, in recording order."""
    found = keyed(rows).mapInArrow(_events_of, EVENT_DDL).collect()
    out = [(r["file_rank"], r["line"], Event.from_row(r.asDict())) for r in found]
    return sorted(out, key=lambda x: (x[0], x[1]))


def fetch_events(
    raw: Raw, ids: list[str] = (), hashes: list[int] = (), with_null: bool = True
) -> list[tuple[int, int, Event]]:
    """The valid events among the raw rows whose ID is in `ids` or whose ID's hash is in `hashes` (and the
    rows without a readable ID, with `with_null`)."""
    rows = raw.rows
    spark = rows.sparkSession
    if hashes:
        wanted = spark.createDataFrame([(h,) for h in hashes], "h bigint")
        chosen = rows.join(F.broadcast(wanted), F.xxhash64("id") == wanted["h"], "leftsemi")
    else:
        wanted = spark.createDataFrame([(v,) for v in ids], "id string")
        chosen = rows.join(F.broadcast(wanted), "id", "leftsemi")
    if with_null:
        chosen = chosen.unionByName(rows.where(F.col("id").isNull()))
    return judged_events(chosen)


def candidates_of(raw: Raw) -> tuple[list[int], bool, int]:
    """TR-002's candidates from one shuffle of hashes (the JVM's aggregation of a 64-bit hash per raw event ID):
    the hashes seen on two rows or more, whether some row has no readable ID, and how many raw rows they mark."""
    hashed = F.when(F.col("id").isNotNull(), F.xxhash64("id")).alias("h")
    found = raw.rows.select(hashed).groupBy("h").count().where("count > 1 or h is null").collect()
    hashes = [r["h"] for r in found if r["h"] is not None]
    return hashes, any(r["h"] is None for r in found), sum(r["count"] for r in found)


def mark_candidates(rows: DataFrame, hashes: list[int], nulls: bool) -> DataFrame:
    """`rows` with a boolean column `wanted`: the row's ID hash is one of `hashes` (or, with `nulls`, it has
    no readable ID); the trace pass sends those rows' events back (`trace_pass.CANDIDATE_KIND`)."""
    blank = F.col("id").isNull() if nulls else F.lit(False)
    if not hashes:
        return rows.withColumn("wanted", blank)
    table = rows.sparkSession.createDataFrame([(h, True) for h in hashes], "h bigint, hit boolean")
    hashed = rows.withColumn("h", F.when(F.col("id").isNotNull(), F.xxhash64("id")))
    joined = hashed.join(F.broadcast(table), "h", "left")
    return joined.withColumn("wanted", F.coalesce(F.col("hit"), F.lit(False)) | blank).drop("h", "hit")


def _duplicates(
    raw: Raw, kept: list, hashes: list[int], nulls: bool, marked: int
) -> tuple[list[dict], dict[str, list[Event]]]:
    """TR-002 exactly, as `conformance.engine.outcome.duplicate_ids`, over the candidates' events the trace
    pass kept in its one read (`kept`, one row per marked raw row, in no order); only when the pass did not
    send every one of the `marked` rows are the raw rows scanned again for the candidates' hashes."""
    if len(kept) == marked:
        events = [(r["file_rank"], r["line"], pickle.loads(r["blob"])) for r in kept if r["blob"] is not None]
        events.sort(key=lambda x: (x[0], x[1]))
    else:
        events = fetch_events(raw, hashes=hashes, with_null=nulls)
    return duplicates_among([e for _, _, e in events])


def check(
    spark: SparkSession,
    paths: list[str],
    *,
    partitions: int = 4,
    cap: int = DEFAULT_CAP,
    progress: bool = False,
    skew_ms: int | None = None,
    plan: str | None = None,
    announce: bool = False,
) -> CheckOutcome:
    """`plan`: "units" (Spark schedules the engine's units of whole traces, `spark_trace_check.units`),
    "shuffle" (every row shuffled by trace, `spark_trace_check.trace_pass`), or "auto": units unless the
    corpus's traces are spread so that its units would read it more than `units.MAX_AMPLIFICATION` times.
    `announce`: say on stderr which plan was chosen and why. None: `PLAN` (the tests run both plans). The
    units plan runs with the driver JVM's server compiler off (`session.client_compiler_only`). Where the
    files' trace_id dictionaries tell the components and each fits one task (`probed_units.probe`), the units
    plan is one job (`probed_units.check_probed`); auto would take the units plan there (its read
    amplification is 1), so the probe decides it before any job, the server compiler off from the start."""
    plan = plan or PLAN
    if (dataset := dataset_of(paths)) is not None:  # an ingested dataset (haconform ingest): no shuffle
        return check_dataset(spark, dataset, skew_ms=skew_ms, cap=cap)
    with job_group(spark.sparkContext):
        found = discover(paths) if plan != "shuffle" else None  # one discovery for whichever units plan runs
        if found is not None and (probed := probed_units.probe(paths, found)) is not None:  # one job
            if announce:
                print(f"haconform check: spark: {probed.describe()}", file=sys.stderr, flush=True)
            with client_compiler_only(spark):
                return probed_units.check_probed(
                    spark, probed, partitions=partitions, cap=cap, skew_ms=skew_ms, progress=progress
                )
        if plan != "shuffle":
            planned = units.plan(spark, paths, partitions, found)
            chosen = plan == "units" or planned.fits()
            if announce:
                why = "" if chosen else f" > {units.MAX_AMPLIFICATION}: one shuffle of the rows by trace instead"
                print(f"haconform check: spark: {planned.describe()}{why}", file=sys.stderr, flush=True)
            if chosen:
                with client_compiler_only(spark):
                    return units.check_units(
                        spark, planned, partitions=partitions, cap=cap, skew_ms=skew_ms, progress=progress
                    )
        return _shuffled(spark, paths, partitions=partitions, cap=cap, progress=progress, skew_ms=skew_ms)


def _shuffled(
    spark: SparkSession, paths: list[str], *, partitions: int, cap: int, progress: bool, skew_ms: int | None
) -> CheckOutcome:
    with staging(spark) as stage_dir:
        return _check(spark, paths, stage_dir, partitions=partitions, cap=cap, progress=progress, skew_ms=skew_ms)


@contextmanager
def staging(spark: SparkSession) -> Iterator[str]:
    """A staging directory for one read of the input (removed after), the jobs meanwhile in `JOB_GROUP`."""
    # Spark reads the staged names as paths: keep pattern characters out. On a cluster the staging directory
    # must be visible to every worker: set HACONFORM_STAGE_DIR to a directory on shared storage.
    base = os.environ.get("HACONFORM_STAGE_DIR") or tempfile.gettempdir()
    stage_dir = tempfile.mkdtemp(prefix="haconform-stage-", dir=base if re.fullmatch(r"[\w./-]+", base) else "/tmp")
    try:
        with job_group(spark.sparkContext):
            yield stage_dir
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def _check(
    spark: SparkSession,
    paths: list[str],
    stage_dir: str,
    *,
    partitions: int,
    cap: int,
    progress: bool,
    skew_ms: int | None,
) -> CheckOutcome:
    """One shuffle of hashes, then one read and one shuffle of rows: the raw event IDs' hashes name TR-002's
    candidates, marked for the trace pass, which judges every row, folds every trace and keeps the
    candidates' events (`trace_pass.trace_pass`). Then, only when needed: the held traces judged whole,
    the violations' events fetched."""
    t0 = time.monotonic()
    raw = read_raw(spark, paths, stage_dir)
    _progress(progress, t0, f"reading {len(raw.files)} trace file(s), {len(raw.skipped)} skipped")
    partitions = partitions_for(spark, partitions, raw.rows_read)
    ship_code(spark)  # the Python workers of a real cluster import the monitors from it
    hashes, nulls, marked = candidates_of(raw)  # TR-002's candidates, before the pass that keeps their events
    rows = mark_candidates(raw.rows, hashes, nulls) if marked else raw.rows
    passed = trace_pass(rows, partitions, skew_ms)
    by_kind, by_mech, quarantine = sorted_out(passed, raw)
    _progress(
        progress, t0, f"validated {raw.rows_read} rows: {sum(by_mech.values())} checked, {len(quarantine)} quarantined"
    )
    judged = judge_held(spark, raw, by_kind, partitions, skew_ms)
    names = [name for name, _ in monitor_runs(skew_ms)]
    _progress(progress, t0, f"core rules and monitors ({', '.join(names) or 'none registered'}) done")
    violations = [violation_row(r, VIOLATION_COLUMNS) for r in judged if r["kind"] == "v"]
    counts = rule_counts(r for r in judged if r["kind"] == TALLY_KIND)
    unknown = [{"mechanism": r["mechanism"], "note": r["explanation"]} for r in judged if r["kind"] == "u"]
    kept = by_kind.get(CANDIDATE_KIND, [])
    duplicates = _duplicates(raw, kept, hashes, nulls, marked) if marked else ([], {})
    violations.sort(key=violation_key)
    for v in violations[cap:]:
        v["events"] = []
    missing = [v for v in violations[:cap] if "events" not in v]  # the pass attaches those it kept
    wanted = sorted({i for v in missing for i in v["event_ids"]})
    attach_events(missing, [e for _, _, e in fetch_events(raw, ids=wanted)] if wanted else [])
    return finish_outcome(
        engine="spark",
        files=raw.files,
        rows_read=raw.rows_read,
        rows_checked=sum(by_mech.values()),
        quarantine=quarantine,
        violations=violations,
        unknown=unknown,
        by_mechanism=by_mech,
        monitors=names,
        files_skipped=raw.skipped,
        duplicates=duplicates,
        cap=cap,
        counts=counts,
    )


def sorted_out(out: DataFrame, raw: Raw, stream: bool = False) -> tuple[dict[str, list], dict[str, int], list[dict]]:
    """The trace pass's rows collected, by kind; the valid events by mechanism; the quarantine, in order.
    `stream`: a partition at a time, the next computed meanwhile, through the driver JVM: the folds of
    incremental checking are large (555 MiB at 10^7 events; a default driver has 1 GiB of heap)."""
    by_kind: dict[str, list] = {}
    for r in out.toLocalIterator(prefetchPartitions=True) if stream else out.collect():
        by_kind.setdefault(r["kind"], []).append(r)
    by_mech: dict[str, int] = {}
    for r in by_kind.get("n", ()):
        by_mech[r["mechanism"]] = by_mech.get(r["mechanism"], 0) + r["count"]
    quarantine = [
        RowError.of(r, raw.files).row() for r in sorted(by_kind.get("q", ()), key=lambda r: (r["file_rank"], r["line"]))
    ]
    return by_kind, by_mech, quarantine


def judge_held(spark: SparkSession, raw: Raw, by_kind: dict[str, list], partitions: int, skew_ms: int | None) -> list:
    """The violation and unknown rows of every trace: those the pass folded, and the held ones (out of seq
    order, or read otherwise by the JVM) judged whole by a second pass, as the Python engine does."""
    held = sorted({r["trace_id"] for r in by_kind.get(HELD_KIND, ())})
    dropped = set(held)
    judged = [r for k in ("v", "u") for r in by_kind.get(k, ()) if r["trace_id"] not in dropped]
    judged += by_kind.get(TALLY_KIND, ())  # per task (per trace when incremental: filtered by the caller)
    if held:
        keys = sorted({r["entity"] for r in by_kind[HELD_KIND] if r["entity"] is not None} | set(held))
        misread = any(r["entity"] != r["trace_id"] for r in by_kind[HELD_KIND])
        table = spark.createDataFrame([(k,) for k in keys], "key string")
        chosen = raw.rows.join(F.broadcast(table), "key", "leftsemi")
        if any(r["entity"] is None for r in by_kind[HELD_KIND]):  # a valid row whose key the JVM could not read
            chosen = chosen.unionByName(raw.rows.where(F.col("key").isNull()))
        judged += trace_pass(chosen, 1 if misread else partitions, skew_ms, frozenset(held)).collect()
    return judged


ROWS_PER_PARTITION = 100_000


SMALL_INPUT_EVENTS = 50_000


def small_input(paths: list[str]) -> bool:
    """Whether the input is small enough for a session tuned for start-up (`build_session(small=)`), by
    `conformance.driver_choice.input_events` (an input that cannot be sized counts as large here)."""
    events = input_events(paths)
    return events is not None and events < SMALL_INPUT_EVENTS


def partitions_for(spark: SparkSession, partitions: int, rows: int) -> int:
    """Fewer shuffle partitions for small inputs: each costs a task (and a Python worker round) per stage."""
    chosen = max(1, min(partitions, -(-rows // ROWS_PER_PARTITION)))
    spark.conf.set("spark.sql.shuffle.partitions", str(chosen))
    return chosen


def run_check(args: argparse.Namespace) -> int:
    """`haconform check --engine spark`: the report frame (conformance.report) around `check`."""
    return run_session(
        args,
        lambda spark, partitions, lines: check(
            spark,
            args.paths,
            partitions=partitions,
            progress=lines,
            skew_ms=args.skew,
            plan=getattr(args, "spark_plan", None),
            announce=not args.quiet,
        ),
    )


def run_session(args: argparse.Namespace, body: Callable[[SparkSession, int, bool], CheckOutcome]) -> int:
    """A Spark session for `haconform check` (its own unless one is active; a failed task tried up to
    `--task-attempts` times, `spark_trace_check.session`), the progress bar around `body(spark, partitions,
    progress lines)` (which counts the failed task attempts retried), and the report frame; shared by
    `--state` (incremental)."""
    partitions = args.partitions or 2 * (os.cpu_count() or 2)
    quiet = bool(args.quiet)
    bar = not quiet and (bool(getattr(args, "progress", False)) or sys.stderr.isatty())

    def compute() -> CheckOutcome:
        if not quiet:
            print(f"haconform check: starting Spark ({args.master})", file=sys.stderr, flush=True)
        owned = SparkSession.getActiveSession() is None  # embedded callers (tests) keep their session
        sized = input_events(args.paths)
        estimate = sized or 0
        spark = build_session(
            args.master,
            partitions=partitions,
            small=sized is not None and sized < SMALL_INPUT_EVENTS,
            events=sized,
            attempts=getattr(args, "task_attempts", None),
        )
        sc = spark.sparkContext
        status = StatusBar(
            sc.statusTracker(), events=estimate, bar=bar, final_line=not quiet, settle=lambda: settle_listeners(sc)
        )
        try:
            with status:
                outcome = body(spark, partitions, not quiet and not bar)
                status.close(outcome.rows_checked)
                args.tasks_retried = status.retried  # summary.json's run facts (conformance.audit.cli)
                return outcome
        finally:
            if owned:
                spark.stop()

    return run_and_report(args, "spark", compute)
