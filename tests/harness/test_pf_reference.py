"""The public folder reference system (`examples/sut/pf_node.py`) behind the stdio adapter, on fixed scenarios:
the monitor judges its replication, status, backfill and replica lifecycle and finds no violation; each planted
bug is found by the rule named for it; the harness records store outages (CRASH / RESTART) the way it does for
shadow redundancy; kill -9 with the same state directory resumes, a new one starts afresh. Seeds 001, 003."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformance.check import verdict
from conformance.harness.core import Session, replay_steps
from conformance.harness.pf import DRIVER, LINKS, SERVERS
from conformance.harness.report import coverage
from conformance.harness.systems import process_factory

pytestmark = pytest.mark.model  # each scenario starts the program and lets four days of virtual time pass

ROOT = Path(__file__).resolve().parents[2]
SUT = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'}"
MIN = 60_000
F = {"$folder": 0}
# rules about replication messages the scenario must give a chance to fail (coverage by perturbation)
MESSAGE_RULES = {
    "packing-separation",
    "cnset-carried",
    "content-to-replicas-only",
    "no-empty-broadcast",
    "status-strict-subset",
    "status-expiry",
    "backfill-before-timeout",
    "backfill-source-order",
    "requires-response-derived",
    "backfill-entry-derived",
    "message-route",
    "broadcast-interval",
    "status-thread-late",
    "backfill-check-late",
}


def _c(call: str, **args: Any) -> dict[str, Any]:
    return {"call": call, "args": args}


SETUP = {
    "seed": 3,
    "faults": True,
    "stores": [list(s) for s in SERVERS],
    "links": [list(link) for link in LINKS],
    "latency_max_ms": 2 * MIN,
}
# A holds the folder; B (same routing group) and C (the other group) are added, B backfills from A, C from A
# (chosen by version over B); a post whose mail is lost is repaired by status and backfill; B is removed
# (delete pending, status, delete now, removed), its clients redirected; C crashes and restarts; A is backed
# up and restored; the process is killed and resumes.
SCENARIO = [
    [_c("create_folder", via="A", name="f0")],
    [_c("post", store="A", fid=F, size_kb=1) for _ in range(3)] + [_c("post", store="A", fid=F, size_kb=400)],
    [_c("add_replica", fid=F, server="B", via="A")],
    [_c("advance", ms=60 * MIN)],
    [_c("add_replica", fid=F, server="C", via="A"), _c("advance", ms=14 * 60 * MIN)],
    [_c("client_access", store="B", fid=F), _c("client_access", store="C", fid=F)],
    [_c("set_loss", loss=1.0), _c("post", store="B", fid=F, size_kb=1), _c("advance", ms=20 * MIN)],
    [_c("set_loss", loss=0.0), _c("advance", ms=36 * 60 * MIN)],
    [_c("remove_replica", fid=F, server="B", via="C"), _c("client_access", store="B", fid=F)],
    [_c("advance", ms=90 * MIN), _c("client_access", store="B", fid=F)],
    [_c("crash", store="C"), _c("post", store="A", fid=F, size_kb=1), _c("advance", ms=30 * MIN)],
    [_c("restart", store="C")],
    [_c("backup", store="A"), _c("post", store="A", fid=F, size_kb=1), _c("advance", ms=30 * MIN)],
    [_c("restore", store="A"), _c("advance", ms=36 * 60 * MIN)],
    [_c("kill_and_restart", new_state=False), _c("post", store="C", fid=F, size_kb=1), _c("advance", ms=60 * MIN)],
]


def run(steps: list[list[dict[str, Any]]], bug: str = "") -> tuple[Any, list[Any]]:
    system = process_factory("pf", SUT + (f" --bug {bug}" if bug else ""))(SETUP)
    try:
        session, _ = replay_steps(DRIVER, system, SETUP, [{"op": "scenario", "calls": s} for s in steps])
        return session, session.events()
    finally:
        system.close()


@pytest.fixture(scope="module")
def clean() -> tuple[Any, list[Any]]:
    system = process_factory("pf", SUT)(SETUP)
    session, _ = replay_steps(DRIVER, system, SETUP, [{"op": "scenario", "calls": s} for s in SCENARIO])
    yield session, session.events()
    system.close()


def test_the_scenario_passes_is_judged_and_converges(clean: tuple[Any, list[Any]]) -> None:
    session, events = clean
    result = verdict(events, [DRIVER.monitor()])
    assert not result.violations, [str(v) for v in result.violations[:3]]
    assert not result.notes, result.notes[:3]  # fully judged: no partial trace
    assert DRIVER.end_checks(session) == []  # PF-035 through the protocol
    kinds = Counter(e.kind for e in events)
    for kind in ("REPL_SEND", "REPL_RECV", "BACKFILL_FILE", "BACKFILL", "STATUS_EXPIRED", "DELETE_PENDING"):
        assert kinds[kind] > 0, kind
    assert kinds["DELETE_NOW"] == kinds["REPLICA_REMOVED"] == 1 and kinds["RESTORE"] >= 1
    sends = [e.attrs for e in events if e.kind == "REPL_SEND"]
    assert {a["type"] for a in sends} == {
        "hierarchy",
        "content",
        "status",
        "status_request",
        "backfill_request",
        "backfill_response",
    }
    assert any(a["requires_response"] for a in sends)  # the delete-pending replica's requests
    assert any(a["reason"] == "push" for a in sends) or kinds["DELETE_NOW"] == 1


def test_the_scenario_exercises_the_message_rules(clean: tuple[Any, list[Any]]) -> None:
    cov = coverage("pf", DRIVER.monitor(), [clean[1]], seed=1, per_trace=600, max_events=10**9)
    missing = MESSAGE_RULES - set(cov["exercised"])
    assert not missing, missing
    assert len(cov["exercised"]) >= 24, cov["not_exercised"]


def test_the_store_outages_are_recorded_as_core_events(clean: tuple[Any, list[Any]]) -> None:
    core = [
        (e.kind, e.node, e.attrs.get("storage")) for e in clean[1] if e.mechanism == "core" and e.kind != "TRACE_START"
    ]
    assert ("CRASH", "C", None) in core and ("RESTART", "C", "same") in core
    assert ("RESTART", "A", "new") in core  # the restore from backup
    assert core.count(("CRASH", "B", None)) == 1  # the kill -9: every running store went down and came back
    assert core[-3:] == [("RESTART", s, "same") for s in ("A", "B", "C")]


@pytest.mark.parametrize(
    ("bug", "rule"),
    [
        ("status-claims-more", "cnset-carried"),
        ("backfill-wrong-source", "backfill-source-order"),
        ("local-posts-only", "broadcast-interval"),
    ],
)
def test_each_planted_bug_is_found_by_its_rule(bug: str, rule: str) -> None:
    _, events = run(SCENARIO[:6], bug)
    rules = {v.rule for v in verdict(events, [DRIVER.monitor()]).violations}
    assert rule in rules, rules


def test_kill_with_the_same_state_resumes_and_a_new_state_starts_afresh() -> None:
    system = process_factory("pf", SUT)(SETUP)
    try:
        session = Session(DRIVER, system, SETUP)  # mid-run: no fairness end, no END snapshot (issue 36)
        DRIVER.absorb(session, "__init__", None)
        for call in [c for s in SCENARIO[:4] for c in s]:
            session.apply(call)
        fid = session.state["fids"][0]
        before = system.cnset("B", fid), system.replicas(fid)
        assert before[0] and before[1] == {"A": "active", "B": "active"}
        system.kill_and_restart(new_state=False)
        assert (system.cnset("B", fid), system.replicas(fid)) == before
        system.kill_and_restart(new_state=True)
        assert system.replicas(fid) == {} and system.trace_id.endswith("-2")
        assert not verdict(list(system.events), [DRIVER.monitor()]).violations
    finally:
        system.close()


def test_a_replay_file_reproduces_the_planted_bug_and_the_correct_system_passes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from conformance.cli import main

    replay = tmp_path / "replay.json"
    steps = [{"op": "scenario", "calls": s} for s in SCENARIO[:6]]
    doc = {"format": "haconform-replay/1", "mechanism": "pf", "sut": None, "seed": 3, "setup": SETUP, "steps": steps}
    replay.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["replay", str(replay), "--sut", f"{SUT} --bug status-claims-more"]) == 1
    assert "cnset-carried" in capsys.readouterr().out
    assert main(["replay", str(replay), "--sut", SUT]) == 0
