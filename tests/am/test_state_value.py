"""The Active Manager model's state as a value (issue 33): timers are records, the environment's answers are
choice points (`RngEnv` over a `Chooser`), and a copy of a running system is independent of its original."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from model.am import events as ev
from model.am.decisions import Out
from model.am.mutants import SIMULATORS
from model.am.protocol import (
    CHOICE_ACLL_SHORT,
    CHOICE_ACLL_SHORTFALL,
    CHOICE_MOUNT_FAILS,
    CHOICE_PAM,
    Layout,
    ModelSystem,
    RngEnv,
)
from model.am.sim import Driver, simulate
from model.kernel.choice import ChoiceNeeded, ScriptedChooser
from model.kernel.sim import SECOND, SimulationError, Simulator

pytestmark = pytest.mark.unit

LAYOUT = Layout(
    "DAG1",
    ("MBX1", "MBX2", "MBX3"),
    ("MBXS1",),
    {"DB1": ("MBX1", "MBX2", "MBX3"), "SDB1": ("MBXS1",)},
)


@pytest.fixture
def strict() -> Any:
    """`Simulator.strict_timers` on for the test, restored after."""
    before = Simulator.strict_timers
    Simulator.strict_timers = True
    try:
        yield
    finally:
        Simulator.strict_timers = before


@pytest.mark.parametrize("name", ["model", *sorted(SIMULATORS)])
def test_every_timer_is_a_record(strict: Any, name: str) -> None:
    """The model and every mutant run (one seed each, with the liveness phase) without a closure timer."""
    run = simulate if name == "model" else SIMULATORS[name]
    assert run(1, steps=40, liveness=True)


def test_a_closure_timer_is_refused_under_strict_mode(strict: Any) -> None:
    """The twin: the generator's old form, a lambda around the next tick, is refused."""
    sim = Simulator(1, trace_id="t", mechanism="am")
    system = ModelSystem(LAYOUT, RngEnv(sim.rng, choices=sim.choices))
    driver = Driver(sim, system, LAYOUT)
    sim.after(SECOND, driver.tick, 1)  # a record: accepted
    with pytest.raises(SimulationError, match="closure"):
        sim.after(SECOND, lambda: driver.tick(1))


def _system() -> ModelSystem:
    """Built as the harness builds it (seeded environment), then explored under scripts."""
    return ModelSystem(LAYOUT, RngEnv(random.Random(3), mount_fail=0.3))


def resolutions(root: ModelSystem, act: Callable[[ModelSystem], list[Out]]) -> list[tuple[list, ModelSystem, list]]:
    """Every resolution of the choices `act` meets, as the explorer finds them: each branch applies `act` to a
    fresh copy of `root` under a script, extended on `ChoiceNeeded` by each allowed outcome.
    Returns (choices made, the system after, the events) per complete script."""
    done, todo = [], [[]]
    while todo:
        script = todo.pop(0)
        s = copy.deepcopy(root)
        chooser = ScriptedChooser(list(script))
        s.env.choices = chooser
        try:
            outs = act(s)
        except ChoiceNeeded as e:
            todo += [[*script, i] for i in range(len(e.outcomes))]
            continue
        done.append((chooser.made, s, outs))
    return done


def _taken(leaves: list[tuple[list, ModelSystem, list]]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for made, _, _ in leaves:
        for label, i, _n in made:
            out.setdefault(label, set()).add(i)
    return out


def test_a_failover_branches_on_acll_and_mount() -> None:
    """AM-022..AM-025: the ACLL source falls short or not (by 1 or 20 logs), and a mount fails or succeeds:
    every outcome is taken on some script, and both a failed and a successful mount are reached."""
    root = _system()
    root.generate_logs("DB1", 30, {"MBX1": 0, "MBX2": 25, "MBX3": 25})  # the passives hold 5 of 30 logs
    leaves = resolutions(root, lambda s: s.fail_database("DB1"))
    taken = _taken(leaves)
    for label in (CHOICE_ACLL_SHORT, CHOICE_ACLL_SHORTFALL, CHOICE_MOUNT_FAILS):
        assert taken[label] == {0, 1}, label
    kinds = [{k for e, k, _ in outs if e == "DB1"} for _, _, outs in leaves]
    assert any(ev.MOUNT_FAIL in k for k in kinds)
    assert any(ev.MOUNTED in k and ev.MOUNT_FAIL not in k for k in kinds)
    acll = {a["lli"] for _, _, outs in leaves for _, k, a in outs if k == ev.ACLL_END}
    assert acll == {30, 29, 10}  # the source provides every log, one fewer, twenty fewer


def test_the_pam_election_branches_on_every_quorum_member() -> None:
    """AM-005/AM-006: when the PAM goes down, either survivor of the quorum may take it."""
    root = _system()
    (pam,) = root.pams()
    leaves = resolutions(root, lambda s: s.crash(pam))
    assert _taken(leaves)[CHOICE_PAM] == {0, 1}
    assert {next(iter(s.pams())) for _, s, _ in leaves} == set(LAYOUT.members) - {pam}


def test_a_copy_is_independent_and_continues_as_the_original() -> None:
    root = _system()
    root.generate_logs("DB1", 12, {"MBX1": 0, "MBX2": 3, "MBX3": 8})
    before = copy.deepcopy(root.world)
    twin = copy.deepcopy(root)
    script = [1, 0, 1, 0, 0, 0, 0, 0]
    twin.env.choices = ScriptedChooser(list(script))
    moved = twin.fail_database("DB1")
    assert moved and root.world == before  # advancing the copy left the original as it was
    root.env.choices = ScriptedChooser(list(script))
    assert root.fail_database("DB1") == moved
    assert root.world == twin.world


def test_a_shallow_copy_is_not_independent() -> None:
    """The twin: a shallow copy shares the world and the environment, so advancing it changes the original."""
    root = _system()
    before = copy.deepcopy(root.world)
    twin = copy.copy(root)
    twin.env.choices = ScriptedChooser([0] * 8)
    twin.fail_database("DB1")
    assert root.env is twin.env and root.world != before
