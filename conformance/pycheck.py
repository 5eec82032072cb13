"""`haconform check --engine python`: the pure-Python reference engine, same report as the Spark job.

Meant for small corpora, for debugging a monitor, and as the parity reference of the Spark checker.
Every file under the given paths is read or listed as skipped with its reason (`traces.io.discover`);
rows are validated by the one definition of a valid row (`traces.rows`), shared with Spark. The three
counts (rows read, rows that reached the rules, rows quarantined) are taken in three places and must
reconcile (TR-005), or the run is an internal error.
"""

from __future__ import annotations

import argparse
from collections import Counter

from conformance.audit import extra_monitors
from conformance.check import core_violations, run_scope, trace_contexts
from conformance.report import CheckOutcome, count_rules, run_and_report, violation_key
from conformance.skew_monitor import SkewMonitor
from traces.io import discover, read_trace_file
from traces.schema import Event

DEFAULT_CAP = 100_000


def _monitor_runs(skew_ms: int | None) -> list:
    from model.registry import mechanisms

    runs = [(n, s.monitor()) for n, s in mechanisms().items() if s.monitor is not None]
    runs += [(n, factory()) for n, factory in extra_monitors(skew_ms)]  # imported logs (conformance.audit)
    if skew_ms is not None:
        runs.append(("skew", SkewMonitor(skew_ms)))
    return runs


def check_paths(paths: list[str], *, cap: int = DEFAULT_CAP, skew_ms: int | None = None) -> CheckOutcome:
    found = discover(paths)
    events: list[Event] = []
    quarantine: list[dict] = []
    rows_read = 0
    for tf in found.files:
        result = read_trace_file(tf)
        rows_read += result.rows_read
        events.extend(result.events)
        quarantine.extend({"file": e.file, "line": e.line, "field": e.field, "reason": e.reason} for e in result.errors)
    rows_checked = 0
    for _ in events:  # counted where the events enter the rules, not derived from the other two counts
        rows_checked += 1
    violations = [v.to_json() for v in core_violations(events)]
    unknown: list[dict] = []
    runs = _monitor_runs(skew_ms)
    contexts = trace_contexts(events)
    for scope in ("entity", "trace"):  # every monitor of a scope in one pass (conformance.check.ScopeStream)
        scoped = [(name, monitor) for name, monitor in runs if monitor.scope == scope]
        for name, _, res in run_scope(scoped, scope, events, contexts) if scoped else ():
            violations.extend(v.to_json() for v in res.violations)
            if res.verdict.value == "unknown":
                unknown.extend({"mechanism": name, "note": n} for n in res.notes)
    unknown.sort(key=lambda u: (u["mechanism"], u["note"]))
    names = [name for name, _ in runs]
    violations.sort(key=violation_key)
    by_id: dict[str, list[Event]] = {}
    for e in events:
        by_id.setdefault(e.event_id, []).append(e)
    written = violations[:cap]
    for v in written:
        v["events"] = [e.to_row() for eid in v["event_ids"] for e in by_id.get(eid, [])]
    order = {tf.name: i for i, tf in enumerate(found.files)}
    return CheckOutcome(
        engine="python",
        files=[tf.name for tf in found.files],
        rows_read=rows_read,
        rows_checked=rows_checked,
        rows_quarantined=len(quarantine),
        quarantine=sorted(quarantine, key=lambda q: (order[q["file"]], q["line"]))[:cap],
        violations_total=len(violations),
        violations=written,
        violations_by_rule=count_rules(violations),
        unknown=unknown[:cap],
        unknown_total=len(unknown),
        events_by_mechanism=dict(Counter(e.mechanism for e in events)),
        monitors=names,
        files_skipped=found.skipped,
    )


def run_check(args: argparse.Namespace) -> int:
    return run_and_report(args, "python", lambda: check_paths(args.paths, skew_ms=args.skew))
