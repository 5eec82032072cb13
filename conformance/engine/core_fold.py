"""The mechanism-independent trace rules as a fold over one trace (TR-001, TR-003, TR-004, TR-006; TR-008
decides which apply from the trace's first recorded event), and TR-002 over a list of events.

TR-001 and TR-006 are about recording order, TR-003 and TR-004 about sequence order. A trace recorded in
seq order (no TR-001 violation) has one order: `TraceRulesFold` takes its events as they are read and
holds only the state the rules need: the last event, the last timestamp per node, and the sender of each
wire message (TR-003 must answer for a duplicate delivery of a wire long after its send, so a send is
never forgotten). A trace that breaks TR-001 is held whole: `HeldRulesFold` judges TR-006 and TR-001 on its
recording order (`recording_order_rules`) and is then fed the trace sorted by seq (a stable sort: equal
seqs keep their recording order) for TR-003 and TR-004, so the two paths give the same verdicts
(`conformance.engine.stream.whole_trace`; tests/engine/test_fold_stream.py).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from conformance.engine import rulesets
from traces.schema import Event
from traces.verdict import Violation

CORE_RULES = {
    "seq-strictly-increasing": "TR-001",
    "event-id-unique": "TR-002",
    "recv-after-send": "TR-003",
    "node-clock-monotonic": "TR-004",
    "trace-start": "TR-006",
}


def core_violation(rule: str, trace: str, entity: str, ids: tuple[str, ...], why: str) -> Violation:
    return Violation(rule, CORE_RULES[rule], trace, entity, ids, why, "core")


class TraceRulesFold:
    """TR-001/TR-003/TR-004/TR-006 over one trace fed in recording order (= sequence order, see above)."""

    __slots__ = ("clock", "out", "prev", "sends", "simulated", "trace")

    def __init__(self, trace: str) -> None:
        self.trace = trace
        self.prev: Event | None = None
        self.simulated = True
        self.clock: dict[str, tuple[int, str]] = {}  # node -> (last ts, its event ID)
        self.sends: dict[object, tuple[str, str]] = {}  # wire -> (sending node, event ID)
        self.out: list[Violation] = []

    def feed(self, e: Event) -> None:
        prev = self.prev
        if prev is None:
            self.simulated = rulesets.applies("trace-start", e)
            if self.simulated and (e.kind != "TRACE_START" or e.seq != 0):
                self.out.append(_trace_start(self.trace, e))
        elif e.seq <= prev.seq:
            self.out.append(_seq_broken(self.trace, prev, e))
        self.prev = e
        self._clock(e)
        if self.simulated:
            self._wire(e)

    def _clock(self, e: Event) -> None:
        last = self.clock.get(e.node)
        if last is not None and e.ts_ms < last[0]:
            why = f"node {e.node} records ts {e.ts_ms} after ts {last[0]}: its clock went back {last[0] - e.ts_ms} ms"
            self.out.append(core_violation("node-clock-monotonic", self.trace, e.entity, (last[1], e.event_id), why))
        self.clock[e.node] = (e.ts_ms, e.event_id)

    def _wire(self, e: Event) -> None:
        if e.kind == "NET_SEND":
            self.sends.setdefault(e.attrs.get("wire"), (e.node, e.event_id))
        elif e.kind == "NET_RECV":
            wire, src = e.attrs.get("wire"), e.attrs.get("src")
            send = self.sends.get(wire)
            if send is None:
                why = f"wire message {wire} is received by {e.node} but was never recorded as sent before"
                self.out.append(core_violation("recv-after-send", self.trace, e.entity, (e.event_id,), why))
            elif send[0] != src:
                why = f"wire message {wire} claims sender {src} but was sent by {send[0]}"
                ids = (send[1], e.event_id)
                self.out.append(core_violation("recv-after-send", self.trace, e.entity, ids, why))

    def finish(self) -> list[Violation]:
        return self.out


class HeldRulesFold(TraceRulesFold):
    """A trace held whole (it breaks TR-001): TR-006 and TR-001 judged at once on `recorded` (the trace in
    recording order, TR-008 decided from its first event), then fed in seq order for TR-003 and TR-004."""

    __slots__ = ()

    def __init__(self, trace: str, recorded: Sequence[Event]) -> None:
        super().__init__(trace)
        self.simulated = rulesets.applies("trace-start", recorded[0])
        self.out = recording_order_rules(trace, recorded, self.simulated)

    def feed(self, e: Event) -> None:
        self._clock(e)
        if self.simulated:
            self._wire(e)


def recording_order_rules(trace: str, recorded: Sequence[Event], simulated: bool) -> list[Violation]:
    """TR-006 (when the trace is simulated, TR-008) and TR-001 over one trace in recording order."""
    start = recorded[0]
    out = [_trace_start(trace, start)] if simulated and (start.kind != "TRACE_START" or start.seq != 0) else []
    prev = start
    for e in recorded[1:]:
        if e.seq <= prev.seq:
            out.append(_seq_broken(trace, prev, e))
        prev = e
    return out


def _trace_start(trace: str, e: Event) -> Violation:
    why = f"the trace begins with {e.kind} at seq {e.seq}, not TRACE_START at seq 0"
    return core_violation("trace-start", trace, e.entity, (e.event_id,), why)


def _seq_broken(trace: str, prev: Event, e: Event) -> Violation:
    why = f"seq {e.seq} is recorded after seq {prev.seq}"
    return core_violation("seq-strictly-increasing", trace, e.entity, (prev.event_id, e.event_id), why)


def duplicate_id_violations(events: Sequence[Event]) -> list[Violation]:
    """TR-002 over events in recording order: one violation per event ID used more than once, in the order
    of each ID's first use."""
    by_id: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_id[e.event_id].append(e)
    return [
        core_violation(
            "event-id-unique",
            same[0].trace_id,
            same[0].entity,
            (event_id,),
            f"event ID {event_id} appears {len(same)} times",
        )
        for event_id, same in by_id.items()
        if len(same) > 1
    ]
