"""The shadow redundancy trace monitor: a fold of a whole trace over `step.step`, the generator's own steps.

Seed 000, all sections; every rule it can report is a row of `rules.RULES`. Scope is the trace: the fold
needs the recorded configuration (`TRACE_START` `config.sr`, `SR_CONFIG` events), the recorded topology
(`SR_CONFIG` `topology`, or `config.sr_topology`), the recorded faults (the kernel's CRASH, RESTART,
PARTITION, HEAL) and the heartbeat records next to each message's events. Verdicts: invalid on any breach;
unknown when the trace is too incomplete to judge (no recorded topology, an unreadable configuration, a
message whose RECEIVE is missing, unreadable attributes, or no end-of-run SNAPSHOT, so the liveness rules
SR-075 and SR-057 cannot be applied); valid otherwise. A malformed event never crashes the checker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from conformance.monitor import MonitorResult, Violation
from model.sr import events as ev
from model.sr.liveness import flush_due
from model.sr.rules import Breach
from model.sr.step import step
from model.sr.world import World
from traces.schema import Event


def to_violation(e: Event, b: Breach) -> Violation:
    return Violation(b.rule, b.requirement, e.trace_id, b.entity or e.entity, b.event_ids, b.explanation, ev.MECH)


class Folder:
    """Incremental fold of one trace's events (the stateful tests feed it after every step)."""

    def __init__(self, accept_variant: bool | None = None) -> None:
        self.world = World()
        self.accept_variant = accept_variant
        if accept_variant is not None:
            self.world.cfg = self.world.cfg.replace(accept_variant=accept_variant)
        self.violations: list[Violation] = []
        self.malformed: list[str] = []  # events the rules could not read (missing or mistyped attributes)
        self.seen_ids: set[str] = set()
        self.receives: set[str] = set()
        self.orphans: set[str] = set()
        self.snapshots: set[str] = set()
        self.broken: set[str] = set()  # entities with an unreadable event: their later verdicts would be guesses

    def feed(self, events: Iterable[Event]) -> list[Violation]:
        found: list[Violation] = []
        for e in events:
            if e.event_id in self.seen_ids:
                continue
            self.seen_ids.add(e.event_id)
            self._note(e)
            try:
                breaches = step(self.world, e)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                self.malformed.append(f"{e.event_id} ({e.kind}): unreadable attributes ({exc!r}); skipped, and "
                                      f"{e.entity} is not judged from there on")  # fmt: skip
                self.broken.add(e.entity)
                continue
            breaches = [b for b in breaches if (b.entity or e.entity) not in self.broken]
            if self.accept_variant is not None and e.kind in ("TRACE_START", ev.SR_CONFIG):
                self.world.cfg = self.world.cfg.replace(accept_variant=self.accept_variant)
            found.extend(to_violation(e, b) for b in breaches)
        self.violations.extend(found)
        return found

    def finish(self, last: Event | None) -> list[Violation]:
        """Deferred checks still open when the trace ends."""
        if last is None:
            return []
        found = [to_violation(last, b) for b in flush_due(self.world, last.ts_ms, final=True)]
        self.violations.extend(found)
        return found

    def _note(self, e: Event) -> None:
        if e.mechanism != ev.MECH or e.entity.startswith("hb:") or e.kind == ev.SR_CONFIG:
            return
        if e.kind == ev.RECEIVE:
            self.receives.add(e.entity)
        elif e.kind == ev.SNAPSHOT:
            self.snapshots.add(e.entity)
        elif e.entity not in self.receives:
            self.orphans.add(e.entity)

    def notes(self) -> list[str]:
        out = [*self.malformed, *self.world.notes]
        if self.world.topo is None and self.receives:
            out.append("no recorded topology (SR_CONFIG topology): boundaries and placement not judged")
        out += [f"{m}: the trace does not start with the message's RECEIVE" for m in sorted(self.orphans)]
        out += [
            f"{m}: no end-of-run SNAPSHOT, liveness (SR-075, SR-057) not judged"
            for m in sorted(self.receives - self.snapshots)
        ]
        return out


class SrMonitor:
    mechanism = ev.MECH
    scope: Literal["entity", "trace"] = "trace"

    def __init__(self, accept_variant: bool | None = None) -> None:
        self.accept_variant = accept_variant

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        if not events:
            return MonitorResult.of(())
        folder = Folder(self.accept_variant)
        ids = {e.event_id for e in events}
        folder.feed(sorted((c for c in context if c.event_id not in ids), key=lambda c: c.seq))
        violations = folder.feed(events)
        violations += folder.finish(events[-1])
        return MonitorResult.of(violations, folder.notes())


def monitor() -> SrMonitor:
    return SrMonitor()
