"""The Spark driver of the units plan: Spark schedules the engine's units of whole traces; nothing is shuffled
but 8 bytes per event for event-ID uniqueness (TR-002), once: one read (beside the index) and one shuffle of
hashes.

Where the corpus's files already hold whole traces (each trace in one file, or in a few files that share
it), moving every row through a shuffle by trace only to put them back together costs the JVM more than
the check (issue 20's profile: scan, shuffle, sort and Arrow conversion, and the JIT compiling them). So:
1. the files are indexed in parallel (`conformance.engine.trace_index.index_file`, one task per few files),
   hashing the event IDs they hold; one shuffle, by hash bucket, of those hashes names the hashes seen twice
   (TR-002's candidates, as the single-process engine's index does). A Parquet file whose every ID names its
   own event is not hashed (session 30): a corpus of such files, every trace in seq order, has no ID to find
   twice (`trace_index.unique_ids`); any other corpus that holds one has every file's IDs hashed again in a job
   of hashes alone (`hash_shuffle.hashes_again`), so own IDs are skipped only when the driver's look at the first
   rows of three files finds them (`hash_shuffle.own_sampled`);
2. the driver plans units of whole traces (`conformance.engine.units.plan_units`: components of files that share a
   trace; a component too large for one task is cut into chunks of traces, each reading its slice of the
   files) and packs them into tasks, largest first;
3. each task judges its units with the single-process engine's own `conformance.engine.units.judge_unit` (rows
   judged once, each event fed to its trace's folds as it is read), keeping the events of the candidates'
   hashes (`hash_for`: the same function in every task), so TR-002 is resolved exactly from the events kept
   in the one read (`conformance.engine.units.kept_duplicates`), with no read of the files again;
4. only when the index could not tell every row's event ID (`Plan.untold`) are the units' hashes shuffled
   too, and only when the kept events cannot tell (an ID the index missed, a file's candidates kept by
   several units) are the files read again for TR-002's exact events.
The report is assembled by `conformance.engine.units.finish_units`, the single-process driver's own function.

Where the files are Parquet and their trace_id dictionaries tell the components before any job, the driver
runs this plan as one job instead (`spark_trace_check.probed_units`: each component indexed and judged by one
task); this module's two jobs are for every other corpus.

`plan` says when this plan does not fit: when reading each unit's slices would read the corpus more than
`MAX_AMPLIFICATION` times (traces spread over many files), the job shuffles rows by trace instead
(`spark_trace_check.trace_pass`). An error raised in a task (an unreadable file, an internal error) comes
back as a value and is raised again in the driver with its own type, so exit codes stay right.

A task tried again (a lost Python worker, issue 35: `spark_trace_check.session`'s task attempts) counts once:
every result reaches the driver through the shuffle's output and `collect()`, never an accumulator, and a
failed attempt's output is dropped by Spark (`tests/spark/test_worker_loss.py` kills a worker mid-task).
"""

from __future__ import annotations

import heapq
import math
import os
import re
import sys
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from conformance.driver_choice import input_events
from conformance.engine.outcome import CheckOutcome
from conformance.engine.statedir import stable_hash
from conformance.engine.trace_index import GROUP_EVENTS, index_file, unique_ids
from conformance.engine.units import (
    SKIP_OWN_IDS,
    Index,
    Unit,
    UnitResult,
    finish_units,
    judge_unit,
    kept_duplicates,
    plan_units,
    read_amplification,
)
from model.registry import monitor_runs
from spark_trace_check.cluster import ship_code
from spark_trace_check.faults import die_once, kill_marker
from spark_trace_check.hash_shuffle import (
    _bucket_bits,
    _buckets,
    _guarded,
    _raise_errors,
    _shuffled,
    exact_duplicates,
    hashes_again,
    own_sampled,
)
from spark_trace_check.progress import PLAN_GROUP, job_group
from traces.dataset import id_hash
from traces.io import Discovery, TraceFile, discover

MAX_AMPLIFICATION = 3.0  # rows scanned over rows held, above which the shuffle by trace costs less
UNITS_PER_TASK_SLOT = 4  # units per core in the bins (`_bins`): enough for the last tasks to balance the load
MAX_TASKS = 64  # tasks of the units job when there are units enough: finer balance and progress
BUDGET_SPLITS = (1, 2, 4, 8, 16)  # budgets tried (`choose_units`): the events over k times the task slots
FIXED_BUDGET: int | None = None  # a unit budget that overrides the choice (tests: 1, every trace a unit)
SLICE_COST = 0.05  # a row a unit reads but does not judge (another unit's slice), in events judged
TASK_COST = 5_000  # a task's fixed cost in events judged: scheduling, the worker's collection after it


@dataclass
class Plan:
    found: Discovery
    index: list[Index]
    units: list[Unit]
    amplification: float
    events: int
    repeated: set[int] = field(default_factory=set)  # ID hashes the index found more than once (TR-002)
    untold: int = 0  # rows whose event ID the index could not tell (then the units' hashes are shuffled too)

    def fits(self) -> bool:
        return self.amplification <= MAX_AMPLIFICATION

    def describe(self) -> str:
        return (
            f"{len(self.units)} unit(s) of whole traces over {len(self.found.files)} file(s), read amplification "
            f"{self.amplification:.2f}"
        )


def task_slots(sc) -> int:
    """How many tasks run at once: the N of `local[N]` (`local[*]`: this machine's cores); on a cluster the
    slots of the executors registered so far (the scheduler's own count), or, before any has registered,
    the default parallelism (the job sets it from `--partitions`)."""
    found = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\d+)?\])?", sc.master)
    if found is not None:
        n = found.group(1)
        return (os.cpu_count() or 1) if n == "*" else int(n or 1)
    jsc = sc._jsc.sc()
    slots = jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile())
    return slots if slots > 0 else max(1, sc.defaultParallelism)


def _index_task(hash_of: Callable[[str], int], bits: int, skip_own: bool):
    """Index each file (`index_file`), hashing the event IDs it can tell (none when every row's ID names its own
    event, `skip_own`): (-1, (rank, index, rows whose ID it could not tell)), then the hashes by bucket."""

    def run(items: Iterator[tuple[int, TraceFile]]) -> Iterator[Any]:
        for rank, tf in items:
            entry = index_file(tf, hash_of=hash_of, skip_own=skip_own)
            yield -1, (rank, entry._replace(ids=array("Q")), 0 if entry.own else entry.rows - len(entry.ids))
            yield from _buckets(entry.ids, bits)

    return run


def plan(spark: SparkSession, paths: list[str], partitions: int, found: Discovery | None = None) -> Plan:
    """Index the files in parallel, their event IDs' hashes shuffled by bucket for those seen twice (TR-002's
    candidates, kept by the units as they are judged), and plan the units (`choose_units`: the budget whose
    tasks end first). `found`: the corpus's discovery when the caller has it."""
    found = discover(paths) if found is None else found
    sc = spark.sparkContext
    ship_code(spark)  # the Python workers of a real cluster import the engine from it, from the index job on
    cores = task_slots(sc)
    index: list[Index] = []
    repeated: set[int] = set()
    untold = 0
    if found.files:
        slices = max(1, min(len(found.files), 2 * partitions))
        bits = _bucket_bits(cores, input_events(paths) or 0)
        with job_group(sc, PLAN_GROUP):
            files = sc.parallelize(list(enumerate(found.files)), slices)
            hash_of = hash_for(sc)
            task = _index_task(hash_of, bits, SKIP_OWN_IDS and own_sampled(found.files))
            got, repeated = _shuffled(files.mapPartitions(_guarded(task)), bits)
        index = [i for _, i, _ in sorted(got, key=lambda r: r[0])]
        untold = sum(n for _, _, n in got)
        if any(entry.own for entry in index) and not unique_ids(index):  # the own files' IDs must meet the others'
            ranks = [[rank] for rank in range(len(index))]
            repeated, _ = hashes_again(sc, found.files, ranks, bits, hash_of, partitions)
            index = [entry._replace(own=False) for entry in index]
    events = sum(entry.rows for entry in index)
    units = choose_units(index, events, cores)
    return Plan(found, index, units, read_amplification(index, units), events, repeated, untold)


def makespan(costs: list[float], slots: int) -> float:
    """The time the last of `slots` cores finishes when tasks of these costs are started largest first, each
    on the first core free (what Spark does with the bins `_bins` orders by load)."""
    loads = [0.0] * max(1, slots)
    for cost in sorted(costs, reverse=True):
        heapq.heapreplace(loads, loads[0] + cost)
    return max(loads)


def unit_cost(unit: Unit, rows: list[int]) -> float:
    """A unit's cost in events judged: its events, the rows of its files it reads but leaves to other units'
    slices (`SLICE_COST` each: a Parquet batch decoded and filtered), and a task's fixed cost."""
    read = sum(rows[r] for r in unit.files)
    return unit.events + SLICE_COST * max(0, read - unit.events) + TASK_COST


def choose_units(index: list[Index], events: int, slots: int) -> list[Unit]:
    """The units of the budget, among `GROUP_EVENTS` and `BUDGET_SPLITS` (the events over k times the task
    slots, at most `GROUP_EVENTS`), whose tasks end first on `slots` cores (`makespan` of `unit_cost`; a tie goes to the
    larger budget). Issue 32: a 10^7-event corpus of 200k-event files planned with one budget (500k) was 25
    units of two files, 13 on one core and 12 on the other; units of one file end together. Slicing a file
    among units is chosen only when the balance pays for the rows read again (a 10^6 corpus of 5 files)."""
    if FIXED_BUDGET is not None:
        return plan_units(index, FIXED_BUDGET)
    rows = [entry.rows for entry in index]
    best: tuple[float, list[Unit]] | None = None
    tried: set[int] = set()
    for k in (0, *BUDGET_SPLITS):  # 0: the single-process engine's budget
        budget = max(1, min(GROUP_EVENTS, math.ceil(events / (k * slots)) if k else GROUP_EVENTS))
        if budget in tried:
            continue
        tried.add(budget)
        units = plan_units(index, budget)
        span = makespan([unit_cost(u, rows) for u in units], slots)
        if best is None or span < best[0]:
            best = (span, units)
    return best[1] if best is not None else []


def _say(enabled: bool, t0: float, message: str) -> None:
    if enabled:
        print(f"[{time.monotonic() - t0:6.1f}s] {message}", file=sys.stderr, flush=True)


def _bins(units: list[Unit], slots: int) -> list[list[Unit]]:
    """Units packed into at most `slots` tasks, largest first, each to the least loaded (LPT); the tasks
    ordered by load, largest first, so Spark starts them first."""
    bins: list[tuple[int, int, list[Unit]]] = [(0, i, []) for i in range(max(1, min(slots, len(units))))]
    for unit in sorted(units, key=lambda u: -u.events):
        load, i, held = min(bins)
        held.append(unit)
        bins[bins.index((load, i, held))] = (load + max(1, unit.events), i, held)
    return [held for _, _, held in sorted(bins, key=lambda b: -b[0]) if held]


def hash_for(sc) -> Callable[[str], int]:
    """The event-ID hash of the tasks: Python's own (`id_hash`, a third of the cost) when every worker is
    given the same PYTHONHASHSEED (pyspark gives its workers the driver's, or 0), else `stable_hash`."""
    seed = sc.environment.get("PYTHONHASHSEED")
    return id_hash if seed is not None and seed.isdigit() else stable_hash


def _units_task(
    files: list[TraceFile],
    skew_ms: int | None,
    bits: int,
    hash_of: Callable[[str], int],
    candidates: set[int] | None,
    shuffle: bool,
):
    """Judge each unit (`judge_unit`, keeping the events of the ID hashes in `candidates`); with `shuffle`,
    its event-ID hashes by bucket after its result."""
    marker = kill_marker()  # test-only (spark_trace_check.faults): None in any real check

    def run(items: Iterator[list[Unit]]) -> Iterator[Any]:
        runs = monitor_runs(skew_ms)
        first = marker is not None
        for units in items:
            for unit in units:
                result = judge_unit(files, unit, runs, hash_of, candidates=candidates)
                hashes, result.hashes = result.hashes, None  # type: ignore[assignment]
                yield -1, result
                if shuffle:
                    yield from _buckets(hashes, bits)
                if first:  # one unit judged and handed on: a retry must not count it twice
                    first = False
                    die_once(marker)

    return run


def check_units(
    spark: SparkSession,
    planned: Plan,
    *,
    partitions: int,
    cap: int,
    skew_ms: int | None = None,
    progress: bool = False,
) -> CheckOutcome:
    """Judge the planned units in Spark tasks (see the module) and assemble the report; `progress`: a line
    per phase on stderr (the same lines as the shuffle plan's)."""
    t0 = time.monotonic()
    sc = spark.sparkContext
    files = planned.found.files
    ship_code(spark)  # the Python workers of a real cluster import the monitors from it
    cores = task_slots(sc)
    bins = _bins(planned.units, max(UNITS_PER_TASK_SLOT * cores, MAX_TASKS))
    bits = _bucket_bits(cores, planned.events)
    hash_of = hash_for(sc)
    results: list[UnitResult] = []
    repeated: set[int] | None = None  # None: the index told every row's event ID, its candidates are all
    shuffle = planned.untold > 0
    if bins:
        task = _units_task(files, skew_ms, bits, hash_of, planned.repeated or None, shuffle)
        judged = sc.parallelize(bins, len(bins)).mapPartitions(_guarded(task))
        if shuffle:
            results, repeated = _shuffled(judged, bits)
        else:
            got = judged.collect()
            _raise_errors(got)
            results = [value for _, value in got]
    say_read(progress, t0, planned.found, results)
    duplicates = kept_duplicates(results, repeated, planned.repeated)
    if duplicates is None:  # the kept events cannot tell: the files read again for the repeated hashes
        again = planned.repeated if repeated is None else repeated
        duplicates = exact_duplicates(sc, files, again, hash_of, partitions)
    return finish_job(planned.found, planned.index, results, duplicates, skew_ms=skew_ms, cap=cap, say=(progress, t0))


def say_read(progress: bool, t0: float, found: Discovery, results: list[UnitResult]) -> None:
    """A units job's progress lines once its units are judged (the shuffle plan's words)."""
    _say(progress, t0, f"reading {len(found.files)} trace file(s), {len(found.skipped)} skipped")
    checked = sum(r.rows_checked for r in results)
    quarantined = sum(len(r.quarantine) for r in results)
    _say(progress, t0, f"validated {checked + quarantined} rows: {checked} checked, {quarantined} quarantined")


def finish_job(
    found: Discovery,
    index: list[Index],
    results: list[UnitResult],
    duplicates: tuple[list[dict], dict],
    *,
    skew_ms: int | None,
    cap: int,
    say: tuple[bool, float],
) -> CheckOutcome:
    """The report of a units job (`finish_units`, the single-process driver's), after its last progress line."""
    names = [name for name, _ in monitor_runs(skew_ms)]
    _say(*say, f"core rules and monitors ({', '.join(names) or 'none registered'}) done")
    return finish_units(found, index, results, names, duplicates, engine="spark", cap=cap)
