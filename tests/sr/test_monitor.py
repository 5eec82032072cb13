"""Monitor round trip: generated traces are valid; each mutant's trace is invalid with the right rule."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.check import verdict
from model.registry import get
from model.sr.monitor import SrMonitor
from model.sr.mutants import MUTANTS
from model.sr.properties import SOMETIMES, reached
from model.sr.sim import simulate
from tests.sr.helpers import report, sr, violations
from traces.io import read_events, write_events
from traces.verdict import Verdict

CONFIGS = [
    {},
    {"reject_on_failure": True},
    {"preference": "RemoteOnly", "retry_meaning": "retries"},
    {"preference": "LocalOnly", "promotion_check": "exactTimer"},
    {"hub": True, "heartbeat_ms": 30 * 60_000},
    {"enabled": False},
    {"auto_discard_ms": 3_600_000, "resubmit_ms": 1_800_000},
    {"expiration_ms": 1_200_000},
]


@pytest.mark.unit
@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(o) or "defaults")
def test_generated_traces_are_valid(options: dict) -> None:
    for seed in range(6):
        events = simulate(seed, **options)
        result = verdict(events, [SrMonitor()])
        assert result.verdict is Verdict.VALID, f"seed {seed} {options}\n{result.violations}\n{report(events)}"


@pytest.mark.unit
def test_the_model_reaches_every_interesting_state() -> None:
    """`sometimes` properties over a small batch: the model promotes, rejects, loses copies, ..."""
    seen = sum((reached(simulate(seed, reject_on_failure=seed % 2 == 1)) for seed in range(12)), start=reached([]))
    assert set(SOMETIMES) <= set(seen), set(SOMETIMES) - set(seen)


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_traces_are_invalid_with_the_right_rule(name: str) -> None:
    mutant = MUTANTS[name]
    for seed in range(6):
        rules = {v.rule for v in violations(mutant.simulate(seed))}
        if mutant.rule in rules:
            return
    pytest.fail(f"mutant {name}: rule {mutant.rule} not reported in seeds 0..5")


@pytest.mark.unit
def test_round_trip_through_files(tmp_path) -> None:
    events = MUTANTS["premature-discard"].simulate(0)
    for suffix in ("jsonl", "parquet"):
        path = tmp_path / f"t.{suffix}"
        write_events(path, events)
        result = read_events(path)
        assert not result.errors
        back = result.events
        assert [v.to_json() for v in violations(back)] == [v.to_json() for v in violations(events)]


@pytest.mark.unit
def test_incomplete_trace_is_unknown() -> None:
    events = [e for e in simulate(0) if e.kind != "SNAPSHOT"]
    assert verdict(events, [SrMonitor()]).verdict is Verdict.UNKNOWN


@pytest.mark.unit
def test_rejection_variant_is_a_parameter() -> None:
    events = MUTANTS["wrong-rejection-text"].simulate(0)
    assert any(v.rule == "rejection-text" for v in violations(events))
    strict = {v.rule for v in verdict(events, [SrMonitor(accept_variant=True)]).violations}
    assert "rejection-text" not in strict


@pytest.mark.unit
def test_violation_names_events_and_requirement() -> None:
    events = MUTANTS["ack-before-shadow"].simulate(0)
    v = next(v for v in violations(events) if v.rule == "shadow-before-ack")
    assert v.requirement == "SR-031" and v.mechanism == "sr" and v.event_ids
    ids = {e.event_id: e for e in events}
    assert ids[v.event_ids[0]].kind == "ACCEPT" and ids[v.event_ids[0]].entity == v.entity


@pytest.mark.unit
def test_registry_picks_up_sr() -> None:
    spec = get("sr")
    assert spec.monitor is not None and set(spec.mutants) == set(MUTANTS)
    assert sr(spec.simulate(1), "RECEIVE")


@pytest.mark.unit
def test_tampered_trace_is_caught() -> None:
    """A recorded trace edited by hand: the ACCEPT moved before the SHADOW_ACK."""
    events = simulate(0)
    ack = next(e for e in events if e.kind == "SHADOW_ACK")
    acc = next(e for e in events if e.kind == "ACCEPT" and e.entity == ack.entity and e.seq > ack.seq)
    swapped = [
        dataclasses.replace(e, seq=acc.seq) if e is ack else dataclasses.replace(e, seq=ack.seq) if e is acc else e
        for e in events
    ]
    swapped.sort(key=lambda e: e.seq)
    assert "shadow-before-ack" in {v.rule for v in violations(swapped)}


@pytest.mark.slow
@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: ",".join(o) or "defaults")
def test_many_generated_traces_are_valid(options: dict) -> None:
    """The deep version: 100 heavier runs per configuration (faults every 1-5 minutes)."""
    from model.sr.sim import Workload

    for seed in range(100):
        events = simulate(seed, workload=Workload(n_messages=60, fault_gap_ms=(60_000, 300_000)), **options)
        result = verdict(events, [SrMonitor()])
        assert result.verdict is Verdict.VALID, f"seed {seed} {options}\n{result.violations}\n{report(events)}"
