"""Scaling on a standalone cluster: the Spark check with two one-core workers against one, in one run.

    python benchmarks/bench_cluster.py --events 1000000

Builds a Parquet corpus (simulated traces, replicated under new trace IDs to reach the size), starts a
standalone master with one worker, times `check` (warm: one run first, excluded), stops it, then does the
same with two workers, and prints both rates and the ratio two/one. Workers get the project's code shipped
with the job (`spark_trace_check.cluster.ship_code`). Wall clock here measures real processes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import build_corpus
from spark_trace_check.cluster import Standalone


def timed_check(url: str, corpus: Path, partitions: int, warm: bool = True) -> tuple[float, str]:
    from spark_trace_check.job import check
    from spark_trace_check.session import build_session

    spark = build_session(url, app_name="haconform-bench-cluster", partitions=partitions)
    try:
        if warm:
            check(spark, [str(corpus)], partitions=partitions)  # warm-up: JIT, code shipping, worker start
        t = time.perf_counter()
        outcome = check(spark, [str(corpus)], partitions=partitions)
        return time.perf_counter() - t, outcome.verdict
    finally:
        spark.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--memory", default="4g", help="memory per worker")
    ap.add_argument("--cold", action="store_true", help="no warm-up check first (large corpora)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        n = build_corpus(corpus, args.events)
        print(f"corpus: {n} events in {len(list(corpus.iterdir()))} files")
        rates = {}
        for workers in (1, 2):
            with Standalone(workers=workers, port=17277 + 10 * workers, memory=args.memory) as cluster:
                seconds, verdict = timed_check(cluster.url, corpus, partitions=4 * workers, warm=not args.cold)
            rates[workers] = n / seconds
            print(
                f"{workers} worker(s) x 1 core: {seconds:7.2f} s  {rates[workers]:12,.0f} events/s  verdict {verdict}"
            )
        print(f"ratio two workers / one worker throughput: {rates[2] / rates[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
