"""The pure-Python trace checker: mechanism-independent rules plus every registered monitor.

This is the reference the Spark job (`spark_trace_check`) must agree with; the parity tests run both on
the same corpora. The core rules are TR-001..TR-004 and TR-006 (`spec/requirements/tr.toml`).
Events must be given in recording order (file order), which is what TR-001 is about.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence

from conformance import rulesets
from conformance.monitor import Monitor, MonitorResult, Verdict, Violation
from traces.schema import Event

CORE_RULES = {
    "seq-strictly-increasing": "TR-001",
    "event-id-unique": "TR-002",
    "recv-after-send": "TR-003",
    "node-clock-monotonic": "TR-004",
    "trace-start": "TR-006",
}


def _v(rule: str, trace: str, entity: str, ids: Iterable[str], why: str) -> Violation:
    return Violation(rule, CORE_RULES[rule], trace, entity, tuple(ids), why, "core")


def core_violations(events: Sequence[Event]) -> list[Violation]:
    """Check the mechanism-independent rules over a corpus given in recording order."""
    out: list[Violation] = []
    by_id: dict[str, list[Event]] = defaultdict(list)
    by_trace: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_id[e.event_id].append(e)
        by_trace[e.trace_id].append(e)
    for event_id, same in by_id.items():
        if len(same) > 1:
            out.append(_v("event-id-unique", same[0].trace_id, same[0].entity, (event_id,),
                          f"event ID {event_id} appears {len(same)} times"))
    for trace_id in sorted(by_trace):
        out.extend(_trace_rules(trace_id, by_trace[trace_id]))
    return out


def _trace_rules(trace_id: str, evs: list[Event]) -> list[Violation]:
    out: list[Violation] = []
    start = evs[0]
    simulated = rulesets.applies("trace-start", start)  # TR-008: imported logs skip TR-003/TR-006
    if simulated and (start.kind != "TRACE_START" or start.seq != 0):
        out.append(_v("trace-start", trace_id, start.entity, (start.event_id,),
                      f"the trace begins with {start.kind} at seq {start.seq}, not TRACE_START at seq 0"))
    for prev, cur in itertools.pairwise(evs):
        if cur.seq <= prev.seq:
            out.append(_v("seq-strictly-increasing", trace_id, cur.entity, (prev.event_id, cur.event_id),
                          f"seq {cur.seq} is recorded after seq {prev.seq}"))
    ordered = sorted(evs, key=lambda e: e.seq)
    last_by_node: dict[str, Event] = {}
    sends: dict[object, Event] = {}
    for e in ordered:
        prev = last_by_node.get(e.node)
        if prev is not None and e.ts_ms < prev.ts_ms:
            out.append(_v("node-clock-monotonic", trace_id, e.entity, (prev.event_id, e.event_id),
                          f"node {e.node} records ts {e.ts_ms} after ts {prev.ts_ms}: its clock went back "
                          f"{prev.ts_ms - e.ts_ms} ms"))
        last_by_node[e.node] = e
        if not simulated:
            continue
        if e.kind == "NET_SEND":
            sends.setdefault(e.attrs.get("wire"), e)
        elif e.kind == "NET_RECV":
            send = sends.get(e.attrs.get("wire"))
            if send is None:
                out.append(_v("recv-after-send", trace_id, e.entity, (e.event_id,),
                              f"wire message {e.attrs.get('wire')} is received by {e.node} but was never "
                              "recorded as sent before"))
            elif send.node != e.attrs.get("src"):
                out.append(_v("recv-after-send", trace_id, e.entity, (send.event_id, e.event_id),
                              f"wire message {e.attrs.get('wire')} claims sender {e.attrs.get('src')} but "
                              f"was sent by {send.node}"))
    return out


def group_for(monitor: Monitor, events: Sequence[Event]) -> list[list[Event]]:
    """Split events the way the Spark job does: by trace, and by (mechanism, entity) for entity scope."""
    groups: dict[tuple[str, ...], list[Event]] = defaultdict(list)
    for e in events:
        if monitor.scope == "trace":
            groups[(e.trace_id,)].append(e)
        elif e.mechanism == monitor.mechanism:
            groups[(e.trace_id, e.entity)].append(e)
    return [sorted(groups[k], key=lambda e: e.seq) for k in sorted(groups)]


def run_monitor(monitor: Monitor, events: Sequence[Event]) -> list[MonitorResult]:
    results = []
    for group in group_for(monitor, events):
        if monitor.scope == "trace" and not any(e.mechanism == monitor.mechanism for e in group):
            continue
        results.append(monitor.check(group))
    return results


def check_events(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> list[Violation]:
    """Core rules plus every monitor (default: all registered) over events in recording order."""
    return list(verdict(events, monitors).violations)


def verdict(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> MonitorResult:
    """Overall verdict: invalid on any violation, unknown if any monitor could not judge, else valid."""
    if monitors is None:
        from model.registry import monitors as registered

        monitors = registered()
    results = [MonitorResult.of(core_violations(events))]
    for m in monitors:
        results.extend(run_monitor(m, events))
    violations = [v for r in results for v in r.violations]
    notes = [n for r in results for n in r.notes if r.verdict is Verdict.UNKNOWN]
    return MonitorResult.of(violations, notes)
