"""Deep runs (marker `slow`, not in the default run): many seeds, longer traces, every mutant."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from model.am.monitor import AmMonitor
from model.am.mutants import MUTANTS, SIMULATORS
from model.am.sim import simulate
from tests.am.test_stateful import AmMachine
from traces.verdict import Verdict

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("block", range(10))
def test_many_seeds_valid(block: int) -> None:
    for seed in range(block * 50, block * 50 + 50):
        result = AmMonitor().check(simulate(seed, steps=600, members=5, databases=4))
        assert result.verdict == Verdict.VALID, f"seed {seed}: {result.violations[:3]}"


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_caught_on_most_long_runs(name: str) -> None:
    _, rule, _ = MUTANTS[name]
    hits = sum(
        any(v.rule == rule for v in AmMonitor().check(SIMULATORS[name](s, steps=1000)).violations) for s in range(20)
    )
    assert hits >= 5, f"{name}: caught on {hits} of 20 long runs"


def test_deep_stateful() -> None:
    run_state_machine_as_test(
        AmMachine,
        settings=settings(
            max_examples=500, stateful_step_count=80, deadline=None, suppress_health_check=list(HealthCheck)
        ),
    )
