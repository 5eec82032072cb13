"""Successors without a restore (session 12, `Explorer.actions`): the session the explorer runs forward to find how
far a `tick` goes is, when the probe drew no random choice (or every choice is drawn by the seed), the state the tick
leads to, so it is used as that successor instead of a restored copy with the tick applied again; where the space
never runs the session forward (am, a `no-tick` bound) the session the actions were read from is still the source
state, and the last action is applied to it. Every edge (fingerprint, recorded step, verdict) must be the one
restoring gives, on every default bound (choice points as pinned, and off). Twins: a probe reused although it drew a
choice from the seed (the guard dropped), and a space said not to run the session forward although its tick does,
give other successors, and the comparison fails."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conformance.explore import bfs
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load

pytestmark = pytest.mark.unit

BOUNDS = [e for e in load()[0] if not e.slow]


def _edges(entry: Any, reuse: bool, choices: bool, forward: bool = True) -> list[tuple[Any, ...]]:
    """Every edge of the bound breadth first (fingerprint, step, violation's rule), depth-bounded, without ends."""
    ex = Explorer(entry.bound)
    if not forward:
        ex.space = dataclasses.replace(ex.space, forward=False)
    ex.reuse_probe, ex.choices = reuse, choices and entry.bound.choices
    frontier, seen, out = [ex.root()], set(), []
    while frontier:
        node = frontier.pop(0)
        if node.depth >= ex.bound.depth:
            continue
        for fp, step, child, found in ex.successors(node, seen):
            out.append((node.key, fp, step, found.rule if found else None))
            if child is not None:
                seen.add(fp)
                child.live = None  # as `Explorer.run` leaves it after the child's fairness end
                frontier.append(child)
    return out


@pytest.mark.parametrize("choices", [True, False])
@pytest.mark.parametrize("entry", BOUNDS, ids=[e.bound.name for e in BOUNDS])
def test_the_probe_is_the_state_after_the_tick(entry: Any, choices: bool) -> None:
    if not choices and not entry.bound.choices:
        pytest.skip("the bound draws every choice from the seed: the same as with choice points on")
    assert _edges(entry, True, choices) == _edges(entry, False, choices)


def test_twin_a_probe_that_drew_a_choice_is_not_the_tick(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-partition")
    want = _edges(entry, False, True)

    class Blind(bfs.CountingChooser):  # the guard dropped: no draw counted
        def randint(self, label: str, lo: int, hi: int) -> int:
            self.n -= 1
            return super().randint(label, lo, hi)

        def chance(self, label: str, p: float) -> bool:
            self.n -= 1
            return super().chance(label, p)

        def pick(self, label: str, options: Any) -> Any:
            self.n -= 1
            return super().pick(label, options)

    monkeypatch.setattr(bfs, "CountingChooser", Blind)
    assert _edges(entry, True, True) != want


def test_twin_a_space_that_runs_forward_is_not_pristine() -> None:
    entry = next(e for e in BOUNDS if e.bound.name == "sr-2s-1m-crash")
    assert _edges(entry, True, False, forward=False) != _edges(entry, False, False)
