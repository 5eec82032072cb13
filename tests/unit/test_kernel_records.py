"""The kernel's own workload and network schedule timer records, not closures (issue 33, `closure_in`)."""

from __future__ import annotations

import pytest

from model.kernel.sim import SimulationError, Simulator
from model.kernel.workload import simulate


def test_the_gossip_workload_runs_under_strict_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Simulator, "strict_timers", True)
    events = simulate(3)
    assert any(e.kind == "NET_RECV" for e in events)  # the network's deliveries are timers too


def test_a_closure_is_refused_under_strict_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twin: strict mode is what makes the test above mean something."""
    monkeypatch.setattr(Simulator, "strict_timers", True)
    sim = Simulator(1, trace_id="t", mechanism="core")
    with pytest.raises(SimulationError):
        sim.after(1, lambda: None)
