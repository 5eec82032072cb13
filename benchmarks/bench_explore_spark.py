"""Exploration on Spark against one process (issue 33, "On Spark"), side by side in one run.

    PYTHONPATH=$PWD python3 benchmarks/bench_explore_spark.py [BOUND ...] [--master URL] [--partitions N]

For each manifest bound (default: every default bound), in turn: the single-process explorer
(`conformance.explore.bfs.explore`), the level plan in one process (`conformance.explore.levels.run_levels`)
and the level plan on Spark (`spark_trace_check.explore.run_spark`, `local[2]` unless `--master`), each timed on
its exploration loop (the Spark session is started once before, and its start-up printed apart). Prints the
distinct states, seconds and distinct states/s of each, and checks that the three agree on the figures. The
constants of `--engine auto` (`conformance/explore/cli.py`) come from these rates.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.explore.bfs import explore
from conformance.explore.levels import Job, run_levels
from conformance.explore.manifest import find, load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bounds", nargs="*")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=0)
    args = ap.parse_args()
    names = args.bounds or [e.bound.name for e in load()[0] if not e.slow]
    from spark_trace_check.explore import run_spark
    from spark_trace_check.session import build_session

    t = time.monotonic()
    spark = build_session(args.master, app_name="bench-explore-spark")
    print(f"spark session ({args.master}): {time.monotonic() - t:.1f} s", flush=True)
    bad = 0
    for name in names:
        entry = find(name)
        one = explore(entry.bound, max_states=entry.max_states)
        lv = run_levels(Job(entry.bound), entry.max_states)
        sp = run_spark(spark, Job(entry.bound), entry.max_states, args.partitions or None)
        same = all(
            (r.states, r.transitions, r.per_level, r.result) == (one.states, one.transitions, one.per_level, one.result)
            for r in (lv, sp)
        )
        bad += not same
        cells = "  ".join(
            f"{what} {r.seconds:6.1f} s {r.states / r.seconds:7.1f}/s"
            for what, r in (("python", one), ("levels", lv), ("spark", sp))
        )
        print(f"{name:<28} {one.states:>6} states  {cells}  {'agree' if same else 'DIFFER'}", flush=True)
    spark.stop()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
