"""A growing trace judged as it grows, event by event, with a verdict of any prefix (the implementer harness,
`conformance.harness.core`, and the explorer's saved folds, `conformance.explore`): the single-process engine's
router (`conformance.engine.stream.Router`) fed once per event, TR-001's seq order and TR-002's unique event IDs
(`conformance.engine.core_rules`) kept as the events come.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from conformance.engine.event_ids import own_id, spells_own
from conformance.engine.stream import Router, TraceFolds, result_of
from traces.event import Event
from traces.verdict import Monitor, MonitorResult


class Incremental:
    """A growing trace judged as it grows (the implementer harness): each new event is fed once; a verdict
    finishes a copy of the folds (`pickle`), so the run's folds go on. The verdict of a prefix is that of
    `conformance.check.verdict` over the same events: an event out of seq order or a repeated event ID
    makes `exact()` false, and the caller judges the whole prefix instead.

    A repeated ID is found without a set of every ID fed (issue 33, session 17: that set was history, not state,
    and grew with every explored state's depth). An ID that names its own event (`<trace_id>:<seq>`, the kernel's
    recorder, or `<trace_id>-<seq>`, the harnesses': `own_id`) is repeated only by an event of the same trace and
    seq, which the seq order check already refuses (`own_id`'s docstring gives the proof). Only the other IDs are
    kept (`ids`, empty for the model's traces), and one of them that could spell an own ID already fed
    (`spells_own`) breaks the fold too: the caller's slow path then judges the prefix whole, the same verdict."""

    def __init__(self, runs: Sequence[tuple[str, Monitor]]) -> None:
        self.router = Router(runs, None)
        self.last: dict[str, int] = {}
        self.ids: set[str] = set()  # the IDs fed that do not name their own event (`own_id`)
        self.broken = False

    def feed(self, e: Event) -> None:
        if self.broken:
            return
        trace, seq, eid = e.trace_id, e.seq, e.event_id
        last = self.last
        if seq <= last.get(trace, -1) or eid in self.ids:
            self.broken = True
            return
        if not own_id(eid, trace, seq):
            if spells_own(eid, last):
                self.broken = True
                return
            self.ids.add(eid)
        last[trace] = seq
        self.router.feed(e)

    def exact(self) -> bool:
        return not self.broken

    def verdict(self) -> MonitorResult:
        copy: dict[str, TraceFolds] = pickle.loads(pickle.dumps(self.router.traces, pickle.HIGHEST_PROTOCOL))
        return result_of(copy[trace].finish() for trace in sorted(copy))
