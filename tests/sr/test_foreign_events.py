"""Another mechanism's events in an sr trace: only their time is read (issue 32, the fold's cost per event).

`model.sr.monitor.SrFold.feed` returns at once on an event of another mechanism (not `sr`, not `core`)
unless a check of `step` falls due before its time, which `step` then flushes. For the model and every
mutant (seed 1), each event followed by a foreign one halfway to the next, the verdict must be that of the
fold that steps every event (the fast path turned off); both paths are taken in those runs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.sr import monitor as M
from model.sr.monitor import SrMonitor
from model.sr.mutants import MUTANTS
from model.sr.sim import simulate
from traces.schema import Event

pytestmark = pytest.mark.model

RUNS = {"model": simulate, **{name: m.simulate for name, m in MUTANTS.items()}}


def with_foreign(events: list[Event]) -> list[Event]:
    """Every event of the first trace, each followed by a foreign one halfway (in time) to the next."""
    first = events[0].trace_id
    own = sorted((e for e in events if e.trace_id == first), key=lambda e: e.seq)
    out: list[Event] = []
    for i, e in enumerate(own):
        out.append(replace(e, seq=2 * e.seq))
        if i + 1 < len(own):
            ts = (e.ts_ms + own[i + 1].ts_ms) // 2
            foreign = replace(e, seq=2 * e.seq + 1, ts_ms=ts, mechanism="zz", kind="NOISE", event_id=f"{e.event_id}z")
            out.append(foreign)
    return out


@pytest.mark.parametrize("run", sorted(RUNS))
def test_foreign_events_judged_as_when_stepped(run: str, monkeypatch: pytest.MonkeyPatch) -> None:
    events = with_foreign(RUNS[run](1))
    fast = SrMonitor().check(events)
    monkeypatch.setattr(M, "_READ", frozenset({*M._READ, "zz"}))  # every event through `step`, as before
    assert SrMonitor().check(events) == fast


def test_both_paths_are_taken() -> None:
    """The comparison above covers both paths: foreign events that return at once, and foreign events before
    whose time a check falls due, which go through `step` (the model's and mutants' promotions, SR-058)."""
    paths = {"return": 0, "step": 0}
    for simulator in RUNS.values():
        fold = SrMonitor().start()
        for e in with_foreign(simulator(1)):
            w = fold.world
            if e.mechanism == "zz":
                due = (w.due and w.due[0][0] < e.ts_ms) or (w.db_due and w.db_due[0][0] < e.ts_ms)
                paths["step" if due else "return"] += 1
            fold.feed(e)
    assert paths["return"] > 100 * paths["step"] > 0, paths


def test_twin_core_events_taken_as_foreign_change_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twin: the same comparison fails for a fast path that also skipped the core events (the faults, which
    `step` folds): the comparison can tell a path that drops what `step` reads."""
    runs = {name: with_foreign(simulator(1)) for name, simulator in sorted(RUNS.items())}
    right = {name: SrMonitor().check(events) for name, events in runs.items()}
    monkeypatch.setattr(M, "_READ", frozenset({M._MECH}))
    assert any(SrMonitor().check(events) != right[name] for name, events in runs.items())
