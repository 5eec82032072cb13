"""The graph algorithms of the skew check against z3 on random difference-constraint systems."""

from __future__ import annotations

import pytest
import z3
from hypothesis import given
from hypothesis import strategies as st

from spec.claims.skew_graph import conflicting_pairs, conflicting_pairs_z3, feasible, min_uniform_skew

NODES = ("a", "b", "c", "d", "e")
pairs_st = st.dictionaries(
    st.tuples(st.sampled_from(NODES), st.sampled_from(NODES)).filter(lambda p: p[0] != p[1]),
    st.integers(-40, 40),
    max_size=12,
)


def _z3_sat(pairs: dict, bound: int) -> bool:
    off = {n: z3.Int(n) for n in NODES}
    s = z3.Solver()
    s.add(*(z3.And(o >= -bound, o <= bound) for o in off.values()))
    s.add(*(off[b] - off[a] <= w for (a, b), w in pairs.items()))
    return s.check() == z3.sat


def _z3_min_skew(pairs: dict) -> int | None:
    off, eps = {n: z3.Int(n) for n in NODES}, z3.Int("eps")
    opt = z3.Optimize()
    opt.add(eps >= 0, *(z3.And(o >= -eps, o <= eps) for o in off.values()))
    opt.add(*(off[b] - off[a] <= w for (a, b), w in pairs.items()))
    h = opt.minimize(eps)
    return opt.lower(h).as_long() if opt.check() == z3.sat else None


@pytest.mark.model
@given(pairs_st, st.integers(0, 15))
def test_feasibility_and_min_skew_agree_with_z3(pairs: dict, bound: int) -> None:
    assert feasible(pairs, lambda n: bound) == _z3_sat(pairs, bound), (pairs, bound)
    assert min_uniform_skew(pairs) == _z3_min_skew(pairs), pairs


@pytest.mark.model
@given(pairs_st, st.integers(0, 15))
def test_conflicts_are_cores_and_their_removal_leaves_a_satisfiable_rest(pairs: dict, bound: int) -> None:
    for find in (conflicting_pairs, conflicting_pairs_z3):
        conflicts = find(pairs, lambda n: bound)
        assert bool(conflicts) == (not _z3_sat(pairs, bound)), (find.__name__, pairs, bound)
        rest = {p: w for p, w in pairs.items() if p not in conflicts}
        assert _z3_sat(rest, bound), (find.__name__, pairs, bound)
        for p, limit in conflicts.items():
            assert not _z3_sat({**rest, p: limit}, bound) and _z3_sat({**rest, p: limit + 1}, bound), (p, pairs)


@pytest.mark.unit
def test_three_node_cycle() -> None:
    pairs = {("a", "b"): -15, ("b", "c"): -15, ("a", "c"): 500}
    assert not feasible(pairs, lambda n: 10) and feasible(pairs, lambda n: 15)
    assert min_uniform_skew(pairs) == 15
    assert set(conflicting_pairs(pairs, lambda n: 10)) <= {("a", "b"), ("b", "c")}
    assert min_uniform_skew({("a", "b"): -10, ("b", "a"): -10}) is None
