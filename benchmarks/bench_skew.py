"""Benchmark of the clock-skew ordering check (`spec.claims.skew.check_skew`) at 1k, 10k and 100k events.

A synthetic trace: `nodes` servers, each with a fixed clock offset drawn within the skew bound, exchanging
messages (NET_SEND on the sender, NET_RECV on the receiver with a random latency). A few receives are
planted with a recorded time far before their send (definite violations) so every path is exercised.

    python benchmarks/bench_skew.py            # 1k, 10k, 100k events, 3 runs each
    python benchmarks/bench_skew.py --quick    # 1k and 10k, 1 run (< 20 s)
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spec.claims.skew import check_skew


def synthetic_trace(n_events: int, *, nodes: int = 12, skew_ms: int = 50, seed: int = 1) -> list[tuple]:
    """Plain-tuple events `(event_id, node, ts_ms, kind, entity, attrs)`, two per message."""
    rng = random.Random(seed)
    names = [f"mbx{i:02d}" for i in range(nodes)]
    offset = {n: rng.randint(-skew_ms, skew_ms) for n in names}
    events: list[tuple] = []
    t = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    for m in range(n_events // 2):
        t += rng.randint(0, 20)
        src, dst = rng.sample(names, 2)
        latency = rng.randint(0, 200)
        recv_true = t + latency - (10_000 if m % 5_000 == 4_999 else 0)
        wire = f"w{m}"
        events.append((f"s{m}", src, t + offset[src], "NET_SEND", wire, {"wire": wire}))
        events.append((f"r{m}", dst, recv_true + offset[dst], "NET_RECV", wire, {"wire": wire}))
    return events


def run(sizes: list[int], repeats: int) -> list[dict]:
    rows = []
    for size in sizes:
        trace = synthetic_trace(size)
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            report = check_skew(trace, 50)
            best = min(best, time.perf_counter() - start)
        rows.append(
            {
                "events": size,
                "seconds": best,
                "events_per_s": size / best,
                "counts": report.counts,
                "min_skew_ms": report.min_skew_ms,
            }
        )
    return rows


def _skew(ms: int | None) -> str:
    return "no single skew explains it" if ms is None else f"{ms} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1k and 10k events, one run (< 20 s)")
    args = ap.parse_args(argv)
    sizes, repeats = ([1_000, 10_000], 1) if args.quick else ([1_000, 10_000, 100_000], 3)
    print(f"{'events':>8} {'seconds':>9} {'events/s':>10}  verdicts (smallest skew explaining every instance)")
    for r in run(sizes, repeats):
        skew = _skew(r["min_skew_ms"])
        print(f"{r['events']:>8} {r['seconds']:>9.3f} {r['events_per_s']:>10.0f}  {r['counts']} ({skew})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
