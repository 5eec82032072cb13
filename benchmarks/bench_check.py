"""Throughput of `haconform check`: the single-process engine and the Spark job, side by side in one run.

    python benchmarks/bench_check.py --quick                      # ~50k events
    python benchmarks/bench_check.py --events 200000
    python benchmarks/bench_check.py --sizes 1000000,10000000     # one line of figures per size
    python benchmarks/bench_check.py --single-entity 10000000     # one entity with N events
    python benchmarks/bench_check.py --events 1000000 --python-only
    python benchmarks/bench_check.py --events 1000000 --ingested    # also: ingest once, check the dataset

Corpora come from `benchmarks/corpus.py` (a simulated pool, then renamed copies) in a temp directory, or
`--corpus DIR` reuses one. Prints events/s for each engine and, per size, the line
`ratio spark/python throughput: R`, then the
rate of a bare `repartition + sortWithinPartitions` of the same corpus (its second run, in a process of its own:
`bare_in_own_process`) and
`ratio spark/bare throughput: R`, and the CPU seconds each engine's check cost in all its processes
(`tree_cpu`: this process and its descendants, the JVM and its Python workers) with the bound they put on
the ratio on idle cores (a shared machine moves wall times, hardly CPU seconds). Spark's figure leaves out
the session's start-up (printed apart) and includes the first jobs' JIT warm-up unless --warm is given. Peak
memory (ru_maxrss) of this process is printed after the Python engine (the Spark JVM is a child process).
With `--ingested` the corpus is also ingested (`haconform ingest`, Python engine, `--files` = 2x
`--partitions`) and the dataset checked by each engine, with the lines `ratio ingested/raw python: R` and
`ratio ingested/raw spark: R` (throughput on the dataset over throughput on the raw corpus; ingest not counted).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import build_corpus, single_entity_corpus
from conformance.driver_choice import input_events
from conformance.pycheck import check_paths


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and every live descendant (the Spark JVM, its Python
    daemon and workers), with what each has reaped from its own children: a figure the machine's load hardly
    moves, unlike the wall time. Linux /proc only; 0.0 elsewhere."""
    return sum(tree_cpu_by_role().values())


def tree_cpu_by_role() -> dict[str, float]:
    """`tree_cpu` split: "driver" (this process), "jvm" (the Spark JVM and its launcher), "workers" (the Python
    worker daemon and the workers it forked; issue 32: where a Spark check's CPU beyond one process's goes)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        head, rest = stat.rsplit(")", 1)
        fields = rest.split()
        names[int(entry)] = head.split("(", 1)[1]
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    me = os.getpid()
    mine = {me}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                changed = True
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for pid in mine:
        role = "driver" if pid == me else "workers" if names.get(pid, "").startswith("python") else "jvm"
        out[role] += times.get(pid, 0) / tick
    return out


def _files(corpus: Path) -> int:
    return sum(1 for p in corpus.rglob("*") if p.is_file())


def run_ingested(corpus: Path, args: argparse.Namespace, spark, py_s: float, sp_s: float | None) -> None:
    """Ingest the corpus once, then check the dataset with each engine (the report must be the same)."""
    from conformance.dataset_check import check_dataset
    from traces.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "dataset"
        t = time.perf_counter()
        manifest = ingest([str(corpus)], out, files=2 * args.partitions).manifest
        n = manifest["input"]["rows_read"]
        print(f"ingest (python): {time.perf_counter() - t:7.2f} s  {len(manifest['files'])} data files")
        t = time.perf_counter()
        py = check_dataset(str(out))
        ds_s = time.perf_counter() - t
        print(f"python engine, dataset: {ds_s:7.2f} s  {n / ds_s:12,.0f} events/s  verdict {py.verdict}")
        print(f"ratio ingested/raw python: {py_s / ds_s:.2f}", flush=True)
        if spark is None or sp_s is None:
            return
        from spark_trace_check.dataset import check_dataset as spark_check_dataset

        t = time.perf_counter()
        sp = spark_check_dataset(spark, str(out))
        ds_s = time.perf_counter() - t
        print(f"spark engine, dataset:  {ds_s:7.2f} s  {n / ds_s:12,.0f} events/s  verdict {sp.verdict}")
        print(f"ratio ingested/raw spark: {sp_s / ds_s:.2f}", flush=True)


def bare_in_own_process(corpus: Path, partitions: int, master: str) -> float:
    """The bare repartition + sort of the corpus (`spark_floor.bare_shuffle`), warm, in a process and JVM of its
    own: the check's session turns its server compiler off for the units plan (`spark_trace_check.session.
    client_compiler_only`), which a later job in that JVM would inherit (a slower floor, a flattered ratio)."""
    script = Path(__file__).resolve().parent / "spark_floor.py"
    cmd = [sys.executable, str(script), "--corpus", str(corpus), "--partitions", str(partitions), "--master", master]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    found = re.search(r"^bare repartition\+sort: ([0-9.]+) s", out, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"spark_floor.py printed no bare time:\n{out}")
    return float(found.group(1))


def run_size(corpus: Path, args: argparse.Namespace, spark) -> None:
    print(f"corpus: {_files(corpus)} files ({corpus})", flush=True)
    t, cpu = time.perf_counter(), tree_cpu()
    py = check_paths([str(corpus)])
    py_s, py_cpu = time.perf_counter() - t, tree_cpu() - cpu
    n = py.rows_read
    print(f"events: {n}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"python engine: {py_s:7.2f} s  {n / py_s:12,.0f} events/s  verdict {py.verdict}  peak RSS {peak:,.0f} MiB")
    if spark is None:
        if args.ingested:
            run_ingested(corpus, args, None, py_s, None)
        return
    from spark_trace_check.job import check

    t = time.perf_counter()
    if args.warm:
        check(spark, [str(corpus)], partitions=args.partitions)
        t = time.perf_counter()
    plans = ["units", "shuffle"] if args.spark_plan == "both" else [args.spark_plan]
    for plan in plans[1:]:  # the second plan first: the figure kept below is the first plan's
        t2, cpu2 = time.perf_counter(), tree_cpu()
        other = check(spark, [str(corpus)], partitions=args.partitions, plan=plan, announce=True)
        o_s, o_cpu = time.perf_counter() - t2, tree_cpu() - cpu2
        print(
            f"spark engine, plan {plan}: {o_s:7.2f} s  {n / o_s:12,.0f} events/s  verdict {other.verdict}  "
            f"cpu {o_cpu:.1f} s"
        )
        print(f"ratio spark {plan}/python throughput: {py_s / o_s:.2f}", flush=True)
        t = time.perf_counter()
    roles = tree_cpu_by_role()
    sp = check(spark, [str(corpus)], partitions=args.partitions, plan=plans[0], announce=True)
    sp_s = time.perf_counter() - t
    spent = {role: seconds - roles.get(role, 0.0) for role, seconds in tree_cpu_by_role().items()}
    sp_cpu = sum(spent.values())
    print(
        f"spark engine:  {sp_s:7.2f} s  {n / sp_s:12,.0f} events/s  verdict {sp.verdict}"
        f"{' (warm)' if args.warm else ''} (plan {plans[0]})"
    )
    print(f"ratio spark/python throughput: {py_s / sp_s:.2f}", flush=True)
    if py_cpu and sp_cpu:  # all processes' CPU: what the check costs whatever the machine's load
        print(
            f"cpu seconds: python {py_cpu:.1f}, spark {sp_cpu:.1f} (driver {spent['driver']:.1f}, "
            f"JVM {spent['jvm']:.1f}, Python workers {spent['workers']:.1f}); "
            f"ratio spark/python cpu: {sp_cpu / py_cpu:.2f}; "
            f"bound on {os.cpu_count()} idle cores: spark/python <= {os.cpu_count() * py_cpu / sp_cpu:.2f}",
            flush=True,
        )
    bare_s = bare_in_own_process(corpus, args.partitions, args.master)
    print(f"bare repartition+sort: {bare_s:7.2f} s  {n / bare_s:12,.0f} events/s")
    print(f"ratio spark/bare throughput: {bare_s / sp_s:.2f}", flush=True)
    if args.ingested:
        run_ingested(corpus, args, spark, py_s, sp_s)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=500_000)
    ap.add_argument("--sizes", help="comma-separated sizes, e.g. 1000000,10000000 (overrides --events)")
    ap.add_argument("--single-entity", type=int, metavar="N", help="one trace, one entity, N events")
    ap.add_argument("--quick", action="store_true", help="about 50k events")
    ap.add_argument("--corpus", help="check this directory instead of building a corpus")
    ap.add_argument("--warm", action="store_true", help="exclude Spark start-up and first-job JIT")
    ap.add_argument("--python-only", action="store_true", help="do not run the Spark engine")
    ap.add_argument("--ingested", action="store_true", help="also ingest the corpus and check the dataset")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument(
        "--spark-plan",
        default="auto",
        choices=("auto", "units", "shuffle", "both"),
        help="the Spark job's plan (haconform check --spark-plan); both: shuffle, then units (the figure kept)",
    )
    args = ap.parse_args()
    spark = None
    t0 = time.perf_counter()
    if not args.python_only:
        from spark_trace_check.session import build_session

        # sized as `haconform check` sizes its session (the JIT tier: spark_trace_check.session)
        first = args.single_entity or (50_000 if args.quick else int((args.sizes or str(args.events)).split(",")[0]))
        events = input_events([args.corpus]) if args.corpus else first
        spark = build_session(args.master, partitions=args.partitions, events=events)
        print(f"spark start-up: {time.perf_counter() - t0:.1f} s")
    try:
        if args.corpus:
            run_size(Path(args.corpus), args, spark)
            return 0
        sizes = [50_000] if args.quick else [int(s) for s in args.sizes.split(",")] if args.sizes else [args.events]
        for size in [args.single_entity] if args.single_entity else sizes:
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                build = single_entity_corpus if args.single_entity else build_corpus
                print(f"built {build(Path(tmp), size)} events in {time.perf_counter() - t:.1f} s")
                run_size(Path(tmp), args, spark)
    finally:
        if spark is not None:
            spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
