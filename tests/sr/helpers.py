"""Shared helpers for the shadow redundancy tests: quiet timings, event filters and failure reports."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from conformance.check import check_events
from model.sr.cluster import Timing
from model.sr.monitor import SrMonitor
from traces.schema import Event

QUIET = Timing(stall_p=0.0, slow_p=0.0, ack_loss_p=0.0, hop_slow_p=0.0)


def sr(events: Iterable[Event], kind: str | None = None, entity: str | None = None) -> list[Event]:
    return [
        e
        for e in events
        if e.mechanism == "sr" and (kind is None or e.kind == kind) and (entity is None or e.entity == entity)
    ]


def kinds(events: Iterable[Event], entity: str) -> list[str]:
    return [e.kind for e in sr(events, entity=entity)]


def violations(events: Sequence[Event]) -> list:
    return check_events(events, [SrMonitor()])


def report(events: Sequence[Event], limit: int = 60) -> str:
    """A short replayable listing (time offset, node, entity, kind, attrs) for failure messages."""
    start = events[0].ts_ms if events else 0
    rows = [
        f"{(e.ts_ms - start) / 1000:>10.1f}s {e.node:<8} {e.entity:<14} {e.kind:<17} {e.attrs}"
        for e in events
        if e.mechanism == "sr"
    ][:limit]
    return "\n".join(rows)
