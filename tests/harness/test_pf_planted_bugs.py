"""The public folder reference system's planted bugs (issue 34): each one is caught by its own rule.

Seeds 001 ("Default Replication Event Schedule"), 003 ("Backfill Time-outs", "Selecting a Backfill Server").
Fast (`model`): the generator's canned scenario for the bug (`conformance.harness.pf_scenarios`), replayed on
`examples/sut/pf_node.py --bug X`, fails by the bug's rule; the twin, the same scenario on the correct store
group, passes with no violation at all. Slow: `haconform conform pf` with the default budget finds each bug
by its rule (the generator reaches the situation on its own); the kill times are in the closing note of issue 34.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.check import verdict
from conformance.harness.core import replay_steps
from conformance.harness.pf import DRIVER, LINKS
from conformance.harness.pf_scenarios import LAYOUTS, SCENARIOS, other_than
from conformance.harness.search import search
from conformance.harness.systems import process_factory

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[2]
SUT = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'}"
F = {"$folder": 0}
# bug -> (scenario, the store it centres on, layout, the rule that must catch it)
BUGS = {
    "version-before-cost": ("source_tie", "A", "cost-vs-version", "backfill-source-order"),  # BF-011
    "content-every-5-minutes": ("schedule_watch", "A", "cost-vs-version", "broadcast-not-early"),  # PF-038
    "retry-before-timeout": ("retry_after_timeout", "A", "cost-vs-version", "backfill-before-timeout"),  # BF-006
    "entry-never-local": ("source_tie", "A", "cost-vs-version", "backfill-entry-derived"),  # BF-005
    "serve-while-pending": ("pending_with_entries", "B", "cost-vs-version", "served-by-active-replica"),  # BF-028
}
# the bugs planted before issue 34 and their rules (each also found by a search within the default budget)
OLDER = {
    "status-claims-more": "cnset-carried",
    "backfill-wrong-source": "backfill-source-order",
    "local-posts-only": "broadcast-interval",
    "ignore-delete-limit": "packing-limits",
}


def setup_of(layout: str) -> dict[str, Any]:
    return {
        "seed": 3,
        "faults": True,
        "layout": layout,
        "stores": [list(s) for s in LAYOUTS[layout]],
        "links": [list(link) for link in LINKS],
        "latency_max_ms": 2 * 60_000,
        "deleted_folder_limit": 500,
    }


def judged(bug: str, scenario: str, store: str, layout: str) -> set[str]:
    """The rules violated by the scenario replayed (with the harness's fairness end) on the store group."""
    setup = setup_of(layout)
    system = process_factory("pf", SUT + (f" --bug {bug}" if bug else ""))(setup)
    try:
        calls = SCENARIOS[scenario](F, "A", store, 0.0)
        steps = [{"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f0"}}]}]
        session, _ = replay_steps(DRIVER, system, setup, [*steps, {"op": scenario, "calls": calls}])
        return {v.rule for v in verdict(session.events(), [DRIVER.monitor()]).violations}
    finally:
        system.close()


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_the_scenario_for_each_bug_fails_by_its_rule_and_the_correct_store_passes_it(bug: str) -> None:
    scenario, store, layout, rule = BUGS[bug]
    assert rule in judged(bug, scenario, store, layout)
    assert judged("", scenario, store, layout) == set()  # twin: the correct store group, the same inputs


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_source_tie_lets_version_and_the_order_decide_from_c(layout: str) -> None:
    """From C, A and B tie on cost; A is newer ("cost-vs-version") or they tie on version too ("one-version":
    the name decides). `backfill-wrong-source` asks B, the last holder: caught whichever key decides."""
    assert "backfill-source-order" in judged("backfill-wrong-source", "source_tie", "C", layout)


@pytest.mark.parametrize("store", ["A", "B", "C"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_scenario_passes_on_the_correct_store_group_whatever_store_and_layout(layout: str, store: str) -> None:
    for scenario in SCENARIOS:
        assert judged("", scenario, store, layout) == set(), scenario


def test_the_layouts_make_cost_version_and_the_order_decide_a_tie() -> None:
    """From A in "cost-vs-version" B is cheaper and C newer; from C, A and B cost the same and A is newer; in
    "one-version" A and B tie on cost and version seen from C (BF-011's later keys decide)."""
    versions = {layout: {n: float(v) for n, _, v in servers} for layout, servers in LAYOUTS.items()}
    groups = {layout: {n: g for n, g, _ in servers} for layout, servers in LAYOUTS.items()}
    cvv, one = "cost-vs-version", "one-version"
    assert groups[cvv]["A"] == groups[cvv]["B"] != groups[cvv]["C"] and versions[cvv]["C"] > versions[cvv]["B"]
    assert groups[one]["A"] == groups[one]["B"] and versions[one]["A"] == versions[one]["B"]
    assert other_than("A", "A") == "B" and other_than("A", "C") == "C"


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted({**BUGS, **OLDER}))
def test_conform_finds_each_planted_bug_by_its_rule_within_the_default_budget(bug: str) -> None:
    rule = BUGS[bug][3] if bug in BUGS else OLDER[bug]
    out = search("pf", process_factory("pf", f"{SUT} --bug {bug}"), "quick", shrink_budget_s=5)
    assert out.failure is not None, f"{bug}: not found in {out.runs} runs"
    assert out.failure.rule == rule, (bug, out.failure.rule, out.failure.problem[:200])
