"""Which shape of bound reaches 10^6 distinct states cheapest (issue 33, "Larger pinned bounds"; session 13).

    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_shapes.py [SHAPE ...] [--cpu-s 60] [--list]

Each shape (a manifest bound's fields: mechanism, servers, messages, faults, kinds, choices) is explored level by
level with the Spark plan in this process (`conformance.explore.levels.run_levels`, 4 partitions: the plan's own
per-state work, without Spark's), one depth more each time, until the next depth's last level would cost more than
`--cpu-s` CPU seconds (its growth ratio times the last level's).
Printed per shape, as one JSON line: the states per level, the CPU seconds of each level (`time.process_time`
in the progress callback), the deepest level's CPU per state, the growth ratio of the last two levels, and a
projection: the levels continued with the last ratio falling by `--fall` per level (the measured ratios of sr and
am fall by about one a level as the faults and messages are spent), to the depth whose total first passes 10^6,
and that many states at the deepest measured level's CPU per state (a state's cost grows a little with depth:
the projection is a floor). The CPU of the Spark plan on `local[2]` is this plus Spark's own share (measured
by `bench_explore_spark.py --spark-only`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.explore.levels import Job, run_levels
from conformance.explore.spaces import Bound

SR_KINDS = ("crash", "partition", "resubmit", "new-database")
AM_KINDS = ("crash", "partition", "fail_database", "switchover", "logs", "block", "health", "responder", "dial")
AM_ALL = (*AM_KINDS, "maintenance", "query")
PF_KINDS = ("add_replica", "remove_replica", "crash", "loss")

# name: (mechanism, servers, messages, faults, kinds, choices)
SHAPES: dict[str, tuple[str, int, int, int, tuple[str, ...], bool]] = {
    "sr-3s-2m-2f": ("sr", 3, 2, 2, SR_KINDS, False),
    "sr-4s-2m-2f": ("sr", 4, 2, 2, SR_KINDS, False),
    "sr-3s-3m-2f": ("sr", 3, 3, 2, SR_KINDS, False),
    "sr-3s-2m-3f": ("sr", 3, 2, 3, SR_KINDS, False),
    "am-4s-2db-4f": ("am", 4, 2, 4, AM_ALL, True),
    "am-5s-2db-4f": ("am", 5, 2, 4, AM_ALL, True),
    "am-6s-2db-4f": ("am", 6, 2, 4, AM_ALL, True),
    "am-5s-3db-4f": ("am", 5, 3, 4, AM_ALL, True),
    "pf-3s-1f-2f": ("pf", 3, 1, 2, PF_KINDS, True),
    "pf-3s-2f-2f": ("pf", 3, 2, 2, PF_KINDS, True),
    "pf-3s-3f-3f": ("pf", 3, 3, 3, (*PF_KINDS, "big", "client", "remove_at_once"), True),
    "pf-3s-2f-2f-seed": ("pf", 3, 2, 2, PF_KINDS, False),
}


def project(per_level: list[int], fall: float, target: int = 10**6) -> tuple[int, int]:
    """(depth, total states) where the levels continued at the last ratio, falling by `fall` a level (never
    below 1.2), first pass `target`."""
    levels = list(per_level)
    ratio = levels[-1] / max(levels[-2], 1)
    while sum(levels) < target and len(levels) < 40:
        ratio = max(1.2, ratio - fall)
        levels.append(round(levels[-1] * ratio))
    return len(levels) - 1, sum(levels)


def measure(name: str, cpu_s: float, fall: float) -> dict:
    mech, servers, messages, faults, kinds, choices = SHAPES[name]
    cpu: list[float] = []
    per_level: list[int] = []
    depth = 1
    while True:
        bound = Bound(mech, name, servers, messages, faults, kinds, depth, choices=choices)
        marks = [time.process_time()]

        def tick(level, res, new, seconds, nbytes, marks=marks):
            marks.append(time.process_time())

        res = run_levels(Job(bound), partitions=4, progress=tick)
        per_level, cpu = res.per_level, [b - a for a, b in pairwise(marks)]
        growth = per_level[-1] / max(per_level[-2], 1) if len(per_level) > 1 else 1.0
        if res.depth < depth or not cpu or cpu[-1] * growth > cpu_s:  # the next depth would cost more
            break
        depth += 1
    per_state = cpu[-1] / per_level[-1] if per_level[-1] else 0.0
    d, total = project(per_level, fall) if len(per_level) > 2 else (0, 0)
    return {
        "shape": name,
        "per_level": per_level,
        "level_cpu_s": [round(c, 1) for c in cpu],
        "cpu_ms_per_state": round(1000 * per_state, 2),
        "states_per_cpu_s": round(1 / per_state, 1) if per_state else None,
        "ratio": round(per_level[-1] / max(per_level[-2], 1), 2),
        "projected_depth": d,
        "projected_states": total,
        "projected_cpu_s": round(total * per_state),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shapes", nargs="*")
    ap.add_argument("--cpu-s", type=float, default=60.0, help="stop after a depth whose last level costs more")
    ap.add_argument("--fall", type=float, default=1.0, help="the growth ratio's fall per projected level")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        print("\n".join(SHAPES))
        return 0
    for name in args.shapes or list(SHAPES):
        print(json.dumps(measure(name, args.cpu_s, args.fall)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
