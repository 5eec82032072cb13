"""CPU time of the mechanism folds alone over a corpus (issue 32, "half the cost per event"), in us per event.

    python3 benchmarks/bench_folds.py /tmp/f1m                  # pf, am and sr, best of 3
    python3 benchmarks/bench_folds.py /tmp/f1m --mech pf --repeat 5

The corpus is read once (`traces.io.read_corpus`, not timed) and split as the engine splits it
(`conformance.engine.stream.groups_of`, each trace's context in a shared `stream.Context`, the events a
monitor `reads`); then, per mechanism, every group's fold is started, fed and finished, timed with the
process's CPU clock (`time.process_time`), best of `--repeat`. Prints groups, events fed, CPU seconds,
microseconds per event and the violations found (0 for a clean corpus). Whole-run figures (reading, the
engine, the report) are `bench_check.py`'s; this isolates the folds to compare two trees side by side
(run it from `/tmp` with `PYTHONPATH=TREE`; `HACONFORM_PURE=1` for the pure path).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.check import trace_contexts
from conformance.engine.stream import Context, groups_of
from model.registry import monitor_runs
from traces.io import read_corpus
from traces.schema import Event, is_context_kind


def feeds(mech: str, events: list[Event]) -> tuple[object, list[tuple[str, list[Event]]]]:
    """The monitor of `mech` and each of its groups' events (trace ID, events), as the engine feeds them."""
    monitor = next(m for _, m in monitor_runs() if m.mechanism == mech)
    reads = getattr(monitor, "reads", None)
    out = []
    for key, group in groups_of(monitor, events).items():
        if reads is not None:
            group = [e for e in group if e.mechanism in reads or is_context_kind(e.kind)]
        if monitor.scope == "trace" and not any(e.mechanism == mech for e in group):
            continue  # a trace-scope monitor judges only the traces holding its events
        out.append((key[0], group))
    return monitor, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--mech", action="append", choices=("pf", "am", "sr"), help="default: pf, am and sr")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    read = read_corpus([args.corpus])
    events = sorted(read.events, key=lambda e: (e.trace_id, e.seq))
    contexts = trace_contexts(events)
    for mech in args.mech or ("pf", "am", "sr"):
        monitor, groups = feeds(mech, events)
        fed = sum(len(g) for _, g in groups)
        best, violations = float("inf"), 0
        for _ in range(args.repeat):
            shared = {}  # a fresh Context per trace and run: what its folds derive is shared within a run only
            for trace, found in contexts.items():
                shared[trace] = Context()
                shared[trace].extend(found)
            t = time.process_time()
            results = []
            for trace, group in groups:
                fold = monitor.start(shared.get(trace) or Context())  # type: ignore[attr-defined]
                for e in group:
                    fold.feed(e)
                results.append(fold.finish())
            best = min(best, time.process_time() - t)
            violations = sum(len(r.violations) for r in results)
        print(
            f"{mech}: {len(groups):,} groups, {fed:,} events fed, best CPU {best:.3f} s, "
            f"{1e6 * best / max(fed, 1):.2f} us/event, violations {violations}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
