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

The rules are the objects of `conformance.engine.core_rules`; `CORE_RULES` (name -> requirement ID) is kept
for the readers of the table by name. What each rule judged (issue 29) is the fold's `tally`, complete once
`finish()` ran: TR-001 once per event after a trace's first, TR-004 once per event with an earlier event on its
node, TR-003 once per NET_RECV, TR-006 once per trace; on an imported log (TR-008) TR-006 and TR-003 are
skipped with the reason. The per-event counts are plain integers on the hot path, added to `tally` by `finish()`.
TR-002 is judged over a corpus by the engine (`duplicate_id_violations`), TR-005 by the reader's quarantine.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`core_fold.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from conformance.engine import core_rules as C
from conformance.engine import rulesets
from traces.event import Event
from traces.verdict import Rule, Tally, Violation, restored  # (saved folds name it `core_fold.restored`)

CORE_RULES: dict[str, str] = {r.name: r.requirement for r in C.RULES.values() if r is not C.SCHEMA_CONFORMANCE}
NOT_APPLIED = "not applied to an imported log (TR-008)"


def core_violation(rule: Rule, trace: str, entity: str, ids: tuple[str, ...], why: str, **data: Any) -> Violation:
    """A violation of core rule `rule` naming events by ID (a fold keeps IDs, not the events themselves)."""
    return Violation(rule.name, rule.requirement, trace, entity, ids, why, rule.mechanism, data)


class TraceRulesFold:
    """TR-001/TR-003/TR-004/TR-006 over one trace fed in recording order (= sequence order, see above).

    A `cdef class` in the compiled build (`core_fold.pxd`; issue 32, session 16): its fields are C struct members,
    so `feed` reads them without an attribute lookup. Pickled as its class and fields (`__reduce__`), so saved folds
    move between the compiled and pure paths; a pickle of the plain slotted class it was loads too."""

    __fields__ = ("clock", "clocked", "ordered", "out", "prev", "received", "sends", "simulated", "tally", "trace")
    __slots__ = __fields__

    def __init__(self, trace: str) -> None:
        self.trace = trace
        self.prev: Event | None = None
        self.simulated = True
        self.clock: dict[str, Event] = {}  # node -> its last event (kept, never a new object per event)
        self.sends: dict[object, tuple[str, str]] = {}  # wire -> (sending node, event ID)
        self.out: list[Violation] = []
        self.tally = Tally()
        self.ordered = 0  # events judged for TR-001 and not yet in `tally`
        self.clocked = 0  # events judged for TR-004 (an earlier event on the same node), not yet in `tally`
        self.received = 0  # NET_RECV judged for TR-003, not yet in `tally`

    @cython.locals(e=Event, prev=Event, last=Event)
    def feed(self, e: Event) -> None:
        prev = self.prev
        if prev is None:
            self.simulated = rulesets.applies(C.TRACE_START.name, e)
            self._started(self.simulated)
            if self.simulated and (e.kind != "TRACE_START" or e.seq != 0):
                self.out.append(_trace_start(self.trace, e))
        else:
            self.ordered += 1
            if e.seq <= prev.seq:
                self.out.append(_seq_broken(self.trace, prev, e))
        self.prev = e
        last = self.clock.get(e.node)  # `_clock`, inline: the path of every event
        if last is not None:
            self.clocked += 1
            if e.ts_ms < last.ts_ms:
                self._went_back(last, e)
        self.clock[e.node] = e
        if self.simulated and (e.kind == "NET_SEND" or e.kind == "NET_RECV"):
            self._wire(e)

    def _started(self, simulated: bool) -> None:
        """TR-006 judged once for the trace, or with TR-003 not applied to an imported log (TR-008)."""
        if simulated:
            self.tally.judge(C.TRACE_START)
        else:
            self.tally.skip(C.TRACE_START, NOT_APPLIED)
            self.tally.skip(C.RECV_AFTER_SEND, NOT_APPLIED)

    @cython.locals(e=Event, last=Event)
    def _clock(self, e: Event) -> None:
        """TR-004: the node's clock never goes back (`last`: its previous event)."""
        last = self.clock.get(e.node)
        if last is not None:
            self.clocked += 1
            if e.ts_ms < last.ts_ms:
                self._went_back(last, e)
        self.clock[e.node] = e

    def _went_back(self, last: Event, e: Event) -> None:
        back = last.ts_ms - e.ts_ms
        why = f"node {e.node} records ts {e.ts_ms} after ts {last.ts_ms}: its clock went back {back} ms"
        data = {"ts_ms": e.ts_ms, "previous_ts_ms": last.ts_ms, "went_back_ms": back}
        ids = (last.event_id, e.event_id)
        self.out.append(core_violation(C.NODE_CLOCK_MONOTONIC, self.trace, e.entity, ids, why, **data))

    @cython.locals(e=Event)
    def _wire(self, e: Event) -> None:
        if e.kind == "NET_SEND":
            self.sends.setdefault(e.attrs.get("wire"), (e.node, e.event_id))
        elif e.kind == "NET_RECV":
            self.received += 1
            wire, src = e.attrs.get("wire"), e.attrs.get("src")
            send = self.sends.get(wire)
            if send is None:
                why = f"wire message {wire} is received by {e.node} but was never recorded as sent before"
                self.out.append(core_violation(C.RECV_AFTER_SEND, self.trace, e.entity, (e.event_id,), why, wire=wire))
            elif send[0] != src:
                why = f"wire message {wire} claims sender {src} but was sent by {send[0]}"
                ids = (send[1], e.event_id)
                data = {"wire": wire, "observed": src, "expected": send[0]}
                self.out.append(core_violation(C.RECV_AFTER_SEND, self.trace, e.entity, ids, why, **data))

    def finish_copy(self) -> TraceRulesFold:
        """A copy whose `finish()` gives what this fold's would, this fold left as it is (issue 33, session 15: the
        explorer's edge verdict, `conformance.explore.edges`). `finish` changes only `tally` and the three counts
        it moves into it; everything else, read only, is shared."""
        new = restored(type(self), self._values())
        new.tally = self.tally.copy()
        return new

    def _values(self) -> tuple:
        return tuple([getattr(self, name) for name in self.__fields__])

    def __reduce__(self) -> tuple:
        return restored, (type(self), self._values())

    def finish(self) -> list[Violation]:
        """The violations; `tally` then holds what each rule judged (the counts move into it, once)."""
        tally = self.tally
        for rule, n in ((C.SEQ_STRICTLY_INCREASING, self.ordered), (C.NODE_CLOCK_MONOTONIC, self.clocked)):
            if n:
                tally.judge(rule, n)
        if self.received:
            tally.judge(C.RECV_AFTER_SEND, self.received)
        self.ordered = self.clocked = self.received = 0
        return self.out


class HeldRulesFold(TraceRulesFold):
    """A trace held whole (it breaks TR-001): TR-006 and TR-001 judged at once on `recorded` (the trace in
    recording order, TR-008 decided from its first event), then fed in seq order for TR-003 and TR-004."""

    __slots__ = ()

    def __init__(self, trace: str, recorded: Sequence[Event]) -> None:
        super().__init__(trace)
        self.simulated = rulesets.applies(C.TRACE_START.name, recorded[0])
        self._started(self.simulated)
        self.out = recording_order_rules(trace, recorded, self.simulated)
        self.ordered = len(recorded) - 1

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
    return core_violation(C.TRACE_START, trace, e.entity, (e.event_id,), why, observed=[e.kind, e.seq])


def _seq_broken(trace: str, prev: Event, e: Event) -> Violation:
    why = f"seq {e.seq} is recorded after seq {prev.seq}"
    ids = (prev.event_id, e.event_id)
    return core_violation(C.SEQ_STRICTLY_INCREASING, trace, e.entity, ids, why, seq=e.seq, previous_seq=prev.seq)


def duplicate_id_violations(events: Sequence[Event]) -> list[Violation]:
    """TR-002 over events in recording order: one violation per event ID used more than once, in the order
    of each ID's first use."""
    by_id: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_id[e.event_id].append(e)
    return [
        core_violation(
            C.EVENT_ID_UNIQUE,
            same[0].trace_id,
            same[0].entity,
            (event_id,),
            f"event ID {event_id} appears {len(same)} times",
            count=len(same),
        )
        for event_id, same in by_id.items()
        if len(same) > 1
    ]
