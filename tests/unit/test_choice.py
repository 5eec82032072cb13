"""Choice points and timer records in the kernel (issue 33): `model/kernel/choice.py`, `Simulator.at`."""

from __future__ import annotations

import random

import pytest

from model.kernel.choice import ChoiceNeeded, ScriptedChooser, SeededChooser, range_outcomes
from model.kernel.sim import SimulationError, Simulator, closure_in


def test_seeded_chooser_draws_exactly_as_the_generator() -> None:
    a, b = random.Random(7), random.Random(7)
    c = SeededChooser(a)
    got = [c.randint("x", 1, 100), c.chance("y", 0.3), c.pick("z", "abcdef"), c.randint("x", 5, 9)]
    want = [b.randint(1, 100), b.random() < 0.3, b.choice("abcdef"), b.randint(5, 9)]
    assert got == want


def test_a_choice_point_yields_every_allowed_outcome() -> None:
    outcomes = []
    for i in range(3):
        c = ScriptedChooser([i])
        outcomes.append(c.pick("shadow-target", ["MBX02", "MBX03", "MBX04"]))
        assert c.made == [("shadow-target", i, 3)]
    assert outcomes == ["MBX02", "MBX03", "MBX04"]
    with pytest.raises(ChoiceNeeded) as e:
        ScriptedChooser([]).pick("shadow-target", ["MBX02", "MBX03"])
    assert e.value.outcomes == ["MBX02", "MBX03"]
    assert {ScriptedChooser([i]).chance("stall", 0.05) for i in (0, 1)} == {False, True}
    assert ScriptedChooser([]).chance("never", 0.0) is False  # one outcome: no branch, no script used
    assert ScriptedChooser([]).pick("only", ["A"]) == "A"


def test_range_outcomes() -> None:
    assert range_outcomes(20, 2000) == [20, 2000]
    assert range_outcomes(20, 2000, "ends+mid") == [20, 1010, 2000]
    assert range_outcomes(5, 5) == [5]
    with pytest.raises(ValueError):
        range_outcomes(1, 2, "all")


class _Node:
    def __init__(self) -> None:
        self.fired: list[int] = []

    def fire(self, n: int) -> None:
        self.fired.append(n)


def test_timers_are_records_with_arguments() -> None:
    sim = Simulator(1, trace_id="t", mechanism="core")
    node = _Node()
    sim.after(5, node.fire, 1)
    sim.at(sim.now_ms + 2, node.fire, 2)
    sim.run()
    assert node.fired == [2, 1]
    assert closure_in(node.fire) == ""


def test_strict_timers_refuse_a_closure() -> None:
    sim = Simulator(1, trace_id="t", mechanism="core")
    sim.strict_timers = True
    node = _Node()
    assert closure_in(lambda: node.fire(1))
    with pytest.raises(SimulationError, match="closure"):
        sim.after(5, lambda: node.fire(1))


class _Base:
    def tick(self) -> None:
        pass


class _Child(_Base):
    def tick(self) -> None:  # calls super(): its only free variable is `__class__`, a constant
        super().tick()

    def make(self) -> object:
        n = 1

        def inner() -> int:
            return n

        return inner


def test_strict_by_default_and_super_is_not_a_closure() -> None:
    assert Simulator.strict_timers is True
    child = _Child()
    assert closure_in(child.tick) == ""
    assert "closure" in closure_in(child.make())  # twin: a nested function over a local


def test_a_chooser_branches_only_on_the_labels_named() -> None:
    """`only`: a choice under another label is the fallback's (drawn as the seed draws), takes no script entry
    and is not recorded; twin: without `only` the same calls consume the script and are recorded."""
    seeded, ref = random.Random(3), random.Random(3)
    c = ScriptedChooser([1], only=frozenset({"a"}), fallback=SeededChooser(seeded))
    got = [c.randint("b", 1, 100), c.pick("a", ["x", "y"]), c.chance("b", 0.5)]
    assert got == [ref.randint(1, 100), "y", ref.random() < 0.5]
    assert c.made == [("a", 1, 2)] and c.pos == 1
    every = ScriptedChooser([0, 1, 0])
    every.randint("b", 1, 100), every.pick("a", ["x", "y"]), every.chance("b", 0.5)
    assert [label for label, _, _ in every.made] == ["b", "a", "b"]
    with pytest.raises(ValueError, match="no fallback"):
        ScriptedChooser([], only=frozenset({"a"})).randint("b", 1, 2)
