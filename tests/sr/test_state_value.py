"""sr's state is a value (issue 33): timers are records, choices go through `sim.choices`, a copy is independent.

Item 1: every timer the sr model (and each mutant) schedules is a bound method or module function with its
arguments (`model.kernel.sim.closure_in`): the whole run passes under `Simulator.strict_timers`; twin: a closure
scheduled under strict mode is refused.
"""

from __future__ import annotations

import pytest

from model.kernel.sim import SimulationError, Simulator
from model.sr.mutants import MUTANTS, PARAMETER_MUTANTS
from model.sr.protocol import ModelSystem
from model.sr.sim import simulate


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strict timers for the test only (monkeypatch restores the class attribute)."""
    monkeypatch.setattr(Simulator, "strict_timers", True)


@pytest.mark.usefixtures("strict")
def test_the_model_schedules_only_records() -> None:
    assert simulate(1, hub=True, promotion_check="exactTimer")
    assert simulate(2, layout="mixed", reject_on_failure=True)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("name", sorted({**MUTANTS, **PARAMETER_MUTANTS}))
def test_each_mutant_schedules_only_records(name: str) -> None:
    assert {**MUTANTS, **PARAMETER_MUTANTS}[name].simulate(1)


@pytest.mark.usefixtures("strict")
def test_a_closure_under_strict_mode_fails() -> None:
    """Twin: the same system refuses a lambda or a nested function as a timer."""
    system = ModelSystem(1)

    def nested() -> None:
        system.heal()

    for action in (lambda: system.heal(), nested):
        with pytest.raises(SimulationError, match="closure"):
            system.sim.after(5, action)
    system.sim.after(5, system.heal)  # a bound method is a record
    system.advance(10)
