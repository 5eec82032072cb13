"""Throughput of `haconform check`: the pure-Python engine and the Spark job, side by side in one run.

    python benchmarks/bench_check.py --quick        # ~50k events, seconds
    python benchmarks/bench_check.py --events 2000000

Generates a corpus with the simulator (every registered mechanism, seeds 1..N, round-robin) into a temp
directory, then times each engine on the same files. Prints events/s for each and their ratio. Spark's
figure includes its start-up unless --warm is given (then one warm-up run is made first).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.pycheck import check_paths
from model.registry import mechanisms
from traces.io import write_events


def build_corpus(directory: Path, target: int) -> int:
    specs = list(mechanisms().values())
    total, seed = 0, 1
    while total < target:
        spec = specs[seed % len(specs)]
        events = spec.simulate(seed)
        write_events(directory / f"{spec.name}-s{seed}.parquet", events)
        total += len(events)
        seed += 1
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=500_000)
    ap.add_argument("--quick", action="store_true", help="about 50k events")
    ap.add_argument("--warm", action="store_true", help="exclude Spark start-up and first-job JIT")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    target = 50_000 if args.quick else args.events
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp)
        t = time.perf_counter()
        n = build_corpus(corpus, target)
        gen = time.perf_counter() - t
        print(f"corpus: {n} events in {len(list(corpus.iterdir()))} files (simulated at {n / gen:,.0f} events/s)")
        t = time.perf_counter()
        py = check_paths([str(corpus)])
        py_s = time.perf_counter() - t
        print(f"python engine: {py_s:7.2f} s  {n / py_s:12,.0f} events/s  verdict {py.verdict}")
        from spark_trace_check.job import check
        from spark_trace_check.session import build_session

        t = time.perf_counter()
        spark = build_session(args.master, partitions=4)
        if args.warm:
            check(spark, [str(corpus)])
            t = time.perf_counter()
        sp = check(spark, [str(corpus)], partitions=4)
        sp_s = time.perf_counter() - t
        print(f"spark engine:  {sp_s:7.2f} s  {n / sp_s:12,.0f} events/s  verdict {sp.verdict}"
              f"{' (warm)' if args.warm else ' (incl. start-up)'}")
        print(f"ratio spark/python throughput: {py_s / sp_s:.2f}")
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
