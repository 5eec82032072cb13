"""A failure can be checked as a trace. Every failure of `haconform conform` is also written as a
complete trace (`--trace-out`, default beside the replay file: TRACE_START, the context `*_CONFIG` and the set-up
events, seq numbers, schema version 2), and `haconform replay --trace-out FILE` writes the replayed run the same
way; `haconform check` of that file gives the violation conform reported (same rule, same entity), `shrink`
reduces it for that rule and `report` renders the check's report, each taking the file as it is. `replay` prints
every event with its seq number, the set-up events included.

For each mechanism a mutant of the model stands in for a wrong system (in-process: quick); for public folders
also the reference store program with a planted bug, behind the stdio adapter (the case the issue met).
Twin: the same check of a clean run's trace (the model replaying the same steps) finds no violation."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import conformance.cli.replay as replay_cli
import conformance.cli.suite as suite_cli
from conformance.cli import main
from conformance.harness.search import driver

ROOT = Path(__file__).resolve().parents[2]
search_module = importlib.import_module("conformance.harness.search")
MUTANTS = {"sr": "ack-before-shadow", "am": "sam-activates", "pf": "answer-non-subset"}
PF_BUG = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'} --bug status-claims-more"

pytestmark = pytest.mark.model


@pytest.fixture(autouse=True)
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = search_module.Profile("quick", max_examples=200, steps=20, budget_s=120.0)
    monkeypatch.setitem(search_module.PROFILES, "quick", profile)


def _mutant_as_sut(monkeypatch: pytest.MonkeyPatch, mechanism: str) -> None:
    factory = driver(mechanism).model_factory(MUTANTS[mechanism])
    monkeypatch.setattr(replay_cli, "sut_factory", lambda m, sut, t: factory if sut == "mutant" else None)
    monkeypatch.setattr(suite_cli, "_preflight", lambda *a: "")


def _check(trace: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    code = main(["check", str(trace), "--engine", "python", "--out", str(out), "--quiet"])
    capsys.readouterr()
    lines = (out / "violations.jsonl").read_text(encoding="utf-8").splitlines()
    return code, [json.loads(line) for line in lines]


def _conform(tmp_path: Path, capsys: pytest.CaptureFixture[str], mechanism: str, sut: str) -> dict[str, Any]:
    replay = tmp_path / "replay.json"
    args = ["conform", mechanism, "--sut", sut, "--json", "--replay-out", str(replay), "--coverage-perturbations", "0"]
    code = main([*args, "--shrink-budget", "5"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 1 and summary["failure"]["violations"], summary.get("failure")
    assert summary["trace_file"] == str(tmp_path / "replay.trace.jsonl")
    return summary


def _same_violation(summary: dict[str, Any], found: list[dict[str, Any]]) -> None:
    first = summary["failure"]["violations"][0]
    assert (first["rule"], first["entity"]) in {(v["rule"], v["entity"]) for v in found}, (first, found[:3])


def _complete(trace: Path, context: str) -> list[dict[str, Any]]:
    """The trace begins with TRACE_START (seq 0) and the mechanism's context: a `*_CONFIG` event, or for Active
    Manager the BCSS options and copy layout in TRACE_START's `config` (its AM_CONFIG events are the dials the
    system records)."""
    rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["kind"] == "TRACE_START" and rows[0]["seq"] == 0
    if context.startswith("config."):
        assert context.removeprefix("config.") in json.loads(rows[0]["attrs"]["config"])
    else:
        assert any(r["kind"] == context for r in rows[:3]), [r["kind"] for r in rows[:3]]
    assert {r["schema_version"] for r in rows} == {2}
    for tid in {r["trace_id"] for r in rows}:
        seqs = [r["seq"] for r in rows if r["trace_id"] == tid]
        assert seqs == list(range(len(seqs)))
    return rows


CONTEXT = {"sr": "SR_CONFIG", "am": "config.bcss", "pf": "PF_CONFIG"}


@pytest.mark.parametrize("mechanism", ["sr", "am", "pf"])
def test_check_of_the_failure_trace_gives_the_violation_conform_found(
    mechanism: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    _mutant_as_sut(monkeypatch, mechanism)
    summary = _conform(tmp_path, capsys, mechanism, "mutant")
    trace = Path(summary["trace_file"])
    _complete(trace, CONTEXT[mechanism])
    code, found = _check(trace, tmp_path / "check", capsys)
    assert code == 1
    _same_violation(summary, found)
    rule = summary["failure"]["violations"][0]["rule"]
    assert main(["shrink", str(trace), "--rule", rule, "--out", str(tmp_path / "small.jsonl")]) == 0
    html = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "check"), "--html", str(html), "--traces", str(trace)]) in (0, 1)
    assert rule in html.read_text(encoding="utf-8")

    # replay --trace-out: the same run from the replay file, against the same mutant
    again = tmp_path / "replayed.jsonl"
    replay = ["replay", str(tmp_path / "replay.json"), "--mutant", MUTANTS[mechanism], "--trace-out", str(again)]
    assert main(replay) == 1
    text = capsys.readouterr().out
    assert text.startswith("set-up (the harness's TRACE_START") and " TRACE_START " in text.splitlines()[1]
    assert text.splitlines()[1].split()[0] == "0"  # the seq number first
    _complete(again, CONTEXT[mechanism])
    code, found = _check(again, tmp_path / "check-again", capsys)
    assert code == 1
    assert summary["failure"]["violations"][0]["rule"] in {v["rule"] for v in found}


@pytest.mark.parametrize("mechanism", ["sr", "am", "pf"])
def test_twin_the_model_replaying_the_same_steps_gives_a_clean_trace(
    mechanism: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    _mutant_as_sut(monkeypatch, mechanism)
    _conform(tmp_path, capsys, mechanism, "mutant")
    clean = tmp_path / "clean.jsonl"
    assert main(["replay", str(tmp_path / "replay.json"), "--trace-out", str(clean)]) == 0
    capsys.readouterr()
    _complete(clean, CONTEXT[mechanism])
    code, found = _check(clean, tmp_path / "check", capsys)
    assert code in (0, 2) and not found  # 2: a rule set could not judge all of it (never a violation)


def test_a_process_failure_is_written_with_the_harness_context(tmp_path: Path, capsys, monkeypatch) -> None:
    """A store program behind the adapter: the trace holds the harness's TRACE_START and PF_CONFIG, then the
    program's set-up events, as `replay --sut` writes it too (before issue 36 the implementer rebuilt them)."""
    monkeypatch.setitem(search_module.PROFILES, "quick", search_module.Profile("quick", 200, 20, 60.0))
    summary = _conform(tmp_path, capsys, "pf", PF_BUG)
    rows = _complete(Path(summary["trace_file"]), "PF_CONFIG")
    assert rows[0]["node"] == "harness" and rows[1]["node"] == "harness"
    code, found = _check(Path(summary["trace_file"]), tmp_path / "check", capsys)
    assert code == 1
    _same_violation(summary, found)
    again = tmp_path / "replayed.jsonl"
    assert main(["replay", str(tmp_path / "replay.json"), "--sut", PF_BUG, "--trace-out", str(again)]) == 1
    capsys.readouterr()
    _complete(again, "PF_CONFIG")
    code, found = _check(again, tmp_path / "check-again", capsys)
    assert code == 1 and summary["failure"]["violations"][0]["rule"] in {v["rule"] for v in found}


def test_a_replay_stopped_by_a_bad_reply_names_the_call_and_writes_the_trace_so_far(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """A system answering a post with an event before the request's time: `replay` names the call (steps[1]) and
    `--trace-out` holds what was recorded before, TRACE_START and PF_CONFIG first. Twin: the same file replayed
    on the model is clean and written whole."""
    from conformance.harness import answers
    from conformance.harness.pf import LINKS, SERVERS

    bad = {"ts_ms": -5, "node": "A", "entity": "1-1", "kind": "CHANGE", "attrs": {}}
    plan = answers.Script("pf", {"create_folder": [("1-2", [])], "post": [(True, [bad])]})
    monkeypatch.setattr(replay_cli, "sut_factory", lambda m, sut, t: answers.scripted_factory(plan) if sut else None)
    stores, links = [list(x) for x in SERVERS], [list(x) for x in LINKS]
    setup = {"seed": 1, "faults": False, "stores": stores, "links": links, "latency_max_ms": 120_000}
    setup["deleted_folder_limit"] = 500
    steps = [
        {"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f0"}}]},
        {"op": "post", "calls": [{"call": "post", "args": {"store": "A", "fid": {"$folder": 0}, "size_kb": 1}}]},
    ]
    replay = tmp_path / "replay.json"
    doc = {"format": "haconform-replay/2", "mechanism": "pf", "sut": "x", "seed": setup["seed"], "setup": setup}
    replay.write_text(json.dumps({**doc, "steps": steps, "violations": [], "problem": ""}), encoding="utf-8")
    trace = tmp_path / "so-far.jsonl"
    assert main(["replay", str(replay), "--sut", "scripted", "--trace-out", str(trace)]) == 1
    out = capsys.readouterr().out
    assert 'broke the protocol at steps[1].calls[0] (post {"store": "A"' in out and "before the request's now_ms" in out
    rows = _complete(trace, "PF_CONFIG")
    assert rows[-1]["kind"] != "CHANGE"  # the bad reply's events are not recorded

    clean = tmp_path / "clean.jsonl"
    assert main(["replay", str(replay), "--trace-out", str(clean)]) == 0
    capsys.readouterr()
    assert [r["kind"] for r in _complete(clean, "PF_CONFIG")][-1] == "END"
