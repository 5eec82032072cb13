"""Where the explore loop's CPU goes, per phase, and what one fingerprint costs (issue 33, session 16).

Per default (non-slow) bound of `spec/explore.toml` of the mechanism (or the bounds named): the bound explored once
to warm up, then `--repeat` times with the explorer's phases timed by the process's CPU clock (`time.process_time`
around `Explorer.restore` (a thaw per edge), `fingerprint`, `judge` (the edge's verdict, the fold fed and finished),
`apply` (the model's step), `freeze` (a new state's blob), `actions`, `quiet_end` and `state.feed_folds`). Printed
as one JSON row per bound: states per CPU second of the whole loop, and per phase its share of the loop, its CPU ms
per call and its calls per exploration. The wrappers add a little to each call: compare trees with this script on
both sides, not with `bench_explore.py --defaults`.

`--fingerprint`: the CPU ms of `Explorer.fingerprint` alone, on the first 60 new states of a breadth-first walk of
the bound (each restored once), best of 7 batches of 20 rounds.

Runs against whichever tree is on PYTHONPATH (from /tmp when comparing two trees: the working directory comes
first on `sys.path`):

    PYTHONPATH=$PWD python3 benchmarks/bench_explore_parts.py --mechanism am [--repeat 5] [--fingerprint] [BOUND ...]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from conformance.explore import bfs
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load

PHASES = ("restore", "fingerprint", "judge", "apply", "freeze", "actions", "quiet_end")


def _timed(spent: Counter[str], calls: Counter[str], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - began
            calls[name] += 1

    return timed


def parts(bound: Any, repeat: int) -> dict[str, object]:
    """The loop's CPU split by phase on `bound` (see the module docstring)."""
    Explorer(bound).run()  # warm: imports, the lazy registry, caches
    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    saved = {name: getattr(Explorer, name) for name in PHASES}
    feed = bfs.feed_folds
    try:
        for name, fn in saved.items():
            setattr(Explorer, name, _timed(spent, calls, name, fn))
        bfs.feed_folds = _timed(spent, calls, "feed_folds", feed)
        began = time.process_time()
        for _ in range(repeat):
            res = Explorer(bound).run()
        total = time.process_time() - began
    finally:
        for name, fn in saved.items():
            setattr(Explorer, name, fn)
        bfs.feed_folds = feed
    row: dict[str, object] = {
        "bound": bound.name,
        "states": res.states,
        "states_per_cpu_s": round(res.states * repeat / total, 1),
    }
    for name, cpu in spent.most_common():
        row[name] = {
            "share": round(cpu / total, 3),
            "ms_per_call": round(cpu / calls[name] * 1e3, 4),
            "calls": calls[name] // repeat,
        }
    return row


def fingerprint_ms(bound: Any, states: int = 60) -> dict[str, object]:
    """CPU ms of one `Explorer.fingerprint` on the first `states` new states of a breadth-first walk."""
    ex = Explorer(bound)
    frontier, nodes = [ex.root()], []
    while frontier and len(nodes) < states:
        for edge in ex.successors(frontier.pop(0)):
            if edge[2] is not None:
                edge[2].live = None
                nodes.append(edge[2])
                frontier.append(edge[2])
    held = [(ex.restore(n), n.book) for n in nodes[:states]]
    best = float("inf")
    for _ in range(7):
        began = time.process_time()
        for _ in range(20):
            for s, book in held:
                ex.fingerprint(s, book)
        best = min(best, (time.process_time() - began) / 20 / len(held) * 1e3)
    return {"bound": bound.name, "states": len(held), "fingerprint_ms_best": round(best, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bounds", nargs="*", help="manifest bounds (default: the mechanism's non-slow ones)")
    ap.add_argument("--mechanism", default="am")
    ap.add_argument("--repeat", type=int, default=5, help="timed explorations per bound")
    ap.add_argument("--fingerprint", action="store_true", help="one fingerprint's CPU ms instead of the split")
    args = ap.parse_args()
    entries = load()[0]
    chosen = (
        [e for e in entries if e.bound.name in args.bounds]
        if args.bounds
        else [e for e in entries if e.bound.mechanism == args.mechanism and not e.slow]
    )
    for entry in chosen:
        row = fingerprint_ms(entry.bound) if args.fingerprint else parts(entry.bound, args.repeat)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
