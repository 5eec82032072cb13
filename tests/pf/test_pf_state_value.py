"""The public folder model's state as a value (issue 33): timers are records, the stores' timer phases are
choice points, a copy of a running cluster is independent of its original, and the functions a cluster holds
in its state (a mutant's decisions) are module-level constants, not closures over live state."""

from __future__ import annotations

import copy
from dataclasses import fields, replace
from typing import Any

import pytest

from model.kernel.choice import ChoiceNeeded, ScriptedChooser
from model.kernel.network import NetConfig
from model.kernel.sim import HOUR, MINUTE, SECOND, SimulationError, Simulator, closure_in
from model.kernel.topology import Server, Topology
from model.pf.decisions import DECISIONS, Decisions
from model.pf.mutants import MUTANTS, RULE_MUTANTS
from model.pf.node import PHASE_BACKFILL, PHASE_CONTENT, PHASE_HIERARCHY
from model.pf.sim import Cluster, build_fixed, simulate

pytestmark = pytest.mark.unit

TWO = [("ExServ01", "rg0", "2003"), ("ExServ02", "rg0", "2003")]
PHASES = {PHASE_HIERARCHY: "tick_hierarchy", PHASE_CONTENT: "tick_content", PHASE_BACKFILL: "tick_backfill"}


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Simulator.strict_timers` on for the test (monkeypatch restores it)."""
    monkeypatch.setattr(Simulator, "strict_timers", True)


def _network_is_converted() -> bool:
    """Whether the kernel network's delivery timer is a record; called
    under strict timers, where a closure timer raises."""
    try:
        build_fixed(1, TWO)  # the joining store's status request goes through the network
    except SimulationError as e:
        if "model.kernel.network" in str(e):
            return False
        raise
    return True


@pytest.mark.parametrize("name", ["model", *sorted(MUTANTS)])
def test_every_timer_is_a_record(strict: None, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model and every mutant (one seed each) run under strict timers. Until the kernel network's delivery
    timer is a record (i33-sr), the run is strict for every timer but that one, which is the only closure."""
    run = simulate if name == "model" else MUTANTS[name]
    if not _network_is_converted():
        offenders: set[str] = set()
        at = Simulator.at

        def collecting(self: Simulator, t: int, fn: Any, *args: Any, node: str | None = None) -> Any:
            if why := closure_in(fn):
                offenders.add(why.split(".<locals>")[0])
            return at(self, t, fn, *args, node=node)

        monkeypatch.setattr(Simulator, "strict_timers", False)
        monkeypatch.setattr(Simulator, "at", collecting)
        assert run(1, duration_ms=12 * HOUR)
        assert offenders <= {"model.kernel.network.Network.send"}
        return
    assert run(1, duration_ms=12 * HOUR)


def test_a_closure_timer_is_refused_under_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin: a store's timer scheduled as a lambda around its tick is refused."""
    c = build_fixed(1, TWO)
    monkeypatch.setattr(Simulator, "strict_timers", True)
    store = c.stores["ExServ01"]
    c.sim.after(MINUTE, store.tick_content, node="ExServ01")  # a record: accepted
    with pytest.raises(SimulationError, match="closure"):
        c.sim.after(MINUTE, lambda: store.tick_content(), node="ExServ01")


def _one_store(chooser: Any) -> tuple[Cluster, dict[str, int]]:
    """A first store mounted under `chooser`: when each of its replication timers first runs (ms from now)."""
    sim = Simulator(1, trace_id="phase", mechanism="pf")
    sim.choices = chooser
    c = Cluster(sim, Topology([Server("ExServ01", "rg0", role="public")], []), NetConfig(latency_ms=(1, 2)))
    c.add_store("ExServ01")
    first = {item.fn.__name__: item.time_ms - sim.now_ms for item in sim._queue}
    return c, first


def test_each_timer_phase_is_a_choice_point_explored_at_both_ends() -> None:
    """PF-023, BF-007: a store's first hierarchy, content and backfill timers fall anywhere in their first
    period; a script takes each at both ends of its range (1 ms and the whole period)."""
    with pytest.raises(ChoiceNeeded) as e:
        _one_store(ScriptedChooser([]))
    assert e.value.label == PHASE_HIERARCHY
    c, low = _one_store(ScriptedChooser([0, 0, 0]))
    _, high = _one_store(ScriptedChooser([1, 1, 1]))
    p = c.params
    assert [low[PHASES[label]] for label in PHASES] == [1, 1, 1]
    assert [high[PHASES[label]] for label in PHASES] == [
        p.hierarchy_interval_ms,
        p.content_interval_ms,
        p.backfill_check_ms,
    ]
    assert [label for label, _, _ in c.sim.choices.made] == list(PHASES)


def _running() -> Cluster:
    c = build_fixed(5, TWO, latency_ms=(SECOND, MINUTE))
    fid = c.create_folder("ExServ01", "Sales")
    c.add_replica(fid, "ExServ02", via="ExServ01")
    c.advance(20 * MINUTE)
    for size in (4, 16, 64):
        c.post("ExServ01", fid, size)
    c.advance(3 * MINUTE)
    return c


def _script(c: Cluster) -> None:
    """Every later choice takes its first outcome: no loss, no duplicate, the least latency, the earliest phase
    (the network's loss, duplication and latency are choice points too)."""
    c.sim.choices = ScriptedChooser([0] * 10_000)


def test_a_copy_is_independent_and_continues_as_the_original() -> None:
    root = _running()
    seen, queued = len(root.events), len(root.sim._queue)
    twin = copy.deepcopy(root)
    _script(twin)
    twin.crash("ExServ02")
    twin.advance(2 * HOUR)
    twin.restart("ExServ02")
    twin.advance(HOUR)
    assert len(twin.events) > seen
    assert len(root.events) == seen and len(root.sim._queue) == queued  # the original did not move
    _script(root)
    root.crash("ExServ02")
    root.advance(2 * HOUR)
    root.restart("ExServ02")
    root.advance(HOUR)
    assert root.events == twin.events  # the same events from the copy point on, under the same script
    assert root.cnset("ExServ02", root.folders[0]) == twin.cnset("ExServ02", twin.folders[0])


def test_a_shallow_copy_is_not_independent() -> None:
    """The twin: a shallow copy shares the simulator (queue and recorder), so advancing it moves the original."""
    root = _running()
    seen = len(root.events)
    twin = copy.copy(root)
    twin.advance(HOUR)
    assert len(root.events) > seen


def _closures(rules: Decisions) -> list[str]:
    fns = [getattr(rules, f.name) for f in fields(rules)]
    fns += list(rules.extras.values())
    return [getattr(fn, "__qualname__", repr(fn)) for fn in fns if callable(fn) and getattr(fn, "__closure__", None)]


@pytest.mark.parametrize("name", ["model", *sorted(RULE_MUTANTS)])
def test_the_decisions_a_cluster_holds_are_module_constants(name: str) -> None:
    """A mutant's decisions (`rules.extras` lambdas included) are module-level functions with no captured
    cells: a copy of the cluster shares them with its original and may, since they hold no state."""
    rules = DECISIONS if name == "model" else RULE_MUTANTS[name]
    assert _closures(rules) == []
    assert copy.deepcopy(rules) == rules


def test_a_decision_closing_over_state_is_found() -> None:
    """The twin: a decision that captures a live list is a closure, which `_closures` names."""
    live: list[int] = []
    leaky = replace(DECISIONS, entry_due=lambda e, now: bool(live))
    assert _closures(leaky) == ["test_a_decision_closing_over_state_is_found.<locals>.<lambda>"]
