"""The deadline index (`model.pf.deadlines`: a heap of obligations re-derived only for replicas whose inputs
changed) gives the same verdicts, in the same order, as deriving every replica's obligations at every event
(the plain fold it replaces, kept here as the reference). Traces: clean runs, every mutant, and clean runs
with random pf events dropped (many timing obligations missed). Twin: an index that never reads its heap
must differ from the reference on this corpus, so the comparison is not vacuous."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from conformance.check import trace_contexts
from model.pf.monitor import PfFold
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate
from traces.schema import Event
from traces.verdict import in_seq_order


class FullScan(PfFold):
    """The reference: every replica's obligations derived at every event (the fold before the index)."""

    def due(self, ev: Event) -> None:
        now = ev.ts_ms
        for store, fid in list(self.reps):
            if not self.up.get(store, True):
                continue
            for rule, deadline, what in self.derive(store, fid, now)[0]:
                if now > deadline and (rule, store, fid, deadline) not in self.flagged:
                    self.flagged.add((rule, store, fid, deadline))
                    self.late(ev, rule, store, fid, deadline, what)  # the violation as the index words it


class HeapIgnored(PfFold):
    """The twin: an index whose heap is never consulted (only volatile replicas are judged)."""

    def due(self, ev: Event) -> None:
        self.heap.clear()
        super().due(ev)


def _judged(cls: type[PfFold], events: Sequence[Event]) -> tuple[list[dict], list[str]]:
    context = trace_contexts(events).get(events[0].trace_id, [])
    fold = cls(context)
    for e in in_seq_order(events):
        fold.feed(e)
    result = fold.finish()
    return [v.to_json() for v in result.violations], list(result.notes)


def _dropped(events: list[Event], seed: int, share: float) -> list[Event]:
    """A clean trace with a random share of its pf events (not its context, not 1-1 mounts) left out."""
    rng = random.Random(seed)
    keep = []
    for e in events:
        essential = e.mechanism != "pf" or e.kind in ("PF_CONFIG", "REPLICA_CREATE", "END")
        if essential or rng.random() >= share:
            keep.append(e)
    return keep


def _corpus() -> list[tuple[str, list[Event]]]:
    out = [(f"clean-{s}", simulate(s, concurrent_removal=s % 2 == 0)) for s in (1, 2, 3)]
    out += [(f"{name}-1", MUTANTS[name](1)) for name in sorted(MUTANTS)]
    clean = simulate(4)
    out += [(f"dropped-{k}", _dropped(clean, k, share)) for k, share in enumerate((0.02, 0.05, 0.1, 0.3))]
    return out


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, list[Event]]]:
    return _corpus()


@pytest.mark.model
def test_index_gives_the_full_scans_verdicts_in_order(corpus: list[tuple[str, list[Event]]]) -> None:
    late = 0
    for name, events in corpus:
        expected = _judged(FullScan, events)
        assert _judged(PfFold, events) == expected, name
        late += sum(1 for v in expected[0] if v["rule"].endswith(("-late", "-interval", "-requests", "-removal")))
    assert late > 0, "the corpus must contain missed deadlines for the comparison to mean anything"


@pytest.mark.model
def test_twin_without_the_heap_differs(corpus: list[tuple[str, list[Event]]]) -> None:
    differ = [name for name, events in corpus if _judged(HeapIgnored, events) != _judged(FullScan, events)]
    assert differ, "an index that never reads its heap must miss deadlines on this corpus"
