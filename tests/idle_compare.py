"""Shared by the idle-jump tests of pf and sr (issue 33: `tests/pf/test_pf_idle.py`, `tests/sr/test_sr_idle.py`): a
model's `advance` that jumps no-op timer runs compared, piece by piece, with stepping every timer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def diverging(
    ex: Any,
    nodes: Sequence[Any],
    pieces: Sequence[int],
    snapshot: Callable[[Any], Any],
    prepare: Callable[[Any], None] | None = None,
) -> list[str]:
    """The explored states (`ex.restore(node)`) at which advancing by `pieces` in turn with the model's jump and by
    stepping every timer end differently (`snapshot` of the system after each piece); `prepare` runs first on both
    (e.g. the fairness end's first call)."""
    bad = []
    for node in nodes:
        fast, slow = ex.restore(node).system, ex.restore(node).system
        if prepare is not None:
            prepare(fast)
            prepare(slow)
        for ms in pieces:
            fast.advance(ms)
            slow.sim.run(until_ms=slow.sim.now_ms + ms)
            if snapshot(fast) != snapshot(slow):
                bad.append(f"{[s['op'] for s in node.steps]} after {ms} ms")
                break
    return bad


class Stepping:
    """A system seen without `quiet_until`, advanced by stepping every timer (the reference)."""

    def __init__(self, system: Any) -> None:
        self.system = system

    def advance(self, ms: int) -> None:
        self.system.sim.run(until_ms=self.system.sim.now_ms + ms)
