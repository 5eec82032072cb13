"""The suite end to end: the reference systems pass, each planted bug is found with a replay file that
`haconform replay` reproduces, the mutant kill report, coverage, PROTOCOL.md is current, bad replay files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.harness import search
from conformance.harness.protocol_doc import DOC_PATH, render
from conformance.harness.report import coverage, rule_table
from conformance.harness.search import driver
from conformance.harness.systems import process_factory

ROOT = Path(__file__).resolve().parents[2]
SUT = {m: f"{sys.executable} {ROOT / 'examples' / 'sut' / f'{m}_node.py'}" for m in ("sr", "am", "pf")}
BUG = {"sr": "ack-before-shadow", "am": "keep-pam-in-minority", "pf": "status-claims-more"}
RULE = {"sr": "shadow-before-ack", "am": "single-pam", "pf": "cnset-carried"}
# A public folder program whose records the monitor cannot judge: it answers every request with a replica list
# recorded before its store mounted the hierarchy (no REPLICA_CREATE of 1-1): a partial trace, every run.
UNJUDGEABLE_PF = """
import json, sys
RESULTS = {"setup": {"resumed": False}, "create_folder": "", "client_access": "", "backup": "", "replicas": {},
           "cnset": [], "post": False, "modify_folder": False, "add_replica": False, "remove_replica": False,
           "restore": False}
for line in sys.stdin:
    req = json.loads(line)
    ev = {"ts_ms": req["now_ms"], "node": "A", "entity": "1-1", "kind": "REPLICA_VIEW", "attrs": {"replicas": []}}
    print(json.dumps({"id": req["id"], "events": [ev], "result": RESULTS.get(req["op"])}), flush=True)
"""


def test_protocol_doc_is_generated_from_the_current_schemas() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), "run `haconform protocol-doc`"
    assert main(["protocol-doc", "--check"]) == 0


def test_protocol_doc_check_fails_on_a_stale_document(tmp_path: Path) -> None:
    stale = tmp_path / "PROTOCOL.md"
    stale.write_text(render().replace("submit", "send"), encoding="utf-8")
    assert main(["protocol-doc", "--check", "--out", str(stale)]) == 1


def test_reference_systems_do_not_import_haconform() -> None:
    for path in (ROOT / "examples" / "sut").glob("*.py"):  # the programs and the modules beside them
        text = path.read_text(encoding="utf-8")
        imports = [ln for ln in text.splitlines() if ln.startswith(("import ", "from "))]
        assert not [ln for ln in imports if any(p in ln for p in ("conformance", "model", "spec", "traces"))], path


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"format": "other"}, "format"),
        ({"format": "haconform-replay/1", "mechanism": "sr", "setup": {}}, "steps"),
        ({"format": "haconform-replay/1", "mechanism": "sr", "setup": {}, "steps": [{"op": 1}]}, "steps[0]"),
    ],
)
def test_a_bad_replay_file_is_unusable_input_naming_the_field(
    tmp_path: Path, bad: dict, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    assert field in capsys.readouterr().err


def test_an_unusable_system_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "sr", "--sut", str(tmp_path / "missing-program"), "--budget", "5"]) == 2
    assert "cannot be used" in capsys.readouterr().err


def test_coverage_counts_rules_a_perturbed_trace_makes_fire() -> None:
    from model.sr.sim import simulate

    table = rule_table("sr")
    assert "shadow-before-ack" in table and table["shadow-before-ack"] == "SR-031"
    cov = coverage("sr", driver("sr").monitor(), [simulate(3)], seed=1, per_trace=120)
    assert cov["exercised"] and set(cov["exercised"]) <= set(table)
    assert {table[r] for r in cov["exercised"]} == set(cov["requirements"])
    empty = coverage("sr", driver("sr").monitor(), [], seed=1)  # twin: no trace, nothing exercised
    assert empty["exercised"] == [] and len(empty["not_exercised"]) == len(table)


@pytest.mark.model
@pytest.mark.parametrize("mechanism", ["sr", "am", "pf"])
def test_each_reference_system_passes(mechanism: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exit_code = main(
        ["conform", mechanism, "--sut", SUT[mechanism], "--budget", "10", "--json", "--replay-out", str(tmp_path / "r")]
    )
    out = json.loads(capsys.readouterr().out)
    assert exit_code == 0, out.get("failure") or out.get("unjudged_notes")
    assert out["verdict"] == "pass" and out["runs"] > 0
    assert "coverage" in out and set(out["coverage"]["rules"]) == set(rule_table(mechanism))
    assert out["coverage"]["exercised"], "a pass must have exercised some rule"
    floor = out["coverage_floor"]  # the twin of test_conform_gate's silent system: a correct one is above it
    assert not floor["below"] and floor["exercised"] >= floor["required"] > 0, floor
    if mechanism == "pf":  # the monitor judges every run of the reference store group, its messages included
        assert out["unjudged_runs"] == 0, out["unjudged_notes"]
        judged = {"cnset-carried", "message-route", "backfill-entry-derived", "packing-separation"}
        assert len(judged & set(out["coverage"]["exercised"])) >= 2, out["coverage"]["exercised"]


# the twin of the rule that a run nobody could judge does not pass: verdict unknown, exit 2
@pytest.mark.model
def test_a_system_whose_records_cannot_be_judged_is_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "unjudgeable.py"
    program.write_text(UNJUDGEABLE_PF, encoding="utf-8")
    sut = f"{sys.executable} {program}"
    assert main(["conform", "pf", "--sut", sut, "--budget", "5", "--json", "--replay-out", str(tmp_path / "r")]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "unknown" and out["unjudged_runs"] == out["runs"] > 0 and out["unjudged_notes"]


# am and pf: about two minutes each on a shared machine (search, then shrinking within the 90 s budget): slow
@pytest.mark.model
@pytest.mark.parametrize(
    "mechanism", ["sr", pytest.param("am", marks=pytest.mark.slow), pytest.param("pf", marks=pytest.mark.slow)]
)
def test_each_planted_bug_is_found_and_replayed(
    mechanism: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    buggy = f"{SUT[mechanism]} --bug {BUG[mechanism]}"
    replay = tmp_path / "replay.json"
    code = main(["conform", mechanism, "--sut", buggy, "--budget", "90", "--replay-out", str(replay)])
    text = capsys.readouterr().out
    assert code == 1, text
    assert "seed" in text and "steps (" in text and RULE[mechanism] in text
    data = json.loads(replay.read_text(encoding="utf-8"))
    assert data["mechanism"] == mechanism and data["steps"]
    assert main(["replay", str(replay), "--sut", buggy]) == 1  # the violation is reproduced
    assert RULE[mechanism] in capsys.readouterr().out
    assert main(["replay", str(replay), "--sut", SUT[mechanism]]) == 0  # the correct system passes the steps


@pytest.mark.model
def test_the_model_passes_and_reports_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "sr", "--budget", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "pass" and out["coverage"]["exercised"]


@pytest.mark.model
def test_mutant_report_kills_and_exit_1_when_one_survives(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "sr", "--only", "ack-before-shadow", "--only", "double-send", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["killed"] == 2 and report["summary"]["survivors"] == []
    for m in report["mutants"]:
        assert m["killed"] and m["steps"] >= 1 and m["rule"] and m["seconds_to_kill"] is not None
    # twin: with no time to search, the mutant survives and the command says so
    assert main(["mutants", "sr", "--only", "ack-before-shadow", "--budget", "0", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["survivors"] == ["ack-before-shadow"]


@pytest.mark.model
def test_a_model_failure_replays_against_the_mutant_and_passes_on_the_model(tmp_path: Path) -> None:
    out = search("sr", driver("sr").model_factory("ack-before-shadow"), "quick", 20)
    assert out.failure is not None and out.failure.rule == "shadow-before-ack"
    from conformance.harness.report import failure_json, write_json_atomic

    path = tmp_path / "r.json"
    write_json_atomic(path, failure_json(out.failure))
    assert main(["replay", str(path), "--mutant", "ack-before-shadow"]) == 1
    assert main(["replay", str(path)]) == 0
    assert main(["replay", str(path), "--sut", SUT["sr"]]) == 0  # the same steps against another system


def test_process_factory_builds_a_fresh_process_per_run() -> None:
    build = process_factory("sr", SUT["sr"])
    a = build({**_setup(), "seed": 1})
    b = build({**_setup(), "seed": 2})
    try:
        assert a.client.proc.pid != b.client.proc.pid and a.client.root != b.client.root
    finally:
        a.close()
        b.close()


def _setup() -> dict:
    from tests.harness.test_adapter import SETUP

    return dict(SETUP)


REPLAYS = Path(__file__).parent / "replays"


def test_safetynet_expiries_of_several_servers_leave_in_time_order(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by `conform sr` once runs drew short hold times: two servers' Safety Net entries 1 s apart, the
    reference system expired them server by server, so the earlier one left 1 s late (SR-065). Replayed
    against the reference system (which failed this replay before the fix) and the model."""
    replay = str(REPLAYS / "sr-safetynet-expiry-order.json")
    assert main(["replay", replay, "--sut", SUT["sr"]]) == 0, capsys.readouterr().out
    assert main(["replay", replay]) == 0, capsys.readouterr().out
