"""The tick's successor taken from its probe (session 12, `Explorer.actions`): the session the explorer runs forward
to find how far a `tick` goes is, when the probe drew no random choice (or every choice is drawn by the seed), the
state the tick leads to, so it is used as that successor instead of a restored copy with the tick applied again.
Every edge (fingerprint, recorded step, verdict) must be the one restoring and re-applying gives, on every default
bound (choice points as pinned, and off). Twin: a probe reused although it drew a choice from the seed (the guard
dropped) gives other successors on a bound that branches on the tick's choices, and the comparison fails."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore import bfs
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load

pytestmark = pytest.mark.unit

BOUNDS = [e for e in load()[0] if not e.slow]


def _edges(entry: Any, reuse: bool, choices: bool) -> list[tuple[Any, ...]]:
    """Every edge of the bound breadth first (fingerprint, step, violation's rule), depth-bounded, without ends."""
    ex = Explorer(entry.bound)
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

    class Blind(bfs._Counting):  # the guard dropped: no draw counted
        def randint(self, label: str, lo: int, hi: int) -> int:
            self.n -= 1
            return super().randint(label, lo, hi)

        def chance(self, label: str, p: float) -> bool:
            self.n -= 1
            return super().chance(label, p)

        def pick(self, label: str, options: Any) -> Any:
            self.n -= 1
            return super().pick(label, options)

    monkeypatch.setattr(bfs, "_Counting", Blind)
    assert _edges(entry, True, True) != want
