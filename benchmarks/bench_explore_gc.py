"""The cyclic collector's share of an exploration (issue 33, session 19): the level plan in this process
(`conformance.explore.levels.run_levels`, 4 partitions, as `bench_explore_spark.py --plan-cpu`), each collection
timed through `gc.callbacks`, and the process's CPU seconds of the plan.

    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_explore_gc.py sr-3s-2m-2f-d5 [--depth D]
    ... --garbage   # instead: the types of the cyclic garbage the plan leaves (gc.DEBUG_SAVEALL; small depths)

Prints one JSON line: states, the plan's CPU seconds, and per generation the collections, their seconds and the
objects they collected. Run it against each tree on PYTHONPATH in turn to compare two trees.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.explore.levels import Job, run_levels
from conformance.explore.manifest import MANIFEST, load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bound")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--garbage", action="store_true")
    args = ap.parse_args()
    entry = next(e for e in load(MANIFEST)[0] if e.bound.name == args.bound)
    bound = entry.bound.with_(depth=args.depth) if args.depth else entry.bound
    spent: Counter[int] = Counter()
    count: Counter[int] = Counter()
    collected: Counter[int] = Counter()
    began = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            g = info["generation"]
            spent[g] += time.perf_counter() - began[0]
            count[g] += 1
            collected[g] += info["collected"]

    if args.garbage:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
    else:
        gc.callbacks.append(timed)
    t = time.process_time()
    res = run_levels(Job(bound), partitions=4)
    cpu = time.process_time() - t
    if args.garbage:
        gc.collect()
        kinds = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage)
        print(json.dumps({"bound": args.bound, "states": res.states, "garbage": len(gc.garbage)}))
        for kind, n in kinds.most_common(25):
            print(f"{n:>8} {kind}")
        return 0
    gens = {g: {"collections": count[g], "seconds": round(spent[g], 3), "collected": collected[g]} for g in count}
    row = {"bound": args.bound, "depth": bound.depth, "states": res.states, "cpu_s": round(cpu, 2), "gc": gens}
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
