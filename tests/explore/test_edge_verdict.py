"""The edge verdict without `Incremental.verdict`'s copy (issue 33, session 13, `conformance.explore.state`):
`edge_verdict` finishes a copy of the folds made by `copy_folds` (events, frozensets and frozen values shared with
the original, every other object copied) and gives the session back its own folds. On every edge of one default
bound of sr and pf (choice points as pinned) its verdict must be the reference's (`Session.judge(final=True)` on
an independent copy of the session) and the session's folds must be as they were (their pickle unchanged, fed as
far). Twin: a "copy" that is the folds themselves (finished in place: a finish changes the folds) fails the
check; and one that shares a frozen value holding a dict (which a finish may change through it) is refused.
Session 15: the explorer's own edge verdict is `conformance.explore.edges.edge_verdict` (each fold copied as deep as
its finish writes; `copy_folds` its fallback, which replaced session 13's `state.edge_verdict`), tested per fold
by test_edge_copy.py; this file tests it on the fallback too (pf's edges take it; the twin forces it on sr)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from conformance.explore import bfs, edges, state
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load

pytestmark = pytest.mark.unit

# am is not among them: each of its new states' fairness end does nothing, so its edges finish the folds in place
# (`Explorer.quiet_end`), and only its root is judged by `edge_verdict` (before any fold exists).
NAMES = ("sr-2s-1m-crash", "sr-2s-1m-partition", "pf-2s-1f-replicas")
BOUNDS = [e for e in load()[0] if e.bound.name in NAMES]


def _checked(calls: list[int]) -> Any:
    """`edge_verdict` checked against the reference on a copy, and for folds left as they were."""
    real = edges.edge_verdict

    def check(s: Any) -> Any:
        state.feed_folds(s)
        ref = state.thaw(state.freeze(s), s.driver, s.setup)
        want = ref.judge(final=True)
        inc, fed = s.incremental, s.fed
        before = pickle.dumps(inc.router.traces, state.PROTOCOL) if inc is not None else b""
        got = real(s)
        assert got == want, "the edge verdict differs from the reference's"
        if inc is not None:  # none yet (the root): `Session.judge` builds them, as the reference did
            after = pickle.dumps(s.incremental.router.traces, state.PROTOCOL)
            assert s.incremental is inc and s.fed == fed and after == before, "the edge verdict changed the folds"
            calls.append(1)
        return got

    return check


def _explore(entry: Any) -> Any:
    ex = Explorer(entry.bound)
    return ex.run(max_states=entry.max_states)


@pytest.mark.parametrize("entry", BOUNDS, ids=[e.bound.name for e in BOUNDS])
def test_the_edge_verdict_is_the_reference_and_leaves_the_folds(entry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(bfs, "edge_verdict", _checked(calls))
    res = _explore(entry)
    assert calls and res.states == entry.states


def test_twin_folds_finished_in_place_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-crash")
    monkeypatch.setattr(bfs, "edge_verdict", _checked([]))
    monkeypatch.setattr(edges, "finish_copies", lambda traces: None)  # the whole tree's copy (`copy_folds`)
    monkeypatch.setattr(edges, "copy_folds", lambda traces: traces)  # no copy: the folds themselves
    with pytest.raises(AssertionError, match="changed the folds"):
        _explore(entry)


def test_twin_a_frozen_value_holding_a_dict_is_copied() -> None:
    from dataclasses import dataclass, field

    @dataclass(frozen=True, slots=True)
    class Holder:
        parts: dict[str, int] = field(default_factory=dict)
        name: str = "x"

    state._table[Holder] = state._reducer(Holder)
    try:
        h, value = Holder({"a": 1}), Holder.__new__(Holder)
        object.__setattr__(value, "parts", None)
        object.__setattr__(value, "name", "y")
        assert state._share_value(h)[0] is not state._shared  # unhashable: copied by its fields
        assert state._share_value(value)[0] is state._shared  # a value through and through: shared
    finally:
        del state._table[Holder]
        state._EVENTS.clear()


def test_a_copied_random_generator_is_the_same_generator_once() -> None:
    """`freeze`'s reducer for `random.Random` (session 13: its words as one `bytes`): the same state, the same
    draws, one object where the original was one (the chooser and the simulator share theirs)."""
    import io
    import random

    rng = random.Random(33)
    rng.random()
    rng.gauss(0, 1)  # a pending gauss value is part of the state
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, state.PROTOCOL)
    pickler.dispatch_table = state._dispatch()
    pickler.dump([rng, rng])
    a, b = pickle.loads(buf.getvalue())
    assert a is b and type(a) is random.Random and a.getstate() == rng.getstate()
    assert [a.random() for _ in range(3)] == [rng.random() for _ in range(3)]
