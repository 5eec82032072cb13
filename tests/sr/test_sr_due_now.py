"""Timers due now are run by `advance(0)` (issue 33, session 14): the sr explorer's `tick` no longer loops forever.

A server restarted after its queued message's MessageExpirationTimeout passed (SR-067) schedules the queue expiry
for the instant of the restart (`Cluster._lifecycle`, `sim.at(max(now, due))`). The `tick`'s probe
(`spaces.time_steps`) then asks the model to advance by the next timer's delay, 0; `ModelSystem.advance` of
session 12 returned as soon as the clock was at `until`, so `advance(0)` ran nothing and the probe asked again,
forever: sr-3s-2m-2f's first such state is at depth 6 (submit, tick, crash, tick, tick, restart), which is why
the depth 9 attempt of session 13 never finished level 7. The state `advance` leaves must be the one stepping
every timer (`sim.run(until_ms=...)`) leaves; twin: session 12's `advance` (stop once the clock is at `until`)
diverges from stepping on that state, and the probe over it fails loudly instead of spinning."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore.bfs import Explorer
from conformance.explore.fingerprint import fingerprint
from conformance.explore.manifest import find
from conformance.explore.spaces import time_steps
from model.kernel.idle import fast_forward
from model.sr.idle import Rearmer
from model.sr.protocol import ModelSystem
from tests.idle_compare import Stepping

pytestmark = pytest.mark.unit

PATH = [("submit", "MBX01"), ("advance", None), ("crash", "MBX01"), ("advance", None), ("advance", None)]


@pytest.fixture(scope="module")
def explored() -> tuple[Explorer, Any]:
    """The explored state after PATH (the explorer's own successors, ticks included; depth 5)."""
    ex = Explorer(find("sr-3s-2m-2f-d6").bound.with_(depth=9))
    node = ex.root()
    for op, arg in PATH:
        node = next(
            child
            for _, step, child, _ in ex.successors(node)
            if child is not None and step["op"] == op and (arg is None or arg in str(step["calls"]))
        )
    return ex, node


def _restarted(explored: tuple[Explorer, Any]) -> Any:
    """A copy of the explored state, then the restart of MBX01 whose queued m1 has outlived
    MessageExpirationTimeout: the restart's queue expiry is due at that instant (depth 6)."""
    ex, node = explored
    s = ex.restore(node)
    s.apply({"call": "restart", "args": {"server": "MBX01", "new_database": False}})
    return s.system


def _due_now(system: Any) -> list[str]:
    sim = system.sim
    return [i.fn.__name__ for i in sim._queue if not i.cancelled and sim._live(i) and i.time_ms <= sim.now_ms]


def _snapshot(system: Any) -> tuple[Any, ...]:
    sim = system.sim
    queue = sorted(sim._queue, key=lambda i: (i.time_ms, i.order))
    timers = [(i.time_ms, i.order, i.fn.__name__, i.args, i.node, i.incarnation, i.cancelled) for i in queue]
    return sim.now_ms, sim._order, sim.steps, timers, len(sim.events), fingerprint([system])


def _stops_at_the_clock(system: Any, ms: int) -> None:
    """Session 12's `ModelSystem.advance` (the twin): it returns once the clock is at `until`, so the timers due at
    `until` itself are left pending (all of them when `ms` is 0)."""
    sim, until = system.sim, system.sim.now_ms + ms
    while True:
        fast_forward(sim, until, Rearmer(system.cluster))
        if sim.now_ms >= until or not sim.run(until_ms=until, max_steps=1):
            return


class _Session12:
    """A system advanced by the twin."""

    def __init__(self, system: Any) -> None:
        self.system = system

    def advance(self, ms: int) -> None:
        _stops_at_the_clock(self.system, ms)

    def quiet_until(self, until_ms: int) -> int:
        return self.system.quiet_until(until_ms)


def test_advance_runs_the_timers_due_now_as_stepping_does(explored: tuple[Explorer, Any]) -> None:
    fast, slow, twin = (_restarted(explored) for _ in range(3))
    assert _due_now(fast) == ["_queue_expire"]  # not vacuous: the state has a timer due now
    seen = len(fast.sim.events)
    fast.advance(0)
    slow.sim.run(until_ms=slow.sim.now_ms)
    assert _snapshot(fast) == _snapshot(slow) and len(fast.sim.events) > seen  # the FAIL is recorded (SR-067)
    _stops_at_the_clock(twin, 0)
    assert _snapshot(twin) != _snapshot(slow) and _due_now(twin) == ["_queue_expire"]  # the twin: left pending


def test_the_tick_over_a_timer_due_now_ends_where_stepping_ends(explored: tuple[Explorer, Any]) -> None:
    ex = explored[0]
    fast, slow = _restarted(explored), _restarted(explored)
    got = time_steps(fast, fast.sim, ex.bound, (1, 1, frozenset(), frozenset()))
    want = time_steps(Stepping(slow), slow.sim, ex.bound, (1, 1, frozenset(), frozenset()))
    assert [a.step() for a in got] == [a.step() for a in want]
    assert got[-1].step()["calls"][0]["args"] == {"ms": 0} and _snapshot(fast) == _snapshot(slow)


def test_twin_the_probe_over_session_12s_advance_fails_instead_of_spinning(explored: tuple[Explorer, Any]) -> None:
    ex = explored[0]
    twin = _restarted(explored)
    with pytest.raises(RuntimeError, match=r"advance\(0\) left a timer due"):
        time_steps(_Session12(twin), twin.sim, ex.bound, (1, 1, frozenset(), frozenset()))


def _mark(marks: list[str], name: str) -> None:
    """A timer's action (a module-level function: the kernel's timers are records)."""
    marks.append(name)


@pytest.mark.parametrize("advance", ["model", "twin"])
def test_every_timer_due_at_until_runs_not_only_the_first(advance: str) -> None:
    """Two timers due at the end of an `advance`: both run, as stepping runs them (the twin, session 12's `advance`,
    stops once the first has brought the clock to `until` and leaves the second pending)."""
    system = ModelSystem(1, n_servers=3)
    marks: list[str] = []
    until = system.sim.now_ms + 1_000
    system.sim.at(until, _mark, marks, "first")
    system.sim.at(until, _mark, marks, "second")
    if advance == "model":
        system.advance(1_000)
        assert marks == ["first", "second"]
    else:
        _stops_at_the_clock(system, 1_000)
        assert marks == ["first"]
