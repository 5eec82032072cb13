"""The Spark check's Python worker start (issue 32, session 28): what every Spark check pays before its first task.

    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_worker_start.py imports   # the daemon's imports
    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_worker_start.py first-job # a fresh session's first job

`imports`: in this (fresh) process, what `spark_trace_check.worker_daemon` does before it forks (its imports and the
registry's monitors): CPU seconds, peak RSS, and whether pandas was loaded. `first-job`: a `local[2]` session built as
`haconform check` builds it, then the seconds of its first Python job (two tasks of nothing: the worker daemon started
and two workers forked) and of a second one (warm). Run the two trees alternately, one process a run: the figures
of one process are not comparable with another process's on a machine whose speed drifts.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def imports() -> dict:
    cpu = time.process_time()
    import spark_trace_check.worker_daemon  # noqa: F401 (what the daemon imports before it forks)
    from model.registry import monitor_runs

    monitor_runs(None)
    return {
        "imports_cpu_s": round(time.process_time() - cpu, 3),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "pandas_loaded": "pandas" in sys.modules,
    }


def first_job() -> dict:
    from spark_trace_check.session import build_session

    spark = build_session("local[2]", partitions=4, events=10_000_000)
    try:
        sc, out = spark.sparkContext, {}
        for name in ("first_job_s", "second_job_s"):
            t = time.perf_counter()
            sc.parallelize(range(2), 2).map(lambda x: x).collect()
            out[name] = round(time.perf_counter() - t, 3)
        return out
    finally:
        spark.stop()


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "imports"
    print(json.dumps(imports() if what == "imports" else first_job()))
