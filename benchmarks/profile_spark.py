"""Where the Spark job's time goes: per Spark job and stage, from Spark's own REST API (proportions).

    python benchmarks/profile_spark.py CORPUS [--master local[2]] [--partitions 4]

Starts the session `haconform check` would (tuned for start-up when the input is small), with the UI on
(port 4199, the only difference), runs the check
once, then prints each Spark job's wall time and call site and the per-stage executor run time, sorted.
Run it under `py-spy record --subprocesses` to see the Python workers too. A profile, not a benchmark.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _get(url: str) -> list[dict]:
    with urllib.request.urlopen(url) as handle:
        return json.load(handle)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=4)
    args = ap.parse_args()
    t0 = time.perf_counter()
    from spark_trace_check.job import check, small_input
    from spark_trace_check.session import build_session

    ui = {"spark.ui.enabled": "true", "spark.ui.port": "4199"}
    spark = build_session(args.master, partitions=args.partitions, small=small_input([args.corpus]), conf=ui)
    t1 = time.perf_counter()
    outcome = check(spark, [args.corpus], partitions=args.partitions, progress=True)
    t2 = time.perf_counter()
    print(f"start-up {t1 - t0:.1f} s, check {t2 - t1:.1f} s, {outcome.rows_read} rows, verdict {outcome.verdict}")
    base = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}"
    jobs = _get(f"{base}/jobs")
    stages = _get(f"{base}/stages")

    def seconds(a: str, b: str) -> float:
        from datetime import datetime

        fmt = "%Y-%m-%dT%H:%M:%S.%f%Z"
        return (datetime.strptime(b, fmt) - datetime.strptime(a, fmt)).total_seconds()

    total = sum(seconds(j["submissionTime"], j["completionTime"]) for j in jobs if "completionTime" in j)
    print(f"{len(jobs)} Spark jobs, {total:.1f} s of job wall time; {len(stages)} stages")
    for j in sorted(jobs, key=lambda j: j["jobId"]):
        if "completionTime" in j:
            wall = seconds(j["submissionTime"], j["completionTime"])
            print(f"  job {j['jobId']:3d} {wall:6.1f} s {100 * wall / max(total, 1e-9):5.1f}%  {j['name'][:90]}")
    run = sum(s.get("executorRunTime", 0) for s in stages) / 1000
    print(f"stages by executor run time ({run:.1f} s in all):")
    for s in sorted(stages, key=lambda s: -s.get("executorRunTime", 0))[:15]:
        t = s.get("executorRunTime", 0) / 1000
        print(
            f"  stage {s['stageId']:3d} {t:6.1f} s {100 * t / max(run, 1e-9):5.1f}%  tasks {s['numTasks']:4d}  "
            f"{s['name'][:80]}"
        )
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
