"""The cost per event of the single-process check, part by part (issue 32), in CPU microseconds per event.

    python benchmarks/bench_event_cost.py /tmp/f1m/copy00000-0.parquet           # one Parquet file of a corpus
    python benchmarks/bench_event_cost.py FILE --repeat 3 --per-monitor --per-trace

A corpus comes from `benchmarks.corpus.build_corpus` (README.md, session 10). Three parts are timed with the
process's CPU clock (`time.process_time`: the machine is shared, so CPU time, not wall time), each the best
of `--repeat` runs, with the cyclic collector paused as the engine pauses it (`conformance.engine.collector`):

- `read`: the file's rows judged column-wise into events (`traces.columnar.judge_batch`, the engine's reader);
- `feed`: every event fed to the engine's router (`conformance.engine.stream.Router`) with every registered
  monitor, then its traces finished; `--per-monitor`: the same with one monitor at a time;
- `--per-trace`: `feed` over the traces of each mechanism apart (a trace's mechanism: that of its first event
  not `core`), so a fold's cost on the traces of other mechanisms shows too.

It prints the violations and unknown notes found, so a run that stops judging shows. Figures, never a test.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import defaultdict
from functools import partial
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.engine.stream import Router
from model.registry import monitor_runs
from traces.columnar import judge_batch
from traces.schema import Event


def best(repeat: int, fn) -> tuple[float, object]:
    """The least CPU seconds of `repeat` calls of `fn`, the collector paused, and the last call's result."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        t = time.process_time()
        out = fn()
        times.append(time.process_time() - t)
        gc.enable()
    return min(times), out


def read(path: str) -> list[Event]:
    events: list[Event] = []
    for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536):
        events.extend(e for e, _ in judge_batch(batch) if e is not None)
    return events


def feed(events: list[Event], runs: list) -> tuple[int, int]:
    router = Router(runs, None)
    for e in events:
        router.feed(e)
    found, unknown = router.finish()
    return len(found), len(unknown)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="a Parquet trace file")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--per-monitor", action="store_true")
    ap.add_argument("--per-trace", action="store_true")
    args = ap.parse_args()
    seconds, events = best(args.repeat, lambda: read(args.file))
    n = len(events)  # type: ignore[arg-type]
    print(f"{n} events; read {seconds / n * 1e6:.2f} us/event")
    runs = monitor_runs()
    seconds, found = best(args.repeat, lambda: feed(events, runs))  # type: ignore[arg-type]
    print(f"feed, every monitor: {seconds / n * 1e6:.2f} us/event (violations, unknown notes: {found})")
    if args.per_monitor:
        for name, monitor in runs:
            seconds, found = best(args.repeat, partial(feed, events, [(name, monitor)]))  # type: ignore[arg-type]
            print(f"  {name} alone: {seconds / n * 1e6:.2f} us/event {found}")
    if args.per_trace:
        mech: dict[str, str] = {}
        for e in events:  # type: ignore[union-attr]
            if e.mechanism != "core":
                mech.setdefault(e.trace_id, e.mechanism)
        by: dict[str, list[Event]] = defaultdict(list)
        for e in events:  # type: ignore[union-attr]
            by[mech.get(e.trace_id, "core")].append(e)
        for m, evs in sorted(by.items()):
            seconds, found = best(args.repeat, partial(feed, evs, runs))
            print(f"  {m} traces ({len(evs)} events): {seconds / len(evs) * 1e6:.2f} us/event {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
