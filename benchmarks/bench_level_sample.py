"""What a state costs at the deep levels of a bound, measured on a sample (issue 33, "Larger pinned bounds").

Session 14.

    PYTHONPATH=$PWD python3 benchmarks/bench_level_sample.py BOUND --depth 7 [--full 5] [--every 10] [--manifest M]

Breadth first as `Explorer.run` explores (one visited set, every new state's fairness end judged), levels 1 to
`--full` in full, then only every `--every`-th state of level `--full` expanded, and the subtrees below them to
`--depth`: a level that would take an hour in full is seen in minutes. Per level: states expanded, transitions,
new states, CPU seconds (`time.process_time`) per new state and per expansion, the tick's probe
(`spaces.time_steps`: its calls, CPU seconds and the most timer steps one probe took) and the fairness ends' CPU
seconds, and the peak resident memory. A probe that takes more than `--stuck` timer steps stops the run and prints
its path and the live timers pending then (the diagnosis of session 14: sr-3s-2m-2f's level 7, whose probe
asked for `advance(0)` forever). The sample's levels below `--full` deduplicate only within the sample, so their new
states per expansion are higher than the whole level's; the costs per new state are the figure to project with.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class Stuck(Exception):
    """A probe past the step limit."""


class Probe:
    """`spaces.time_steps` wrapped: its CPU seconds and the timer steps (calls of the system's `advance`) per call."""

    def __init__(self, spaces: Any, limit: int) -> None:
        self.spaces, self.inner, self.limit = spaces, spaces.time_steps, limit
        self.calls, self.cpu, self.most, self.steps = 0, 0.0, 0, 0
        spaces.time_steps = self

    def __call__(self, system: Any, sim: Any, bound: Any, book: Any) -> Any:
        probe, real = self, system.advance

        def counted(ms: int) -> None:
            probe.steps += 1
            if probe.steps > probe.limit:
                due = sorted((i.time_ms - sim.now_ms, i.fn.__qualname__, i.args) for i in sim._queue if sim._live(i))
                raise Stuck(f"a probe past {probe.limit} timer steps; live timers (due in ms, action, args): {due[:8]}")
            real(ms)

        self.steps, t = 0, time.process_time()
        system.advance = counted
        try:
            return self.inner(system, sim, bound, book)
        finally:
            del system.advance  # the class's method again (the system is a copy: nothing else holds it)
            self.calls += 1
            self.cpu += time.process_time() - t
            self.most = max(self.most, self.steps)


def main() -> int:
    import conformance.explore.spaces as spaces
    from conformance.explore.bfs import Explorer
    from conformance.explore.manifest import MANIFEST, find

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bound")
    ap.add_argument("--depth", type=int, required=True, help="the last level explored")
    ap.add_argument("--full", type=int, default=5, help="the levels explored in full")
    ap.add_argument("--every", type=int, default=10, help="every N-th state of level --full expanded")
    ap.add_argument("--stuck", type=int, default=100_000, help="a probe's timer steps that stop the run")
    ap.add_argument("--manifest", type=Path, default=MANIFEST, help="the manifest the bound is in (a candidate's)")
    args = ap.parse_args()
    probe = Probe(spaces, args.stuck)
    entry = find(args.bound, args.manifest)
    ex = Explorer(entry.bound.with_(depth=max(args.depth, entry.bound.depth)))
    gc.freeze()
    root = ex.root()
    seen, frontier, began = {ex.fingerprint(ex.restore(root), root.book)}, [root], time.process_time()
    for level in range(1, args.depth + 1):
        if level == args.full + 1:
            frontier = frontier[:: args.every]
        t, calls, cpu, ends, new, moves = time.process_time(), probe.calls, probe.cpu, 0.0, [], 0
        probe.most = 0
        for node in frontier:
            try:
                edges = ex.successors(node, seen, frozen=level < args.depth)
            except Stuck as exc:
                print(f"level {level}: {exc}; path {[s['op'] + str(s['calls'][0]['args']) for s in node.steps]}")
                return 1
            for fp, _, child, found in edges:
                moves += 1
                if found is not None:
                    print(f"level {level}: violation {found.rule} ({found.requirement})")
                    return 1
                if child is not None:
                    seen.add(fp)
                    e = time.process_time()
                    found = ex.end_of(child)
                    ends += time.process_time() - e
                    if found is not None:
                        print(f"level {level}: violation at the end {found.rule} ({found.requirement})")
                        return 1
                    child.live = None
                    new.append(child)
        spent = time.process_time() - t
        print(
            f"level {level}: expanded {len(frontier)}, transitions {moves}, new {len(new)}, {spent:.1f} CPU s "
            f"({1000 * spent / max(1, len(new)):.2f} ms a new state, {1000 * spent / max(1, len(frontier)):.2f} ms an "
            f"expansion); probes {probe.calls - calls} {probe.cpu - cpu:.1f} s (at most {probe.most} timer steps), "
            f"ends {ends:.1f} s; peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB",
            flush=True,
        )
        frontier = new
    print(f"{time.process_time() - began:.1f} CPU s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
