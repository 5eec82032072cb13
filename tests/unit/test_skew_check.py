"""`haconform check --skew`: clock offsets within the bound are tolerated, beyond it they are violations."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.check import core_violations, run_monitor
from model.kernel.sim import HOUR
from model.kernel.workload import simulate
from model.skew.monitor import SkewMonitor

pytestmark = pytest.mark.unit


def shifted(offset_ms: int, node: str = "srv01"):
    """A clean trace in which one server's clock runs `offset_ms` behind: every event it records moves."""
    return [dataclasses.replace(e, ts_ms=e.ts_ms - offset_ms) if e.node == node else e for e in simulate(1)]


def _results(events, skew):
    return run_monitor(SkewMonitor(skew), events)


def test_a_true_trace_never_violates_and_is_only_ambiguous_when_the_bound_dwarfs_latency():
    for skew in (0, 2, HOUR):
        assert not [v for r in _results(simulate(1), skew) for v in r.violations]
    assert {r.verdict.value for r in _results(simulate(1), 0)} == {"valid"}
    loose = _results(simulate(1), HOUR)
    assert {r.verdict.value for r in loose} == {"unknown"}
    assert "smallest skew explaining the whole trace is 0 ms" in loose[0].notes[0]


def test_an_offset_clock_is_a_violation_beyond_the_bound_and_tolerated_within():
    events = shifted(HOUR)
    assert core_violations(events) == []  # sequence order alone cannot see it
    beyond = [v for r in _results(events, 50) for v in r.violations]
    assert beyond and {v.requirement for v in beyond} == {"TR-003"}
    within = _results(events, 2 * HOUR)
    assert not [v for r in within for v in r.violations]
    assert {r.verdict.value for r in within} <= {"valid", "unknown"}


def test_python_engine_reports_skew_violations(tmp_path):
    from conformance.cli import main
    from traces.io import write_events

    write_events(tmp_path / "t.jsonl", shifted(HOUR))
    out = tmp_path / "out"
    assert main(["check", "--engine", "python", str(tmp_path / "t.jsonl"), "--out", str(out)]) == 0
    assert main(["check", "--engine", "python", str(tmp_path / "t.jsonl"), "--out", str(out), "--skew", "50"]) == 1
