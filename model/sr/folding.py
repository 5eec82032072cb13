"""The generator's recorder: every event folded into the monitor's world as it is recorded (issue 33).

Seed 000, all sections (the fold is `step.step`, the monitor's). `model.sr.cluster.Cluster` installs it in place
of the simulator's recorder, so the `World` its decisions read (`model/sr/README.md`, "One state") is current
at every decision, the kernel's CRASH / RESTART / PARTITION / HEAL records included, and no fold position is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.kernel.recorder import Recorder
from model.sr.step import step
from model.sr.world import World
from traces.schema import Event
from traces.verdict import Violation


class FoldingRecorder(Recorder):
    """The simulator's recorder, folding each event through `step.step` into the world as it is recorded (the
    kernel's CRASH / RESTART / PARTITION / HEAL included), so the world the decisions read is always current and
    no fold position is kept (issue 33: the state is the world, not the world plus how much of the trace it saw).
    `breaches` collects what the monitor would report."""

    def __init__(self, base: Recorder, world: World, breaches: list[tuple[str, Violation]]) -> None:
        super().__init__(base.trace_id)
        self.events, self.world, self.breaches = base.events, world, breaches
        for e in self.events:  # what was recorded before the cluster existed (TRACE_START)
            self._fold(e)

    def _fold(self, e: Event) -> None:
        found = step(self.world, e)
        if found:
            self.breaches.extend((e.entity, b) for b in found)

    def emit(self, ts_ms: int, node: str, mechanism: str, entity: str, kind: str, attrs: Mapping[str, Any]) -> Event:
        event = super().emit(ts_ms, node, mechanism, entity, kind, attrs)
        self._fold(event)
        return event
