"""The pure-Python trace checker: mechanism-independent rules plus every registered monitor.

This is the reference the Spark job (`spark_trace_check`) must agree with; the parity tests run both on
the same corpora. The core rules are TR-001..TR-004 and TR-006 (`spec/requirements/tr.toml`).
Events must be given in recording order (file order), which is what TR-001 is about.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter

from conformance.engine import rulesets
from conformance.engine.core_fold import CORE_RULES, core_violation  # noqa: F401 (CORE_RULES: re-exported)
from conformance.engine.folds import GroupFolds, start_fold
from model.registry import monitors as registered
from traces.schema import Event, is_context_kind
from traces.verdict import Monitor, MonitorResult, Verdict, Violation


def _v(rule: str, trace: str, entity: str, ids: Iterable[str], why: str) -> Violation:
    return core_violation(rule, trace, entity, tuple(ids), why)


def core_violations(events: Sequence[Event]) -> list[Violation]:
    """Check the mechanism-independent rules over a corpus given in recording order."""
    out = duplicate_id_violations(events)
    by_trace: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_trace[e.trace_id].append(e)
    for trace_id in sorted(by_trace):
        out.extend(trace_rules(trace_id, by_trace[trace_id]))
    return out


def duplicate_id_violations(events: Sequence[Event]) -> list[Violation]:
    """TR-002 over events in recording order: one violation per event ID used more than once."""
    out: list[Violation] = []
    by_id: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_id[e.event_id].append(e)
    for event_id, same in by_id.items():
        if len(same) > 1:
            out.append(
                _v(
                    "event-id-unique",
                    same[0].trace_id,
                    same[0].entity,
                    (event_id,),
                    f"event ID {event_id} appears {len(same)} times",
                )
            )
    return out


def trace_rules(trace_id: str, evs: list[Event]) -> list[Violation]:
    out: list[Violation] = []
    start = evs[0]
    simulated = rulesets.applies("trace-start", start)  # TR-008: imported logs skip TR-003/TR-006
    if simulated and (start.kind != "TRACE_START" or start.seq != 0):
        out.append(
            _v(
                "trace-start",
                trace_id,
                start.entity,
                (start.event_id,),
                f"the trace begins with {start.kind} at seq {start.seq}, not TRACE_START at seq 0",
            )
        )
    for prev, cur in itertools.pairwise(evs):
        if cur.seq <= prev.seq:
            out.append(
                _v(
                    "seq-strictly-increasing",
                    trace_id,
                    cur.entity,
                    (prev.event_id, cur.event_id),
                    f"seq {cur.seq} is recorded after seq {prev.seq}",
                )
            )
    ordered = sorted(evs, key=lambda e: e.seq)
    last_by_node: dict[str, Event] = {}
    sends: dict[object, Event] = {}
    for e in ordered:
        prev = last_by_node.get(e.node)
        if prev is not None and e.ts_ms < prev.ts_ms:
            out.append(
                _v(
                    "node-clock-monotonic",
                    trace_id,
                    e.entity,
                    (prev.event_id, e.event_id),
                    f"node {e.node} records ts {e.ts_ms} after ts {prev.ts_ms}: its clock went back "
                    f"{prev.ts_ms - e.ts_ms} ms",
                )
            )
        last_by_node[e.node] = e
        if not simulated:
            continue
        if e.kind == "NET_SEND":
            sends.setdefault(e.attrs.get("wire"), e)
        elif e.kind == "NET_RECV":
            send = sends.get(e.attrs.get("wire"))
            if send is None:
                out.append(
                    _v(
                        "recv-after-send",
                        trace_id,
                        e.entity,
                        (e.event_id,),
                        f"wire message {e.attrs.get('wire')} is received by {e.node} but was never "
                        "recorded as sent before",
                    )
                )
            elif send.node != e.attrs.get("src"):
                out.append(
                    _v(
                        "recv-after-send",
                        trace_id,
                        e.entity,
                        (send.event_id, e.event_id),
                        f"wire message {e.attrs.get('wire')} claims sender {e.attrs.get('src')} but "
                        f"was sent by {send.node}",
                    )
                )
    return out


_KEY_FIELDS = {"trace": ("trace_id",), "entity": ("trace_id", "mechanism", "entity")}  # as in group_key
_SEQ = attrgetter("seq")


def group_key(scope: str, e: Event) -> tuple[str, ...]:
    """The group an event belongs to: its trace, or (trace, mechanism, entity) for entity scope."""
    return (e.trace_id,) if scope == "trace" else (e.trace_id, e.mechanism, e.entity)


def group_for(monitor: Monitor, events: Sequence[Event]) -> list[list[Event]]:
    """Split events the way both engines do: by trace, and by (trace, mechanism, entity) for entity scope."""
    groups: dict[tuple[str, ...], list[Event]] = defaultdict(list)
    for e in events:
        if monitor.scope == "trace" or e.mechanism == monitor.mechanism:
            groups[group_key(monitor.scope, e)].append(e)
    return [sorted(groups[k], key=lambda e: e.seq) for k in sorted(groups)]


def trace_contexts(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Each trace's context events (TRACE_START and `*_CONFIG`), in sequence order."""
    found: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if is_context_kind(e.kind):
            found[e.trace_id].append(e)
    return {t: sorted(evs, key=lambda e: e.seq) for t, evs in found.items()}


def judge_group(monitor: Monitor, group: Sequence[Event], context: Sequence[Event]) -> MonitorResult | None:
    """One monitor over one group; None when a trace-scope group holds nothing of the monitor's mechanism."""
    if monitor.scope == "trace" and not any(e.mechanism == monitor.mechanism for e in group):
        return None
    fold = start_fold(monitor, context)
    for e in group:
        fold.feed(e)
    return fold.finish()


Judged = tuple[str, Event, MonitorResult]  # (monitor name, the group's first event, result)


class ScopeStream:
    """Every monitor of one scope in one pass over events that arrive in (group key, seq) order.

    Both engines use it: the Python engine feeds its sorted events, the Spark engine the rows of one
    `mapInArrow` partition. Each event goes straight into the folds of its group (`conformance.engine.folds`),
    which start with the trace's context and finish when the next group begins: no group is held, only the
    folds' state. Entity groups go only to the monitors of their mechanism. Rows out of order raise
    `OrderBroken` (the Spark plan's sort is not a contract).
    """

    def __init__(
        self, scope: str, runs: Sequence[tuple[str, Monitor]], context_of: Callable[[str], Sequence[Event]]
    ) -> None:
        self.scope, self.runs, self.context_of = scope, list(runs), context_of
        self.by_mechanism: dict[str, list[tuple[str, Monitor]]] = defaultdict(list)
        for name, monitor in self.runs:
            self.by_mechanism[monitor.mechanism].append((name, monitor))
        self.group: GroupFolds | None = None
        self.key: tuple[str, ...] | None = None
        self.last: tuple | None = None

    def feed(self, e: Event) -> list[Judged]:
        key = group_key(self.scope, e)
        position = (*key, e.seq)
        if self.last is not None and position < self.last:
            raise OrderBroken(f"{self.scope} scope: event {position} arrived after {self.last}")
        self.last = position
        out: list[Judged] = []
        if key != self.key:
            out = self.close()
            self.key = key
            runs = self.runs if self.scope == "trace" else self.by_mechanism.get(e.mechanism, [])
            if runs:
                self.group = GroupFolds(self.scope, runs, e, self.context_of(e.trace_id))
        if self.group is not None:
            self.group.feed(e)
        return out

    def close(self) -> list[Judged]:
        group, self.group = self.group, None
        return group.finish() if group is not None else []


class OrderBroken(RuntimeError):
    """Rows reached a monitor out of (key, seq) order: the plan no longer sorts as assumed."""


def run_scope(
    runs: Sequence[tuple[str, Monitor]],
    scope: str,
    events: Sequence[Event],
    contexts: dict[str, list[Event]] | None = None,
) -> list[Judged]:
    """Every monitor of one scope over a corpus in memory, in one pass (the Python driver of ScopeStream)."""
    contexts = trace_contexts(events) if contexts is None else contexts
    mechanisms = {m.mechanism for _, m in runs}
    chosen = events if scope == "trace" else [e for e in events if e.mechanism in mechanisms]
    ordered = sorted(chosen, key=_SEQ)  # by (group key, seq): stable sorts from the last key to the first,
    for name in reversed(_KEY_FIELDS[scope]):  # no key tuple per event (memory of a huge group)
        ordered.sort(key=attrgetter(name))
    stream = ScopeStream(scope, runs, lambda t: contexts.get(t, []))
    out: list[Judged] = []
    for e in ordered:
        out.extend(stream.feed(e))
    out.extend(stream.close())
    return out


def run_monitor(
    monitor: Monitor, events: Sequence[Event], contexts: dict[str, list[Event]] | None = None
) -> list[MonitorResult]:
    """Run one monitor over every group it judges; each group gets its trace's context events."""
    return [result for _, _, result in run_scope([("", monitor)], monitor.scope, events, contexts)]


def check_events(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> list[Violation]:
    """Core rules plus every monitor (default: all registered) over events in recording order."""
    return list(verdict(events, monitors).violations)


def verdict(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> MonitorResult:
    """Overall verdict: invalid on any violation, unknown if any monitor could not judge, else valid."""
    if monitors is None:
        monitors = registered()
    results = [MonitorResult.of(core_violations(events))]
    contexts = trace_contexts(events)
    for m in monitors:
        results.extend(run_monitor(m, events, contexts))
    violations = [v for r in results for v in r.violations]
    notes = [n for r in results for n in r.notes if r.verdict is Verdict.UNKNOWN]
    return MonitorResult.of(violations, notes)
