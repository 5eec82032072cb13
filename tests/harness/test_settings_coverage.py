"""Every public folder rule can be exercised by the harness's runs on the model. `packing-limits`
(PF-011) and `backfill-check-not-early` (BF-036) never were: the limits and the backfill check's interval live
in PF_CONFIG's `params` (only the values changed from the catalogue's are recorded), which no perturbation
changed, and a run seldom had one store run two backfill checks. Now the coverage's perturbations change one
setting of a context event's settings too (`report.SETTINGS`: every parameter in force, defaults filled in), and
the pf generator draws `backfill_twice` (two losses, each repaired by backfill).

Each check with its twin: the same trace without the changed setting does not fire the rule."""

from __future__ import annotations

import random

import pytest

from conformance.check import verdict
from conformance.harness.core import Session, replay_steps
from conformance.harness.pf import DRIVER, SERVERS
from conformance.harness.report import CHANGES, _resettled, _settings, _tampered
from traces.schema import Event

pytestmark = pytest.mark.model

SETUP = {
    "seed": 3,
    "faults": True,
    "stores": [list(s) for s in SERVERS],
    "links": [["rg0", "rg1", 7]],
    "latency_max_ms": 120_000,
    "deleted_folder_limit": 500,
}


def _run(*steps: tuple[str, dict]) -> list[Event]:
    s = Session(DRIVER, DRIVER.model_factory()(SETUP), SETUP)
    DRIVER.absorb(s, "__init__", None)
    recorded = [s.step(op, raw).to_json() for op, raw in steps]
    session, _ = replay_steps(DRIVER, DRIVER.model_factory()(SETUP), SETUP, recorded)
    return list(session.events())


def _rules(events: list[Event]) -> set[str]:
    return {v.rule for v in verdict(events, [DRIVER.monitor()]).violations}


def _with_setting(events: list[Event], key: str, change: int) -> list[Event]:
    i = next(i for i, e in enumerate(events) if e.kind == "PF_CONFIG")
    leaves = _settings(events[i])[2]
    out = list(events)
    out[i] = _resettled(events[i], random.Random(0), leaves.index((key,)), change)
    return out


@pytest.fixture(scope="module")
def twice() -> list[Event]:
    return _run(("create_folder", {"via": "A"}), ("backfill_twice", {"folder": 0, "store": "A", "other": "B"}))


def test_backfill_twice_makes_a_store_run_two_backfill_checks(twice: list[Event]) -> None:
    runs = sorted({(e.node, e.ts_ms) for e in twice if e.kind == "BACKFILL"})
    assert len(runs) >= 2 and len({node for node, _ in runs}) < len(runs)


def test_a_much_longer_backfill_check_interval_fires_backfill_check_not_early(twice: list[Event]) -> None:
    assert "backfill-check-not-early" in _rules(_with_setting(twice, "backfill_check_ms", 3))


def test_twin_the_recorded_interval_does_not(twice: list[Event]) -> None:
    assert "backfill-check-not-early" not in _rules(twice)


@pytest.fixture(scope="module")
def posts() -> list[Event]:
    return _run(
        ("create_folder", {"via": "A"}),
        ("add_replica", {"folder": 0, "server": "B", "via": "A"}),
        ("advance", {"minutes": 90}),
        ("post", {"folder": 0, "store": "A", "n": 3, "size": 1}),
    )


def test_a_smaller_message_count_limit_fires_packing_limits(posts: list[Event]) -> None:
    assert "packing-limits" in _rules(_with_setting(posts, "message_count_limit", 0))


def test_twin_the_recorded_limit_does_not(posts: list[Event]) -> None:
    assert "packing-limits" not in _rules(posts)


def test_the_sweep_changes_each_setting_in_turn_and_never_to_zero(posts: list[Event]) -> None:
    """A run's sweep (its number) changes one setting, given each of its changes; over the runs every setting;
    an integer never to 0 or below (no configuration a system runs with)."""
    i = next(i for i, e in enumerate(posts) if e.kind == "PF_CONFIG")
    _, before, leaves = _settings(posts[i])
    keys = [path[0] for path in leaves]
    seen = set()
    for run in range(len(keys)):
        for variant in _tampered(posts, random.Random(run), 0, sweep=run)[-CHANGES:]:
            after = _settings(variant[i])[1]
            changed = [k for k in keys if after[k] != before[k]]
            assert changed in ([], [keys[run]])  # [] : the change left the value as it was (already 1)
            assert all(isinstance(after[k], bool) or after[k] >= 1 for k in changed)
            seen.update(changed)
    assert seen == set(keys)


@pytest.fixture(scope="module")
def sr_traces() -> list[list[Event]]:
    """The model's traces of a short derandomised search (varied layouts; a sample as `conform` keeps one)."""
    import importlib

    search = importlib.import_module("conformance.harness.search")
    return search.search("sr", None, search.Profile("quick", 20, 20, 600.0), keep_traces=6).traces


def _sr_rules(events: list[Event]) -> set[str]:
    from conformance.harness.sr import DRIVER as SR

    return {v.rule for v in verdict(events, [SR.monitor()]).violations}


def test_a_server_moved_to_another_site_or_dag_reaches_shadow_in_boundary(sr_traces: list[list[Event]]) -> None:
    """SR_CONFIG's topology: a server's site, DAG or version changed to another server's (strings); some such
    change puts a shadow outside its primary's boundary (SR-015)."""
    fired: set[str] = set()
    for trace in sr_traces:
        i = next(i for i, e in enumerate(trace) if e.kind == "SR_CONFIG")
        _, _, leaves = _settings(trace[i])
        assert leaves and {path[-1] for path in leaves} <= {"site", "dag", "version"}
        for turn in range(len(leaves)):
            for change in range(CHANGES):
                evs = list(trace)
                evs[i] = _resettled(trace[i], random.Random(0), turn, change)
                fired |= _sr_rules(evs)
    assert "shadow-in-boundary" in fired, fired


def test_twin_the_recorded_topology_keeps_every_shadow_in_its_boundary(sr_traces: list[list[Event]]) -> None:
    assert not any("shadow-in-boundary" in _sr_rules(trace) for trace in sr_traces)


def test_twin_a_trace_without_such_settings_gets_no_extra_perturbation() -> None:
    """am traces are perturbed exactly as before (no context event records settings as JSON), and an SR_CONFIG
    whose topology gives no setting another value is left alone too."""
    start = Event("t", 0, "t:0", 0, "sim", "core", "t", "TRACE_START", {"config": "{}"})
    topo = '{"MBX01": {"site": "S1", "version": "2013"}}'
    evs = [start, Event("t", 1, "t:1", 1, "n", "sr", "config", "SR_CONFIG", {"topology": topo})]
    assert len(_tampered(evs, random.Random(0), 3, sweep=0)) == 1 + 3
