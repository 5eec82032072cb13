"""Where a level of the level-synchronous plan stops (issue 33, "On Spark"; `conformance.explore.levels`): the
level's figures merged over partitions (`Summary`), and the cut, the first of the violating edge, the new state
whose fairness end is violated and the edge at which `max_states` is reached, so that the counts are those of the
single-process BFS, stopped where it stops (`account`). Split from `levels.py` in session 14 (its size), with the
partition after a level (`Settled`) that it reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from conformance.explore.result import Found, Result

Key = tuple[int, ...]


def least(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """The record with the smaller path key (the reduction of each record key)."""
    return a if a[0] <= b[0] else b


class NewState(NamedTuple):
    fingerprint: str
    key: Key
    node: Any
    end: Found | None  # its fairness end's violation


@dataclass
class Settled:
    """One partition after a level: its visited set, its new states, the out-degrees and the violating edge there."""

    visited: set[str]
    new: list[NewState] = field(default_factory=list)
    degrees: list[tuple[Key, int]] = field(default_factory=list)
    violation: tuple[Key, Found] | None = None
    bytes: int = 0  # the new states' blobs (what the next frontier holds; at the last level made, not kept)


@dataclass
class Summary:
    """A level's figures before its cut, merged over partitions."""

    new: int = 0
    transitions: int = 0
    violation: tuple[Key, Found] | None = None
    end: tuple[Key, Found] | None = None
    bytes: int = 0  # the new states' blobs

    def merge(self, other: Summary) -> Summary:
        def lesser(a: Any, b: Any) -> Any:
            return b if a is None else a if b is None else least(a, b)

        return Summary(
            self.new + other.new,
            self.transitions + other.transitions,
            lesser(self.violation, other.violation),
            lesser(self.end, other.end),
            self.bytes + other.bytes,
        )


def summarize(s: Settled) -> Summary:
    ends = [(n.key, n.end) for n in s.new if n.end is not None]
    first_end = min(ends, key=lambda e: e[0], default=None)
    return Summary(len(s.new), sum(d for _, d in s.degrees), s.violation, first_end, s.bytes)


def upto(s: Settled, cut: Key) -> tuple[int, int]:
    """A partition's new states and transitions up to and including the edge `cut` (all keys of a level have
    one length; an edge's key is its source's plus its index)."""
    src, last = cut[:-1], cut[-1]
    trans = sum(n if k < src else (last + 1 if k == src else 0) for k, n in s.degrees)
    return sum(1 for n in s.new if n.key <= cut), trans


class Probe:
    """What the cut needs beyond the summary, asked only at a level that is cut (local lists or a Spark RDD)."""

    def nth_new_key(self, n: int) -> Key:  # the n-th smallest key of the level's new states (1-based)
        raise NotImplementedError

    def first_edge(self) -> Key:  # the level's first edge
        raise NotImplementedError

    def upto(self, cut: Key) -> tuple[int, int]:  # new states and transitions up to the cut
        raise NotImplementedError


def cut_of(
    summary: Summary, states_before: int, max_states: int | None, probe: Probe
) -> tuple[Key, Found | None] | None:
    """Where the single-process BFS stops in this level: (the edge, its violation or None for max_states)."""
    stops: list[tuple[Key, int, Found | None]] = []
    if summary.violation is not None:
        stops.append((summary.violation[0], 0, summary.violation[1]))
    if summary.end is not None:  # a tie with max_states: the end is judged before the count is looked at
        stops.append((summary.end[0], 1, summary.end[1]))
    if max_states is not None and summary.transitions:
        need = max_states - states_before
        if need <= 0:
            stops.append((probe.first_edge(), 2, None))
        elif summary.new >= need:
            stops.append((probe.nth_new_key(need), 2, None))
    if not stops:
        return None
    key, _, found = min(stops, key=lambda s: (s[0], s[1]))
    return key, found


def account(res: Result, level: int, summary: Summary, max_states: int | None, probe: Probe) -> bool:
    """Add level `level + 1` to `res` as the single-process BFS would count it; False when the search stops here."""
    cut = cut_of(summary, res.states, max_states, probe)
    new, trans = (summary.new, summary.transitions) if cut is None else probe.upto(cut[0])
    res.transitions += trans
    if new:
        res.states += new
        res.depth = level + 1
        res.per_level.append(new)
    if cut is None:
        return True
    if cut[1] is None:
        res.complete = False
    res.found = cut[1]
    return False


class LocalProbe(Probe):
    def __init__(self, parts: list[Settled]) -> None:
        self.parts = parts

    def nth_new_key(self, n: int) -> Key:
        return sorted(s.key for p in self.parts for s in p.new)[n - 1]

    def first_edge(self) -> Key:
        return (*min(k for p in self.parts for k, d in p.degrees if d), 0)

    def upto(self, cut: Key) -> tuple[int, int]:
        counts = [upto(p, cut) for p in self.parts]
        return sum(c[0] for c in counts), sum(c[1] for c in counts)
