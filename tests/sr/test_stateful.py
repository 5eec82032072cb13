"""Stateful search: the reference model passes; every mutant is found with its own rule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from model.sr.cluster import Policy, Timing
from model.sr.mutants import MUTANTS
from model.sr.protocol import ModelSystem
from tests.sr.stateful import machine_for


def _factory(policy: type[Policy] | None = None):
    def build(seed: int, options: dict[str, Any]) -> ModelSystem:
        opts = dict(options)
        timing = Timing(hop_slow_p=0.3, stall_p=opts.pop("stall_p", 0.05))
        return ModelSystem(seed, policy=policy() if policy else None, timing=timing, **opts)

    return build


ModelMachine = machine_for(_factory())
TestModelMachine = ModelMachine.TestCase
TestModelMachine = pytest.mark.model(TestModelMachine)

# Finding, not shrinking: the search stops at the first failing example (the step list is printed).
SEARCH = settings(
    max_examples=2000,
    stateful_step_count=20,
    deadline=None,
    database=None,
    derandomize=True,
    phases=(Phase.generate,),
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
)


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_search_finds_mutant(name: str) -> None:
    mutant = MUTANTS[name]
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine_for(_factory(mutant.policy)), settings=SEARCH)
    assert any(f" {rule}]" in str(info.value) for rule in mutant.rules), str(info.value)[:2000]
