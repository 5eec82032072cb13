"""Convergence (PF-035) is judged from a quiescent phase the record bears out, not from the END's word.

The END events state when the quiescent phase began (`quiesce_ms`). The monitor takes that time only where
no recorded fault (a store down, a partition, mail loss) is in force at or after it; an END that states a
phase the trace contradicts is a `restated-state` violation (PF-032), and a trace that ends before the
bound has its convergence left unjudged (a note, so the verdict is unknown), never passed in silence."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.check import verdict
from model.pf.monitor import PFMonitor
from model.pf.sim import simulate
from traces.schema import Event

SEED = 3


@pytest.fixture(scope="module")
def clean() -> list[Event]:
    return simulate(SEED)


def _restate(events: list[Event], quiesce_ms: int) -> list[Event]:
    return [replace(e, attrs={**e.attrs, "quiesce_ms": quiesce_ms}) if e.kind == "END" else e for e in events]


def _quiesce(events: list[Event]) -> int:
    return next(e.attrs["quiesce_ms"] for e in events if e.kind == "END")


@pytest.mark.model
def test_a_clean_run_is_judged_for_convergence(clean):
    result = verdict(clean, [PFMonitor()])
    assert result.verdict == "valid" and not result.notes
    assert any(e.kind == "CRASH" and e.ts_ms < _quiesce(clean) for e in clean), "the run should have had faults"


@pytest.mark.model
def test_an_end_stating_quiescence_before_a_recorded_crash_is_a_violation(clean):
    crash = max(e.ts_ms for e in clean if e.kind == "CRASH")
    result = verdict(_restate(clean, crash - 1), [PFMonitor()])
    found = [v for v in result.violations if v.rule == "restated-state"]
    assert found and "quiescent phase from" in found[0].explanation and "down from" in found[0].explanation


@pytest.mark.model
def test_an_end_stating_a_late_quiescence_leaves_convergence_unjudged(clean):
    last = max(e.ts_ms for e in clean)
    result = verdict(_restate(clean, last - 1), [PFMonitor()])
    assert result.verdict == "unknown"
    assert any("not judged" in n for n in result.notes)
    assert not [v for v in result.violations if v.rule == "convergence"]


@pytest.mark.model
def test_mail_loss_left_in_force_contradicts_the_quiescent_phase(clean):
    last = max(clean, key=lambda e: e.seq)
    net = [e for e in clean if e.kind == "NET_CONFIG"][-1]  # the same latency: only the loss differs
    lossy = replace(net, seq=last.seq + 1, event_id=f"{last.event_id}-loss", ts_ms=last.ts_ms,
                    attrs={**net.attrs, "loss_ppm": 50000})  # fmt: skip
    result = verdict([*clean, lossy], [PFMonitor()])
    found = [v.explanation for v in result.violations if v.rule == "restated-state"]
    folders = {e.entity for e in clean if e.kind == "END"}
    assert len(found) == len(folders) > 1  # each folder's convergence rests on the phase
    assert {f.split(": ", 1)[1] for f in found} == {
        f"END states a quiescent phase from {_quiesce(clean)}, but the trace records "
        f"mail loss of 50000 ppm from {last.ts_ms} ({lossy.event_id})"
    }


@pytest.mark.unit
def test_an_end_without_a_quiescent_phase_is_noted_not_a_crash():
    events = simulate(2, duration_ms=3_600_000)
    stripped = [replace(e, attrs={k: v for k, v in e.attrs.items() if k != "quiesce_ms"}) if e.kind == "END" else e
                for e in events]  # fmt: skip
    result = verdict(stripped, [PFMonitor()])
    assert result.verdict == "unknown" and any("no quiescent phase" in n for n in result.notes)
