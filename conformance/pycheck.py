"""`haconform check --engine python`: the single-process engine, same report as the Spark job.

Every file under the given paths is read or listed as skipped with its reason (`traces.io.discover`);
rows are validated by the one definition of a valid row (`traces.rows`; Parquet column-wise by
`traces.columnar`), shared with Spark. The check streams: files are indexed by trace first
(`conformance.streamplan`: rows per trace, and whether each trace is recorded in seq order), then groups of
whole traces are read and each event goes into its trace's folds as it is read (`conformance.engine.stream`:
the core rules and every monitor), so memory holds the folds' live state, not the events; a trace out of seq
order (TR-001) is held and judged whole. Violations' events are attached from a second read of a group's
files, only for a group with violations. Event-ID uniqueness (TR-002) costs 8 bytes per event: a 64-bit hash
per event; hashes seen twice are resolved exactly by a second read of the files, only when there are any.
The three counts (rows read, rows that reached the rules, rows quarantined) are taken in three places and
must reconcile (TR-005), or the run is an internal error.
"""

from __future__ import annotations

import argparse
from array import array
from collections import Counter

from conformance.dataset_check import check_dataset, dataset_of
from conformance.engine.collector import PausedCollector
from conformance.engine.stream import Router
from conformance.outcome import DEFAULT_CAP, attach_from, duplicate_ids, finish_outcome
from conformance.progress import Progress
from conformance.report import CheckOutcome, InternalError, run_and_report
from conformance.streamplan import GROUP_EVENTS, Group, plan
from model.registry import monitor_runs
from traces.dataset import id_hash, repeated_hashes
from traces.io import discover, iter_trace_file

__all__ = ["DEFAULT_CAP", "check_paths", "run_check"]


class _Reading:
    """What the single-process engine counts while it reads: rows, quarantine, events per mechanism, a hash
    per event ID (TR-002), and which files were already counted (a file holding traces of several groups is
    read once per group, counted once)."""

    def __init__(self, files: list, group_of: dict[str, int], progress: Progress | None) -> None:
        self.files, self.group_of, self.progress = files, group_of, progress
        self.counted = [False] * len(files)
        self.quarantine: list[dict] = []
        self.rows_read = self.rows_checked = 0
        self.by_mech: Counter[str] = Counter()
        self.hashes = array("Q")

    def group(self, g: int, ranks: list[int], router: Router, collector: PausedCollector) -> None:
        """Read the files of group `g` and feed its events to `router` as they are read (none is kept)."""
        group_of, by_mech, hashes, feed = self.group_of, self.by_mech, self.hashes, router.feed
        for rank in ranks:
            tf, first = self.files[rank], not self.counted[rank]
            self.counted[rank] = True
            for part in iter_trace_file(tf):
                if first:
                    self.rows_read += part.rows_read
                    self.quarantine.extend(
                        {"file": e.file, "line": e.line, "field": e.field, "reason": e.reason} for e in part.errors
                    )
                n = 0
                for e in part.events:
                    home = group_of.get(e.trace_id)
                    if home is None:
                        raise InternalError(f"{tf.name}: trace {e.trace_id!r} was missed by the trace index")
                    if home == g:  # counted where the events enter the rules, not derived from the other counts
                        n += 1
                        by_mech[e.mechanism] += 1
                        hashes.append(id_hash(e.event_id))
                        feed(e)
                self.rows_checked += n
                if self.progress is not None:
                    self.progress.advance(n)
                collector.read(part.rows_read)


def check_paths(
    paths: list[str],
    *,
    cap: int = DEFAULT_CAP,
    skew_ms: int | None = None,
    group_events: int = GROUP_EVENTS,
    progress: Progress | None = None,
) -> CheckOutcome:
    """Check a corpus group by group of whole traces, each event fed to its folds as it is read."""
    if (dataset := dataset_of(paths)) is not None:
        return check_dataset(dataset, skew_ms=skew_ms, cap=cap, progress=progress)
    found = discover(paths)
    groups, group_of = plan(found.files, group_events)
    if progress is not None:
        progress.start(sum(g.events for g in groups))
    unread = [rank for rank in range(len(found.files)) if not any(rank in g.files for g in groups)]
    runs = monitor_runs(skew_ms)
    violations: list[dict] = []
    unknown: list[dict] = []
    reading = _Reading(found.files, group_of, progress)
    with PausedCollector() as collector:  # conformance.engine.collector: collected once per group read
        for g, group in enumerate([*groups, Group(files=unread)]):
            router = Router(runs, group.streamed)
            reading.group(g, group.files, router, collector)
            held = router.held[:]  # a trace out of seq order is held whole: its events are at hand
            found_here, notes = router.finish()
            unknown.extend(notes)
            attach_from(found_here, held, [found.files[r] for r in group.files], group.traces)
            violations.extend(found_here)
    repeated = repeated_hashes(reading.hashes)  # sorts it in place
    reading.hashes = array("Q")
    duplicates = duplicate_ids(found.files, repeated) if repeated else ([], {})
    order = {tf.name: i for i, tf in enumerate(found.files)}
    return finish_outcome(
        engine="python",
        files=[tf.name for tf in found.files],
        rows_read=reading.rows_read,
        rows_checked=reading.rows_checked,
        quarantine=sorted(reading.quarantine, key=lambda q: (order[q["file"]], q["line"])),
        violations=violations,
        unknown=unknown,
        by_mechanism=dict(reading.by_mech),
        monitors=[name for name, _ in runs],
        files_skipped=found.skipped,
        duplicates=duplicates,
        cap=cap,
    )


def run_check(args: argparse.Namespace) -> int:
    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_paths(args.paths, skew_ms=args.skew, progress=progress)

    return run_and_report(args, "python", compute)
