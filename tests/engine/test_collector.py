"""`conformance.engine.collector.PausedCollector`: the collector paused for a run, run every `every` events, its
survivors frozen and unfrozen on leaving; a process that froze objects of its own before (the Spark worker
daemon) keeps them frozen. Twin: a collector that unfreezes on leaving whatever was frozen (session 15's)
hands the daemon's objects back to every later collection, which the frozen-before test catches."""

from __future__ import annotations

import gc

import pytest

from conformance.engine.collector import PausedCollector


class _Unfreezing(PausedCollector):  # twin: session 15's collector, which unfroze whatever was frozen
    def __exit__(self, *exc: object) -> None:
        gc.unfreeze()
        if self.was_on:
            gc.enable()


@pytest.fixture
def nothing_frozen():
    was_on = gc.isenabled()
    gc.unfreeze()
    yield
    gc.unfreeze()
    if was_on:
        gc.enable()


def _run(collector: PausedCollector) -> int:
    """A run of 3 events with a collection every 2: the freeze count seen inside, after the collection."""
    with collector as c:
        kept = [[] for _ in range(100)]  # survivors of the run's collection
        c.read(2)
        inside = gc.get_freeze_count()
        del kept
    return inside


@pytest.mark.unit
def test_a_run_freezes_its_survivors_and_unfreezes_them_on_leaving(nothing_frozen: None) -> None:
    assert gc.get_freeze_count() == 0
    assert _run(PausedCollector(every=2)) >= 100
    assert gc.get_freeze_count() == 0


@pytest.mark.unit
def test_the_collector_is_off_inside_and_restored_after(nothing_frozen: None) -> None:
    gc.enable()
    with PausedCollector(every=2):
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with PausedCollector(every=2):
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.unit
@pytest.mark.parametrize(("collector", "keeps"), [(PausedCollector, True), (_Unfreezing, False)])
def test_objects_frozen_before_the_run_stay_frozen(nothing_frozen: None, collector: type, keeps: bool) -> None:
    preloaded = [{} for _ in range(1000)]  # the daemon's preloaded engine, frozen before it forks
    gc.collect()
    gc.freeze()
    before = gc.get_freeze_count()
    assert before >= 1000
    _run(collector(every=2))
    # frozen objects the run frees by reference counting leave the count: half of it is plenty (the twin: 0)
    assert (gc.get_freeze_count() > before // 2) is keeps
    del preloaded
