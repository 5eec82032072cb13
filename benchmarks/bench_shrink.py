"""`haconform shrink` on one large trace with one planted violation: events before and after, and the time.

The trace is one clean shadow redundancy run (`model.sr.sim.simulate`, many messages spread over a long load
so that as many are in flight at once as in the default run), with one bug planted late in it: the
SHADOW_ACK of one message is removed, so its ACCEPT comes before any shadow acknowledgement (SR-031
shadow-before-ack). Prints `events before -> after`, the cut taken, the candidates judged and the seconds.

    python benchmarks/bench_shrink.py --messages 70000      # about 10^6 events
    python benchmarks/bench_shrink.py --messages 2000       # a quick run
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from conformance.shrink import shrink, write_checked
from model.sr.sim import MINUTE, Workload, simulate
from traces.io import write_events
from traces.schema import Event


def planted_trace(messages: int, seed: int = 1) -> tuple[list[Event], str]:
    """A clean sr run of `messages` messages with the SHADOW_ACK of one late accepted message removed."""
    events = simulate(seed, workload=Workload(n_messages=messages, load_ms=messages * 72 * MINUTE // 60))
    acks = {e.entity: i for i, e in enumerate(events) if e.kind == "SHADOW_ACK"}
    accepted = {e.entity for e in events if e.kind == "ACCEPT"}
    victim = [m for m, i in sorted(acks.items(), key=lambda kv: kv[1]) if m in accepted][-len(acks) // 10]
    return [e for i, e in enumerate(events) if i != acks[victim]], victim


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=70_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="write the planted trace here (.jsonl or .parquet) and keep it")
    args = ap.parse_args()
    began = time.monotonic()
    events, victim = planted_trace(args.messages, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "big.parquet"
        write_events(path, events)
        built = time.monotonic()
        print(f"trace: {len(events)} events, planted in {victim}; built in {built - began:.1f} s", flush=True)
        result = shrink(str(path), "shadow-before-ack")
        write_checked(result, Path(tmp) / "min.jsonl", None)
        took = time.monotonic() - built
    print(
        f"shrink: {result.before} events -> {len(result.events)} events (entity {result.target.entity or '-'}; "
        f"cut: {result.cut}, {result.cut_events} events; {result.tests} candidates judged); "
        f"{took:.1f} s including the first check and the re-check"
    )


if __name__ == "__main__":
    main()
