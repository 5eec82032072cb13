"""Incremental checking against a full re-check, side by side in one run (either engine).

    python benchmarks/bench_incremental.py --events 1000000 --new 10000
    python benchmarks/bench_incremental.py --events 10000000 --new 100000
    python benchmarks/bench_incremental.py --events 1000000 --new 10000 --engine spark
    python benchmarks/bench_incremental.py --events 1000000 --new 10000 --repeat

`--repeat`: the new file also holds one event reusing the ID of an event in the middle of the corpus's last
file, an ID repeated for the first time: TR-002 must find the earlier event (session 12: from the state's
locations, `conformance.locations`; before: every file read again).

With `--engine spark` every check runs on one Spark session (`local[2]`, started before the clock runs;
its start-up is printed apart): the full check saving the state, the incremental check and the full
re-check are Spark's (`spark_trace_check.incremental`, `spark_trace_check.job.check`).

Builds a corpus of `--events` (`benchmarks/corpus.py`, Parquet), checks it with `--state` (a full check that
saves the state), adds a file of whole new traces holding about `--new` events, then times (a) the
incremental check reading only that file and (b) a full check of everything without state. The two reports
must be the same (exit 1 otherwise). Prints each time, peak memory of this process, the state's size on
disk (per file, and per 10^6 events), and `ratio incremental/full: R`.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import _renamed, build_corpus
from conformance.incremental import check_incremental
from conformance.pycheck import DEFAULT_CAP, check_paths


def engine(name: str) -> tuple[Callable, Callable, Callable[[], None]]:
    """(incremental check, full check, stop) of the engine `name`."""
    if name == "python":
        return check_incremental, check_paths, lambda: None
    from spark_trace_check import incremental  # pyspark: loaded only for --engine spark
    from spark_trace_check.job import check
    from spark_trace_check.session import build_session

    t = time.perf_counter()
    spark = build_session("local[2]", partitions=4)
    print(f"Spark session started in {time.perf_counter() - t:.1f} s (not counted below)", flush=True)
    return (
        lambda paths, state, cap: incremental.check_incremental(spark, paths, state, cap=cap),
        lambda paths: check(spark, paths),
        spark.stop,
    )


def new_traces(base: Path, events: int, out: Path) -> int:
    """Whole traces from the corpus's first file, renamed `~new`, until about `events` rows."""
    table = pq.read_table(sorted(base.glob("*.parquet"))[0])
    counts = pc.value_counts(table["trace_id"]).to_pylist()
    chosen, total = [], 0
    for item in counts:
        if total >= events:
            break
        chosen.append(item["values"])
        total += item["counts"]
    part = table.filter(pc.is_in(table["trace_id"], pa.array(chosen)))
    pq.write_table(_renamed(part, "~new"), out)
    return part.num_rows


def repeat_one(base: Path, out: Path) -> None:
    """One event of the middle of the corpus's last file, in a new trace, added to `out` (its ID repeated)."""
    table = pq.read_table(sorted(base.glob("*.parquet"))[-1])
    row = table.slice(table.num_rows // 2, 1)
    row = row.set_column(row.schema.get_field_index("trace_id"), "trace_id", pa.array(["late~dup"]))
    row = row.set_column(row.schema.get_field_index("seq"), "seq", pa.array([0], row.schema.field("seq").type))
    added = pq.read_table(out)
    pq.write_table(pa.concat_tables([added, row.cast(added.schema)]), out)


def _report(outcome) -> tuple:
    return (outcome.summary(), outcome.violations, outcome.quarantine, outcome.unknown)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--new", type=int, default=10_000)
    ap.add_argument("--corpus", help="reuse this directory (its base/ subdirectory is built when missing)")
    ap.add_argument("--engine", choices=("python", "spark"), default="python")
    ap.add_argument("--repeat", action="store_true", help="the new file repeats an earlier event's ID")
    args = ap.parse_args()
    check_incremental, check_paths, stop = engine(args.engine)
    try:
        return _run(args, check_incremental, check_paths)
    finally:
        stop()


def _run(args: argparse.Namespace, check_incremental: Callable, check_paths: Callable) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.corpus or tmp)
        base = root / "in" / "base"
        if not base.exists():
            t = time.perf_counter()
            n = build_corpus(base, args.events)
            print(f"corpus: {n:,} events in {time.perf_counter() - t:.1f} s", flush=True)
        extra = root / "in" / "zz-new.parquet"
        extra.unlink(missing_ok=True)
        state = Path(tmp) / "state"
        t = time.perf_counter()
        first = check_incremental([str(root / "in")], state, cap=DEFAULT_CAP)
        t_first = time.perf_counter() - t
        sizes = {p.name: p.stat().st_size for p in sorted(state.iterdir())}
        size = sum(sizes.values())
        print(f"full check saving state: {t_first:8.2f} s  {first.rows_read:,} events; state {size / 2**20:.1f} MiB")
        per = 1e6 / max(first.rows_read, 1)
        print("state per 10^6 events: " + ", ".join(f"{n} {b * per / 2**20:.2f} MiB" for n, b in sizes.items()))
        added = new_traces(base, args.new, extra)
        if args.repeat:
            repeat_one(base, extra)
            added += 1
        t = time.perf_counter()
        inc = check_incremental([str(root / "in")], state, cap=DEFAULT_CAP)
        t_inc = time.perf_counter() - t
        print(f"incremental ({added:,} new events): {t_inc:8.2f} s", flush=True)
        t = time.perf_counter()
        full = check_paths([str(root / "in")])
        t_full = time.perf_counter() - t
        print(f"full re-check of {full.rows_read:,} events: {t_full:8.2f} s")
        print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
        same = _report(inc) == _report(full)
        print(f"reports identical: {same}")
        print(f"ratio incremental/full: {t_inc / t_full:.3f}")
        extra.unlink(missing_ok=True)
        return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
