"""Fast-forward over idle timers: virtual time jumps where stepping would only re-arm periodic no-op timers.

A model whose state is quiescent (its periodic timers would run, record nothing, change nothing and re-arm
themselves) pays for every idle poll when time is advanced by stepping: hours of virtual time are thousands of
timer runs (issue 33: pf's fairness end advances the convergence bound, 86 hours, most of it idle). The model
says which timers are such no-ops *in its current state* (`rearm`); `fast_forward` then leaves the kernel exactly
as `Simulator.run(until_ms=...)` would: the same timers due at the same times with the same insertion numbers
(so the same order among timers due at one millisecond), the same insertion counter, step count and clock,
and nothing recorded, since a no-op timer records nothing. Only the heap's internal layout may differ, which
neither the order of later runs (keys are unique) nor a state's fingerprint (it sorts the queue) sees.

The firings are replayed on a heap of plain tuples (C-level comparisons, no timer records, no model code),
about ten times cheaper than running the timers. Exactness is tested against stepping in
`tests/pf/test_pf_idle.py`, with a twin whose idle predicate overlooks work and must diverge.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from model.kernel.sim import Simulator, _Item

Rearm = Callable[[int], int]  # a no-op timer fired at t: the time it re-arms itself for (t -> next due time)
NoOp = tuple[Rearm, int]  # how it re-arms, and the last instant up to which its runs stay no-ops


def noop_until(sim: Simulator, until_ms: int, rearm: Callable[[_Item], NoOp | None]) -> tuple[int, list]:
    """The last instant, at most `until_ms`, up to which every run of `sim`'s timers is a no-op that only re-arms
    its timer (`rearm(item)`: when it re-arms given its firing time, and up to which instant its runs stay no-ops;
    None: its next run is not one), and those timers due by then with their re-arming. Nothing runs."""
    limit = until_ms
    found: list[tuple[_Item, Rearm]] = []
    for item in sim._queue:
        if item.time_ms > limit or item.cancelled or not sim._live(item):
            continue
        noop = rearm(item)
        if noop is None:
            limit = item.time_ms - 1  # it acts: stop just before it
        else:
            found.append((item, noop[0]))
            limit = min(limit, noop[1])
    return limit, [(item, nxt) for item, nxt in found if item.time_ms <= limit]


def fast_forward(sim: Simulator, until_ms: int, rearm: Callable[[_Item], NoOp | None]) -> bool:
    """Advance `sim` towards `until_ms` without running its timers, as far as every run due is a no-op
    (`noop_until`): to `until_ms`, or just before the first run that acts (which the caller then steps). False,
    and `sim` untouched, when it cannot move at all. The state left is the one `sim.run(until_ms=...)` would
    leave at that instant."""
    limit, due = noop_until(sim, until_ms, rearm)
    if limit <= sim.now_ms:
        return False
    queue = sim._queue
    heap = [(item.time_ms, item.order, k) for k, (item, _) in enumerate(due)]
    heapq.heapify(heap)
    order, ran = sim._order, 0
    pop, push = heapq.heappop, heapq.heappush
    while heap and heap[0][0] <= limit:
        t, _, k = pop(heap)
        push(heap, (due[k][1](t), order, k))
        order += 1
        ran += 1
    # what stepping leaves: timers not yet due as they were, dead or cancelled ones due by now dropped (a run
    # pops and discards them), and each no-op timer re-armed at its last re-arming's time and insertion number
    kept = [i for i in queue if i.time_ms > limit]
    for t, o, k in heap:
        item = due[k][0]
        kept.append(_Item(t, o, item.fn, item.args, item.node, item.incarnation))
    heapq.heapify(kept)
    queue[:] = kept
    sim._order = order
    sim.steps += ran
    sim.now_ms = max(sim.now_ms, limit)
    return True
