"""A monitor's `reads` (issue 32): the engine feeds its fold only the events of those mechanisms, and every
context event (`conformance.engine.folds.GroupFolds`). On a trace that mixes mechanisms, the pf fold so fed
gives the results of the same fold fed every event; its twin, told it reads no `core` event, does not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.engine.stream import Router
from model.pf.monitor import PFMonitor
from traces.io import read_events
from traces.schema import Event

pytestmark = pytest.mark.unit

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples" / "clean"


class _EveryEvent(PFMonitor):
    reads = None


class _NoCore(PFMonitor):
    reads = frozenset({"pf"})


def _mixed() -> list[Event]:
    """A pf trace and an am trace recorded as one (the am one's context events included), in time order."""
    pf = read_events(SAMPLES / "pf-s1.jsonl").events
    am = read_events(SAMPLES / "am-s1.jsonl").events
    both = sorted([*pf, *am], key=lambda e: (e.ts_ms, e.mechanism != "pf", e.seq))
    return [replace(e, trace_id="mixed", seq=i) for i, e in enumerate(both)]


def _judged(monitor: PFMonitor, events: list[Event]) -> tuple:
    router = Router([("pf", monitor)], None)
    for e in events:
        router.feed(e)
    found, unknown = router.finish()
    counts = router.counts
    return found, unknown, sorted(counts.judged.items()), sorted(counts.unjudged.items())


def test_a_fold_fed_what_it_reads_judges_as_one_fed_every_event():
    events = _mixed()
    assert {e.mechanism for e in events} >= {"pf", "am", "core"}
    assert PFMonitor.reads == frozenset({"pf", "core"})
    assert _judged(PFMonitor(), events) == _judged(_EveryEvent(), events)


def test_twin_a_fold_not_fed_the_events_it_needs_judges_otherwise():
    events = _mixed()
    assert _judged(_NoCore(), events) != _judged(_EveryEvent(), events)
