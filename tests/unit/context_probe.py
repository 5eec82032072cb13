"""A probe monitor for the engine tests: it reports, as one violation per group, which context events it was given.

Entity scope, mechanism `core`, grouping the kernel workload's events by entity; lives in its own module so
Spark workers can import it by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from traces.schema import Event
from traces.verdict import MonitorResult, Violation


class ContextProbe:
    mechanism = "core"
    scope: Literal["entity", "trace"] = "entity"

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        first = events[0]
        seen = ",".join(f"{e.kind}@{e.seq}" for e in context)
        return MonitorResult.of([Violation("probe", "TR-006", first.trace_id, first.entity, (), seen, "core")])
