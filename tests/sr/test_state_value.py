"""sr's state is a value (issue 33): timers are records, choices go through `sim.choices`, a copy is independent.

Item 1: every timer the sr model (and each mutant) schedules is a bound method or module function with its
arguments (`model.kernel.sim.closure_in`): the whole run passes under `Simulator.strict_timers`; twin: a closure
scheduled under strict mode is refused.
Item 2: under a `ScriptedChooser` each choice point of `model.sr.choice_points` yields every allowed outcome;
a deep copy of a system is independent of its original and continues exactly as it would (twin: a copy that
shares the timer queue is not).
"""

from __future__ import annotations

import copy
import json
import pickle
import re
from collections import Counter

import pytest

from model.kernel.choice import ChoiceNeeded, Chooser, ScriptedChooser
from model.kernel.sim import HOUR, MINUTE, SECOND, SimulationError, Simulator
from model.sr.choice_points import LABELS
from model.sr.cluster import Cluster, Timing
from model.sr.mutants import MUTANTS, PARAMETER_MUTANTS
from model.sr.protocol import ModelSystem
from model.sr.sim import build_topology, simulate
from model.sr.state import SrConfig
from model.sr.symmetry import interchangeable


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strict timers for the test only (monkeypatch restores the class attribute)."""
    monkeypatch.setattr(Simulator, "strict_timers", True)


@pytest.mark.usefixtures("strict")
def test_the_model_schedules_only_records() -> None:
    assert simulate(1, hub=True, promotion_check="exactTimer")
    assert simulate(2, layout="mixed", reject_on_failure=True)


@pytest.mark.usefixtures("strict")
@pytest.mark.parametrize("name", sorted({**MUTANTS, **PARAMETER_MUTANTS}))
def test_each_mutant_schedules_only_records(name: str) -> None:
    assert {**MUTANTS, **PARAMETER_MUTANTS}[name].simulate(1)


@pytest.mark.usefixtures("strict")
def test_a_closure_under_strict_mode_fails() -> None:
    """Twin: the same system refuses a lambda or a nested function as a timer."""
    system = ModelSystem(1)

    def nested() -> None:
        system.heal()

    for action in (lambda: system.heal(), nested):
        with pytest.raises(SimulationError, match="closure"):
            system.sim.after(5, action)
    system.sim.after(5, system.heal)  # a bound method is a record
    system.advance(10)


# --- item 2: choice points --------------------------------------------------------------------------------------
# A small world where every choice point of the system comes up: four servers in one DAG over two sites (two
# eligible remote shadow servers for each primary), every chance of the world well above 0.
_TIMING = Timing(stall_p=0.3, slow_p=0.3, ack_loss_p=0.3, hop_slow_p=0.3)
_PAD = 2_000  # outcome 0 for every choice after the prefix a script decides


def _system(seed: int, chooser: Chooser | None = None) -> ModelSystem:
    """`ModelSystem` with `chooser` in place before the cluster starts (the heartbeat phases are drawn then)."""
    system = ModelSystem.__new__(ModelSystem)
    system.cfg = SrConfig().replace(heartbeat_ms=2 * MINUTE)
    system.sim = Simulator(seed, trace_id=f"sr-choice-s{seed}", mechanism="sr", config={"sr": system.cfg.to_json()})
    if chooser is not None:
        system.sim.choices = chooser
    system.timing = _TIMING
    system.cluster = Cluster(
        system.sim, build_topology(system.sim.rng, 4, "multi-site-dag", False), system.cfg, None, _TIMING
    )
    return system


def _scenario(system: ModelSystem) -> None:
    system.submit("msg-1", "MBX01", ["mbx", "ext:contoso.example"])
    system.advance(2 * HOUR)


def _run(prefix: list[int]) -> tuple[ModelSystem, list[tuple[str, int, int]]]:
    chooser = ScriptedChooser([*prefix, *[0] * _PAD])
    system = _system(3, chooser)
    _scenario(system)
    return system, chooser.made


def test_every_choice_point_yields_every_allowed_outcome() -> None:
    """Greedy search over scripts: flip the first choice whose outcome was not yet taken, until every outcome of
    every label has been taken on some script; every label of `choice_points.LABELS` comes up."""
    taken: dict[str, set[int]] = {}
    counts: dict[str, int] = {}
    queued: set[tuple[str, int]] = set()
    todo: list[list[int]] = [[]]
    shadows: set[str] = set()
    runs = 0
    while todo and runs < 200:
        system, made = _run(todo.pop(0))
        runs += 1
        shadows |= {e.attrs["shadow"] for e in system.events() if e.kind == "HAREDIRECT" and e.node == "MBX01"}
        for label, i, n in made:
            taken.setdefault(label, set()).add(i)
            counts[label] = max(counts.get(label, 0), n)
        for pos, (label, _, n) in enumerate(made):
            for j in range(n):
                if j not in taken[label] and (label, j) not in queued:
                    queued.add((label, j))
                    todo.append([i for _, i, _ in made[:pos]] + [j])
    assert set(taken) == set(LABELS), f"choice points never reached: {sorted(set(LABELS) - set(taken))}"
    for label in LABELS:
        assert taken[label] == set(range(counts[label])), label
        assert counts[label] >= 2, label
    assert shadows == {"MBX02", "MBX04"}  # both eligible remote servers took a shadow of MBX01's message


def test_a_script_outside_the_outcomes_is_refused() -> None:
    """Twin: the chooser is really consulted: a script index beyond a choice's outcomes fails at that choice."""
    with pytest.raises(ValueError, match="scripted outcome"):
        _run([7])


def test_an_undecided_choice_is_asked_for() -> None:
    with pytest.raises(ChoiceNeeded) as asked:
        _scenario(_system(3, ScriptedChooser([])))
    assert asked.value.label in LABELS


# --- item 2: a copy of a system is a value ------------------------------------------------------------------------
def _queue(system: ModelSystem) -> list[tuple[int, int, str, tuple[object, ...]]]:
    return [(i.time_ms, i.order, i.fn.__name__, i.args) for i in sorted(system.sim._queue)]


@pytest.mark.parametrize("scripted", [False, True])
def test_a_copy_is_independent_and_continues_as_the_original(scripted: bool) -> None:
    system = _system(5, ScriptedChooser([1, 0, 1, 1, 0, 1] + [0] * _PAD) if scripted else None)
    _scenario(system)
    system.crash("MBX02")
    system.advance(10 * MINUTE)
    frozen = pickle.dumps(system)
    events, queue = list(system.events()), _queue(system)
    twin = copy.deepcopy(system)

    twin.submit("msg-2", "MBX03", ["mbx"])  # the copy moves on: the original does not
    twin.restart("MBX02", new_database=True)
    twin.advance(3 * HOUR)
    assert len(twin.events()) > len(events)
    assert list(system.events()) == events and _queue(system) == queue
    assert pickle.dumps(system) == frozen

    again = copy.deepcopy(pickle.loads(frozen))  # the same state once more: both continue the same way
    for s in (system, again):
        s.submit("msg-2", "MBX03", ["mbx"])
        s.restart("MBX02", new_database=True)
        s.advance(3 * HOUR)
    assert list(again.events()) == list(system.events()) == list(twin.events())
    assert _queue(again) == _queue(system)


def test_a_shared_timer_is_not_a_copy() -> None:
    """Twin: a deep copy that shares the original's timer queue (its records call the original's methods) changes
    the original when it runs."""
    system = _system(5)
    _scenario(system)
    before, events = _queue(system), len(system.events())
    shared = copy.deepcopy(system, {id(system.sim._queue): system.sim._queue})
    shared.sim.run(max_steps=50)
    assert _queue(system) != before or len(system.events()) != events


# --- symmetry (`model.sr.symmetry`) -------------------------------------------------------------------------------
def test_interchangeable_groups() -> None:
    assert interchangeable({"layout": "multi-site-dag", "n_servers": 4}) == [["MBX01", "MBX03"], ["MBX02", "MBX04"]]
    assert interchangeable({"layout": "mixed", "n_servers": 4, "hub": True}) == [["MBX01", "MBX03"]]
    assert interchangeable({"layout": "no-dag", "n_servers": 2}) == []
    # a server with its own ShadowMessagePreference (SR-I01) is alone in its class
    assert interchangeable({"n_servers": 4, "preference_by_server": {"MBX03": "LocalOnly"}}) == [["MBX02", "MBX04"]]


def _renamed_run(primary: str, other: str, rename: dict[str, str]) -> Counter[str]:
    """One scripted run (every choice at outcome 0), its events as a multiset of renamed records (within an
    instant the model takes servers in name order: the symmetry holds up to that order, `model.sr.symmetry`)."""
    system = _system(4, ScriptedChooser([0] * _PAD))
    system.submit("m1", primary, ["mbx", "ext:contoso.example"])
    system.advance(3 * SECOND)
    system.submit("m2", other, ["mbx"])
    system.advance(SECOND)
    system.crash(primary)
    system.advance(HOUR)
    system.restart(primary, new_database=True)
    system.advance(3 * HOUR)
    pattern = re.compile("|".join(rename)) if rename else None
    out: Counter[str] = Counter()
    for e in system.events():
        if e.kind in ("TRACE_START", "SR_CONFIG"):  # the topology itself is invariant under the renaming
            continue
        text = json.dumps([e.ts_ms, e.node, e.entity, e.kind, e.attrs], sort_keys=True, default=str)
        out[pattern.sub(lambda m: rename[m.group(0)], text) if pattern else text] += 1
    return out


def test_interchangeable_servers_behave_alike_renamed() -> None:
    """The same steps with MBX01 and MBX03 swapped give the same records renamed; twin: MBX01 and MBX02 (another
    site, not in one group) do not."""
    groups = interchangeable({"layout": "multi-site-dag", "n_servers": 4})
    assert ["MBX01", "MBX03"] in groups
    original = _renamed_run("MBX01", "MBX03", {})
    assert _renamed_run("MBX03", "MBX01", {"MBX01": "MBX03", "MBX03": "MBX01"}) == original
    assert not any("MBX02" in g and "MBX01" in g for g in groups)
    assert _renamed_run("MBX02", "MBX03", {"MBX01": "MBX02", "MBX02": "MBX01"}) != original
