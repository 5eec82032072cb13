"""Generator and monitor: determinism, clean traces, every mutant found with its rule, round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.check import check_events, verdict
from model.pf.monitor import PFMonitor
from model.pf.mutants import EXPECTED, MUTANTS
from model.pf.rules import RULES
from model.pf.sim import simulate
from model.registry import get
from traces.io import read_events, write_events

SEEDS = range(1, 9)


@pytest.mark.model
def test_same_seed_same_trace_different_seed_different_trace() -> None:
    a, b, c = simulate(7), simulate(7), simulate(8)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    assert [e.to_json() for e in a] != [e.to_json() for e in c]


@pytest.mark.model
@pytest.mark.parametrize("seed", SEEDS)
def test_generated_traces_are_valid(seed: int) -> None:
    events = simulate(seed, concurrent_removal=seed % 2 == 0)
    result = verdict(events, [PFMonitor()])
    assert result.verdict == "valid", (
        f"seed {seed} (replay: python -m conformance simulate pf --seed {seed} "
        f"--out t.jsonl): {[str(v) for v in result.violations[:3]]} {result.notes[:3]}"
    )
    assert any(e.kind == "END" for e in events), "the run must reach its convergence check"


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_is_found_by_its_rule(name: str) -> None:
    """Each planted bug is caught, within a few seeds, by the rule of the invariant it breaks."""
    seen: set[str] = set()
    for seed in SEEDS:
        rules = {v.rule for v in check_events(MUTANTS[name](seed), [PFMonitor()])}
        seen |= rules
        if EXPECTED[name] in rules:
            return
    pytest.fail(f"mutant {name}: rule {EXPECTED[name]} not found in seeds {list(SEEDS)}; found {sorted(seen)}")


@pytest.mark.unit
def test_every_rule_has_a_twin() -> None:
    """Every rule of the table has a twin that must fail: a mutant of the model (found above) or a
    hand-built trace with a known violation (tests/handbuilt/pf and tests/handbuilt/files/pf, asserted there)."""
    from tests.handbuilt.files.pf_cases import CASES as FILE_CASES
    from tests.handbuilt.pf.scenarios import cases

    hand_built = {rule for _, _, expected in cases() for rule in expected}
    hand_built |= {rule for _, _, expected in FILE_CASES if isinstance(expected, set) for rule in expected}
    assert set(EXPECTED.values()) | hand_built == set(RULES)


@pytest.mark.model
def test_folder_deletes_are_generated_and_packed_within_the_limit() -> None:
    """PF-011's deleted-folder limit is exercised: the workload deletes folders in batches; with a limit
    of one delete per hierarchy message the model splits them, and the monitor accepts it."""
    from dataclasses import replace

    from model.pf.state import default_params

    one = replace(default_params(), deleted_folder_limit=1)
    for seed in SEEDS:
        events = simulate(seed, params=one)
        deletes = [e for e in events if e.kind == "CHANGE" and e.attrs["op"] == "delete"]
        if len(deletes) >= 2:
            assert verdict(events, [PFMonitor()]).verdict == "valid"
            return
    pytest.fail("no seed generated two folder deletes")


@pytest.mark.model
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_round_trip_through_files(tmp_path: Path, suffix: str) -> None:
    events = MUTANTS["answer-non-subset"](1)
    path = tmp_path / f"trace{suffix}"
    write_events(path, events)
    result = read_events(path)
    assert not result.errors
    back = result.events
    assert [e.to_json() for e in back] == [e.to_json() for e in events]
    before = sorted(str(v) for v in check_events(events, [PFMonitor()]))
    assert before and before == sorted(str(v) for v in check_events(back, [PFMonitor()]))


@pytest.mark.unit
def test_registered_with_the_registry() -> None:
    spec = get("pf")
    assert spec.monitor is not None and spec.monitor().scope == "trace"
    assert set(spec.mutants) == set(MUTANTS)


@pytest.mark.model
def test_violations_name_rule_requirement_and_events() -> None:
    for seed in SEEDS:
        events = MUTANTS["delete-without-status"](seed)
        found = [v for v in check_events(events, [PFMonitor()]) if v.rule == "delete-now-after-status"]
        if found:
            break
    v, ids = found[0], {e.event_id for e in events}
    assert v.requirement == "BF-032" and v.mechanism == "pf" and set(v.event_ids) <= ids and v.explanation


@pytest.mark.model
def test_the_model_sometimes_does_everything() -> None:
    """'Sometimes' properties: across a few seeds every phase of the protocol happens at least once, so a
    model that stopped progressing (and made every invariant hold vacuously) would fail here."""
    kinds: set[str] = set()
    reasons: set[str] = set()
    for seed in range(1, 7):
        for e in simulate(seed):
            kinds.add(e.kind)
            if e.kind == "REPL_SEND":
                reasons.add(e.attrs["reason"])
            if e.kind == "BACKFILL" and e.attrs["requests"]:
                kinds.add("BACKFILL+requests")
            if e.kind == "CLIENT_ACCESS":
                kinds.add(f"CLIENT_{e.attrs['outcome']}")
    assert {
        "DELETE_NOW",
        "REPLICA_REMOVED",
        "BACKFILL+requests",
        "STATUS_EXPIRED",
        "RESTORE",
        "BACKUP",
        "CLIENT_redirect",
        "CLIENT_served",
        "BACKFILL_FILE",
        "END",
        "NET_DROP",
    } <= kinds, kinds
    assert {
        "broadcast",
        "status_request",
        "status_reply",
        "backfill",
        "backfill_response",
        "expiry",
        "push",
    } <= reasons, reasons


@pytest.mark.unit
def test_a_partial_trace_is_unknown_not_a_crash() -> None:
    events = [e for e in simulate(2) if e.kind != "REPLICA_CREATE"]
    result = verdict(events, [PFMonitor()])
    assert result.verdict == "unknown" and result.notes


@pytest.mark.model
def test_overridden_parameters_travel_in_the_trace() -> None:
    """Non-default values (here tiny packing limits) are recorded in REPLICA_CREATE and the monitor
    judges by them: the model stays valid, and ignoring the limit is caught."""
    from dataclasses import replace

    from model.pf.mutants import RULE_MUTANTS
    from model.pf.state import Params

    small = replace(Params(), message_count_limit=2, message_size_limit_kb=20, folder_count_limit=1)
    events = simulate(3, params=small)
    assert any(e.kind == "REPLICA_CREATE" and '"message_count_limit":2' in e.attrs["params"] for e in events)
    assert verdict(events, [PFMonitor()]).verdict == "valid"
    bad = simulate(3, params=small, rules=RULE_MUTANTS["ignore-size-limit"])
    assert "packing-limits" in {v.rule for v in check_events(bad, [PFMonitor()])}
