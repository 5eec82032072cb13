"""The edge verdict copies each fold only as deep as its finish writes (issue 33, session 15,
`conformance.explore.edges`). On every edge of sr's default bounds (choice points as pinned): the verdict is the
reference's (`Session.judge(final=True)` on an independent copy of the session), the source state's folds are
byte-identical (pickled) after it, and the copy is the per-class one (`finish_copies`), not the pickle fallback.
Twins: a `SrFold.finish_copy` that shares the world's tally, or its deferred checks (`due`, which `finish` empties),
with the original is caught (the folds changed, or a later edge's verdict differs from the reference's)."""

from __future__ import annotations

import pickle
from collections import deque
from copy import copy
from typing import Any

import pytest

from conformance.explore import bfs, edges, state
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load
from model.sr.monitor import SrFold

pytestmark = pytest.mark.unit

NAMES = ("sr-2s-1m-crash", "sr-2s-1m-partition", "sr-2s-1m-choices")
BOUNDS = [e for e in load()[0] if e.bound.name in NAMES]
REAL_FINISH_COPY = SrFold.finish_copy


def _checked(counts: dict[str, int]) -> Any:
    """`edges.edge_verdict` checked against the reference on a copy, for folds left as they were, and counted by the
    copy it made (`fast`: `finish_copies`; `due`: a world with deferred checks for `finish` to take)."""

    def check(s: Any) -> Any:
        state.feed_folds(s)
        ref = state.thaw(state.freeze(s), s.driver, s.setup)
        want = ref.judge(final=True)
        inc = s.incremental
        before = pickle.dumps(inc.router.traces, state.PROTOCOL) if inc is not None else b""
        if inc is not None and edges.finish_copies(inc.router.traces) is not None:
            counts["fast"] += 1
            worlds = [f.world for t in inc.router.traces.values() for _, _, f in t.trace.folds]
            counts["due"] += any(w.due or w.db_due for w in worlds)
        got = edges.edge_verdict(s)
        assert got == want, "the edge verdict differs from the reference's"
        if inc is not None:
            after = pickle.dumps(s.incremental.router.traces, state.PROTOCOL)
            assert after == before, "the edge verdict changed the folds"
        return got

    return check


@pytest.mark.parametrize("entry", BOUNDS, ids=[e.bound.name for e in BOUNDS])
def test_each_edge_is_the_reference_and_leaves_the_folds(entry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"fast": 0, "due": 0}
    monkeypatch.setattr(bfs, "edge_verdict", _checked(counts))
    res = Explorer(entry.bound).run(max_states=entry.max_states)
    assert res.states == entry.states and res.found is None
    assert counts["fast"] == res.states - res.per_level[0]  # every new state's edge but the roots' (no fold yet)


def test_pf_edges_take_the_pickle_copy_and_are_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """pf's fold has no `finish_copy` (its finish re-derives obligations through nested containers): every edge
    goes through `state.copy_folds`, with the reference's verdict and the folds left as they were."""
    entry = next(e for e in load()[0] if e.bound.name == "pf-2s-1f-replicas")
    counts = {"fast": 0, "due": 0}
    monkeypatch.setattr(bfs, "edge_verdict", _checked(counts))
    res = Explorer(entry.bound).run(max_states=entry.max_states)
    assert res.states == entry.states and counts["fast"] == 0


def test_the_unchecked_search_gives_the_pinned_figures() -> None:
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-crash")
    res = Explorer(entry.bound).run(max_states=entry.max_states)
    assert (res.states, res.depth, res.found) == (entry.states, entry.depth, None)


def _sharing(part: str) -> Any:
    def finish_copy(self: SrFold) -> SrFold | None:
        new = REAL_FINISH_COPY(self)
        if new is not None:
            if part == "tally":
                new.world.tally = self.world.tally
            else:  # the deferred checks: `flush_due(final=True)` takes them from the original's deque
                new.world.due = self.world.due
        return new

    return finish_copy


def test_twin_a_copy_sharing_the_tally_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-crash")
    monkeypatch.setattr(SrFold, "finish_copy", _sharing("tally"))
    monkeypatch.setattr(bfs, "edge_verdict", _checked({"fast": 0, "due": 0}))
    with pytest.raises(AssertionError, match="changed the folds"):
        Explorer(entry.bound).run(max_states=entry.max_states)


def _with_deferred_check() -> Any:
    """A session in sr-2s-1m-crash's root state whose fold holds a deferred check (a failed query's SR-058 entry,
    `World.due`; no default bound's edge meets one, so it is planted), for `finish` to take."""
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-crash")
    ex = Explorer(entry.bound)
    s = ex.restore(ex.root())
    (folds,) = s.incremental.router.traces.values()
    (fold,) = [f for _, _, f in folds.trace.folds]
    q = fold.last
    fold.world.due.append((q.ts_ms, q.node, "MBX02", q, frozenset()))
    return s


def test_a_deferred_check_is_taken_from_the_copy_only() -> None:
    counts = {"fast": 0, "due": 0}
    _checked(counts)(_with_deferred_check())
    assert counts == {"fast": 1, "due": 1}


def test_twin_a_copy_sharing_the_deferred_checks_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SrFold, "finish_copy", _sharing("due"))
    with pytest.raises(AssertionError, match="changed the folds"):
        _checked({"fast": 0, "due": 0})(_with_deferred_check())


def test_a_fold_without_finish_copy_takes_the_whole_copy() -> None:
    """pf's fold has no `finish_copy`: `finish_copies` declines, the edge goes through `state.copy_folds`."""
    entry = next(e for e in load()[0] if e.bound.name == "pf-2s-1f-replicas")
    ex = Explorer(entry.bound)
    node = ex.root()
    s = ex.restore(node)
    assert s.incremental is not None and edges.finish_copies(s.incremental.router.traces) is None


def test_tally_copy_is_independent_and_refuses_what_it_cannot_copy() -> None:
    from model.sr.world import SrTally
    from traces.verdict import Tally

    t = SrTally()
    t.judged["a"], t.unjudged["b"], t.moves["RECEIVE"] = 1, [2, "why"], 3
    c = t.copy()
    c.judged["a"] += 1
    c.unjudged["b"][0] += 1
    c.moves["RECEIVE"] += 1
    assert type(c) is SrTally and (t.judged, t.unjudged, t.moves) == ({"a": 1}, {"b": [2, "why"]}, {"RECEIVE": 3})

    class Odd(Tally):
        __slots__ = ("seen",)

    odd = Odd()
    odd.seen = deque()
    with pytest.raises(TypeError, match=r"Odd\.seen"):
        odd.copy()
    assert copy(t) is not t  # the generic shallow copy still works (unrelated to `copy`)
