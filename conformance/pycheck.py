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
from collections.abc import Callable

from conformance.audit import extra_monitors
from conformance.check import core_violations, run_scope, trace_contexts, trace_rules
from conformance.engine.collector import PausedCollector
from conformance.engine.stream import Router
from conformance.progress import Progress
from conformance.report import CheckOutcome, InternalError, count_rules, run_and_report, violation_key
from conformance.skew_monitor import SkewMonitor
from conformance.streamplan import GROUP_EVENTS, Group, plan
from traces.dataset import repeated_hashes
from traces.io import discover, iter_trace_file
from traces.schema import Event

DEFAULT_CAP = 100_000


def monitor_runs(skew_ms: int | None) -> list:
    from model.registry import mechanisms

    runs = [(n, s.monitor()) for n, s in mechanisms().items() if s.monitor is not None]
    runs += [(n, factory()) for n, factory in extra_monitors(skew_ms)]  # imported logs (conformance.audit)
    if skew_ms is not None:
        runs.append(("skew", SkewMonitor(skew_ms)))
    return runs


def violations_of(events: list[Event], runs: list, unknown: list[dict]) -> list[dict]:
    """Core rules of whole traces (not event-ID uniqueness) and every monitor, over one group."""
    by_trace: dict[str, list[Event]] = {}
    for e in events:
        by_trace.setdefault(e.trace_id, []).append(e)
    found = [v.to_json() for t in sorted(by_trace) for v in trace_rules(t, by_trace[t])]
    contexts = trace_contexts(events)
    for scope in ("entity", "trace"):  # every monitor of a scope in one pass (conformance.check.ScopeStream)
        scoped = [(name, monitor) for name, monitor in runs if monitor.scope == scope]
        for name, _, res in run_scope(scoped, scope, events, contexts) if scoped else ():
            found.extend(v.to_json() for v in res.violations)
            if res.verdict.value == "unknown":
                unknown.extend({"mechanism": name, "note": n} for n in res.notes)
    return found


def attach_events(violations: list[dict], events: list[Event]) -> None:
    wanted = {i for v in violations for i in v["event_ids"]}
    rows: dict[str, list[dict]] = {}
    for e in events:
        if e.event_id in wanted:
            rows.setdefault(e.event_id, []).append(e.to_row())
    for v in violations:
        v["events"] = [row for i in v["event_ids"] for row in rows.get(i, [])]


def attach_from(violations: list[dict], held: list[Event], files: list, traces: set[str]) -> None:
    """Attach each violation's events: from the held events when they hold them all, else by reading the
    group's files again, only for a group with violations (streamed events are not kept)."""
    if not violations:
        return
    wanted = {i for v in violations for i in v["event_ids"]}
    if wanted <= {e.event_id for e in held}:
        attach_events(violations, held)
        return
    chosen: list[Event] = []
    for tf in files:
        for part in iter_trace_file(tf):
            chosen.extend(e for e in part.events if e.event_id in wanted and e.trace_id in traces)
    attach_events(violations, chosen)


def _id_hash(event_id: str) -> int:
    return hash(event_id) & 0xFFFF_FFFF_FFFF_FFFF


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
                        hashes.append(_id_hash(e.event_id))
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
    from conformance.dataset_check import check_dataset, dataset_of  # an ingested dataset (haconform ingest)

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
            found_here, notes = router.finish(lambda evs, unknown_: violations_of(evs, runs, unknown_))
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


def finish_outcome(
    *,
    engine: str,
    files: list[str],
    rows_read: int,
    rows_checked: int,
    quarantine: list[dict],
    violations: list[dict],
    unknown: list[dict],
    by_mechanism: dict[str, int],
    monitors: list[str],
    files_skipped: list[dict[str, str]],
    duplicates: tuple[list[dict], dict[str, list[Event]]],
    cap: int,
) -> CheckOutcome:
    """The report of a check (a corpus or an ingested dataset): TR-002 violations added, and a violation whose
    event ID is used elsewhere too gets that ID's events from the whole corpus in recording order; violations
    and notes in report order; lists cut at `cap` (totals are counted before the cut)."""
    dup_violations, same = duplicates
    for v in violations:
        if any(i in same for i in v["event_ids"]):
            v["events"] = [e.to_row() for i in v["event_ids"] for e in same.get(i, [])] or v["events"]
    violations.extend(dup_violations)
    unknown.sort(key=lambda u: (u["mechanism"], u["note"]))
    violations.sort(key=violation_key)
    return CheckOutcome(
        engine=engine,
        files=files,
        rows_read=rows_read,
        rows_checked=rows_checked,
        rows_quarantined=len(quarantine),
        quarantine=quarantine[:cap],
        violations_total=len(violations),
        violations=violations[:cap],
        violations_by_rule=count_rules(violations),
        unknown=unknown[:cap],
        unknown_total=len(unknown),
        events_by_mechanism=by_mechanism,
        monitors=monitors,
        files_skipped=files_skipped,
    )


def duplicate_ids(
    files: list, repeated: set[int], hash_of: Callable[[str], int] = _id_hash
) -> tuple[list[dict], dict[str, list[Event]]]:
    """TR-002 exactly: a second read keeps only the events whose ID hash (by `hash_of`, the function that
    made the hashes) was seen twice, in recording order."""
    same: dict[str, list[Event]] = {}
    for tf in files:
        for part in iter_trace_file(tf):
            for e in part.events:
                if hash_of(e.event_id) in repeated:
                    same.setdefault(e.event_id, []).append(e)
    same = {i: evs for i, evs in same.items() if len(evs) > 1}
    dups = [e for evs in same.values() for e in evs]
    out = [v.to_json() for v in core_violations(dups) if v.rule == "event-id-unique"]
    attach_events(out, dups)
    return out, same


def run_check(args: argparse.Namespace) -> int:
    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_paths(args.paths, skew_ms=args.skew, progress=progress)

    return run_and_report(args, "python", compute)
