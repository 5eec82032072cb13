"""Stateful search through the conformance harness (`conformance/harness`): crashes, partitions,
failures, responders, switchovers, PAM moves and maintenance on the reference model, judged after every
step by the Active Manager monitor (and, at the end, by what the system exposes). Each mutant must be
found with its own rule. Implementers use the same machine: `conformance.harness.machine("am", factory)`.
"""

from __future__ import annotations

import pytest

from conformance.harness import machine, search
from conformance.harness.search import Profile, driver

AmMachine = machine("am")  # kept under its old name for tests/am/test_deep.py
TestActiveManager = pytest.mark.model(AmMachine.TestCase)

FIND = Profile("find", max_examples=500, steps=100, budget_s=400.0, shrink=False)
# the harness needs about 350 runs (four minutes on a shared machine) to reach this one: deep tier
SLOW = {"lossless-ignored-in-sort"}


@pytest.mark.model
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(driver("am").mutants())]
)
def test_search_finds_mutant(name: str) -> None:
    """Random steps alone (no scripted prelude) reach each planted flaw and a monitor rule reports it."""
    expected = driver("am").mutants()[name]
    out = search("am", driver("am").model_factory(name), FIND, watch=frozenset(expected))
    assert out.failure is not None, f"the harness did not find mutant {name} in {out.runs} runs"
    found = {v.rule for v in out.failure.violations} | {out.failure.rule}
    assert found & set(expected), f"{name}: expected {expected}, found {out.failure.summary()[:2000]}"
