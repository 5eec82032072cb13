"""Throughput of the Active Manager model: BCSS selection, the generator, and the trace monitor.

    python benchmarks/bench_am.py --quick      # a few seconds
    python benchmarks/bench_am.py --copies 8 --snapshots 200000 --traces 200

Selection: `select()` on random snapshots of N copies (random statuses, queues, content index, health,
dials, blocks). Generator: `simulate()` events per second. Monitor: `AmMonitor().check()` events per second
on the generated traces: the fold (`start`, `feed` of every event, `finish`) over the whole trace, the
world changed in place, BCSS recomputed at every run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model.am.bcss import select
from model.am.monitor import AmMonitor
from model.am.sim import simulate
from model.am.state import CI_STATES, COMPONENTS, COPY_STATUSES, DIALS, CopyState, Health, Snapshot, Trigger


def random_snapshot(rng: random.Random, n: int) -> Snapshot:
    servers = [f"MBX{i}" for i in range(n)]
    lgen = 1000
    copies = tuple(
        CopyState(
            s,
            status=rng.choice(COPY_STATUSES[:4] * 3 + COPY_STATUSES),
            lli=lgen - rng.randint(0, 30),
            replay_queue=rng.randint(0, 80),
            content_index=rng.choice(CI_STATES),
            preference=i + 1,
            blocked=rng.random() < 0.1,
            suspended=rng.random() < 0.05,
            reachable=rng.random() > 0.1,
        )
        for i, s in enumerate(servers)
    )
    health = {
        s: Health({c: (p, rng.choice(("Healthy", "Healthy", "Degraded", "Unhealthy"))) for c, p in COMPONENTS})
        for s in servers
    }
    return Snapshot("DB", servers[0], lgen, copies, {s: rng.choice(DIALS) for s in servers}, health)


def bench_select(n_snapshots: int, copies: int) -> float:
    rng = random.Random(1)
    snaps = [random_snapshot(rng, copies) for _ in range(min(n_snapshots, 2000))]
    triggers = [Trigger(), Trigger("switchover", lossless=True), Trigger("responder", "OutlookWeb")]
    t = time.perf_counter()
    for i in range(n_snapshots):
        select(snaps[i % len(snaps)], triggers[i % 3])
    return n_snapshots / (time.perf_counter() - t)


def bench_trace(traces: int, steps: int) -> tuple[int, float, float]:
    t = time.perf_counter()
    corpus = [simulate(seed, steps=steps) for seed in range(traces)]
    gen_s = time.perf_counter() - t
    n = sum(len(e) for e in corpus)
    t = time.perf_counter()
    bad = sum(len(AmMonitor().check(events).violations) for events in corpus)
    mon_s = time.perf_counter() - t
    assert bad == 0, f"{bad} violations on reference traces"
    return n, n / gen_s, n / mon_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    ap.add_argument("--copies", type=int, default=5, help="copies per database in the selection benchmark")
    ap.add_argument("--snapshots", type=int, default=100_000)
    ap.add_argument("--traces", type=int, default=100)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    if args.quick:
        args.snapshots, args.traces, args.steps = 10_000, 10, 300
    rate = bench_select(args.snapshots, args.copies)
    print(f"select():   {args.snapshots} snapshots of {args.copies} copies: {rate:12,.0f} selections/s")
    n, gen, mon = bench_trace(args.traces, args.steps)
    print(f"simulate(): {args.traces} traces, {n} events:        {gen:12,.0f} events/s")
    print(f"monitor:    same events:                        {mon:12,.0f} events/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
