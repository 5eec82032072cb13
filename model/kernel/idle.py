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
    rearmed = _closed_form(due, limit, sim._order) or _stepped(due, limit, sim._order)
    # what stepping leaves: timers not yet due as they were, dead or cancelled ones due by now dropped (a run
    # pops and discards them), and each no-op timer re-armed at its last re-arming's time and insertion number
    kept = [i for i in queue if i.time_ms > limit]
    ran = 0
    for (item, _), (t, o, runs) in zip(due, rearmed, strict=True):
        kept.append(_Item((t, o, item.fn, item.args, item.node, item.incarnation, False)))
        ran += runs
    heapq.heapify(kept)
    queue[:] = kept
    sim._order += ran
    sim.steps += ran
    sim.now_ms = max(sim.now_ms, limit)
    return True


Rearmed = list[tuple[int, int, int]]  # per timer: its next due time, its insertion number, how many times it ran


def _stepped(due: list[tuple[_Item, Rearm]], limit: int, base: int) -> Rearmed:
    """The runs up to `limit` one by one, on a heap of plain tuples (the reference `_closed_form` is tested against)."""
    heap = [(item.time_ms, item.order, k) for k, (item, _) in enumerate(due)]
    heapq.heapify(heap)
    runs = [0] * len(due)
    order = base
    while heap and heap[0][0] <= limit:  # the earliest run, re-armed in place (one sift per run)
        t, _, k = heap[0]
        heapq.heapreplace(heap, (due[k][1](t), order, k))
        runs[k] += 1
        order += 1
    return [(t, o, runs[k]) for t, o, k in sorted(heap, key=lambda h: h[2])]


class _Runs:
    """One timer's runs: at `a`, then at `f1` = rearm(a), then every `period` (None when its re-arming is not of
    that form, checked on its first three runs)."""

    def __init__(self, item: _Item, rearm: Rearm, limit: int) -> None:
        self.a, self.o = item.time_ms, item.order
        self.f1 = rearm(self.a)
        f2 = rearm(self.f1)
        self.period = f2 - self.f1 if f2 > self.f1 and rearm(f2) == 2 * f2 - self.f1 else 0
        self.n = self.before(limit + 1) if self.period else 0  # runs up to `limit`

    def before(self, t: int) -> int:
        """How many of its runs come before instant `t`."""
        if t <= self.a:
            return 0
        if t <= self.f1:
            return 1
        return 1 + -(-(t - self.f1) // self.period)

    def at(self, i: int) -> int:
        """The time of its i-th run (0: the first)."""
        return self.a if i == 0 else self.f1 + (i - 1) * self.period


def _first(x: _Runs, i: int, y: _Runs, j: int) -> bool:
    """Whether x's i-th run comes before y's j-th run, both due at one instant: a timer runs in the order of its
    insertion, that is of the run that re-armed it (or its insertion before the jump, which comes first), so the
    runs' histories are compared from the latest back (two timers of one period in step: straight to the start)."""
    while True:
        if i == 0 or j == 0:
            return x.o < y.o if i == j == 0 else i == 0
        px, py = x.at(i - 1), y.at(j - 1)
        if px != py:
            return px < py
        i, j = i - 1, j - 1
        if i > 0 and j > 0 and x.period == y.period:  # in step from their second runs on
            skip = min(i, j) - 1
            i, j = i - skip, j - skip


def _closed_form(due: list[tuple[_Item, Rearm]], limit: int, base: int) -> Rearmed | None:
    """The same as `_stepped`, counted instead of run: each timer's last run's place among all runs (every run of
    another timer before its instant, and those at its instant that come first). None when a timer's runs are not
    periodic after its first re-arming."""
    runs = [_Runs(item, nxt, limit) for item, nxt in due]
    if any(r.period <= 0 for r in runs):
        return None
    out: Rearmed = []
    for x in runs:
        i = x.n - 1
        t = x.at(i)
        place = i
        for y in runs:
            if y is x:
                continue
            j = y.before(t)
            place += j
            if j < y.n and y.at(j) == t and _first(y, j, x, i):
                place += 1
        out.append((x.at(x.n), base + place, x.n))
    return out
