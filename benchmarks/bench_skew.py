"""Benchmark of the clock-skew ordering check (`spec.claims.skew.check_skew`) at 1k, 10k and 100k events.

A synthetic trace: `nodes` servers, each with a fixed clock offset drawn within 50 ms, exchanging
messages (NET_SEND on the sender, NET_RECV on the receiver with a random latency). One receive in 5,000 is
planted with a recorded time far before its send (a definite violation). Each size is checked twice:
with the true bound (50 ms: the trace is explained, no solver work) and with a bound far too small
(5 ms: thousands of violations and hundreds of conflicting pairs, the worst case for the joint step).

    python benchmarks/bench_skew.py            # 1k, 10k, 100k events; 12 and 100 nodes; best of 3
    python benchmarks/bench_skew.py --quick    # 1k and 10k events, 12 nodes, one run (< 20 s)
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


def run(sizes: list[int], node_counts: list[int], repeats: int) -> list[dict]:
    rows = []
    for nodes in node_counts:
        for size in sizes:
            trace = synthetic_trace(size, nodes=nodes)
            for bound in (50, 5):
                best = float("inf")
                for _ in range(repeats):
                    start = time.perf_counter()
                    report = check_skew(trace, bound)
                    best = min(best, time.perf_counter() - start)
                rows.append(
                    {
                        "nodes": nodes,
                        "events": size,
                        "bound_ms": bound,
                        "seconds": best,
                        "events_per_s": size / best,
                        "counts": report.counts,
                        "min_skew_ms": report.min_skew_ms,
                    }
                )
    return rows


def _skew(ms: int | None) -> str:
    return "none explains all" if ms is None else f"{ms} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1k and 10k events, 12 nodes, one run (< 20 s)")
    args = ap.parse_args(argv)
    sizes, node_counts, repeats = ([1_000, 10_000], [12], 1) if args.quick else ([1_000, 10_000, 100_000], [12, 100], 3)
    rows = run(sizes, node_counts, repeats)
    print(
        f"{'nodes':>5} {'events':>8} {'bound':>6} {'seconds':>8} {'events/s':>9}  "
        "consistent/ambiguous/inconsistent/violation  smallest skew"
    )
    for r in rows:
        c = r["counts"]
        verdicts = f"{c['consistent']}/{c['ambiguous']}/{c['inconsistent']}/{c['violation']}"
        print(
            f"{r['nodes']:>5} {r['events']:>8} {r['bound_ms']:>4}ms {r['seconds']:>8.3f} {r['events_per_s']:>9.0f}  "
            f"{verdicts:<43}  {_skew(r['min_skew_ms'])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
