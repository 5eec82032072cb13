"""The mutant kill report (`conformance/harness/search.py`): a mutant counts as killed only by its expected rule
or one of its also-rules (pf `mutants.ALSO`, sr `Mutant.also`), the report says which; shadow redundancy's
parameter mutants are in the report and killed."""

from __future__ import annotations

import json

import pytest

from conformance.cli import main
from conformance.harness.core import Failure, Step
from conformance.harness.search import Outcome, caught_by, driver, judge_kill, kill_report, search
from traces.verdict import Violation


def _outcome(rule: str | None, steps: int = 3, found_s: float = 1.5) -> Outcome:
    """A search result as `search` returns it: a failure caught by `rule` (None: nothing found)."""
    failure = None
    if rule is not None:
        v = Violation(rule, "PF-035", "t1", "f1", ("e1",), "planted", "pf")
        failure = Failure("pf", {"seed": 1}, [Step("post", [])] * steps, [v])
    return Outcome("pf", failure, runs=10, steps=40, elapsed_s=4.0, exhausted_budget=False, first_found_s=found_s)


RULES = ("convergence", "backfill-entry-derived")  # never-backfill: expected, then its also-rule


@pytest.mark.unit
def test_an_also_rule_counts_as_a_kill_and_says_so() -> None:
    kill = judge_kill("never-backfill", RULES, _outcome("backfill-entry-derived"))
    assert kill.killed and kill.caught_by == "also" and kill.rule == "backfill-entry-derived"
    row = kill.to_json()
    assert row["expected_rules"] == ["convergence"] and row["also_rules"] == ["backfill-entry-derived"]
    assert row["caught_by"] == "also" and not row["expected_rule_caught"]
    report = kill_report([kill])
    assert report["killed"] == 1 and report["survivors"] == [] and report["caught_by_also_rule"] == ["never-backfill"]


@pytest.mark.unit
def test_the_expected_rule_is_a_kill() -> None:
    kill = judge_kill("never-backfill", RULES, _outcome("convergence"))
    assert kill.killed and kill.caught_by == "expected" and kill.to_json()["expected_rule_caught"]
    assert kill.seconds_to_kill == 1.5 and kill.steps == 3


@pytest.mark.unit
def test_another_rule_is_not_a_kill() -> None:
    """The twin: a failure by a rule the mutant does not name is reported, but the mutant is not killed."""
    kill = judge_kill("never-backfill", RULES, _outcome("packing-limits"))
    assert not kill.killed and kill.caught_by == "other" and "packing-limits" in kill.note
    nothing = judge_kill("never-backfill", RULES, _outcome(None))
    assert not nothing.killed and nothing.caught_by == "" and nothing.seconds_to_kill is None
    report = kill_report([kill, nothing, judge_kill("x", RULES, _outcome("convergence", steps=5, found_s=2.0))])
    assert report["killed"] == 1 and report["survivors"] == ["never-backfill", "never-backfill"]
    assert report["caught_by_other_rule"] == ["never-backfill"]
    assert report["median_seconds_to_kill"] == 2.0 and report["median_steps"] == 5  # kills only


@pytest.mark.unit
def test_caught_by_orders_expected_before_also() -> None:
    assert [caught_by(r, ("a", "b", "c")) for r in ("a", "c", "d")] == ["expected", "also", "other"]
    assert caught_by("a", ()) == "other"


@pytest.mark.unit
def test_drivers_list_also_rules_and_parameter_mutants() -> None:
    from model.pf.mutants import ALSO, EXPECTED
    from model.sr.mutants import PARAMETER_MUTANTS

    pf = driver("pf").mutants()
    for name, also in ALSO.items():
        assert pf[name] == (EXPECTED[name], *also)
    sr = driver("sr").mutants()
    for name, m in PARAMETER_MUTANTS.items():
        assert sr[name] == (m.rule, *m.also)
    assert sr["never-promote"] == ("no-loss", "shadow-released")  # an sr also-rule


@pytest.mark.model
def test_a_parameter_mutant_is_killed_by_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """short-safetynet-hold: Safety Net keeps messages half as long as the recorded SafetyNetHoldTime."""
    assert main(["mutants", "sr", "--only", "short-safetynet-hold", "--budget", "30", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["mutants"][0]
    assert row["killed"] and row["rule"] == "safetynet-hold" and row["caught_by"] == "expected"
    assert row["requirement"] == "SR-065"


@pytest.mark.model
def test_the_model_with_short_durations_does_not_break_the_parameter_rule() -> None:
    """Twin of the kill above: the honest model, searched for the same rule, is never caught by it."""
    out = search("sr", None, "quick", 6, watch=frozenset({"safetynet-hold"}))
    assert out.runs > 0 and out.failure is None
