"""`haconform check --engine python`: the single-process engine, same report as the Spark job.

Every file under the given paths is read or listed as skipped with its reason (`traces.io.discover`);
rows are validated by the one definition of a valid row (`traces.rows`; Parquet column-wise by
`traces.columnar`), shared with Spark. The check streams: files are indexed by trace first
(`conformance.trace_index`: rows per trace, and whether each trace is recorded in seq order), then units of
whole traces (`conformance.groups`, the same units and the same judging as the Spark driver's
`spark_trace_check.units`) are read one after another and each event goes into its trace's folds as it is
read (`conformance.engine.stream`: the core rules and every monitor), so memory holds the folds' live state,
not the events; a trace out of seq order (TR-001) is held and judged whole. Violations' events are attached
from a second read of a unit's files, only for a unit with violations. Event-ID uniqueness (TR-002) costs
8 bytes per event: a 64-bit hash per event; hashes seen twice are resolved exactly by a second read of the
files, only when there are any. The counts must reconcile (TR-005): rows read, rows that reached the rules
and rows quarantined, and every file's rows against what its units read, or the run is an internal error.
"""

from __future__ import annotations

import argparse
from array import array

from conformance.dataset_check import check_dataset, dataset_of
from conformance.groups import finish_units, judge_unit, plan_units
from conformance.outcome import DEFAULT_CAP, duplicate_ids
from conformance.progress import Progress
from conformance.report import CheckOutcome, run_and_report
from conformance.trace_index import GROUP_EVENTS, index_file
from model.registry import monitor_runs
from traces.dataset import id_hash, repeated_hashes
from traces.io import discover

__all__ = ["DEFAULT_CAP", "check_paths", "run_check"]


def check_paths(
    paths: list[str],
    *,
    cap: int = DEFAULT_CAP,
    skew_ms: int | None = None,
    group_events: int = GROUP_EVENTS,
    progress: Progress | None = None,
) -> CheckOutcome:
    """Check a corpus unit by unit of whole traces (`conformance.groups`), each event fed to its folds as it
    is read; `group_events` is the units' budget (the events whose folds are live at once)."""
    if (dataset := dataset_of(paths)) is not None:
        return check_dataset(dataset, skew_ms=skew_ms, cap=cap, progress=progress)
    found = discover(paths)
    index = [index_file(tf) for tf in found.files]
    units = plan_units(index, group_events)
    if progress is not None:
        progress.start(sum(u.events for u in units))
    runs = monitor_runs(skew_ms)
    advance = progress.advance if progress is not None else None
    results = [judge_unit(found.files, unit, runs, id_hash, advance) for unit in units]
    hashes = array("Q")
    for r in results:
        hashes.extend(r.hashes)
        r.hashes = array("Q")
    repeated = repeated_hashes(hashes)  # sorts it in place
    del hashes
    duplicates = duplicate_ids(found.files, repeated) if repeated else ([], {})
    return finish_units(found, index, results, [name for name, _ in runs], duplicates, engine="python", cap=cap)


def run_check(args: argparse.Namespace) -> int:
    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_paths(args.paths, skew_ms=args.skew, progress=progress)

    return run_and_report(args, "python", compute)
