"""`model.kernel.idle`: the runs of periodic no-op timers counted in closed form give what running them one by one
gives (each timer's next due time, insertion number and run count), ties at one instant included (issue 33). Twin:
a count that orders the timers due at one instant by their insertion before the jump only (not by the runs that
re-armed them) differs."""

from __future__ import annotations

import functools
import operator
import random
from typing import Any

import pytest

from model.kernel import idle as I
from model.kernel.sim import Simulator, _Item

pytestmark = pytest.mark.unit


def _thread(offset: int, period: int, t: int) -> int:
    """A status-thread-like re-arming: the next instant offset + k * period strictly after t."""
    return offset + ((t - offset) // period + 1) * period


def _noop() -> None:
    """A timer action (never run here)."""


def _case(rng: random.Random) -> tuple[list[tuple[_Item, Any]], int, int]:
    items = []
    orders = rng.sample(range(100), rng.randint(1, 8))
    for o in orders:
        if rng.random() < 0.25:
            nxt: Any = functools.partial(_thread, rng.choice([0, 2]), rng.choice([12, 24]))
        else:
            nxt = functools.partial(operator.add, rng.choice([3, 5, 5, 15]))
        items.append((_Item((rng.choice([1, 3, 5, 5, 10, 15]), o, _noop, (), None, 0, False)), nxt))
    return items, rng.randint(15, 400), 100


def test_the_closed_form_is_the_runs_one_by_one() -> None:
    rng = random.Random(33)
    for _ in range(3000):
        due, limit, base = _case(rng)
        assert I._closed_form(due, limit, base) == I._stepped(due, limit, base)


def test_twin_ties_ordered_by_insertion_alone_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(I, "_first", lambda x, i, y, j: x.o < y.o)
    rng = random.Random(33)
    cases = [_case(rng) for _ in range(3000)]
    assert any(I._closed_form(d, lim, b) != I._stepped(d, lim, b) for d, lim, b in cases)


class Ticks:
    """Timers as records: three periodic no-ops and one that acts."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.log: list[int] = []

    def five(self) -> None:
        self.sim.after(5, self.five)

    def also_five(self) -> None:
        self.sim.after(5, self.also_five)

    def fifteen(self) -> None:
        self.sim.after(15, self.fifteen)

    def acts(self) -> None:
        self.log.append(self.sim.now_ms)


def test_fast_forward_leaves_the_queue_a_run_leaves() -> None:
    """On a simulator: two timers of one period in step, one of another period, one not a no-op (its instant is
    where the jump stops), a cancelled one; then the rest run as usual."""

    def build() -> tuple[Simulator, Ticks]:
        sim = Simulator(1, trace_id="t", mechanism="net", start_ms=0)
        t = Ticks(sim)
        sim.at(5, t.fifteen)
        sim.at(5, t.five)
        sim.at(5, t.also_five)
        sim.cancel(sim.at(7, t.five))
        sim.at(93, t.acts)
        return sim, t

    def rearm(item: _Item) -> Any:
        period = {"five": 5, "also_five": 5, "fifteen": 15}.get(item.fn.__name__)
        return None if period is None else (functools.partial(operator.add, period), 10**9)

    fast, ft = build()
    slow, st = build()
    assert I.fast_forward(fast, 200, rearm)
    assert fast.now_ms == 92  # just before the run that acts
    slow.run(until_ms=92)
    for sim in (fast, slow):
        sim.run(until_ms=200)

    def shape(sim: Simulator) -> list[tuple[int, int, str]]:
        return sorted((i.time_ms, i.order, i.fn.__name__) for i in sim._queue if not i.cancelled)

    assert shape(fast) == shape(slow)
    assert (fast.now_ms, fast._order, fast.steps, ft.log) == (slow.now_ms, slow._order, slow.steps, st.log)
