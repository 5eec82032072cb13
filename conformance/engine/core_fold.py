"""The mechanism-independent trace rules as a fold over one trace in recording order (TR-001, TR-003,
TR-004, TR-006; TR-008 decides which apply from the trace's first event).

`conformance.check.trace_rules` judges a whole trace held in memory: TR-001 in recording order, TR-003 and
TR-004 in sequence order. When recording order is sequence order (no TR-001 violation), the two orders are
one and this fold gives exactly its violations, in its order, holding only the state the rules need: the
last event, the last timestamp per node, and the sender of each wire message (TR-003 must answer for a
duplicate delivery of a wire long after its send, so a send is never forgotten). The engines stream a
trace through this fold only when its recording order is known to be sequence order; a trace that breaks
TR-001 is judged whole by `trace_rules`, so the verdict never depends on which path judged it.
"""

from __future__ import annotations

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
                why = f"the trace begins with {e.kind} at seq {e.seq}, not TRACE_START at seq 0"
                self.out.append(core_violation("trace-start", self.trace, e.entity, (e.event_id,), why))
        elif e.seq <= prev.seq:
            why = f"seq {e.seq} is recorded after seq {prev.seq}"
            ids = (prev.event_id, e.event_id)
            self.out.append(core_violation("seq-strictly-increasing", self.trace, e.entity, ids, why))
        self.prev = e
        last = self.clock.get(e.node)
        if last is not None and e.ts_ms < last[0]:
            why = f"node {e.node} records ts {e.ts_ms} after ts {last[0]}: its clock went back {last[0] - e.ts_ms} ms"
            self.out.append(core_violation("node-clock-monotonic", self.trace, e.entity, (last[1], e.event_id), why))
        self.clock[e.node] = (e.ts_ms, e.event_id)
        if self.simulated:
            self._wire(e)

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
