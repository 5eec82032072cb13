"""The list-based API's throughput: `conformance.check.verdict` over a corpus held in memory, events/s.

    python benchmarks/bench_verdict.py --quick          # a few seconds
    python benchmarks/bench_verdict.py --seeds 20 --repeat 5

The corpus: for each mechanism with a simulator (sr, am, pf, net), the model and every mutant, seeds 1..N,
concatenated (each run its own trace); with `--held F`, a fraction F of the traces have two events swapped
(out of seq order, TR-001), so the engine holds them and judges them whole. `--small`: instead, many small
verdicts, as the harness and the shrinker ask them (prefixes of 20, 60 and 200 events of sr, am and pf runs,
seeds 1..3, each judged 10 times). `verdict` (the path of the
harness, the shrinker and the suites) is timed `--repeat` times; the best wall and CPU (process) times are
printed. Run it on two trees (PYTHONPATH) to compare.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.check import verdict
from model.registry import get
from traces.schema import Event

MECHANISMS = ("sr", "am", "pf", "net")


def corpus(seeds: int, held: float) -> list[Event]:
    """Every run of every mechanism, seeds 1..N; every round(1/held)-th trace with events 2 and 3 swapped."""
    traces: list[list[Event]] = []
    for name in MECHANISMS:
        spec = get(name)
        runs = {"model": spec.simulate, **spec.mutants}
        for run in sorted(runs):
            for seed in range(1, seeds + 1):
                tag = f"{name}/{run}/{seed}"  # some mutants reuse the model's trace IDs: one trace per run
                traces.append([replace(e, trace_id=tag, event_id=f"{tag}:{e.event_id}") for e in runs[run](seed)])
    every = round(1 / held) if held > 0 else 0
    for i, trace in enumerate(traces):
        if every and i % every == 0 and len(trace) > 4:
            trace[2], trace[3] = trace[3], trace[2]
    return [e for trace in traces for e in trace]


def small(repeat: int) -> int:
    prefixes = [get(m).simulate(seed)[:n] for m in ("sr", "am", "pf") for seed in (1, 2, 3) for n in (20, 60, 200)]
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        for _ in range(10):
            for prefix in prefixes:
                verdict(prefix)
        best = min(best, time.process_time() - c0)
    n = 10 * len(prefixes)
    print(f"verdict: {n} small verdicts ({10 * sum(map(len, prefixes))} events), best of {repeat}: CPU {best:.3f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seeds 2, repeat 3")
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--held", type=float, default=0.25, help="fraction of traces recorded out of seq order")
    ap.add_argument("--small", action="store_true", help="many small verdicts (the harness's pattern)")
    args = ap.parse_args(argv)
    if args.small:
        return small(args.repeat)
    seeds, repeat = (2, 3) if args.quick else (args.seeds, args.repeat)
    events = corpus(seeds, args.held)
    best = best_cpu = float("inf")
    result = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = verdict(events)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    assert result is not None
    print(
        f"verdict: {len(events)} events, {len({e.trace_id for e in events})} traces, best of {repeat}: "
        f"wall {best:.3f} s = {len(events) / best:,.0f} events/s, CPU {best_cpu:.3f} s; {result.verdict.value}, "
        f"{len(result.violations)} violations, {len(result.notes)} notes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
