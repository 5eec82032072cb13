"""Orderings across servers' clocks, as a trace monitor: `haconform check --skew MS`.

Recorded timestamps come from different clocks. Under a bound on each clock's offset, every required
ordering instance (TR-003 send before receive; SR-030/SR-031 shadow stored before the primary's
acknowledgement and acceptance) is consistent, a definite violation, ambiguous, or jointly inconsistent
(`spec.claims.skew`, issue 6). Violations and inconsistencies are reported as violations; ambiguous
instances make the trace's verdict unknown, with the smallest skew that would explain the whole trace.

What each ordering's rule judged (issue 29, rules in `model.skew.rules`): every instance classified consistent,
violated or inconsistent is judged; an ambiguous one is skipped, explainable either way within the skew bound.
The monitor is buffered (`check` over a whole trace), so the tally comes with its result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from traces.schema import Event
from traces.verdict import MonitorResult, Tally


@dataclass
class SkewMonitor:
    skew_ms: int | Mapping[str, int]
    mechanism: str = "core"
    scope: Literal["entity", "trace"] = "trace"
    orderings: tuple = field(default_factory=tuple)

    def __post_init__(self) -> None:
        from spec.claims.skew import DEFAULT_ORDERINGS, SR_ORDERINGS

        if not self.orderings:
            self.orderings = (*DEFAULT_ORDERINGS, *SR_ORDERINGS)

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        from spec.claims.skew import check_skew, to_violations

        if not events:
            return MonitorResult.of((), tally=Tally())
        report = check_skew(events, self.skew_ms, self.orderings)
        tally = Tally()
        for inst in report.instances:
            inst.tally(tally)
        trace = events[0].trace_id
        ambiguous = report.by_verdict("ambiguous")
        notes = []
        if ambiguous:
            notes.append(
                f"{trace}: {len(ambiguous)} ordering instance(s) can be explained either way within the "
                f"skew bound; the smallest skew explaining the whole trace is {report.min_skew_ms} ms"
            )
        return MonitorResult.of(to_violations(report, trace), notes, tally=tally)
