"""`conform` stops at the first failure once it is shrunk (`--keep-going` searches on) and says
when it was found; coverage is measured on every finished run and reported per rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.harness.report import _tampered, all_runs_coverage, rule_table
from conformance.harness.search import driver, search, search_mutant
from model.am.sim import simulate

pytestmark = pytest.mark.model
NODE = f"{sys.executable} {Path(__file__).resolve().parents[2] / 'examples' / 'sut' / 'am_node.py'}"


def test_the_search_stops_at_the_first_failure_and_says_when() -> None:
    out = search_mutant("am", "ignore-blocked", budget_s=40)
    assert out.failure is not None and out.failure.rule == "never-blocked"
    assert out.first_found_run == out.runs  # no run started after the first failure
    assert out.first_found_s is not None and out.first_found_s <= out.elapsed_s
    assert not out.exhausted_budget


def test_twin_keep_going_goes_on_after_the_first_failure() -> None:
    out = search("am", driver("am").model_factory("ignore-blocked"), budget_s=20, keep_going=True, shrink=False)
    assert out.failure is not None and out.first_found_run is not None and out.runs > out.first_found_run


def test_conform_prints_when_the_failure_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = str(tmp_path / "r.json")
    bug = f"{NODE} --bug activate-blocked"
    code = main(["conform", "am", "--sut", bug, "--budget", "40", "--replay-out", replay, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["failure"]["violations"][0]["rule"] == "never-blocked"
    assert out["found"]["run"] == out["runs"] and 0 < out["found"]["seconds"] <= out["seconds"]


def test_coverage_is_measured_on_every_finished_run() -> None:
    out = search("am", budget_s=5, cover_per_run=2)
    assert out.failure is None and out.covered_runs == out.runs > 0
    assert out.rule_runs and max(out.rule_runs.values()) <= out.covered_runs
    cov = all_runs_coverage("am", out.rule_runs, out.covered_runs, 2)
    assert set(cov["rule_runs"]) == set(rule_table("am")) and cov["runs"] == out.runs
    assert set(cov["exercised"]) | set(cov["not_exercised"]) == set(rule_table("am"))
    # twin: without per-run coverage nothing is counted
    off = search("am", budget_s=2)
    assert off.covered_runs == 0 and off.rule_runs == {}


def test_the_sweep_perturbs_every_event_kind_of_a_trace() -> None:
    import random

    events = simulate(1, steps=40)
    kinds = {e.kind for e in events} - {"TRACE_START"}
    variants = _tampered(events, random.Random(0), 0, sweep=0)
    assert len(variants) == len(kinds)
    assert _tampered(events, random.Random(0), 0) == []  # twin: no sweep, no draws, nothing
