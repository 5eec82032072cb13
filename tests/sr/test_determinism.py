"""Determinism: the same seed gives identical traces; different seeds differ (TigerBeetle/FDB habit)."""

from __future__ import annotations

import pytest

from model.sr.mutants import MUTANTS
from model.sr.sim import simulate


@pytest.mark.unit
@pytest.mark.parametrize("seed", [0, 7, 1234])
def test_same_seed_same_events(seed: int) -> None:
    a, b = simulate(seed), simulate(seed)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]


@pytest.mark.unit
def test_different_seeds_differ() -> None:
    a, b = simulate(1), simulate(2)
    assert [e.to_json() for e in a[1:]] != [e.to_json() for e in b[1:]]


@pytest.mark.unit
def test_mutants_are_deterministic() -> None:
    m = MUTANTS["premature-discard"]
    assert [e.to_json() for e in m.simulate(3)] == [e.to_json() for e in m.simulate(3)]
