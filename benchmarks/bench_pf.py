"""Throughput of the public folder model: the simulator and the monitor (pure Python), in events/s.

    python benchmarks/bench_pf.py --quick              # a few seeds, well under 20 s
    python benchmarks/bench_pf.py --seeds 50 --stores 6 --loss 0.2

For each seed it runs `model.pf.sim.simulate`, then the pf monitor's fold over the trace (`PFMonitor.start`
with the trace's context, `feed` of every event in sequence order, `finish`: the monitor alone, without the
checker's grouping); prints events, wall time and events/s for each phase, the number of groups judged (one trace
each) and of violations (0 expected for the model; mutants with --mutant NAME).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.check import trace_contexts
from model.kernel.sim import HOUR
from model.pf.monitor import PFMonitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="4 seeds, 4 stores")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--stores", type=int, default=5)
    ap.add_argument("--hours", type=int, default=72, help="faulty phase length in model hours")
    ap.add_argument("--loss", type=float, default=0.05)
    ap.add_argument("--mutant", choices=sorted(MUTANTS))
    args = ap.parse_args()
    seeds = 4 if args.quick else args.seeds
    stores = 4 if args.quick else args.stores
    run = MUTANTS[args.mutant] if args.mutant else simulate
    sim_s = mon_s = 0.0
    n_events = n_entities = n_violations = 0
    for seed in range(1, seeds + 1):
        t = time.perf_counter()
        events = run(seed, n_stores=stores, duration_ms=args.hours * HOUR, loss=args.loss)
        sim_s += time.perf_counter() - t
        context = trace_contexts(events).get(events[0].trace_id, [])
        t = time.perf_counter()
        fold = PFMonitor().start(context)
        for e in events:  # recorded in sequence order
            fold.feed(e)
        result = fold.finish()
        mon_s += time.perf_counter() - t
        n_events += len(events)
        n_entities += 1  # one trace-scope group per seed
        n_violations += len(result.violations)
    print(
        f"pf benchmark: {seeds} seeds, {stores} stores, {args.hours} h faulty + quiescent phase, loss {args.loss}"
        + (f", mutant {args.mutant}" if args.mutant else "")
    )
    print(f"  events      {n_events:>10,}   folders checked {n_entities:,}   violations {n_violations}")
    print(f"  simulator   {sim_s:>9.2f} s   {n_events / sim_s:>12,.0f} events/s")
    print(f"  monitor     {mon_s:>9.2f} s   {n_events / mon_s:>12,.0f} events/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
