"""The network's choices are choice points (issue 33): `net.lost`, `net.duplicate`, `net.latency`.

`model/kernel/network.py` resolves loss, duplication and latency through `sim.choices`: seeded in simulation
(drawing exactly as the direct `sim.rng` calls did: the verdict digests and the sample corpus are unchanged),
scripted in exploration, where each allowed outcome is its own successor. Twin: a chooser that ignores its
script (it answers as the seed would) reaches fewer outcomes, and the search below says so.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pytest

from model.kernel.choice import ChoiceNeeded, ScriptedChooser, SeededChooser
from model.kernel.network import NET_DUPLICATE, NET_LATENCY, NET_LOST, NetConfig, Network
from model.kernel.sim import Simulator
from model.kernel.topology import Server, Topology

T = TypeVar("T")
CONFIG = NetConfig(latency_ms=(5, 200), loss=0.1, duplicate=0.1)


def _send(chooser: ScriptedChooser) -> tuple[str, ...]:
    """One message a -> b under `chooser`; the outcome: what arrived when (or that it was lost)."""
    sim = Simulator(1, trace_id="net-choice", mechanism="core")
    topo = Topology([Server("a", "s1"), Server("b", "s2")], [("s1", "s2", 5)])
    net = Network(sim, topo, CONFIG)
    net.register("b", lambda env: None)
    sim.choices = chooser
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    t0 = sim.events[0].ts_ms
    return tuple(f"{e.kind}@{e.ts_ms - t0}" for e in sim.events if e.kind in ("NET_RECV", "NET_DROP"))


def _every_outcome(make: Callable[[list[int]], ScriptedChooser]) -> tuple[set[tuple[str, ...]], set[str]]:
    """Every script of outcome indices, depth first (an odometer over the choices made): the distinct outcomes
    and the labels consulted."""
    outcomes: set[tuple[str, ...]] = set()
    labels: set[str] = set()
    todo: list[list[int]] = [[]]
    while todo:
        script = todo.pop()
        chooser = make(script)
        try:
            outcomes.add(_send(chooser))
        except ChoiceNeeded as need:
            todo.extend([*script, i] for i in range(len(need.outcomes)))
            continue
        labels |= {label for label, _, _ in chooser.made}
    return outcomes, labels


def test_each_network_choice_yields_every_outcome() -> None:
    outcomes, labels = _every_outcome(ScriptedChooser)
    assert labels == {NET_LOST, NET_DUPLICATE, NET_LATENCY}
    assert outcomes == {
        ("NET_DROP@0",),  # net.lost
        ("NET_RECV@5",),  # not lost, once, the least latency
        ("NET_RECV@200",),  # ... the greatest
        ("NET_RECV@5", "NET_RECV@5"),  # net.duplicate: each copy its own latency
        ("NET_RECV@5", "NET_RECV@200"),  # (either copy the later one: the same events)
        ("NET_RECV@200", "NET_RECV@200"),
    }


class _IgnoresScript(ScriptedChooser):
    """Twin: records its choices as a scripted chooser does but answers as the seed would."""

    def _take(self, label: str, outcomes: Sequence[T]) -> T:
        seeded = SeededChooser(random.Random(0))
        self.made.append((label, 0, len(outcomes)))
        return seeded.pick(label, list(outcomes))


def test_twin_a_chooser_that_ignores_the_script_is_caught() -> None:
    outcomes, _ = _every_outcome(_IgnoresScript)
    with pytest.raises(AssertionError):
        assert len(outcomes) == 6


def test_no_choice_where_the_configuration_allows_one_outcome() -> None:
    """Loss and duplication of 0 and a fixed latency are no choice: nothing is branched on."""
    sim = Simulator(1, trace_id="net-choice", mechanism="core")
    net = Network(sim, Topology([Server("a", "s1"), Server("b", "s1")]), NetConfig(latency_ms=(7, 7)))
    seen: list[Any] = []
    net.register("b", seen.append)
    sim.choices = chooser = ScriptedChooser([])
    start = sim.now_ms
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    assert chooser.made == [] and len(seen) == 1 and sim.now_ms == start + 7


def test_seeded_network_draws_as_the_generator_did() -> None:
    """Simulation: the seeded chooser draws `random() < loss`, `random() < duplicate`, `randint(lo, hi)`."""
    sim = Simulator(4, trace_id="net-choice", mechanism="core")
    net = Network(sim, Topology([Server("a", "s1"), Server("b", "s1")]), CONFIG)
    net.register("b", lambda env: None)
    rng = random.Random(4)
    for _ in range(30):
        net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
        if not rng.random() < CONFIG.loss:
            for _ in range(2 if rng.random() < CONFIG.duplicate else 1):
                rng.randint(*CONFIG.latency_ms)
    assert sim.rng.getstate() == rng.getstate()
