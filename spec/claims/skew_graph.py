"""Difference constraints between node clock offsets: feasibility, smallest skew, conflicting pairs.

The skew check (`spec.claims.skew`) reduces a trace to at most one constraint per ordered pair of nodes,
`offset(b) - offset(a) <= w`, plus bounds `-e(n) <= offset(n) <= e(n)`. Such a system is a graph (an edge
a -> b of weight w, and edges z -> n and n -> z of weight e(n) for a zero node z); it is satisfiable iff
the graph has no negative cycle (Bellman-Ford). That answers the common case, a trace the bounds explain,
without building any formula. Only when there is a conflict does z3 extract minimal unsat cores and the
largest weight of each core pair that still conflicts (the FIELD-NOTES measurement: building formulas
costs far more than solving them).

Smallest single bound e: a cycle through z is z -> a -> ... -> b -> z of weight 2e + d(a, b), so e must
be at least -d(a, b) / 2 for every shortest-path distance d, and the graph without z must have no
negative cycle. One Bellman-Ford run from a virtual source joined to every node gives min over a of
d(a, b) for every b, hence the bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import z3

Pairs = Mapping[tuple[str, str], int]
ZERO = "\x00zero"  # the reference node z (not a valid node name in a trace)


Edge = tuple[str, str, int, "tuple[str, str] | None"]  # from, to, weight, the pair (None: a bound edge)
# Why Bellman-Ford by hand rather than networkx: networkx.find_negative_cycle raised "Negative cycle is
# detected but not found" on systems from this module's property tests (tried; networkx 3.6), and the
# cycle extraction below also needs the pair that labels each edge.


Parents = dict[str, tuple[str, "tuple[str, str] | None"]]  # node -> (previous node, the pair of that edge)


def _round(edges: list[Edge], dist: dict[str, float], parent: Parents) -> list[str]:
    """One Bellman-Ford round: relax every edge; return the nodes whose distance dropped."""
    changed = []
    for a, b, w, key in edges:
        if dist[a] + w < dist[b]:
            dist[b] = dist[a] + w
            parent[b] = (a, key)
            changed.append(b)
    return changed


def _relax(nodes: list[str], edges: list[Edge], dist: dict[str, float]) -> tuple[dict, list[str]]:
    """Bellman-Ford rounds; returns the parent edges and the nodes still relaxed in the last round
    (empty when the distances converged, i.e. when no negative cycle is reachable)."""
    parent: dict[str, tuple[str, tuple[str, str] | None]] = {}
    changed: list[str] = []
    for _ in range(len(nodes) + 1):  # paths have fewer than len(nodes) edges; one more round detects a cycle
        changed = _round(edges, dist, parent)
        if not changed:
            break
    return parent, changed


def _distances(nodes: list[str], edges: list[tuple[str, str, int]]) -> dict[str, int] | None:
    """Shortest distances from a virtual source with 0-weight edges to every node (so every distance is
    at most 0); None when the graph has a negative cycle."""
    dist: dict[str, float] = dict.fromkeys(nodes, 0)
    _, changed = _relax(nodes, [(a, b, w, None) for a, b, w in edges], dist)
    return None if changed else {n: int(d) for n, d in dist.items()}


def _parent_cycles(parent: dict[str, tuple[str, tuple[str, str] | None]], starts: list[str]) -> list[set]:
    """Cycles of the parent graph reachable backwards from `starts` (each a set of pairs). During
    Bellman-Ford every cycle of the parent graph is a negative cycle."""
    done: set[str] = set()
    cycles = []
    for start in dict.fromkeys(starts):
        path: dict[str, int] = {}
        x: str | None = start
        while x is not None and x not in done and x not in path:
            path[x] = len(path)
            x = parent[x][0] if x in parent else None
        if x is not None and x in path:
            cycle, y = set(), x
            while True:
                prev, key = parent[y]
                if key is not None:
                    cycle.add(key)
                y = prev
                if y == x:
                    break
            cycles.append(cycle)
        done.update(path)
    return cycles


def _negative_cycles(nodes: list[str], edges: list[Edge]) -> list[set[tuple[str, str]]]:
    """Negative cycles of the graph (the pairs on each; bound edges left out), found in the parent graph
    as soon as one forms. A simple negative cycle is a minimal unsatisfiable set of difference
    constraints: drop any edge and the rest is a set of paths."""
    dist: dict[str, float] = dict.fromkeys(nodes, 0)
    parent: dict[str, tuple[str, tuple[str, str] | None]] = {}
    for _ in range(len(nodes) + 1):
        changed = _round(edges, dist, parent)
        if not changed:
            return []
        cycles = _parent_cycles(parent, changed)
        if cycles:
            return cycles
    return []


def _graph(pairs: Pairs, bound: Callable[[str], int]) -> tuple[list[str], list[Edge]]:
    nodes = sorted({n for p in pairs for n in p})
    edges: list[Edge] = [(a, b, w, (a, b)) for (a, b), w in pairs.items()]
    edges += [(ZERO, n, bound(n), None) for n in nodes] + [(n, ZERO, bound(n), None) for n in nodes]
    return [*nodes, ZERO], edges


def feasible(pairs: Pairs, bound: Callable[[str], int]) -> bool:
    """Whether offsets within the bounds satisfy every pair constraint."""
    nodes, edges = _graph(pairs, bound)
    return not _relax(nodes, edges, dict.fromkeys(nodes, 0))[1]


def min_uniform_skew(pairs: Pairs) -> int | None:
    """Smallest single bound e with offsets in [-e, e] satisfying every pair constraint (None: no bound
    does, because the constraints form a negative cycle)."""
    nodes = sorted({n for p in pairs for n in p})
    dist = _distances(nodes, [(a, b, w) for (a, b), w in pairs.items()])
    if dist is None:
        return None
    worst = -min(dist.values(), default=0)
    return (worst + 1) // 2


def _largest_conflicting_weights(
    removed: list[tuple[str, str]], rest: Pairs, bound: Callable[[str], int]
) -> dict[tuple[str, str], int]:
    """For each removed pair (a, b): under the satisfiable rest, offset(a) - offset(b) is at most the
    shortest distance from b to a, so a weight below minus that distance conflicts."""
    nodes, edges = _graph({**rest, **dict.fromkeys(removed, 0)}, bound)
    edges = [e for e in edges if e[3] is None or e[3] in rest]
    out: dict[tuple[str, str], int] = {}
    for source in dict.fromkeys(b for _, b in removed):
        dist: dict[str, float] = dict.fromkeys(nodes, float("inf"))
        dist[source] = 0
        _relax(nodes, edges, dist)
        for a, b in removed:
            if b == source:
                out[(a, b)] = -int(dist[a]) - 1
    return out


def conflicting_pairs(pairs: Pairs, bound: Callable[[str], int]) -> dict[tuple[str, str], int]:
    """The pairs on negative cycles (minimal unsat cores) of the joint system, removed until the rest is
    satisfiable, each with the largest weight that still conflicts with that satisfiable rest."""
    rest, removed = dict(pairs), []
    while True:
        nodes, edges = _graph(rest, bound)
        cycles = _negative_cycles(nodes, edges)
        if not cycles:
            if not feasible(rest, bound):  # no cycle traced although one exists: let z3 find the cores
                return conflicting_pairs_z3(pairs, bound)
            break
        for cycle in cycles:
            for p in cycle:
                if p in rest:
                    removed.append(p)
                    del rest[p]
    return _largest_conflicting_weights(removed, rest, bound)


def _minimal_core(solver: z3.Solver, core: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """Deletion-based minimisation: drop every label the core stays unsatisfiable without."""
    kept = list(core)
    for lab in core:
        trial = [x for x in kept if not x.eq(lab)]
        if solver.check(*trial) == z3.unsat:
            kept = trial
    return kept


def conflicting_pairs_z3(pairs: Pairs, bound: Callable[[str], int]) -> dict[tuple[str, str], int]:
    """The same with z3 (minimised unsat cores, Optimize for the weights): the reference the graph
    version is tested against."""
    if feasible(pairs, bound):
        return {}
    nodes = sorted({n for p in pairs for n in p})
    off = {n: z3.Int(f"offset[{n}]") for n in nodes}
    bounds = [z3.And(off[n] >= -bound(n), off[n] <= bound(n)) for n in nodes]
    solver = z3.Solver()
    solver.add(*bounds)
    label: dict[tuple[str, str], z3.BoolRef] = {}
    for (a, b), w in pairs.items():
        label[(a, b)] = z3.Bool(f"{a}->{b}")
        solver.add(z3.Implies(label[(a, b)], off[b] - off[a] <= w))
    pair_of = {lab.get_id(): p for p, lab in label.items()}
    remaining, removed = set(pairs), []
    while remaining and solver.check(*(label[p] for p in remaining)) == z3.unsat:
        core = _minimal_core(solver, list(solver.unsat_core()))
        for lab in core:
            removed.append(pair_of[lab.get_id()])
            remaining.discard(pair_of[lab.get_id()])
    opt = z3.Optimize()
    opt.add(*bounds, *(off[b] - off[a] <= pairs[(a, b)] for a, b in remaining))
    out: dict[tuple[str, str], int] = {}
    for a, b in removed:
        opt.push()
        handle = opt.maximize(off[a] - off[b])
        opt.check()
        out[(a, b)] = -opt.upper(handle).as_long() - 1  # weights below -max(offset(a) - offset(b)) conflict
        opt.pop()
    return out
