"""The single-process breadth-first search over an explorer's `root`/`successors`/`end_of` (issue 22; issue 33's
copying explorer, `conformance.explore.bfs.Explorer`): `Explorer.run`.

Level by level in BFS order (a deque of frontier nodes): every edge counted and judged, each new state's
fairness end judged where its edge made it, a node of the bound's last level neither expanded nor copied. Stops at
the first violation (at the least depth: its path is the shortest), at `max_states` or at a deadline (incomplete).
Only the fingerprints of visited states and the frontier's blobs are kept (`Result.seen_bytes`,
`Result.frontier_bytes`). The level plan that Spark runs (`conformance.explore.levels`) gives the same counts and
shortest paths.
"""

from __future__ import annotations

import gc
import sys
import time
from collections import deque
from typing import Any

from conformance.explore.collector import few_collections
from conformance.explore.fixed import end_of_search
from conformance.explore.result import Result
from conformance.explore.roots import level_zero
from conformance.explore.state import Node


def search(ex: Any, max_states: int | None = None, ends: bool = True, deadline: float | None = None) -> Result:
    """Explore `ex`'s bound (`ex`: the `conformance.explore.bfs.Explorer`, which imports this module); stop
    (incomplete) after `max_states` distinct states or at `deadline` (time.monotonic()).

    Session 13: the objects alive when the search starts (the interpreter's modules, the setup: about 120,000
    objects) are kept out of the cyclic collector's scans while it runs (`gc.freeze`, undone at the end unless
    a caller had frozen some itself). Each copy of a state is a graph with cycles (a simulator and the model's
    bound methods), so the collector runs often, and its older generations scanned them all each time
    (measured: 9% of exploring sr and pf). Session 19: the copies are released when done with (`release`),
    freed by reference counting, and the youngest generation collected less often (`few_collections`)."""
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.freeze()
    try:
        with few_collections():
            return _search(ex, max_states, ends, deadline)
    finally:
        if froze:
            gc.unfreeze()


def _search(ex: Any, max_states: int | None, ends: bool, deadline: float | None) -> Result:
    started = time.monotonic()
    res = ex.result
    roots, res.found = level_zero(ex, ends)  # one root per resolution of the construction's choices
    seen = {fp for fp, _ in roots}
    res.states, res.per_level = len(roots), [len(roots)]
    frontier: deque[Node] = deque(node for _, node in roots)
    held = res.frontier_bytes = sum(map(_size, frontier))
    while frontier and res.found is None and res.complete:
        node = frontier.popleft()
        held -= _size(node)
        if node.depth >= ex.bound.depth:
            continue
        last = node.depth + 1 >= ex.bound.depth  # its children are judged, never expanded nor copied
        for fp, _, child, found in ex.successors(node, seen, frozen=not last):
            res.transitions += 1
            res.found = found
            if found is not None:
                break
            if child is not None:
                seen.add(fp)
                res.states += 1
                res.depth = max(res.depth, child.depth)
                if len(res.per_level) <= child.depth:
                    res.per_level.append(0)
                res.per_level[child.depth] += 1
                res.found = ex.end_of(child) if ends else None
                child.live = None
                if not last:
                    frontier.append(child)
                    held += _size(child)
                    res.frontier_bytes = max(res.frontier_bytes, held)
                if res.found is not None:
                    break
            if (max_states is not None and res.states >= max_states) or (
                deadline is not None and time.monotonic() > deadline
            ):
                res.complete = False
                break
    end_of_search(ex.fixed, ex.bound.name)  # a step that changed a shared object changed every state
    res.seen_bytes = sys.getsizeof(seen) + sum(map(sys.getsizeof, seen))
    res.merges = max(0, len(ex.identities) - len(seen)) if ex.renames else 0
    res.seconds = time.monotonic() - started
    return res


def _size(node: Node) -> int:
    """What a frontier node holds: its blob and its path's steps (shared with its siblings: counted whole)."""
    return len(node.blob or b"") + sys.getsizeof(node.steps) + sys.getsizeof(node.key)
