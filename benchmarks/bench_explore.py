"""Exhaustive exploration (issue 22): growing bounds per mechanism until one does not finish in the budget.

Each bound is explored once (one process, one core); printed: distinct states, transitions, depth, seconds,
states/s, and whether it finished. The largest finished bound per mechanism goes into benchmarks/README.md.

    python benchmarks/bench_explore.py --budget 600 [--mechanism sr]
"""

from __future__ import annotations

import argparse
import json
import time

from conformance.explore.bfs import Explorer
from conformance.explore.spaces import Bound

SR_KINDS = ("crash", "partition", "resubmit", "new-database")
AM_KINDS = ("crash", "partition", "fail_database", "switchover")
PF_KINDS = ("add_replica", "remove_replica", "crash", "loss")

# growing bounds, smallest first
LADDER: dict[str, list[Bound]] = {
    "sr": [
        Bound("sr", "sr-3s-1m-f1-d5", 3, 1, 1, SR_KINDS, 5),
        Bound("sr", "sr-3s-1m-f1-d6", 3, 1, 1, SR_KINDS, 6),
        Bound("sr", "sr-3s-2m-f1-d6", 3, 2, 1, SR_KINDS, 6),
        Bound("sr", "sr-3s-2m-f2-d7", 3, 2, 2, SR_KINDS, 7),
    ],
    "am": [
        Bound("am", "am-4s-2db-f2-d4", 4, 2, 2, AM_KINDS, 4),
        Bound("am", "am-4s-2db-f3-d5", 4, 2, 3, AM_KINDS, 5),
        Bound("am", "am-4s-2db-f4-d6", 4, 2, 4, AM_KINDS, 6),
    ],
    "pf": [
        Bound("pf", "pf-3s-1f-f1-d4", 3, 1, 1, PF_KINDS, 4),
        Bound("pf", "pf-3s-1f-f1-d5", 3, 1, 1, PF_KINDS, 5),
        Bound("pf", "pf-3s-2f-f1-d6", 3, 2, 1, PF_KINDS, 6),
    ],
}


def run(mechanism: str, budget_s: float) -> list[dict[str, object]]:
    rows = []
    for bound in LADDER[mechanism]:
        ex = Explorer(bound)
        deadline = time.monotonic() + budget_s
        res = ex.run(deadline=deadline)
        row = {**res.to_json(), "finished": res.complete, "states_per_s": round(res.states / res.seconds, 1)}
        row.pop("states_per_level", None)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if not res.complete:
            break
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per bound")
    ap.add_argument("--mechanism", choices=sorted(LADDER), action="append")
    args = ap.parse_args()
    for m in args.mechanism or sorted(LADDER):
        run(m, args.budget)


if __name__ == "__main__":
    main()
