"""Idle heartbeats skipped, exactly (issue 33, session 12): `ModelSystem.advance` jumps virtual time over the runs of
the servers' heartbeat timers that are no-ops (`model/sr/idle.py`, `model/kernel/idle.py`), and the explorer's `tick`
asks the model how long nothing will be recorded (`ModelSystem.quiet_until`). The state left must be the one
stepping every timer leaves: the same events, clock, insertion counter, step count, timers and fingerprint, on
explored states of the model and of the policy mutants whose decisions the idle test asks (heartbeat period,
auto-discard interval, discard events kept in memory only). Twins: an idle test that overlooks a held shadow (its
heartbeat queries the primary, SR-054) or a kept discard event (it expires, SR-064) jumps over a run that acts, and
the comparison with stepping fails."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore.bfs import Explorer
from conformance.explore.fingerprint import fingerprint
from conformance.explore.manifest import load
from conformance.explore.spaces import time_steps
from model.kernel.sim import DAY, HOUR, MINUTE
from model.sr import idle as I
from model.sr.sim import quiesce
from tests.idle_compare import Stepping, diverging

pytestmark = pytest.mark.unit

PIECES = [20 * MINUTE, 3 * HOUR, 2 * DAY, 7 * DAY]  # advances in turn, each compared with stepping


def _states(mutant: str | None, n: int) -> tuple[Explorer, list[Any]]:
    """The first `n` states of the default sr bound (breadth first, every choice drawn by the seed), as nodes."""
    entry = next(e for e in load()[0] if e.bound.name == "sr-2s-1m-crash")
    ex = Explorer(entry.bound, mutant=mutant)
    ex.choices = False
    frontier, out = [ex.root()], []
    while frontier and len(out) < n:
        node = frontier.pop(0)
        out.append(node)
        if node.depth < ex.bound.depth:
            frontier += [child for _, _, child, found in ex.successors(node, set()) if child is not None]
    return ex, out


def _snapshot(system: Any) -> tuple[Any, ...]:
    sim = system.sim
    queue = sorted(sim._queue, key=lambda i: (i.time_ms, i.order))
    timers = [(i.time_ms, i.order, getattr(i.fn, "__qualname__", ""), i.args, i.node, i.incarnation) for i in queue]
    timers += [i.cancelled for i in queue]
    return sim.now_ms, sim._order, sim.steps, timers, [repr(e) for e in sim.events], fingerprint([system])


def _diverging(ex: Explorer, nodes: list[Any], quiesced: bool) -> list[str]:
    """The states at which advancing with the jump and by stepping every timer end differently (`quiesced`: after
    the fairness end's first call: every server restarted, the network healed)."""
    return diverging(ex, nodes, PIECES, _snapshot, _quiesce if quiesced else None)


def _quiesce(system: Any) -> None:
    quiesce(system.cluster)


@pytest.mark.parametrize(
    ("mutant", "n"), [(None, 40), ("slow-heartbeat", 12), ("early-auto-discard", 12), ("discards-in-memory", 12)]
)
def test_the_jump_leaves_the_state_stepping_leaves(mutant: str | None, n: int) -> None:
    ex, nodes = _states(mutant, n)
    assert _diverging(ex, nodes, quiesced=False) == []
    assert _diverging(ex, nodes[:: max(1, n // 6)], quiesced=True) == []


def test_the_jump_is_taken() -> None:
    """Not vacuous: over a week most heartbeat runs are jumped (far fewer timers run), with the same count."""
    ex, nodes = _states(None, 3)
    s, slow = ex.restore(nodes[-1]), ex.restore(nodes[-1])
    before, calls = s.system.sim.steps, 0
    real = s.system.sim.run

    def counted(**kw: Any) -> int:
        nonlocal calls
        calls += 1
        return real(**kw)

    s.system.sim.run = counted
    s.system.advance(7 * DAY)
    slow.system.sim.run(until_ms=slow.system.sim.now_ms + 7 * DAY)
    assert s.system.sim.steps == slow.system.sim.steps > before + 300  # two heartbeats a week: hundreds of runs
    assert calls * 10 < s.system.sim.steps - before  # most of them jumped, not run


@pytest.mark.parametrize("overlooked", [None, "shadow", "discard"])
def test_twin_an_idle_test_that_overlooks_work_diverges(
    overlooked: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A heartbeat called idle although its server holds a shadow (it queries the primary) or keeps a discard event
    that expires: the jump skips that run, and the comparison with stepping finds it (None: the real test, on the
    same states, agrees with stepping)."""
    real = I.acts_from

    def careless(cl: Any, node: str) -> int | None:
        if overlooked == "shadow":
            return I.discard_due(cl, node)
        if overlooked == "discard":
            return None if cl.shadows(node) else I.NEVER
        return real(cl, node)

    ex, nodes = _states(None, 40)
    monkeypatch.setattr(I, "acts_from", careless)
    bad = _diverging(ex, nodes, quiesced=False) + _diverging(ex, nodes[::7], quiesced=True)
    if overlooked is None:
        assert bad == []
    else:
        assert bad


def test_tick_steps_to_the_same_instant() -> None:
    """The explorer's `tick` (`spaces.time_steps`) asking `quiet_until` ends where stepping timer by timer ends (the
    system seen without it: `tests.idle_compare.Stepping`), with the same recorded step."""
    ex, nodes = _states(None, 20)
    for node in nodes:
        fast, slow = (ex.restore(node).system for _ in range(2))
        got = time_steps(fast, fast.sim, ex.bound, node.book)
        want = time_steps(Stepping(slow), slow.sim, ex.bound, node.book)
        assert [a.step() for a in got] == [a.step() for a in want] and _snapshot(fast) == _snapshot(slow)
