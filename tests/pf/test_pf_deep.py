"""Deep searches (marker `slow`, not in the default run): many seeds under harsh fault settings, and the
stateful machine with a large budget. `python -m pytest tests/pf -m slow`."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from conformance.check import verdict
from conformance.harness.pf import fixed_model_factory as model_factory
from conformance.harness.pf import make_machine
from model.kernel.sim import HOUR
from model.pf.monitor import PFMonitor
from model.pf.sim import simulate

HARSH = {
    "few-stores-heavy-loss": dict(n_stores=3, loss=0.5, duration_ms=72 * HOUR),
    "many-stores-duplicates": dict(n_stores=8, loss=0.1, duplicate=0.2, duration_ms=96 * HOUR),
    "long-lossy": dict(n_stores=5, loss=0.4, duration_ms=200 * HOUR),
    "seven-stores": dict(n_stores=7, loss=0.3, duplicate=0.1, duration_ms=120 * HOUR),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HARSH))
def test_harsh_runs_stay_valid(name: str) -> None:
    bad = []
    for seed in range(200, 240):
        result = verdict(simulate(seed, **HARSH[name]), [PFMonitor()])
        if result.verdict != "valid":
            bad.append((seed, [str(v) for v in result.violations[:2]], result.notes[:2]))
    assert not bad, f"{name}: replay with simulate(seed, **HARSH[{name!r}]): {bad[:3]}"


@pytest.mark.slow
def test_stateful_model_deep() -> None:
    run_state_machine_as_test(
        make_machine(model_factory()),
        settings=settings(
            max_examples=400, stateful_step_count=60, deadline=None, suppress_health_check=list(HealthCheck)
        ),
    )
