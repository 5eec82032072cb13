"""The monitor: round trips on generated traces, mutants caught with the right rule, tampered traces,
determinism, the registry and the trace files (seed 002; rules in `model/am/monitor.py`)."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.check import check_events
from model.am.monitor import AmMonitor
from model.am.mutants import MUTANTS, PRELUDES, SIMULATORS
from model.am.sim import shortest_failing, simulate
from traces.schema import Event
from traces.verdict import Verdict

pytestmark = pytest.mark.model


def as_events(outs: list) -> list[Event]:
    """Wrap (entity, kind, attrs) triples into Events the monitor accepts (time and ids made up)."""
    return [
        Event(
            schema_version=2,
            trace_id="t",
            seq=i,
            event_id=f"t-{i}",
            ts_ms=i,
            node="n",
            mechanism="am",
            entity=entity,
            kind=kind,
            attrs=attrs,
        )
        for i, (entity, kind, attrs) in enumerate(outs)
    ]


@pytest.mark.parametrize("seed", range(8))
def test_generated_traces_are_valid(seed: int) -> None:
    events = simulate(seed, steps=250)
    result = AmMonitor().check(events)
    if result.verdict != Verdict.VALID:
        k = shortest_failing(seed, lambda ev: AmMonitor().check(ev).verdict != Verdict.VALID, 250)
        pytest.fail(f"replay: simulate({seed}, steps={k}) -> " + "\n".join(map(str, result.violations[:5])))


@pytest.mark.parametrize(
    "bcss",
    [
        {"order": "CriteriaMajor"},
        {"up_to_normal": "NormalOnly"},
        {"require_status": False},
        {"dial_scope": "MostRestrictive"},
        {"responder": "Healthy"},
        {"below_source": True},
    ],
)
def test_alternative_readings_round_trip(bcss: dict) -> None:
    """Each interpretation's alternative, recorded in TRACE_START, is judged by the same reading."""
    for seed in range(3):
        events = simulate(seed, steps=200, bcss=bcss)
        assert AmMonitor().check(events).verdict == Verdict.VALID, (seed, bcss)


def test_reading_matters() -> None:
    """A trace made under CriteriaMajor, judged without its recorded reading (TierMajor), fails: the
    monitor really recomputes the order rather than trusting the trace."""
    for seed in range(40):
        events = simulate(seed, steps=300, bcss={"order": "CriteriaMajor"})
        start = events[0]
        stripped = [dataclasses.replace(start, attrs={**start.attrs, "config": "{}"}), *events[1:]]
        assert AmMonitor().check(events).verdict == Verdict.VALID
        if any(v.rule == "selection-order" for v in AmMonitor().check(stripped).violations):
            return
    pytest.fail("no seed distinguishes the two readings")


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught_with_its_rule(name: str) -> None:
    flaw, rule, requirement = MUTANTS[name]
    for seed in range(40):
        found = [v for v in AmMonitor().check(SIMULATORS[name](seed, steps=250)).violations if v.rule == rule]
        if found:
            assert found[0].requirement == requirement and found[0].event_ids and found[0].explanation

            def fails(ev: list[Event]) -> bool:
                return any(v.rule == rule for v in AmMonitor().check(ev).violations)

            k = shortest_failing(seed, fails, 250, flaws=frozenset({flaw}), prelude=PRELUDES[flaw])
            assert k is not None and fails(SIMULATORS[name](seed, steps=k))  # the replay
            assert k == 0 or not fails(SIMULATORS[name](seed, steps=k - 1))
            return
    pytest.fail(f"mutant {name} not caught by rule {rule} in 40 seeds")


def _tamper(events: list[Event], kind: str, **attrs) -> list[Event]:
    i = next(i for i, e in enumerate(events) if e.kind == kind and (kind != "ACTIVE_MOVE" or e.seq > 40))
    e = events[i]
    return [*events[:i], dataclasses.replace(e, attrs={**e.attrs, **attrs}), *events[i + 1 :]]


def _first_seed_with(kind: str) -> list[Event]:
    for seed in range(20):
        events = simulate(seed, steps=250)
        if sum(e.kind == kind for e in events) > 3:
            return events
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind,attrs,rule",
    [
        ("ACTIVE_MOVE", {"by": "MBX-ROGUE"}, "only-pam-activates"),
        ("LOCATION_QUERY", {"answer": "MBX-NOWHERE"}, "location-answer"),
        ("ACLL_END", {"ok": False, "missing": 0, "lli": 10**9}, "acll-source"),
    ],
)
def test_tampered_trace_is_invalid(kind: str, attrs: dict, rule: str) -> None:
    events = _tamper(_first_seed_with(kind), kind, **attrs)
    assert rule in {v.rule for v in AmMonitor().check(events).violations}


def test_standalone_failover_is_caught() -> None:
    """AM-002: the same events on a database declared standalone are a violation."""
    for seed in range(20):
        events = simulate(seed, steps=250)
        runs = {e.entity for e in events if e.kind == "BCSS_START"}
        if runs:
            db = sorted(runs)[0]
            bad = [
                dataclasses.replace(e, attrs={**e.attrs, "dag": None})
                if e.kind == "DB_CREATE" and e.entity == db
                else e
                for e in events
            ]
            assert "standalone-no-failover" in {v.rule for v in AmMonitor().check(bad).violations}
            return
    pytest.fail("no BCSS run in 20 seeds")


def test_dropped_dismount_breaks_one_active_copy() -> None:
    for seed in range(30):
        events = simulate(seed, steps=250)
        drops = [
            i
            for i, e in enumerate(events)
            if e.kind == "DISMOUNTED" and e.attrs["reason"] in ("switchover", "responder")
        ]
        for i in drops:
            rest = events[:i] + events[i + 1 :]
            if "one-active-copy" in {v.rule for v in AmMonitor().check(rest).violations}:
                return
    pytest.fail("dropping a dismount never produced two mounted copies")


@pytest.mark.parametrize(
    "kind,rule",
    [
        ("FAILOVER_REQUEST", "sam-asks-pam"),
        ("ACLL_END", "acll-before-mount"),
        ("PAM_RELEASE", "single-pam"),
        ("PAM_ACQUIRE", "pam-moves-with-quorum"),
        ("BCSS_START", "mount-outside-bcss"),
    ],
)
def test_dropped_event_is_caught(kind: str, rule: str) -> None:
    """Dropping one recorded step of the protocol leaves a trace the monitor rejects with that rule."""
    for seed in range(30):
        events = simulate(seed, steps=250)
        for i in [i for i, e in enumerate(events) if e.kind == kind][:5]:
            if rule in {v.rule for v in AmMonitor().check(events[:i] + events[i + 1 :]).violations}:
                return
    pytest.fail(f"dropping {kind} never gave {rule}")


def test_golden_counts() -> None:
    """Pinned behaviour (as stateright pins state counts): a change in the model shows up here."""
    from collections import Counter

    counts = Counter(e.kind for e in simulate(7, steps=120))
    assert counts["BCSS_START"] == counts["BCSS_END"]
    assert dict(counts) == GOLDEN


def test_truncated_trace_is_unknown_not_a_crash() -> None:
    events = simulate(4, steps=100)
    cut = [e for e in events if e.kind != "DB_CREATE"]
    result = AmMonitor().check(cut)
    assert result.verdict == Verdict.UNKNOWN  # issue 18: the note names the database and why, no KeyError
    assert any("whose DB_CREATE is not in the trace" in n for n in result.notes), result.notes


def test_unusable_options_are_unknown() -> None:
    events = simulate(4, steps=50)
    start = events[0]
    bad = [dataclasses.replace(start, attrs={**start.attrs, "config": '{"bcss": {"nonsense": 1}}'}), *events[1:]]
    assert AmMonitor().check(bad).verdict == Verdict.UNKNOWN


def test_determinism() -> None:
    a, b, c = simulate(11, steps=150), simulate(11, steps=150), simulate(12, steps=150)
    assert [e.to_json() for e in a] == [e.to_json() for e in b]
    assert [e.to_json() for e in a] != [e.to_json() for e in c]


def test_determinism_across_hash_seeds() -> None:
    """Byte-identical traces whatever PYTHONHASHSEED is (no set or dict order leaks into the trace)."""
    import os
    import subprocess
    import sys

    code = (
        "import hashlib, json; from model.am.sim import simulate; "
        "print(hashlib.sha256(json.dumps([e.to_json() for e in simulate(5, steps=200)], "
        "sort_keys=True).encode()).hexdigest())"
    )
    root = str(__import__("pathlib").Path(__file__).resolve().parents[2])
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": str(h), "PYTHONPATH": root},
        ).stdout
        for h in (1, 2)
    }
    assert len(digests) == 1


def test_registry_and_check_events() -> None:
    from model.registry import get

    spec = get("am")
    events = spec.simulate(3, steps=120)
    assert check_events(events) == []
    bad = SIMULATORS["sam-activates"](1, steps=250)
    assert any(v.rule == "only-pam-activates" for v in check_events(bad))


def test_trace_file_round_trip(tmp_path) -> None:
    from traces.io import read_events, write_events

    events = simulate(5, steps=150)
    for name in ("t.jsonl", "t.parquet"):
        write_events(tmp_path / name, events)
        back = read_events(tmp_path / name).events
        assert AmMonitor().check(back).verdict == Verdict.VALID
        assert len(back) == len(events)


GOLDEN = {
    "TRACE_START": 1,
    "DAG_VIEW": 23,
    "PAM_ACQUIRE": 3,
    "AM_CONFIG": 10,
    "SERVER_HEALTH": 50,
    "AM_DAG_CONFIG": 49,
    "DB_CREATE": 4,
    "COPY_STATE": 97,
    "ACTIVE_MOVE": 8,
    "MOUNT_START": 11,
    "MOUNTED": 10,
    "LOGS": 22,
    "FAILURE": 4,
    "FAILOVER_REQUEST": 1,
    "DISMOUNTED": 10,
    "BCSS_START": 8,
    "ACLL_START": 4,
    "ACLL_END": 4,
    "BCSS_END": 8,
    "SWITCHOVER": 1,
    "MAINTENANCE": 2,
    "PAM_RELEASE": 2,
    "CRASH": 7,
    "LOCATION_QUERY": 2,
    "RESTART": 4,
    "MOUNT_FAIL": 1,
}


def test_explain_names_tier_set_and_exclusions(tmp_path) -> None:
    from model.am.explain import explain, main
    from traces.io import write_events

    events = simulate(3, steps=200)
    lines = explain(events)
    runs = [ln for ln in lines if ": BCSS by " in ln]
    assert len(runs) == sum(e.kind == "BCSS_START" for e in events)
    assert any("criteria set" in ln and "tier" in ln for ln in lines)
    write_events(tmp_path / "t.jsonl", events)
    assert main([str(tmp_path / "t.jsonl"), "--db", "DB1"]) == 0


def test_explain_a_json_snapshot(tmp_path, capsys) -> None:
    import json

    from model.am.codec import snapshot_to_json
    from model.am.explain import main
    from tests.am.helpers import copy, snap

    (tmp_path / "r.json").write_text(
        json.dumps({"snapshot": snapshot_to_json(snap(copy("A", cq=12))), "trigger": {"kind": "failure"}})
    )
    assert main([str(tmp_path / "r.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["order"][0]["server"] == "A" and out["order"][0]["criteria_set"] == 3


# Every monitor rule and the test that makes it fire (its twin that must fail).
TWINS = {
    "single-pam": "test_each_mutant_is_caught_with_its_rule[second-pam-after-partition], test_dropped_event_is_caught",
    "pam-owns-quorum": "test_minority_pam_breaks_quorum_ownership",
    "pam-moves-with-quorum": "test_dropped_event_is_caught[PAM_ACQUIRE]",
    "pam-before-maintenance": "test_each_mutant_is_caught_with_its_rule[no-pam-move-before-maintenance]",
    "only-pam-activates": "test_each_mutant_is_caught_with_its_rule[sam-activates], test_tampered_trace_is_invalid",
    "one-active-copy": "test_dropped_dismount_breaks_one_active_copy, mutant minority-keeps-mounted",
    "location-answer": "test_tampered_trace_is_invalid[LOCATION_QUERY], mutant stale-location-answer",
    "standalone-no-failover": "test_standalone_failover_is_caught",
    "mount-outside-bcss": "test_dropped_event_is_caught[BCSS_START]",
    "acll-source": "test_tampered_trace_is_invalid[ACLL_END]",
    "dial": "test_each_mutant_is_caught_with_its_rule[activate-without-dial]",
    "never-blocked": "test_each_mutant_is_caught_with_its_rule[ignore-blocked], test_specific_rule.py",
    "next-best-copy": "test_each_mutant_is_caught_with_its_rule[retry-failed-mount], test_specific_rule.py",
    "sort-copy-queue": "handbuilt not_a_tie_invalid, sort_restated_wrong; mutant sort-by-preference",
    "sort-lossless-dial": "test_each_mutant_is_caught_with_its_rule[lossless-ignored-in-sort]",
    "sort-lossless-switchover": "test_each_mutant_is_caught_with_its_rule[lossless-switchover-by-queue]",
    "selection-order": "test_each_mutant_is_caught_with_its_rule[wrong-order], test_reading_matters",
    "responder-target": "test_each_mutant_is_caught_with_its_rule[ignore-responder-constraint]",
    "acll-before-mount": "test_dropped_event_is_caught[ACLL_END], mutant mount-without-acll",
    "sam-asks-pam": "test_dropped_event_is_caught[FAILOVER_REQUEST]",
    # issue 9: hand-built traces in tests/handbuilt/am/cases.py (test_handbuilt_am.py)
    "pam-transition": "handbuilt pam_change_without_trigger, release_by_non_pam",
    "dag-record": "handbuilt dag_facts_lie",
    "role-record": "handbuilt role_restated_wrong, quorum_restated_wrong, request_to_wrong_pam",
    "mount-transition": "handbuilt mounted_without_request, dismount_not_mounted",
    "mount-not-active": "handbuilt mount_request_for_passive_copy",
    "minority-mount": "handbuilt minority_keeps_mounted, minority_mounts; mutant minority-keeps-mounted",
    "copy-status-transition": "handbuilt status_mounted_without_mount, service_down_while_running",
    "active-record": "handbuilt active_move_from_wrong_source",
    "copy-config-record": "handbuilt blocked_restated_wrong",
    "acll-record": "handbuilt missing_restated_wrong",
    "bcss-record": "handbuilt source_restated_wrong",
}


def test_every_rule_has_a_twin() -> None:
    from model.am.rules import RULES

    assert set(TWINS) == set(RULES)


def test_every_handbuilt_twin_exists() -> None:
    """The hand-built twins named above are cases whose expected verdict reports that rule."""
    from tests.handbuilt.am.cases import CASES

    for rule, text in TWINS.items():
        if text.startswith("handbuilt "):
            names = [n.strip() for n in text.removeprefix("handbuilt ").split(";")[0].split(",")]
            for n in names:
                assert rule in CASES[n][2], (rule, n)


@pytest.mark.parametrize("seed", range(4))
def test_generator_world_is_the_fold_of_its_events(seed: int) -> None:
    """One set of transitions: the world the generator ends with is exactly the world the monitor folds
    from the generator's events (`step.apply` for both)."""
    from model.am.monitor import Config, Replay

    seen = []

    def grab(system, layout):
        seen.append(system)
        return []

    events = simulate(seed, steps=200, prelude=grab)
    cfg = Config.from_events(events[:1])
    replay = Replay(cfg.opts, cfg.thresholds_recorded)
    replay.feed(events)
    assert replay.w == seen[0].world


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clean_traces_of_the_sample_corpus_are_valid(seed: int) -> None:
    assert AmMonitor().check(simulate(seed)).verdict == Verdict.VALID


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_trace_of_the_sample_corpus_carries_its_violation(name: str) -> None:
    """`haconform samples` keeps each mutant's first invalid seed: the first seed must show the named rule."""
    from traces.corpus import MUTANT_SEEDS

    _, rule, _ = MUTANTS[name]
    assert rule in {v.rule for v in AmMonitor().check(SIMULATORS[name](MUTANT_SEEDS[0])).violations}


def test_minority_pam_breaks_quorum_ownership() -> None:
    for seed in range(20):
        rules = {v.rule for v in AmMonitor().check(SIMULATORS["second-pam-after-partition"](seed)).violations}
        if "pam-owns-quorum" in rules:
            return
    pytest.fail("a PAM cut off from quorum was never reported")
