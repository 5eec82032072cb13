"""Shadow redundancy throughput on one core: simulator events/s and monitor events/s.

    python benchmarks/bench_sr.py --quick     # < 20 s
    python benchmarks/bench_sr.py --seeds 200

The monitor is timed the way the checkers run it: events grouped per (trace, entity), each group folded
through `SrMonitor.check` (the same rules the simulator uses).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.check import run_monitor
from model.sr.monitor import SrMonitor
from model.sr.sim import Workload, simulate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a small run (< 20 s)")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--messages", type=int, default=200)
    args = ap.parse_args(argv)
    seeds, messages = (20, 200) if args.quick else (args.seeds, args.messages)
    wl = Workload(n_messages=messages)
    t0 = time.perf_counter()
    traces = [simulate(seed, workload=wl) for seed in range(seeds)]
    t_sim = time.perf_counter() - t0
    events = [e for trace in traces for e in trace]
    n_sr = sum(1 for e in events if e.mechanism == "sr")
    t0 = time.perf_counter()
    results = run_monitor(SrMonitor(), events)
    t_mon = time.perf_counter() - t0
    invalid = sum(1 for r in results if r.violations)
    print(
        f"simulator: {seeds} runs x {messages} messages, {len(events)} events in {t_sim:.2f} s "
        f"= {len(events) / t_sim:,.0f} events/s"
    )
    print(
        f"monitor:   {n_sr} sr events in {len(results)} entity groups in {t_mon:.2f} s "
        f"= {n_sr / t_mon:,.0f} events/s (grouping included); invalid groups: {invalid}"
    )
    return 1 if invalid else 0


if __name__ == "__main__":
    raise SystemExit(main())
