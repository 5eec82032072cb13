"""PF-035 (convergence) is judged by the public folder monitor's rule in every harness run, so that
coverage sees it. The run's finish ends with the END snapshot of every replica: the model records its own
(`Cluster.end`); behind the adapter the harness records it from the system's `replicas` and `cnset` answers
(`systems.PfProcess.end`). A mutant that never backfills fails by the monitor's `convergence` rule (a violation
with events, not only the end-of-run check's problem). Twins: the clean run's END snapshot breaks no rule, and
the same snapshot with one replica's CNSet emptied breaks `convergence` (or the END's restated state)."""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.check import verdict
from conformance.harness.core import replay_steps
from conformance.harness.pf import DRIVER, LINKS, SERVERS
from conformance.harness.systems import process_factory
from traces.schema import Event

ROOT = Path(__file__).resolve().parents[2]
SUT = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'}"
search_module = importlib.import_module("conformance.harness.search")

pytestmark = pytest.mark.model

SETUP = {
    "seed": 5,
    "faults": False,
    "stores": [list(s) for s in SERVERS],
    "links": [list(link) for link in LINKS],
    "latency_max_ms": 120_000,
    "deleted_folder_limit": 500,
}
STEPS = [
    {"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f0"}}]},
    {
        "op": "add_replica",
        "calls": [{"call": "add_replica", "args": {"fid": {"$folder": 0}, "server": "C", "via": "A"}}],
    },
    {"op": "post", "calls": [{"call": "post", "args": {"store": "A", "fid": {"$folder": 0}, "size_kb": 1}}]},
]


def _rules(events: list[Event]) -> set[str]:
    return {v.rule for v in verdict(events, [DRIVER.monitor()]).violations}


def _run(system: object) -> list[Event]:
    try:
        session, _ = replay_steps(DRIVER, system, SETUP, STEPS)
        return list(session.events())
    finally:
        close = getattr(system, "close", None)
        if close is not None:
            close()


@pytest.fixture(scope="module", params=["model", "adapter"])
def events(request: pytest.FixtureRequest) -> list[Event]:
    factory = DRIVER.model_factory() if request.param == "model" else process_factory("pf", SUT)
    return _run(factory(SETUP))


def test_the_run_ends_with_an_end_snapshot_of_every_replica(events: list[Event]) -> None:
    ends = [e for e in events if e.kind == "END"]
    folders = {e.entity for e in ends}
    assert len(folders) == 2 and {e.node for e in ends if e.entity != "1-1"} == {"A", "C"}
    assert all(e.attrs["quiesce_ms"] < e.ts_ms and e.attrs["bound_ms"] > 0 for e in ends)
    assert events[-len(ends) :] == ends  # END last


def test_twin_the_clean_snapshot_breaks_no_rule(events: list[Event]) -> None:
    assert not _rules(events)


def test_a_replica_behind_at_the_end_breaks_convergence(events: list[Event]) -> None:
    i = next(i for i, e in enumerate(events) if e.kind == "END" and e.entity != "1-1" and e.node == "C")
    behind = list(events)
    behind[i] = replace(events[i], attrs={**events[i].attrs, "cnset": []})
    assert _rules(behind) & {"convergence", "restated-state"}


def test_a_mutant_that_never_backfills_fails_by_the_convergence_rule() -> None:
    profile = search_module.Profile("quick", max_examples=300, steps=20, budget_s=120.0)
    watch = frozenset({"convergence"})  # its other rules catch it first (backfill-entry-derived)
    out = search_module.search("pf", DRIVER.model_factory("never-backfill"), profile, watch=watch, shrink=False)
    assert out.failure is not None and out.failure.violations, out.failure
    assert out.failure.violations[0].rule == "convergence", out.failure.violations[:2]
