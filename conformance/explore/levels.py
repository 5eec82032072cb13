"""Level-synchronous breadth-first exploration (issue 33, "On Spark"): the plan `haconform explore --engine
spark` runs (`spark_trace_check.explore`), as pure functions over an expander's `root`/`successors`, with a
one-process run of the same plan (`run_levels`) beside it.

A level expands every frontier state; each candidate is keyed by its child's fingerprint and sent to the
partition `bucket(fingerprint)`, where it meets that partition's share of the visited set: one shuffle a level,
the visited set never shuffled. A state's path key is the tuple of successor indices from the root, so the
single-process BFS (`Explorer.run`) meets a level's edges in their keys' order: keeping, per fingerprint, the
smallest key keeps BFS's shortest path, and the smallest violating key is the first violation BFS meets. A new
state's fairness end (`end_of`) is a violation at its discovering edge's key. It is judged where the edge made
the state, on its live session (session 12), its verdict travelling with the candidate; a task judges the end of
each fingerprint it meets once, in key order, so the verdict kept with the least key is the one BFS keeps.
Session 14: where an end costs more than a copy (`Job.settles_ends`) the candidate crosses the shuffle with its
blob, the end pending, and the partition that settles it judges each new state's end once, the least key's (a
task-side end judged the same state once per task that met it: sr-2s-1m-choices, 4 partitions, 599 ends for 394
states). The level's *cut* is the first of: the violating edge, the new state whose end is violated, the edge at
which `max_states` is reached; everything after it in key order is discarded, so the counts are those of the
single-process BFS, stopped where it stops. Session 13: a task is told the states visited before its level
(`Known`; on Spark the driver's set, broadcast): an edge into one is judged in place and makes no candidate.

The expander is the copying explorer (`conformance.explore.bfs.Explorer`: `root()`, `successors(node)`,
`end_of(node)`; a node travels as its pickled state, `conformance.explore.state.Node`), through `Expanding`; each
Spark worker builds its own once from the picklable `Job`. Symmetry merges are not counted on Spark
(`Result.merges` 0: the identities are per process).
"""

from __future__ import annotations

import heapq
import pickle
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from conformance.explore.bfs import Edge, Explorer, Found, Result, symmetric_servers
from conformance.explore.collector import few_collections
from conformance.explore.cut import Key, LocalProbe, NewState, Settled, Summary, account, least, summarize
from conformance.explore.fixed import end_of_search
from conformance.explore.roots import level_zero
from conformance.explore.spaces import SPACES, Bound
from conformance.explore.state import Node
from conformance.explore.witness import WITNESSES

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

    def check_fixed(self) -> None:
        """The end-of-search check of this process's fixed table (`fixed.end_of_search`), after each of its tasks
        (a Spark worker's, or the plan's in one process): an object of it a step changed is an internal error."""
        end_of_search(self.ex.fixed, self.ex.bound.name)


@dataclass(frozen=True)
class Job:
    """What one exploration explores; picklable, so each Spark worker builds its own expander from it."""

    bound: Bound
    mutant: str | None = None
    watch: frozenset[str] | None = None
    witness: str | None = None  # a claim of `conformance.explore.witness.WITNESSES`
    ends: bool = True
    compress: bool = False  # frontier blobs LZ4-compressed (`state.freeze`): 0.75-0.87 of the bytes
    # session 13: a level's tasks skip the children visited before it (`Known`: the driver's set of every visited
    # fingerprint, broadcast each level, about 100 bytes a state in the driver and each worker); False: the visited
    # sets per partition alone decide, after the shuffle (the plan of sessions 10-12)
    skip_known: bool = True
    # session 14: a new state's fairness end judged after the shuffle, once per state (`settle`), not before it once
    # per task that meets the state; None: where the end costs more than the copy this needs (`settles_ends`)
    ends_after_shuffle: bool | None = None
    # session 23: a level's frontier regrouped by its states' ancestors `regroup` levels up before it is expanded
    # (one more shuffle a level, of the frontier's rows), so the states one ancestor's paths reach are expanded in
    # one task: a child two of them make (commuting steps) is made, frozen and its end judged once, not once per
    # task that meets it (`Known.met`); counts, verdicts and paths are the same. Off by default: hashed, the groups
    # were uneven and it cost 11% of the wall time on pf at depth 6 on local[2]; packed (`packing`) 0.975 of the wall
    # and 0.95 of the CPU at depth 7, one run each (benchmarks/README.md, "Session 23"); the whole of pf-2s-1f-3f-d8
    # (session 25, one pair on the same tree): 0.957 of the wall, 0.949 of the CPU, 1.06 of the peak memory; sr's
    # sr-3s-2m-2f-d6: no difference (86.4 s, 86.1 s). Still off by default (it pays on pf only; am, whose ends do
    # nothing, would pay the stage for nothing to save);
    # `haconform explore --engine spark --regroup K` sets it (session 25). For many partitions
    regroup: int = 0

    def settles_ends(self) -> bool:
        """Ends judged after the shuffle. Auto: where the end's choices branch (`end_choices` > 1: its state frozen
        anyway) and the end acts (not am's). Measured: benchmarks/README.md, "Session 14: ends"."""
        if self.ends_after_shuffle is not None:
            return self.ends and self.ends_after_shuffle
        b = self.bound
        return self.ends and bool(b.choices) and b.end_choices > 1 and not SPACES[b.mechanism].always_end_checks

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


def kin_bucket(key: Key, up: int) -> int:
    """The group of a frontier state when the frontier is regrouped (`Job.regroup`): its ancestor's path key `up`
    levels up, hashed, so the states one ancestor's paths reach are expanded in one task (`packing` places the
    groups). A path key is a tuple of ints (and tuples of ints): its hash is the same in every process
    (PYTHONHASHSEED salts str and bytes only)."""
    return hash(key[:-up])


KIN_GROUPS = 64  # ancestors a partition's share of the frontier is to come from, at least (balance across tasks)


def kin_up(job: Job, per_level: list[int], partitions: int) -> int:
    """How many levels up the frontier of level `len(per_level) - 1` is regrouped: `Job.regroup`, or fewer where
    that level holds too few states to spread the frontier over the partitions (`KIN_GROUPS` each; pf's one root
    would put its first levels' frontiers in one task); 0: not regrouped."""
    top = len(per_level) - 1
    for up in range(job.regroup, 0, -1):
        if top - up >= 0 and per_level[top - up] >= KIN_GROUPS * partitions:
            return up
    return 0


def packing(counts: Mapping[int, int], partitions: int) -> dict[int, int]:
    """Each ancestor's group of frontier states put in a partition, the largest group first into the least loaded
    partition (so the tasks of a regrouped level hold about as many states each; hashed, the few and uneven groups
    left one of two tasks late on `local[2]`)."""
    loads = [(0, p) for p in range(partitions)]
    out: dict[int, int] = {}
    for group, n in sorted(counts.items(), key=lambda gc: (-gc[1], gc[0])):
        load, p = heapq.heappop(loads)
        out[group] = p
        heapq.heappush(loads, (load + n, p))
    return out


def regrouped(tasks: list[list[tuple[str, Key, Any]]], partitions: int, up: int) -> list[list[tuple[str, Key, Any]]]:
    """A frontier's tasks regrouped by `kin_bucket`, the groups packed (`packing`): the plan in one process; Spark
    shuffles the same."""
    groups = [[kin_bucket(row[1], up) for row in task] for task in tasks]
    where = packing(Counter(g for task in groups for g in task), partitions)
    out: list[list[tuple[str, Key, Any]]] = [[] for _ in range(partitions)]
    for task, kin in zip(tasks, groups, strict=True):
        for row, g in zip(task, kin, strict=True):
            out[where[g]].append(row)
    return out


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
    its fingerprint, key and verdict are kept), its fairness end's violation, and its blob's bytes. `pending`
    (session 14, `Job.settles_ends`): the end is judged after the shuffle, on the node's blob (kept at the last
    level too, until then)."""

    key: Key
    node: bytes | None  # `packed` (session 15)
    end: Found | None
    bytes: int
    pending: bool = False


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
    ex: Expanding, fp: str, key: Key, node: Node | bytes, ends: bool, last: bool, known: Known, pending: bool = False
) -> list[tuple[str, tuple[Any, ...]]]:
    """A frontier state's records: its out-degree, its violating edge (the last it has), and each child by
    fingerprint as a `Candidate`, its fairness end judged here on its live session (`ends`), or (`pending`,
    `Job.settles_ends`) after the shuffle, on its blob. The plan's path key of the i-th edge is the source's plus
    (i,): the order of `successors`. A child already `known` is no candidate (see `Known`). At the bound's last
    level a child is not frozen (it is never expanded), unless its end is pending. Session 15: a child's node
    crosses the plan as its pickle (`packed`), loaded once, where it is expanded or its pending end judged."""
    pending = pending and ends
    edges = ex.successors(unpacked(node), known, frozen=pending or not last)
    out: list[tuple[str, tuple[Any, ...]]] = [(DEGREE + fp, (key, len(edges)))]
    for i, (child_fp, _, child, found) in enumerate(edges):
        if found is not None:
            out.append((VIOLATION, ((*key, i), found)))
        elif child is not None:
            known.met.add(child_fp)
            end = ex.end_of(child) if ends and not pending else None
            child.live = None
            kept = packed(child) if pending or not last else None
            out.append((child_fp, Candidate((*key, i), kept, end, len(child.blob or b""), pending)))
    return out


def packed(node: Node) -> bytes:
    """A node as the plan carries it between its expansions (session 15): one pickle (its blob, steps, book and
    key), so the shuffle, the reduction, the cached level and the next level's read copy bytes, never re-pickle
    the node's objects (measured: benchmarks/README.md, "Session 15: Spark's cost per state")."""
    return pickle.dumps(node, pickle.HIGHEST_PROTOCOL)


def unpacked(node: Node | bytes | None) -> Any:
    """The node `packed` made (a root, or a node in one process before session 15, is already one)."""
    return pickle.loads(node) if isinstance(node, bytes) else node


def expand_all(
    ex: Expanding,
    rows: Iterable[tuple[str, Key, Node | bytes]],
    ends: bool,
    last: bool,
    before: Collection[str] = (),
    pending: bool = False,
) -> Iterator[tuple[str, tuple[Any, ...]]]:
    """One task's frontier states expanded in key order (so each fingerprint's end is judged once in the task);
    `before`: the states visited before this level; `pending`: ends judged after the shuffle (`settle`)."""
    known = Known(before)
    with few_collections():  # the copies are freed as they go (`state.release`): the collector has little to find
        for fp, key, node in sorted(rows, key=lambda r: r[1]):
            yield from expand(ex, fp, key, node, ends, last, known, pending)
    ex.check_fixed()


def settle(
    visited: set[str],
    records: Iterable[tuple[str, tuple[Any, ...]]],
    judge: Callable[[Node], Found | None] | None = None,
    last: bool = False,
) -> Settled:
    """A partition's candidates against its visited set: the new states (fairness end judged before the
    shuffle, `expand`) are added. At the bound's last level a candidate carries no node: its states are never
    expanded, each keeps its fingerprint, key and verdict (at 10^6 states the last level is most of them: issue
    33, "Larger pinned bounds"), and no blob crosses the shuffle (session 12). Session 14: a candidate whose end is
    `pending` is judged here by `judge` (`Explorer.end_of`), once per new state, the least key's; at the `last`
    level its node is then dropped. Session 15: the records are reduced here, the least key of each record key
    kept (`least`), not before the shuffle (a task makes each child once, `Known.met`: a merge there only cost)."""
    reduced: dict[str, tuple[Any, ...]] = {}
    for k, v in records:
        reduced[k] = least(reduced[k], v) if k in reduced else v
    out = Settled(visited)
    for k, v in reduced.items():
        if k == VIOLATION:
            out.violation = v  # type: ignore[assignment]
        elif k[0] == DEGREE:
            out.degrees.append(v)  # type: ignore[arg-type]
        elif k not in visited:
            visited.add(k)
            out.bytes += v.bytes
            if v.pending:
                if judge is None:
                    raise ValueError(f"{k}: a candidate's fairness end is pending and the partition has no judge")
                out.new.append(NewState(k, v.key, None if last else v.node, judge(unpacked(v.node))))
            else:
                out.new.append(NewState(k, v.key, v.node, v.end))
    return out


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
        records: list[list[tuple[str, tuple[Any, ...]]]] = [[] for _ in range(partitions)]  # reduced by `settle`
        last = level + 1 >= job.bound.depth
        before = set().union(*visited) if job.skip_known else ()  # the driver's set (Spark: broadcast)
        pending = job.settles_ends()
        for task in frontier:  # a task: the new states one partition settled (Spark's frontier partitions)
            for k, v in expand_all(ex, task, job.ends, last, before, pending):
                records[buckets(k) % partitions].append((k, v))
        judge = ex.end_of if pending else None
        settled = [settle(visited[i], records[i], judge, last) for i in range(partitions)]
        if pending:
            ex.check_fixed()  # as a Spark worker does after settling (`_settle_partition`)
        summary = Summary()
        for p in settled:
            summary = summary.merge(summarize(p))
        going = account(res, level, summary, max_states, LocalProbe(settled))
        frontier = [[(n.fingerprint, n.key, n.node) for n in p.new] for p in settled] if going and not last else []
        up = kin_up(job, res.per_level, partitions) if frontier else 0
        if up:
            frontier = regrouped(frontier, partitions, up)
        level += 1
        if progress:
            progress(level, res, summary.new, time.monotonic() - t, summary.bytes)
    res.seconds = time.monotonic() - began
    return res
