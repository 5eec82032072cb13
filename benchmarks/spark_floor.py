"""The floors of a Spark check: its fixed cost (session start-up and the first job), and the bare shuffle.

    python benchmarks/spark_floor.py [--master local[2]]
    python benchmarks/spark_floor.py --corpus DIR [--partitions 4]     # the bare repartition + sort of DIR

Without `--corpus`: the seconds to build the session the CLI builds for a small input
(`build_session(small=True)`), to run a first trivial job (`range(10).count()`: JIT warm-up of the query
engine), and a second one. What is left of the README's main job is the check itself. Issue 10 asks for the
main job under 20 s: this is the part of it no change to the check can remove.

With `--corpus`: the floor of any check of that corpus (`bare_shuffle`): read it, `repartition` by trace and
`sortWithinPartitions`, touching every row once, in the session a check of that size gets; run twice, the
second (warm JIT: the lower floor) timed with the CPU seconds of the whole process tree
(`bench_check.tree_cpu`). Issue 32 asks for the ratio of a Spark check to this at 10^6, 10^7 and 10^8 events
(`bench_check.py` runs this script beside the check; alone, it measures the floor of a corpus too large to
check twice in one run).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def bare_shuffle(spark, corpus: Path, partitions: int) -> float:
    """The floor of any check: read the corpus, `repartition` by trace and `sortWithinPartitions`, touching
    every row once (Spark's `noop` sink: an aggregation would let the optimiser drop the sort). Seconds."""
    paths = [str(p) for p in sorted(corpus.rglob("*")) if p.suffix in (".parquet", ".jsonl")]
    t = time.perf_counter()
    df = (
        spark.read.parquet(*[p for p in paths if p.endswith(".parquet")])
        if paths[0].endswith(".parquet")
        else (spark.read.json([p for p in paths if p.endswith(".jsonl")]))
    )
    sorted_rows = df.repartition(partitions, "trace_id").sortWithinPartitions("trace_id", "seq")
    sorted_rows.write.format("noop").mode("overwrite").save()  # every row, sorted, then dropped
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--corpus", help="time the bare repartition + sort of this directory's trace files")
    ap.add_argument("--partitions", type=int, default=4)
    args = ap.parse_args()
    t = time.perf_counter()
    from spark_trace_check.session import build_session

    if args.corpus:
        from benchmarks.bench_check import tree_cpu
        from conformance.driver_choice import input_events

        events = input_events([args.corpus])
        spark = build_session(args.master, partitions=args.partitions, events=events)
        print(f"session start-up: {time.perf_counter() - t:.1f} s")
        cold_s = bare_shuffle(spark, Path(args.corpus), args.partitions)
        print(f"first run (cold JIT): {cold_s:.2f} s")
        cpu = tree_cpu()
        bare_s = bare_shuffle(spark, Path(args.corpus), args.partitions)
        cpu = tree_cpu() - cpu
        print(f"bare repartition+sort: {bare_s:.2f} s, {events or 0:,} events, {(events or 0) / bare_s:,.0f} events/s")
        print(f"cpu seconds (driver, JVM, Python workers): {cpu:.1f}")
        spark.stop()
        return 0
    spark = build_session(args.master, partitions=4, small=True)
    print(f"session start-up: {time.perf_counter() - t:.1f} s")
    for label in ("first job", "second job"):
        t = time.perf_counter()
        spark.range(10).count()
        print(f"{label} (range(10).count()): {time.perf_counter() - t:.1f} s")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
