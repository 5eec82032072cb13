"""The engine feeds a part's events a run of one trace at a time (`Engine.read` with `Router.feed_run` and
`Engine._keep_run`, issue 32) where it may, and event by event elsewhere: both give the same violations (with
their events, in the same order), unknown notes, rule counts, held events, and the same `complete` (whether
keeping stopped), whatever the bound on events kept (`keep`: every boundary, a trace finished at the event
that would pass the bound included). Twin: a run-wise keep that ignores the bound is caught."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from conformance.engine import driver
from conformance.engine.driver import Engine
from model.registry import monitor_runs
from traces.corpus import SAMPLES_DIR
from traces.io import ReadResult, read_events
from traces.schema import Event

pytestmark = pytest.mark.unit

FILES = ["am--activate-without-dial.jsonl", "sr--accept-when-reject-required.jsonl", "pf--delete-without-status.jsonl"]


def _events() -> list[Event]:
    """Traces with violations, one after another (runs of one trace each), then two interleaved."""
    paths = [SAMPLES_DIR / "mutants" / name for name in FILES]
    events = [e for p in paths for e in read_events(p).events]
    assert len({e.trace_id for e in events}) >= 2
    clean = [*read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events]
    other = [*read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events]
    mixed = [e for pair in zip(clean, other, strict=False) for e in pair]
    return events + mixed + clean[len(other) :] + other[len(clean) :]


def _read(events: list[Event], keep: int, by_run: bool, monkeypatch) -> dict:
    monkeypatch.setattr(driver, "_long_runs", lambda ids: by_run and len(ids) >= 8 * (1 + _changes(ids)))
    sizes = Counter(e.trace_id for e in events)
    engine = Engine(monitor_runs(None), set(sizes), sizes=dict(sizes), keep=keep)
    with engine.reading():
        engine.read(0, "x", [_part(events[i : i + 500]) for i in range(0, len(events), 500)])
        found, unknown, held = engine.finish()
    return {
        "found": found,
        "unknown": unknown,
        "held": held,
        "complete": engine.complete,
        "done": sorted(engine.done),
        "counts": engine.router.counts,
    }


def _changes(ids: list[str]) -> int:
    return sum(a != b for a, b in pairwise(ids))


def _part(events: list[Event]) -> ReadResult:
    return ReadResult(events, [], len(events))


def _bounds(events: list[Event]) -> list[int]:
    """Every `keep` around a boundary: each trace's size, and the sums of consecutive ones, off by one."""
    sizes = list(Counter(e.trace_id for e in events).values())
    edges = {sizes[0], sum(sizes[:2]), sum(sizes)}
    return sorted({max(0, k + d) for k in edges for d in (-2, -1, 0, 1)} | {0, 1, 10**6})


def test_fed_by_runs_as_event_by_event(monkeypatch):
    events = _events()
    runs_met = []
    real = driver.Engine._keep_run
    monkeypatch.setattr(
        driver.Engine, "_keep_run", lambda self, t, run: runs_met.append(len(run)) or real(self, t, run)
    )
    for keep in _bounds(events):
        assert _read(events, keep, True, monkeypatch) == _read(events, keep, False, monkeypatch), keep
    assert max(runs_met) > 100  # runs were taken at once (not a comparison of two event-by-event reads)
    assert any(not _read(events, k, True, monkeypatch)["complete"] for k in _bounds(events))  # keeping stopped
    assert _read(events, 10**6, True, monkeypatch)["found"]  # violations with their events compared


def test_twin_a_run_wise_keep_that_ignores_the_bound_is_caught(monkeypatch):
    events = _events()

    def unbounded(self, trace, run):
        self.keep = 10**9  # the bound forgotten
        real(self, trace, run)

    real = driver.Engine._keep_run
    monkeypatch.setattr(driver.Engine, "_keep_run", unbounded)
    keep = _bounds(events)[2]
    assert _read(events, keep, True, monkeypatch) != _read(events, keep, False, monkeypatch)
