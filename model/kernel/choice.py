"""Choice points: every random decision of the model goes through one named call (issue 33).

The model resolves what the seeds leave open (which server takes a shadow, a latency, a mount that fails) with
its one seeded generator. Each such decision is made through a `Chooser` with a label saying what is chosen:

- `SeededChooser` (simulation, the default): draws from `Simulator.rng` exactly as the direct calls it replaces
  (`randint` is `rng.randint`, `chance` is `rng.random() < p`, `pick` is `rng.choice`), so the same seed gives
  byte-identical traces;
- `ScriptedChooser` (exploration): follows a script of outcome indices; at a choice the script has not decided
  it raises `ChoiceNeeded` with the outcomes allowed there, and the explorer branches on each of them.

A scripted chooser may branch on some labels only (`only`): a choice under another label is decided by its
`fallback` (the seeded chooser it stands in for), takes no script entry and is not in `made` (an exploration
bound naming the labels it branches on, `spec/explore.toml` `choices = [...]`).

The outcomes a scripted range explores are a parameter (`ranges`): the seeds allow any value of a latency
range, and exploring every millisecond is not a bound anyone could finish; "ends" (the default) explores the
least and the greatest value, which gives both orders of two racing timers, "ends+mid" adds the midpoint.

The choices made while a system is built (a server's first heartbeat, the first PAM's holder, a store's first
timers) are choice points too (issue 33, session 13): a host (`Simulator`, am's `RngEnv`) takes its first chooser
from `seeded(rng)`, which is the `SeededChooser` over `rng` except inside `constructing(chooser)`, where it is
that scripted chooser (its `fallback` the host's own seeded one). The explorer builds each root under one
resolution of the construction's choices and then puts the host's seeded chooser back
(`conformance.harness.choosing.built`), so no scripted chooser is ever part of a state.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

RANGE_POINTS = ("ends", "ends+mid")


class Chooser(Protocol):
    def randint(self, label: str, lo: int, hi: int) -> int: ...
    def chance(self, label: str, p: float) -> bool: ...
    def pick(self, label: str, options: Sequence[T]) -> T: ...


class SeededChooser:
    """Simulation: the seeded generator decides, drawing exactly as `random.Random` would directly."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def randint(self, label: str, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, label: str, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, label: str, options: Sequence[T]) -> T:
        return self.rng.choice(options)


class ChoiceNeeded(Exception):
    """A choice the script has not decided: `outcomes` are the values the explorer must branch on."""

    def __init__(self, label: str, outcomes: Sequence[Any]) -> None:
        super().__init__(f"choice {label!r}: {len(outcomes)} outcomes not decided by the script")
        self.label = label
        self.outcomes = list(outcomes)


def range_outcomes(lo: int, hi: int, ranges: str = "ends") -> list[int]:
    """The values of `[lo, hi]` exploration branches on (`ranges`: see the module docstring)."""
    if ranges not in RANGE_POINTS:
        raise ValueError(f"ranges must be one of {RANGE_POINTS}, got {ranges!r}")
    points = [lo, hi] if ranges == "ends" else [lo, (lo + hi) // 2, hi]
    return sorted(set(points))


@dataclass
class ScriptedChooser:
    """Exploration: `script[i]` is the index of the outcome taken at the i-th choice made under this chooser.

    `made` records `(label, index, count)` for every choice taken, so a step's choices can be written into its
    replay file and replayed. A choice with one allowed outcome is taken without consuming the script."""

    script: list[int] = field(default_factory=list)
    ranges: str = "ends"
    made: list[tuple[str, int, int]] = field(default_factory=list)
    pos: int = 0
    only: frozenset[str] | None = None  # the labels branched on (None: every label)
    fallback: Chooser | None = None  # decides a choice under any other label (required with `only`)

    def _elsewhere(self, label: str) -> bool:
        """A choice this chooser does not branch on (`only`), decided by `fallback`."""
        if self.only is None or label in self.only:
            return False
        if self.fallback is None:
            raise ValueError(f"choice {label!r}: not branched on (only {sorted(self.only)}) and no fallback")
        return True

    def _take(self, label: str, outcomes: Sequence[T]) -> T:
        if len(outcomes) == 1:
            return outcomes[0]
        if self.pos >= len(self.script):
            raise ChoiceNeeded(label, outcomes)
        i = self.script[self.pos]
        if not 0 <= i < len(outcomes):
            raise ValueError(f"choice {label!r}: scripted outcome {i} of {len(outcomes)}")
        self.pos += 1
        self.made.append((label, i, len(outcomes)))
        return outcomes[i]

    def randint(self, label: str, lo: int, hi: int) -> int:
        if self._elsewhere(label):
            return self.fallback.randint(label, lo, hi)  # type: ignore[union-attr]
        return self._take(label, range_outcomes(lo, hi, self.ranges))

    def chance(self, label: str, p: float) -> bool:
        if self._elsewhere(label):
            return self.fallback.chance(label, p)  # type: ignore[union-attr]
        if p <= 0.0:
            return False
        if p >= 1.0:
            return True
        return self._take(label, [False, True])

    def pick(self, label: str, options: Sequence[T]) -> T:
        if not options:
            raise IndexError(f"choice {label!r}: no options")
        if self._elsewhere(label):
            return self.fallback.pick(label, options)  # type: ignore[union-attr]
        return self._take(label, list(options))


class CountingChooser:
    """A chooser that counts the choices drawn through it, drawing them from `inner` (session 12: the explorer
    asks whether its `tick` probe drew any, `conformance.explore.bfs.Explorer.actions`)."""

    def __init__(self, inner: Chooser) -> None:
        self.inner, self.n = inner, 0

    def randint(self, label: str, lo: int, hi: int) -> int:
        self.n += 1
        return self.inner.randint(label, lo, hi)

    def chance(self, label: str, p: float) -> bool:
        self.n += 1
        return self.inner.chance(label, p)

    def pick(self, label: str, options: Sequence[T]) -> T:
        self.n += 1
        return self.inner.pick(label, options)


def next_resolution(made: Sequence[tuple[str, int, int]]) -> list[int] | None:
    """The next resolution after `made` (the `(label, index, count)` a chooser took) in lexicographic order (an
    odometer: the last choice that has a further outcome moves on, the later ones are made afresh), None after
    the last: each resolution of a step, a construction or a fairness end is applied once (issue 33)."""
    for k in range(len(made) - 1, -1, -1):
        if made[k][1] + 1 < made[k][2]:
            return [i for _, i, _ in made[:k]] + [made[k][1] + 1]
    return None


_BUILDING: ContextVar[ScriptedChooser | None] = ContextVar("haconform_constructing", default=None)


def seeded(rng: random.Random) -> Chooser:
    """The chooser a host (`Simulator`, am's `RngEnv`) starts with: `SeededChooser(rng)`, or, while a system is
    built inside `constructing(chooser)`, that chooser, with the host's seeded chooser as its `fallback` (the
    labels it does not branch on, and the chooser put back once the system is built)."""
    own = SeededChooser(rng)
    chooser = _BUILDING.get()
    if chooser is None:
        return own
    if chooser.fallback is not None:
        raise ValueError("one system built under `constructing` made two choosers: which one scripts is ambiguous")
    chooser.fallback = own
    return chooser


@contextmanager
def constructing(chooser: ScriptedChooser) -> Iterator[ScriptedChooser]:
    """Build a system with its construction's choices made by `chooser` (see `seeded`; this context only)."""
    token = _BUILDING.set(chooser)
    try:
        yield chooser
    finally:
        _BUILDING.reset(token)
