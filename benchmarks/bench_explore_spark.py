"""Exploration on Spark against one process (issue 33, "On Spark"), side by side in one run; and exploration at
scale on Spark alone, on `local[2]` or a standalone cluster of N one-core workers (issue 33, "Larger pinned bounds").

    PYTHONPATH=$PWD python3 benchmarks/bench_explore_spark.py [BOUND ...] [--master URL] [--partitions N]
    PYTHONPATH=$PWD python3 benchmarks/bench_explore_spark.py BOUND --spark-only [--slow] [--partitions 64]
    PYTHONPATH=$PWD python3 benchmarks/bench_explore_spark.py BOUND --cluster 1 2  # 1 worker, then 2; the ratio
    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_explore_spark.py BOUND --plan-cpu [--depth D]

Default: for each manifest bound (default: every default bound), in turn: the single-process explorer
(`conformance.explore.bfs.explore`), the level plan in one process (`conformance.explore.levels.run_levels`)
and the level plan on Spark (`spark_trace_check.explore.run_spark`, `local[2]` unless `--master`), each timed on
its exploration loop (the Spark session is started once before, and its start-up printed apart). Prints the
distinct states, seconds and distinct states/s of each, and checks that the three agree on the figures. The
constants of `--engine auto` (`conformance/explore/cli.py`) come from these rates.

`--spark-only` (implied by `--cluster`): Spark alone, one line per level (states, transitions, new states and
their bytes, seconds), then wall seconds, the process tree's CPU seconds and peak resident memory (driver, JVMs
and Python workers, polled from /proc: `benchmarks/proctree.py`), distinct states per wall second, and the
figures against the manifest's pins (`compare`: exit 1 if they differ). `--cluster N` starts a standalone master
and N one-core workers (`spark_trace_check.cluster.Standalone`, the FIELD-NOTES recipe) and runs on it; the
cluster's start-up is printed apart and not counted in the run's wall time, its processes are in the tree.
Several N (`--cluster 1 2`, session 13): one cluster each, in turn (each stopped by pid before the next starts),
then the ratio of wall times (and of CPU seconds) of each against the first. `cpu_split`: the tree's CPU seconds
of the JVMs, of the Python workers and of the driver (`proctree.TreeWatch.split`).

`--plan-cpu` (session 12): no Spark; the level plan in this process (`run_levels`, 4 partitions), its CPU seconds
(`time.process_time`) and states, optionally to `--depth D`: run from /tmp with each tree on PYTHONPATH in turn
to compare two trees' plans side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proctree import TreeWatch

from conformance.explore.bfs import explore
from conformance.explore.levels import Job, run_levels, say
from conformance.explore.manifest import MANIFEST, compare, load


def side_by_side(spark, names: list[str], entries: dict, partitions: int | None) -> int:
    from spark_trace_check.explore import run_spark

    bad = 0
    for name in names:
        entry = entries[name]
        one = explore(entry.bound, max_states=entry.max_states)
        lv = run_levels(Job(entry.bound), entry.max_states)
        sp = run_spark(spark, Job(entry.bound), entry.max_states, partitions)
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
    return bad


def at_scale(spark, names: list[str], entries: dict, args: argparse.Namespace, label: str, rows=None) -> int:
    from spark_trace_check.explore import run_spark

    bad = 0
    for name in names:
        entry = entries[name]
        with TreeWatch() as watch:
            t = time.monotonic()

            def progress(level, res, new, seconds, nbytes, watch=watch, t=t):
                say(level, res, new, seconds, nbytes)  # and the tree so far: a run stopped early still says it
                print(
                    f"    tree: {time.monotonic() - t:.0f} s wall, {watch.cpu_s:.1f} CPU s {watch.split()}, "
                    f"peak {watch.peak_bytes / 2**20:.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )

            job = Job(
                entry.bound,
                compress=args.compress,
                skip_known=not args.no_skip_known,
                ends_after_shuffle=args.ends,
                regroup=args.regroup,
            )
            res = run_spark(spark, job, entry.max_states, args.partitions, progress=progress)
            wall = time.monotonic() - t
        diffs = compare(entry, res) if entry.pinned else ["not pinned: not judged"]
        bad += bool(diffs) and entry.pinned
        row = {
            "bound": name,
            "master": label,
            "states": res.states,
            "transitions": res.transitions,
            "per_level": res.per_level,
            "depth": res.depth,
            "result": res.result,
            "found": None if res.found is None else f"{res.found.kind} {res.found.rule} at depth {res.found.depth}",
            "wall_s": round(wall, 1),
            "cpu_s": round(watch.cpu_s, 1),
            "cpu_split": watch.split(),
            "peak_rss_mb": round(watch.peak_bytes / 2**20),
            "processes": watch.processes,
            "states_per_s": round(res.states / wall, 1),
            "states_per_cpu_s": round(res.states / watch.cpu_s, 1) if watch.cpu_s else None,
            "compress": args.compress,
            "manifest": diffs or "as pinned",
        }
        print(json.dumps(row), flush=True)
        if rows is not None:
            rows.append(row)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
    return bad


def plan_cpu(
    names: list[str],
    entries: dict,
    depth: int | None,
    compress: bool = False,
    partitions: int = 4,
    ends: bool | None = None,
    regroup: int = 0,
) -> int:
    """The level plan in one process: CPU seconds of this process, per bound (no Spark session); `compress`: the
    frontier blobs compressed as `--spark-only --compress` runs them (session 20); `ends`: `Job.ends_after_shuffle`
    (None: the job's own choice)."""
    for name in names:
        bound = entries[name].bound
        bound = bound.with_(depth=depth) if depth else bound
        t = time.process_time()
        res = run_levels(Job(bound, compress=compress, ends_after_shuffle=ends, regroup=regroup), partitions=partitions)
        print(
            json.dumps(
                {"bound": name, "depth": bound.depth, "states": res.states, "cpu_s": round(time.process_time() - t, 2)}
            )
        )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bounds", nargs="*")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    ap.add_argument("--spark-only", action="store_true", help="Spark alone, with per-level progress and memory")
    ap.add_argument(
        "--cluster",
        type=int,
        nargs="+",
        default=[],
        help="a standalone cluster of N one-core workers (several N: one cluster each, in turn, and their ratio)",
    )
    ap.add_argument("--port", type=int, default=17177, help="--cluster: the master's port")
    ap.add_argument("--worker-memory", default="4g", help="--cluster: each worker's memory (and its executor's)")
    ap.add_argument("--compress", action="store_true", help="frontier blobs LZ4-compressed")
    ap.add_argument("--no-skip-known", action="store_true", help="the plan of sessions 10-12 (Job.skip_known off)")
    ap.add_argument("--conf", action="append", default=[], help="a further Spark setting KEY=VALUE")
    ap.add_argument("--out", help="--spark-only: append each row as JSON to this file")
    ap.add_argument("--plan-cpu", action="store_true", help="the level plan in this process, its CPU seconds")
    ap.add_argument("--depth", type=int, default=0, help="explore to this depth instead (not pinned then)")
    ap.add_argument(
        "--regroup", type=int, default=0, help="the frontier regrouped by ancestor K levels up (Job.regroup; 0: off)"
    )
    ap.add_argument(
        "--ends",
        choices=["before", "after", "auto"],
        default="auto",
        help="fairness ends judged before the shuffle, after it (Job.ends_after_shuffle), or as the job chooses",
    )
    args = ap.parse_args()
    args.partitions = args.partitions or None
    args.ends = {"before": False, "after": True, "auto": None}[args.ends]
    bounds = load(args.manifest)[0]
    entries = {e.bound.name: e for e in bounds}
    names = args.bounds or [e.bound.name for e in bounds if not e.slow]
    if args.plan_cpu:
        return plan_cpu(
            names, entries, args.depth or None, args.compress, args.partitions or 4, args.ends, args.regroup
        )
    if args.depth:  # a pinned bound explored to another depth: its figures are not pinned
        for name in names:
            e = entries[name]
            entries[name] = replace(e, bound=e.bound.with_(depth=args.depth), states=None, depth=None, pinned=False)
    conf = dict(kv.split("=", 1) for kv in args.conf)
    if not args.cluster:
        return run_on(args.master, conf, names, entries, args)
    bad, rows = 0, []
    for workers in args.cluster:  # one cluster each, in turn: the same bound on 1 worker, then on 2, ...
        before = len(rows)
        bad |= run_on(None, conf, names, entries, args, workers, rows)
        if len(rows) == before:
            break
    if len(rows) > 1:
        for row in rows[1:]:
            base = next(r for r in rows if r["bound"] == row["bound"])
            if base is row:
                continue
            print(
                json.dumps(
                    {
                        "bound": row["bound"],
                        "workers": f"{row['master']} against {base['master']}",
                        "wall_ratio": round(base["wall_s"] / row["wall_s"], 2),
                        "cpu_ratio": round(row["cpu_s"] / base["cpu_s"], 2),
                    }
                ),
                flush=True,
            )
    return bad


def run_on(
    master: str | None,
    conf: dict[str, str],
    names: list[str],
    entries: dict,
    args: argparse.Namespace,
    workers: int = 0,
    rows: list[dict] | None = None,
) -> int:
    """One session on `master`, or on a standalone cluster of `workers` one-core workers started for it (stopped
    by pid when done; `spark_trace_check.cluster.Standalone`)."""
    from spark_trace_check.cluster import Standalone
    from spark_trace_check.explore import session

    conf = dict(conf)
    cluster = None
    if workers:
        t = time.monotonic()
        cluster = Standalone(workers=workers, port=args.port, memory=args.worker_memory).start()
        master = cluster.url
        conf.setdefault("spark.executor.memory", args.worker_memory)
        print(f"standalone cluster, {workers} one-core workers: {time.monotonic() - t:.1f} s", flush=True)
    try:
        t = time.monotonic()
        spark = session(master, conf)
        print(f"spark session ({master}): {time.monotonic() - t:.1f} s", flush=True)
        if args.spark_only or workers:
            label = f"standalone x{workers}" if workers else master
            bad = at_scale(spark, names, entries, args, label, rows)
        else:
            bad = side_by_side(spark, names, entries, args.partitions)
        spark.stop()
    finally:
        if cluster is not None:
            cluster.stop()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
