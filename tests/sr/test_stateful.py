"""Stateful search through the conformance harness (`conformance/harness`): the model passes; every
mutant is found with one of its own rules. The model runs through exactly the harness implementers use."""

from __future__ import annotations

import pytest

from conformance.harness import machine
from conformance.harness.search import Profile, driver, search_mutant

TestModelMachine = pytest.mark.model(machine("sr").TestCase)

# Finding, not shrinking: the search stops at the first failing example.
FIND = Profile("find", max_examples=2000, steps=20, budget_s=300.0, shrink=False)


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(driver("sr").mutants()))
def test_search_finds_mutant(name: str) -> None:
    expected = driver("sr").mutants()[name]
    out = search_mutant("sr", name, FIND, watch=frozenset(expected))
    assert out.failure is not None, f"the harness did not find mutant {name} in {out.runs} runs"
    found = {v.rule for v in out.failure.violations}
    assert found & set(expected), f"{name}: expected one of {expected}, found {out.failure.summary()[:2000]}"
