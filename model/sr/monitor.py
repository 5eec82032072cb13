"""The shadow redundancy trace monitor: replays recorded events through the same rules as the simulator.

Seed 000, all sections; every rule is `rules.RULES` (rule name -> requirement ID). Scope is per entity:
the checker hands the monitor one message's events (entity = network message ID) in sequence order, and
the monitor folds them through `rules.step`, the function the simulator itself uses. Heartbeat entities
(`hb:<shadow>><primary>`) are checked for the heartbeat frequency (SR-055). Verdicts: invalid on any
breach; unknown when the trace is too incomplete to judge (the message's RECEIVE is missing, an event's
attributes cannot be read, or there is no end-of-run SNAPSHOT, so the liveness rules SR-075 and SR-057
cannot be applied); valid otherwise. A malformed event never crashes the checker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Literal

from conformance.monitor import MonitorResult, Violation
from model.sr import events as ev
from model.sr import rules
from model.sr.state import MessageView
from spec.catalogue import param_default
from traces.schema import Event


@lru_cache(maxsize=1)
def _default_variant() -> bool:
    return bool(param_default("AcceptRejectionVariant"))


def to_violation(e: Event, b: rules.Breach) -> Violation:
    return Violation(b.rule, b.requirement, e.trace_id, e.entity, b.event_ids, b.explanation, ev.MECH)


class Folder:
    """Incremental fold of many messages' events (used by the stateful tests after every step)."""

    def __init__(self, accept_variant: bool | None = None) -> None:
        variant = _default_variant() if accept_variant is None else accept_variant
        self.ctx = {"accept_variant": variant}
        self.views: dict[str, MessageView] = {}
        self.last_query: dict[str, Event] = {}
        self.violations: list[Violation] = []
        self.malformed: list[str] = []  # events the rules could not read (missing or mistyped attributes)

    def feed(self, events: Iterable[Event]) -> list[Violation]:
        found: list[Violation] = []
        for e in events:
            if e.mechanism != ev.MECH:
                continue
            try:
                found.extend(self._one(e))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                self.malformed.append(f"{e.event_id} ({e.kind}): unreadable attributes ({exc!r}); skipped")

        self.violations.extend(found)
        return found

    def _one(self, e: Event) -> list[Violation]:
        if e.entity.startswith("hb:"):
            prev = self.last_query.get(e.entity)
            self.last_query[e.entity] = e
            return [to_violation(e, b) for b in rules.heartbeat_breaches([prev, e])] if prev is not None else []
        view, breaches = rules.step(self.views.get(e.entity, MessageView()), e, self.ctx)
        self.views[e.entity] = view
        return [to_violation(e, b) for b in breaches]


class SrMonitor:
    mechanism = ev.MECH
    scope: Literal["entity", "trace"] = "entity"

    def __init__(self, accept_variant: bool | None = None) -> None:
        self.accept_variant = accept_variant

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        if not events:
            return MonitorResult.of(())
        folder = Folder(self.accept_variant)
        violations = folder.feed(events)
        notes = list(folder.malformed)
        entity = events[0].entity
        if entity.startswith("hb:"):
            return MonitorResult.of(violations, notes)
        if events[0].kind != ev.RECEIVE:
            notes.append(f"{entity}: the trace does not start with the message's RECEIVE")
        if not any(e.kind == ev.SNAPSHOT for e in events):
            notes.append(f"{entity}: no end-of-run SNAPSHOT, liveness (SR-075, SR-057) not judged")
        return MonitorResult.of(violations, notes)


def monitor() -> SrMonitor:
    return SrMonitor()
