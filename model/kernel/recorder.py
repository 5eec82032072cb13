"""The trace recorder: turns observations into canonical `traces.schema.Event` rows.

Sequence numbers start at 0 and increase by one per event; event IDs are `<trace_id>:<seq>`, unique
across a corpus as long as trace IDs are (requirements TR-001, TR-002, TR-006).

`forget(n)` drops the first `n` events kept (issue 33: an explored state keeps the monitor's fold, not the events
already fed to it): `events` is then the trace from `base` on, and numbering goes on from `base + len(events)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.schema import Event


def _clean(value: Any) -> Any:
    """Attribute values are JSON scalars, lists of integers, or lists of strings (see the schema)."""
    if isinstance(value, (tuple, list, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return items
        return [str(v) for v in items]  # arrays are homogeneous: all integers or all strings
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


class Recorder:
    base = 0  # events recorded and forgotten before `events[0]` (`forget`)

    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self.events: list[Event] = []

    def forget(self, n: int) -> None:
        """Drop the first `n` events kept; the trace goes on numbered as before (issue 33)."""
        if not 0 <= n <= len(self.events):
            raise ValueError(f"cannot forget {n} of {len(self.events)} events kept")
        del self.events[:n]
        self.base += n

    def emit(self, ts_ms: int, node: str, mechanism: str, entity: str, kind: str, attrs: Mapping[str, Any]) -> Event:
        seq = self.base + len(self.events)
        event = Event(
            trace_id=self.trace_id,
            seq=seq,
            event_id=f"{self.trace_id}:{seq}",
            ts_ms=ts_ms,
            node=node,
            mechanism=mechanism,
            entity=entity,
            kind=kind,
            attrs={k: _clean(v) for k, v in attrs.items()},
        )
        self.events.append(event)
        return event
