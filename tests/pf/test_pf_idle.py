"""Idle timers skipped, exactly (issue 33): `Cluster.advance` jumps virtual time over the runs of the stores' timers
that are no-ops (`model/pf/idle.py`, `model/kernel/idle.py`), and the explorer's `tick` asks the model how long
nothing will be recorded (`Cluster.quiet_until`). The state left must be the one stepping every timer leaves: the
same events, clock, insertion counter, step count, timers (time, insertion number, action, node, incarnation) and
fingerprint, on explored states of the model and of mutants (a store mutant, whose timers are always stepped, and
the rule mutant whose backfill check acts on every entry). Twins: an idle test that overlooks a status expiry, or a
backfill entry, jumps over a run that acts, and the comparison fails."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore.bfs import Explorer
from conformance.explore.fingerprint import fingerprint
from conformance.explore.manifest import load
from conformance.explore.spaces import time_steps
from conformance.harness.pf import convergence_wait_ms
from model.kernel.sim import HOUR
from model.pf import idle as I
from model.pf.cnset import CNSet
from model.pf.state import HIERARCHY, Entry
from tests.idle_compare import Stepping, diverging

pytestmark = pytest.mark.unit

PIECES = [HOUR, 6 * HOUR, 36 * HOUR, convergence_wait_ms()]  # advances in turn, each compared with stepping


BACKFILLS = ["create_folder", "advance", "advance"]  # a path whose fairness end files a backfill entry


def _states(mutant: str | None, n: int, also: list[str] | None = None) -> tuple[Explorer, list[Any]]:
    """The first `n` states of the default pf bound (breadth first), as nodes to restore, and the first state
    whose path's steps are `also` (the search goes on until it is met)."""
    entry = next(e for e in load()[0] if e.bound.name == "pf-2s-1f-replicas")
    ex = Explorer(entry.bound, mutant=mutant)
    frontier, out, extra = [ex.root()], [], None
    while frontier and (len(out) < n or (also is not None and extra is None)):
        node = frontier.pop(0)
        if len(out) < n:
            out.append(node)
        elif extra is None and [s["op"] for s in node.steps] == also:
            extra = node
        if node.depth < ex.bound.depth:
            frontier += [child for _, _, child, found in ex.successors(node, set()) if child is not None]
    return ex, out + ([extra] if extra is not None else [])


def _snapshot(system: Any) -> tuple[Any, ...]:
    sim = system.sim
    queue = sorted(sim._queue, key=lambda i: (i.time_ms, i.order))
    timers = [
        (i.time_ms, i.order, getattr(i.fn, "__qualname__", ""), getattr(getattr(i.fn, "__self__", None), "name", ""))
        for i in queue
    ]
    timers += [(i.args, i.node, i.incarnation, i.cancelled) for i in queue]
    return sim.now_ms, sim._order, sim.steps, timers, [repr(e) for e in sim.events], fingerprint([system])


def _diverging(ex: Explorer, nodes: list[Any], quiesce: bool) -> list[str]:
    """The states at which advancing with the jump and by stepping every timer end differently (`quiesce`: after the
    fairness end's first call: faults stop, the stores touch every replica)."""
    return diverging(ex, nodes, PIECES, _snapshot, _quiesce if quiesce else None)


def _quiesce(system: Any) -> None:
    system.quiesce()


@pytest.mark.parametrize(
    ("mutant", "n", "also"),
    [(None, 12, BACKFILLS), ("broadcast-when-idle", 4, None), ("ignore-backfill-timeout", 8, None)],
)
def test_the_jump_leaves_the_state_stepping_leaves(mutant: str | None, n: int, also: list[str] | None) -> None:
    ex, nodes = _states(mutant, n, also)
    assert _diverging(ex, nodes, quiesce=True) == []
    assert _diverging(ex, nodes[:4], quiesce=False) == []


def test_the_jump_is_taken() -> None:
    """Not vacuous: at the fairness end most of the convergence bound is jumped (far fewer timers run)."""
    ex, nodes = _states(None, 3)
    s = ex.restore(nodes[-1])
    s.system.quiesce()
    before, start = s.system.sim.steps, s.system.sim.now_ms
    s.system.advance(convergence_wait_ms())
    slow = ex.restore(nodes[-1])
    slow.system.quiesce()
    slow.system.sim.run(until_ms=start + convergence_wait_ms())
    assert s.system.sim.steps == slow.system.sim.steps > before  # the same count, most of it not run
    assert s.system.quiet_until(start + 10**9) > s.system.sim.now_ms  # idle at the end: nothing left to record


def _with_entry(ex: Explorer, node: Any) -> Any:
    """The state after its fairness end's wait, with one backfill entry filed on a quiet replica, due in three hours
    (its check then asks for the change numbers: a run that acts after hours of idle ones)."""
    s = ex.restore(node)
    s.system.quiesce()
    s.system.advance(convergence_wait_ms())
    store = s.system.stores["B" if "B" in s.system.stores else sorted(s.system.stores)[-1]]
    rep = store.replicas[HIERARCHY]
    now = s.system.sim.now_ms
    rep.backfill = (Entry(CNSet.decode(["X#0:1-2"]), now + 3 * HOUR, base_ms=now),)
    return s


@pytest.mark.parametrize("overlooked", [None, "expiry", "backfill"])
def test_twin_an_idle_test_that_overlooks_work_diverges(
    overlooked: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store called idle up to any instant although its status thread (an active replica's expiry) or its backfill
    check (an entry) acts: the jump skips that run, and the comparison with stepping finds it (None: the real test,
    on the same states, agrees with stepping)."""
    real = I.horizons

    def careless(store: Any, rules: Any) -> Any:
        found = real(store, rules)
        if overlooked == "expiry":
            return found and {**found, I.Store.tick_status: I.NEVER}
        if overlooked == "backfill":
            saved = {fid: rep.backfill for fid, rep in store.replicas.items()}
            for rep in store.replicas.values():
                rep.backfill = ()
            found = real(store, rules)
            for fid, entries in saved.items():
                store.replicas[fid].backfill = entries
        return found

    ex, nodes = _states(None, 12)
    monkeypatch.setattr(I, "horizons", careless)
    bad = _diverging(ex, nodes, quiesce=True)
    fast, slow = _with_entry(ex, nodes[1]), _with_entry(ex, nodes[1])
    fast.system.advance(6 * HOUR)
    slow.system.sim.run(until_ms=slow.system.sim.now_ms + 6 * HOUR)
    if _snapshot(fast.system) != _snapshot(slow.system):
        bad.append("a backfill entry filed on a quiet replica")
    if overlooked is None:
        assert bad == []
    else:
        assert bad
        assert any("BACKFILL" in repr(e) for e in slow.system.sim.events[-5:]) or overlooked == "expiry"


def test_tick_steps_to_the_same_instant() -> None:
    """The explorer's `tick` (`spaces.time_steps`) asking `quiet_until` ends where stepping timer by timer ends,
    with the same recorded step."""
    ex, nodes = _states(None, 8)
    for node in nodes:
        fast, slow = ex.restore(node), ex.restore(node)
        fast.system.quiesce()
        slow.system.quiesce()
        got = time_steps(fast.system, fast.system.sim, ex.bound, node.book)
        want = time_steps(Stepping(slow.system), slow.system.sim, ex.bound, node.book)
        assert [a.step() for a in got] == [a.step() for a in want]
        assert _snapshot(fast.system) == _snapshot(slow.system)
