"""`haconform check --engine python`: the pure-Python reference engine, same report as the Spark job.

Meant for small corpora, for debugging a monitor, and as the parity reference of the Spark checker.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from conformance.audit import extra_monitors
from conformance.check import core_violations, run_monitor, trace_contexts
from conformance.report import EXIT_UNUSABLE, CheckOutcome, count_rules, violation_key, write_outcome
from conformance.skew_monitor import SkewMonitor
from traces.io import TraceFileError, expand_paths, read_events
from traces.schema import Event

DEFAULT_CAP = 100_000


def check_paths(paths: list[str], *, cap: int = DEFAULT_CAP, skew_ms: int | None = None) -> CheckOutcome:
    from model.registry import mechanisms

    files = [str(p.resolve()) for p in expand_paths(paths)]
    if not files:
        raise TraceFileError(f"no trace files (.jsonl, .ndjson, .parquet) under {', '.join(paths)}")
    events: list[Event] = []
    quarantine: list[dict] = []
    rows_read = 0
    for f in files:
        result = read_events(Path(f))
        rows_read += result.rows_read
        events.extend(result.events)
        quarantine.extend({"file": e.file, "line": e.line, "field": e.field, "reason": e.reason}
                          for e in result.errors)
    violations = [v.to_json() for v in core_violations(events)]
    unknown: list[dict] = []
    names = []
    runs = [(n, s.monitor()) for n, s in mechanisms().items() if s.monitor is not None]
    runs += [(n, factory()) for n, factory in extra_monitors(skew_ms)]  # imported logs (conformance.audit)
    if skew_ms is not None:
        runs.append(("skew", SkewMonitor(skew_ms)))
    contexts = trace_contexts(events)
    for name, monitor in runs:
        names.append(name)
        for res in run_monitor(monitor, events, contexts):
            violations.extend(v.to_json() for v in res.violations)
            if res.verdict.value == "unknown":
                unknown.extend({"mechanism": name, "note": n} for n in res.notes)
    violations.sort(key=violation_key)
    by_id: dict[str, list[Event]] = {}
    for e in events:
        by_id.setdefault(e.event_id, []).append(e)
    written = violations[:cap]
    for v in written:
        v["events"] = [e.to_row() for eid in v["event_ids"] for e in by_id.get(eid, [])]
    return CheckOutcome(
        engine="python", files=files, rows_read=rows_read, rows_quarantined=len(quarantine),
        quarantine=sorted(quarantine, key=lambda q: (q["file"], q["line"]))[:cap],
        violations_total=len(violations), violations=written, violations_by_rule=count_rules(violations),
        unknown=unknown[:cap], unknown_total=len(unknown),
        events_by_mechanism=dict(Counter(e.mechanism for e in events)), monitors=names,
    )


def run_check(args: argparse.Namespace) -> int:
    try:
        outcome = check_paths(args.paths, skew_ms=args.skew)
    except TraceFileError as exc:
        print(f"haconform check: input unusable: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    return write_outcome(outcome, args.out, strict=getattr(args, "strict", False))
