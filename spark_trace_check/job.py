"""`haconform check`: the Spark job. Read, validate and quarantine, check core rules and monitors, report.

Progress goes to stderr one line per phase; Spark's own logging is kept to errors (see `session`).
The report (summary.json, violations.jsonl with the events involved, quarantine.jsonl) is the same as
the pure-Python engine's, so the two can be compared on any corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from conformance.dataset_check import dataset_of
from conformance.report import CheckOutcome, count_rules, run_and_report, violation_key
from model.registry import monitor_factories
from spark_trace_check.dataset import check_dataset
from spark_trace_check.load import Loaded, load
from spark_trace_check.monitors import HELD_RULE, UNKNOWN_RULE, held_violations, monitor_violations
from spark_trace_check.progress import JOB_GROUP, StatusBar
from spark_trace_check.rules import core_violations
from spark_trace_check.session import build_session
from traces.io import discover
from traces.schema import FIELD_NAMES

DEFAULT_CAP = 100_000


def _progress(enabled: bool, t0: float, message: str) -> None:
    if enabled:
        print(f"[{time.monotonic() - t0:6.1f}s] {message}", file=sys.stderr, flush=True)


def _attach_events(events: DataFrame, violations: list[dict]) -> None:
    ids = sorted({i for v in violations for i in v["event_ids"]})
    if not ids:
        return
    spark = events.sparkSession
    wanted = spark.createDataFrame([(i,) for i in ids], "event_id string")
    rows: dict[str, list[dict]] = {}
    for r in events.join(F.broadcast(wanted), "event_id").select(*FIELD_NAMES).orderBy("trace_id", "seq").collect():
        row = r.asDict()
        row["attrs"] = json.loads(row["attrs"])
        rows.setdefault(row["event_id"], []).append(row)
    for v in violations:
        v["events"] = [row for i in v["event_ids"] for row in rows.get(i, [])]


def check(
    spark: SparkSession,
    paths: list[str],
    *,
    partitions: int = 4,
    cap: int = DEFAULT_CAP,
    progress: bool = False,
    skew_ms: int | None = None,
) -> CheckOutcome:
    if (dataset := dataset_of(paths)) is not None:  # an ingested dataset (haconform ingest): no shuffle
        return check_dataset(spark, dataset, skew_ms=skew_ms, cap=cap)
    # Spark reads the staged names as paths: keep pattern characters out. On a cluster the staging directory
    # must be visible to every worker: set HACONFORM_STAGE_DIR to a directory on shared storage.
    base = os.environ.get("HACONFORM_STAGE_DIR") or tempfile.gettempdir()
    stage_dir = tempfile.mkdtemp(prefix="haconform-stage-", dir=base if re.fullmatch(r"[\w./-]+", base) else "/tmp")
    sc = spark.sparkContext
    group = sc.getLocalProperty("spark.jobGroup.id")
    sc.setLocalProperty("spark.jobGroup.id", JOB_GROUP)  # the progress bar and the tests find the jobs by it
    try:
        return _check(spark, paths, stage_dir, partitions=partitions, cap=cap, progress=progress, skew_ms=skew_ms)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", group)  # type: ignore[arg-type]
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
    t0 = time.monotonic()
    judged = load_judged(spark, paths, stage_dir, partitions)
    loaded, rows_read, by_mech, n_bad = judged.loaded, judged.rows_read, judged.by_mechanism, judged.quarantined
    _progress(progress, t0, f"reading {len(loaded.files)} trace file(s), {len(loaded.skipped)} skipped")
    n_good = sum(by_mech.values())
    events, quarantine = loaded.events, loaded.quarantine
    _progress(progress, t0, f"validated {rows_read} rows: {n_good} to check, {n_bad} quarantined")
    partitions = _partitions_for(spark, partitions, n_good)
    found = core_violations(events)  # TR-002, corpus-wide; the per-trace rules run in the trace pass
    runs = monitor_factories(skew_ms)  # the registry's one monitor list (msgtrk and skew included)
    mon, names = monitor_violations(events, partitions, runs)
    rows = [r.asDict(recursive=True) for r in found.unionByName(mon).collect()]
    held = sorted({r["trace_id"] for r in rows if r["rule"] == HELD_RULE})
    if held:  # traces recorded out of seq order: judged whole, as the Python engine judges them
        rows = [r for r in rows if r["rule"] != HELD_RULE]
        rows += [r.asDict(recursive=True) for r in held_violations(events, held, partitions, runs).collect()]
    _progress(progress, t0, f"core rules and monitors ({', '.join(names) or 'none registered'}) done")
    unknown = [r for r in rows if r["rule"] == UNKNOWN_RULE]
    violations = sorted((r for r in rows if r["rule"] != UNKNOWN_RULE), key=violation_key)
    written = violations[:cap]
    _attach_events(events, written)
    q_rows = [
        {"file": loaded.files[r["file_rank"]], "line": r["line"], "field": r["field"], "reason": r["reason"]}
        for r in (quarantine.orderBy("file_rank", "line").limit(cap).collect() if n_bad else ())
    ]
    loaded.unpersist()
    return CheckOutcome(
        engine="spark",
        files=loaded.files,
        rows_read=rows_read,
        rows_checked=n_good,
        rows_quarantined=n_bad,
        quarantine=q_rows,
        violations_total=len(violations),
        violations=written,
        violations_by_rule=count_rules(violations),
        unknown=sorted(
            ({"mechanism": r["mechanism"], "note": r["explanation"]} for r in unknown),
            key=lambda u: (u["mechanism"], u["note"]),
        )[:cap],
        unknown_total=len(unknown),
        events_by_mechanism=by_mech,
        monitors=names,
        files_skipped=loaded.skipped,
    )


@dataclass
class Judged:
    """Every row of the input read, screened and judged once (`load_judged`), with the three counts."""

    loaded: Loaded
    rows_read: int
    by_mechanism: dict[str, int]
    quarantined: int


def load_judged(spark: SparkSession, paths: list[str], stage_dir: str, partitions: int) -> Judged:
    """Read and validate (`load`), persist the screened rows, and count: the lines/rows the files hold, the
    rows the fast path accepted (by mechanism), and, after the rows it refused are judged in Python, the
    quarantined ones. Shared by `check` and `haconform ingest` (spark_trace_check.dataset)."""
    loaded = load(spark, paths, stage_dir)
    _partitions_for(spark, partitions, loaded.rows_estimate())  # the line numbering and counts shuffle too
    loaded.persist()  # every row screened once in the JVM; events and quarantine are filters of it
    # three counts taken independently: what the files hold, what reaches the rules, what is quarantined;
    # one aggregation gives the lines read, the rows the fast path accepted (by mechanism) and the others
    rows_read, by_mech, n_slow = loaded.parquet_rows, {}, 0
    for r in loaded.counts().collect():
        if r["what"] == "read":
            rows_read += r["count"]
        elif r["fast"]:
            by_mech[r["mechanism"]] = by_mech.get(r["mechanism"], 0) + r["count"]
        else:
            n_slow += r["count"]
    n_bad = 0
    slow = loaded.judge_slow(n_slow)  # only the rows the JVM could not accept reach Python, once
    if slow is not None:
        for r in slow.groupBy(F.col("field").isNull().alias("ok"), "mechanism").count().collect():
            if r["ok"]:
                by_mech[r["mechanism"]] = by_mech.get(r["mechanism"], 0) + r["count"]
            else:
                n_bad += r["count"]
    return Judged(loaded, rows_read, by_mech, n_bad)


ROWS_PER_PARTITION = 100_000


SMALL_INPUT_EVENTS = 50_000


def input_events(paths: list[str]) -> int:
    """The events under `paths` before reading them: Parquet footers' row counts, JSONL at about 100 bytes a
    line (compressed files 8 times their size). Chooses the session (`build_session(small=)`) and feeds the
    progress bar's estimate. An input that cannot be listed counts as large here; `load` reports it."""
    import pyarrow.parquet as pq

    try:
        total = 0
        for tf in discover(paths).files:
            if tf.kind == "parquet":
                total += pq.ParquetFile(tf.path).metadata.num_rows
            else:
                total += os.path.getsize(tf.path) * (8 if tf.kind == "jsonl.gz" else 1) // 100
        return total
    except Exception:  # any unreadable input: `load` names it
        return SMALL_INPUT_EVENTS


def small_input(paths: list[str]) -> bool:
    """Whether the input is small enough for a session tuned for start-up (`build_session(small=)`)."""
    return input_events(paths) < SMALL_INPUT_EVENTS


def _partitions_for(spark: SparkSession, partitions: int, rows: int) -> int:
    """Fewer shuffle partitions for small inputs: each costs a task (and a Python worker round) per stage."""
    chosen = max(1, min(partitions, -(-rows // ROWS_PER_PARTITION)))
    spark.conf.set("spark.sql.shuffle.partitions", str(chosen))
    return chosen


def run_check(args: argparse.Namespace) -> int:

    partitions = args.partitions or 2 * (os.cpu_count() or 2)
    quiet = bool(args.quiet)
    bar = not quiet and (bool(getattr(args, "progress", False)) or sys.stderr.isatty())

    def compute() -> CheckOutcome:
        if not quiet:
            print(f"haconform check: starting Spark ({args.master})", file=sys.stderr, flush=True)
        owned = SparkSession.getActiveSession() is None  # embedded callers (tests) keep their session
        estimate = input_events(args.paths)
        spark = build_session(args.master, partitions=partitions, small=estimate < SMALL_INPUT_EVENTS)
        status = StatusBar(spark.sparkContext.statusTracker(), events=estimate, bar=bar, final_line=not quiet)
        try:
            with status:
                outcome = check(
                    spark, args.paths, partitions=partitions, progress=not quiet and not bar, skew_ms=args.skew
                )
                status.close(outcome.rows_checked)
                return outcome
        finally:
            if owned:
                spark.stop()

    return run_and_report(args, "spark", compute)
