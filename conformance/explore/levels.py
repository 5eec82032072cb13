"""Level-synchronous breadth-first exploration (issue 33, "On Spark"): the plan `haconform explore --engine
spark` runs (`spark_trace_check.explore`), as pure functions over an expander's `root`/`successors`, with a
one-process run of the same plan (`run_levels`) beside it.

A level expands every frontier state; each candidate is keyed by its child's fingerprint and sent to the
partition `bucket(fingerprint)`, where it meets that partition's share of the visited set: one shuffle a level,
the visited set never shuffled. A state's path key is the tuple of successor indices from the root, so the
single-process BFS (`conformance.explore.bfs.Explorer.run`) meets the edges of a level in the lexicographic
order of their keys. Keeping, per fingerprint, the smallest key keeps the shortest path that BFS keeps; among a
level's violating edges the smallest key is the first that BFS meets; a new state's fairness end (`end_of`) is
a violation at its discovering edge's key. The end is judged where the edge made the state, on its live session
(session 12: after the shuffle it would be thawed again from its blob), and its verdict travels with the
candidate; a task judges the end of each fingerprint it meets once, in key order, so the verdict kept with the
least key is that of the path the single-process BFS keeps. The level's *cut* is the first of: the violating
edge, the new state whose end is violated, the edge at which `max_states` is reached; everything after it in
key order is discarded, so the counts (states, transitions, states per level, depth) are those of the
single-process BFS, stopped where it stops. Session 13: a task is told the states visited before its level
(`Known`; on Spark the driver's set, broadcast): an edge into one is judged in place and makes no candidate, so
a task judges the end only of the states new to the level, once per fingerprint it meets (two tasks that meet
the same new state still both judge its end: a level's duplicates across tasks, sr-3s-2m-2f at depth 4 about a
quarter of the new states).

The expander is the copying explorer (`conformance.explore.bfs.Explorer`: `root()`, `successors(node)`,
`end_of(node)`; a node travels as its pickled state, `conformance.explore.state.Node`), through `Expanding`; each
Spark worker builds its own once from the picklable `Job`. Symmetry merges are not counted on Spark
(`Result.merges` 0: the identities are per process).
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from conformance.explore.bfs import Edge, Explorer, Found, Result, symmetric_servers
from conformance.explore.roots import level_zero
from conformance.explore.spaces import Bound
from conformance.explore.state import Node
from conformance.explore.witness import WITNESSES

Key = tuple[int, ...]
VIOLATION = "!"  # the record key of a level's violating edges (reduced to the least)
DEGREE = "#"  # prefix of the record key of a source's out-degree ("#" + the source's fingerprint)


class Expanding:
    """The copying explorer (`Explorer.root`/`successors`/`end_of`) as the plan uses it: the root with its
    fingerprint and verdict, and children with their live sessions (each end judged on it, `expand`; a node then
    travels as its blob)."""

    def __init__(self, ex: Explorer) -> None:
        self.ex = ex
        self.setup = ex.setup

    def begin(self, ends: bool) -> tuple[list[tuple[str, Node]], Found | None]:
        """Level 0: the roots (one per resolution of the construction's choices, `roots.level_zero`), each judged
        with its fairness end (`ends`), up to the first with a violation."""
        return level_zero(self.ex, ends)

    def successors(self, node: Node, seen: Collection[str] = (), frozen: bool = True) -> list[Edge]:
        """Every edge out of `node` in order, up to its first violation; a child for each fingerprint's first edge
        not in `seen`, holding its live session (`end_of` consumes it; `expand` drops what is left); `frozen`
        False: no blob (a state of the bound's last level is never expanded)."""
        return self.ex.successors(node, seen, frozen)

    def end_of(self, node: Node) -> Found | None:
        return self.ex.end_of(node)


@dataclass(frozen=True)
class Job:
    """What one exploration explores; picklable, so each Spark worker builds its own expander from it."""

    bound: Bound
    mutant: str | None = None
    watch: frozenset[str] | None = None
    witness: str | None = None  # a claim of `conformance.explore.witness.WITNESSES`
    ends: bool = True
    compress: bool = False  # frontier blobs zlib-compressed (`state.freeze`): about half the bytes
    # session 13: a level's tasks skip the children visited before it (`Known`: the driver's set of every visited
    # fingerprint, broadcast each level, about 100 bytes a state in the driver and each worker); False: the visited
    # sets per partition alone decide, after the shuffle (the plan of sessions 10-12)
    skip_known: bool = True

    def expander(self) -> Expanding:
        """This process's expander for the job (built once per process)."""
        key = pickle.dumps(self)
        if key not in _EXPANDERS:
            goal = WITNESSES[self.witness] if self.witness else None
            ex = Explorer(self.bound, self.mutant, self.watch, goal)
            ex.compress = self.compress
            if self.bound.symmetry:
                ex.symmetric(symmetric_servers(self.bound, ex.setup))
            _EXPANDERS[key] = Expanding(ex)
        return _EXPANDERS[key]


_EXPANDERS: dict[bytes, Expanding] = {}


def bucket(key: str) -> int:
    """The partition of a record key, from the fingerprint in it (blake2b hex: uniform)."""
    digits = key[1:9] if key[0] in (VIOLATION, DEGREE) else key[:8]
    return int(digits or "0", 16)


class Buckets:
    """The partition function of a plan: `bucket`, the same for every level (one object, so the visited sets and a
    level's candidates are co-partitioned). `next_level` is called before each level's shuffle."""

    salt = 0

    def next_level(self) -> None:
        """A partition function that is a function of the key alone needs nothing per level."""

    def __call__(self, key: str) -> int:
        return bucket(key) + self.salt


class Candidate(NamedTuple):
    """A child crossing the shuffle: its path key, its node (None at the bound's last level: never expanded, only
    its fingerprint, key and verdict are kept), its fairness end's violation, and its blob's bytes."""

    key: Key
    node: Node | None
    end: Found | None
    bytes: int


class Known:
    """The fingerprints a task's children are not new at (session 13): the states visited before this level (the
    driver's set, broadcast on Spark) and the children this task met earlier, with a smaller key (its rows are
    expanded in key order). A child there is judged in place, as `Explorer.run` judges an edge into a state seen:
    not copied, not frozen, its fairness end not judged; the reduction would drop it after the shuffle anyway (the
    visited set, or the least key), so no figure changes, only the work done for nothing (sr-3s-2m-2f at depth 5:
    most edges lead to a state already visited)."""

    __slots__ = ("before", "met")

    def __init__(self, before: Collection[str] = ()) -> None:
        self.before = before
        self.met: set[str] = set()

    def __contains__(self, fp: object) -> bool:
        return fp in self.met or fp in self.before


def expand(
    ex: Expanding, fp: str, key: Key, node: Node, ends: bool, last: bool, known: Known
) -> list[tuple[str, tuple[Any, ...]]]:
    """A frontier state's records: its out-degree, its violating edge (the last it has), and each child by
    fingerprint as a `Candidate`, its fairness end judged here on its live session (`ends`). The plan's path key
    of the i-th edge is the source's plus (i,): the order of `successors`. A child already `known` is no
    candidate (see `Known`). At the bound's last level a child is not frozen: it is never expanded."""
    edges = ex.successors(node, known, frozen=not last)
    out: list[tuple[str, tuple[Any, ...]]] = [(DEGREE + fp, (key, len(edges)))]
    for i, (child_fp, _, child, found) in enumerate(edges):
        if found is not None:
            out.append((VIOLATION, ((*key, i), found)))
        elif child is not None:
            known.met.add(child_fp)
            end = ex.end_of(child) if ends else None
            child.live = None
            out.append((child_fp, Candidate((*key, i), None if last else child, end, len(child.blob or b""))))
    return out


def expand_all(
    ex: Expanding, rows: Iterable[tuple[str, Key, Node]], ends: bool, last: bool, before: Collection[str] = ()
) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """One task's frontier states expanded in key order (so each fingerprint's end is judged once in the task);
    `before`: the states visited before this level."""
    known = Known(before)
    for fp, key, node in sorted(rows, key=lambda r: r[1]):
        yield from expand(ex, fp, key, node, ends, last, known)


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


def settle(visited: set[str], reduced: Iterable[tuple[str, tuple[Any, ...]]]) -> Settled:
    """A partition's reduced records against its visited set: the new states (fairness end judged before the
    shuffle, `expand`) are added. At the bound's last level a candidate carries no node: its states are never
    expanded, each keeps its fingerprint, key and verdict (at 10^6 states the last level is most of them: issue
    33, "Larger pinned bounds"), and no blob crosses the shuffle (session 12)."""
    out = Settled(visited)
    for k, v in reduced:
        if k == VIOLATION:
            out.violation = v if out.violation is None else least(out.violation, v)  # type: ignore[assignment]
        elif k[0] == DEGREE:
            out.degrees.append(v)  # type: ignore[arg-type]
        elif k not in visited:
            visited.add(k)
            out.bytes += v.bytes
            out.new.append(NewState(k, v.key, v.node, v.end))
    return out


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


def start(job: Job, ex: Expanding) -> tuple[Result, list[tuple[str, Key, Node]]]:
    """Level 0: the roots counted, judged (and their fairness ends) as `Explorer.run` does; root j's path key is
    (j,), so the plan's key order is the single-process BFS's (roots in order, then each one's successors)."""
    res = Result(job.bound.mechanism, job.bound.name, ex.setup)
    roots, res.found = ex.begin(job.ends)
    res.states, res.per_level = len(roots), [len(roots)]
    return res, [(fp, (j,), node) for j, (fp, node) in enumerate(roots)]


Progress = Callable[[int, Result, int, float, int], None]  # (level, result so far, new states, seconds, their bytes)


def say(level: int, res: Result, new: int, seconds: float, nbytes: int = 0) -> None:
    """Progress per level, one line on stderr: states so far, transitions, the level's new states (the next
    frontier) and their blobs' bytes, seconds, and the level's new states per second."""
    import sys

    rate = new / seconds if seconds > 0 else 0.0
    print(
        f"  level {level}: {res.states} states, {res.transitions} transitions, new {new} "
        f"({nbytes / 1e6:.1f} MB), {seconds:.1f} s, {rate:.0f} new/s",
        file=sys.stderr,
        flush=True,
    )


def run_levels(
    job: Job,
    max_states: int | None = None,
    partitions: int = 4,
    buckets: Buckets | None = None,
    progress: Progress | None = None,
) -> Result:
    """The Spark plan in this process: `partitions` visited sets, records grouped by `buckets`."""
    began = time.monotonic()
    buckets = buckets or Buckets()
    ex = job.expander()
    res, roots = start(job, ex)
    visited: list[set[str]] = [set() for _ in range(partitions)]
    for fp0, _, _ in roots:
        visited[buckets(fp0) % partitions].add(fp0)
    frontier = [roots]
    level = 0
    while any(frontier) and res.found is None and level < job.bound.depth:
        t = time.monotonic()
        buckets.next_level()
        reduced: list[dict[str, tuple[Any, ...]]] = [{} for _ in range(partitions)]
        last = level + 1 >= job.bound.depth
        before = set().union(*visited) if job.skip_known else ()  # the driver's set (Spark: broadcast)
        for task in frontier:  # a task: the new states one partition settled (Spark's frontier partitions)
            for k, v in expand_all(ex, task, job.ends, last, before):
                part = reduced[buckets(k) % partitions]
                part[k] = least(part[k], v) if k in part else v
        settled = [settle(visited[i], reduced[i].items()) for i in range(partitions)]
        summary = Summary()
        for p in settled:
            summary = summary.merge(summarize(p))
        going = account(res, level, summary, max_states, LocalProbe(settled))
        frontier = [[(n.fingerprint, n.key, n.node) for n in p.new] for p in settled] if going and not last else []
        level += 1
        if progress:
            progress(level, res, summary.new, time.monotonic() - t, summary.bytes)
    res.seconds = time.monotonic() - began
    return res
