"""A copy of a state the explorer is done with is freed by reference counting (issue 33, session 19:
`conformance.explore.state.release`), and the collector's threshold is raised only while a search runs
(`conformance.explore.collector.few_collections`).

Twins: the same copy not released is still alive once its last reference goes (its simulator and the model's bound
methods hold each other), so it is the release that frees it; a caller's own, higher threshold is kept."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from conformance.explore import state
from conformance.explore.bfs import Explorer
from conformance.explore.collector import YOUNG, few_collections
from conformance.explore.manifest import find

SR = "sr-2s-1m-crash"
PF = "pf-2s-1f-replicas"


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The cyclic collector off: whatever is freed here is freed by reference counting."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _copy_and_its_model(name: str) -> tuple[Any, weakref.ref]:
    """A copy of the bound's first state after one step (as the explorer thaws one) and a weak reference to its
    model object (the one holding the simulator)."""
    ex = Explorer(find(name).bound)
    root = ex.root()
    edges = ex.successors(root)
    child = next(c for _, _, c, found in edges if c is not None and found is None)
    s = ex.restore(child)
    sims = state.simulators(s.system)
    model = next(
        v for v in vars(s.system).values() if hasattr(v, "__dict__") and any(x is sims[0] for x in vars(v).values())
    )
    return s, weakref.ref(model)


@pytest.mark.parametrize("name", [SR, PF])
def test_a_released_copy_is_freed_when_its_last_reference_goes(name: str, no_collector: None) -> None:
    s, model = _copy_and_its_model(name)
    assert model() is not None
    state.release(s)
    del s
    assert model() is None


@pytest.mark.parametrize("name", [SR, PF])
def test_twin_a_copy_not_released_outlives_its_last_reference(name: str, no_collector: None) -> None:
    s, model = _copy_and_its_model(name)
    del s
    assert model() is not None  # held by its own cycle until the collector runs
    gc.collect()
    assert model() is None


def test_a_released_copy_cannot_be_stepped_again() -> None:
    s, _ = _copy_and_its_model(SR)
    state.release(s)
    assert state.simulators(s.system) == []  # nothing left to run: a use after release fails loudly


def test_the_threshold_is_raised_during_a_search_and_restored() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with few_collections():
            assert gc.get_threshold() == (YOUNG, 10, 10)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_twin_a_callers_higher_threshold_is_kept() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(YOUNG * 5, 7, 3)
        with few_collections():
            assert gc.get_threshold() == (YOUNG * 5, 7, 3)
        assert gc.get_threshold() == (YOUNG * 5, 7, 3)
    finally:
        gc.set_threshold(*before)
