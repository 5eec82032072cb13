"""The Spark units plan in one job, where the files' own dictionaries tell which files share a trace.

The units plan (`spark_trace_check.units`) runs two jobs: the files are indexed in parallel, then the
units planned from that index are judged, each file read by each job. Where a corpus's files are Parquet,
the driver can tell which files share a trace before either job: the trace names of every file, read
from its `trace_id` dictionaries (`conformance.engine.trace_probe`, 0.39 CPU s at 10^7 events against
4.25 for the index), make the components (`conformance.engine.units.components`). When every component
holds at most `ONCE_BUDGET` rows (the footers say), each is handed whole to one task, which indexes its
files and judges them (`conformance.engine.units.judge_component`): one job over the corpus, its
tasks balanced by the footers' row counts, and one shuffle of event-ID hashes (TR-002).

A component whose every ID names its own event, each trace in seq order (`conformance.engine.units.index_files`,
session 30), hands on no hash: none of its IDs repeats within it, and an own ID of another component names
another trace. A corpus of such components shuffles no hash at all. When some components are so and others not,
an ID of the others could spell an own one: a job of hashes alone (`hash_shuffle.hashes_again`, each file's
`event_id` column) then gives TR-002's repeated hashes over every file. So the tasks skip own IDs only when the
driver's look at the first rows of three files finds them own (`hash_shuffle.own_sampled`); otherwise they hash
every ID as before.

What the one job gives up is the index's candidates: the hashes seen twice are known only after every
component is judged, so the tasks keep no candidate's events. A corpus with a repeated event ID has the
files of the components that hold one read again for the events of the repeated hashes
(`hash_shuffle.exact_duplicates`, as the units plan does when its kept events cannot tell: the shuffle's hashes
are tagged with their component, so the reduce names the components); a clean corpus is read once.

Any file the probe cannot answer for (JSON Lines, a column stored other than as strings), or a component
larger than the budget, and `probe` returns None: the caller takes the two-job plan. The index the tasks
return is checked against the probe (`_confirm`): a trace in a file the probe did not name there would mean
two files judged apart that share a trace, an internal error (exit 3), never a verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from conformance.engine.driver import InternalError
from conformance.engine.outcome import CheckOutcome
from conformance.engine.trace_index import GROUP_EVENTS
from conformance.engine.trace_probe import probe_traces
from conformance.engine.units import (
    SKIP_OWN_IDS,
    Index,
    Unit,
    UnitResult,
    components,
    judge_component,
    kept_duplicates,
)
from model.registry import monitor_runs
from spark_trace_check.cluster import ship_code
from spark_trace_check.faults import die_once, kill_marker
from spark_trace_check.hash_shuffle import (
    _bucket_bits,
    _buckets,
    _guarded,
    _shuffled,
    exact_duplicates,
    hashes_again,
    own_sampled,
)
from spark_trace_check.units import (
    MAX_TASKS,
    UNITS_PER_TASK_SLOT,
    _bins,
    finish_job,
    hash_for,
    say_read,
    task_slots,
)
from traces.io import Discovery, discover

ONCE_BUDGET = GROUP_EVENTS  # rows of a component one task reads whole (memory: the folds of one unit)


@dataclass
class Probed:
    """A corpus whose components are known before any row is read: the files, each file's trace names (from
    the probe: never fewer than its rows hold), the rows each footer gives, and the components."""

    found: Discovery
    traces: list[frozenset[str]]
    rows: list[int]
    groups: list[list[int]]

    def describe(self) -> str:
        return (
            f"{len(self.groups)} component(s) of whole traces over {len(self.found.files)} file(s), told by their "
            "trace_id dictionaries: indexed and judged in one job"
        )


def _footer_rows(found: Discovery) -> list[int] | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return [pq.read_metadata(tf.path).num_rows for tf in found.files]
    except (OSError, pa.ArrowException):  # the index's read says what is wrong with the file
        return None


def probe(paths: list[str], found: Discovery | None = None) -> Probed | None:
    """The corpus's components from its files' dictionaries (see the module), or None when this plan does not
    apply: no file, a file the probe cannot answer for, or a component of more than `ONCE_BUDGET` rows. `found`:
    the corpus's discovery when the caller has it (`job.check` hands the same one to the two-job plan)."""
    found = discover(paths) if found is None else found
    if not found.files:
        return None
    traces = probe_traces(found.files)
    rows = _footer_rows(found) if traces is not None else None
    if traces is None or rows is None:
        return None
    groups = components(traces)
    if any(sum(rows[r] for r in group) > ONCE_BUDGET for group in groups):
        return None
    return Probed(found, traces, rows, groups)


def _task(files: list, skew_ms: int | None, bits: int, hash_of: Callable[[str], int], skip_own: bool):
    """Judge each component (`judge_component`): (-1, (ranks, index, results)), then its hashes by bucket (none
    for a component whose IDs are its own and in order)."""
    marker = kill_marker()  # test-only (spark_trace_check.faults): None in any real check

    def run(items: Iterator[list[Unit]]) -> Iterator[Any]:
        runs = monitor_runs(skew_ms)
        first = marker is not None
        for work in items:
            for component in work:
                index, results, hashes = judge_component(files, component.files, runs, hash_of, skip_own)
                yield -1, (component.files, index, results)
                yield from _buckets(hashes, bits, component.files[0])  # tagged: the component's first file
                if first:  # one component judged and handed on: a retry must not count it twice
                    first = False
                    die_once(marker)

    return run


def _confirm(probed: Probed, index: list[Index]) -> None:
    """Every trace the index counts in a file is one the probe named there (else two files that share a trace
    were judged apart: our fault, exit 3)."""
    for rank, entry in enumerate(index):
        missed = [t for t in entry.counts if t not in probed.traces[rank]]
        if missed:
            raise InternalError(
                f"{probed.found.files[rank].name}: trace {missed[0]!r} is in the file but not in what the probe of "
                "its trace_id dictionaries named"
            )


def check_probed(
    spark: SparkSession,
    probed: Probed,
    *,
    partitions: int,
    cap: int,
    skew_ms: int | None = None,
    progress: bool = False,
) -> CheckOutcome:
    """Index and judge every component in one job (see the module) and assemble the report; `progress`: the
    units plan's lines on stderr."""
    t0 = time.monotonic()
    sc = spark.sparkContext
    files = probed.found.files
    ship_code(spark)  # the Python workers of a real cluster import the engine from it
    cores = task_slots(sc)
    bits = _bucket_bits(cores, sum(probed.rows))
    hash_of = hash_for(sc)
    work = [Unit(files=group, events=sum(probed.rows[r] for r in group)) for group in probed.groups]
    bins = _bins(work, max(UNITS_PER_TASK_SLOT * cores, MAX_TASKS))
    task = _task(files, skew_ms, bits, hash_of, SKIP_OWN_IDS and own_sampled(files))
    judged = sc.parallelize(bins, len(bins)).mapPartitions(_guarded(task))
    holders: set[int] = set()  # the first files of the components that hold a repeated hash
    got, repeated = _shuffled(judged, bits, holders)
    index: list[Index | None] = [None] * len(files)
    results: list[UnitResult] = []
    for ranks, entries, found in got:
        for rank, entry in zip(ranks, entries, strict=True):
            index[rank] = entry
        results.extend(found)
    if any(entry is None for entry in index):
        raise InternalError("a component's result did not come back from its task")
    _confirm(probed, index)  # type: ignore[arg-type]
    own = [all(index[r].own for r in group) for group in probed.groups]  # type: ignore[union-attr]
    if any(own) and not all(own):  # the other IDs may spell an own one: every file's IDs meet (`hashes_again`)
        repeated, holders = hashes_again(sc, files, probed.groups, bits, hash_of, partitions)
    say_read(progress, t0, probed.found, results)
    duplicates = kept_duplicates(results, repeated, set())  # no candidate kept: a repeated hash reads again
    if duplicates is None:  # only the components that hold one
        again = [r for group in probed.groups if group[0] in holders for r in group]
        duplicates = exact_duplicates(sc, files, repeated, hash_of, partitions, again)
    return finish_job(probed.found, index, results, duplicates, skew_ms=skew_ms, cap=cap, say=(progress, t0))  # type: ignore[arg-type]
