"""The fairness ends' cost in exploration (issue 33, ">= 5,000 distinct states/s per core"; session 14).

`--share` (default): per bound, the explore loop's CPU seconds and the part of them spent judging new states'
fairness ends (`Explorer.end_of`: the driver's finish calls on the model, the folds finished, the second
resolution's copy when the end's choices branch), `--repeat` runs, medians.

`--memo`: whether a memo of the end's verdict could hit. For every new state with a blob, the fingerprint of the
system after its finish calls (first resolution) and of its folds before them: a memo keyed on them hits only
where two states share both (measured: none, virtual time is part of both).

`--relative` (session 15): whether a memo keyed on the state with virtual time made relative (timers as offsets
from now, the clock dropped) could hit. Any such key determines the end's own output with its times relative to
the end's start (each recorded event's kind, node, entity, attributes and `ts_ms - now`), so the distinct outputs
are a lower bound on the distinct keys, and `1 - outputs/ends` an upper bound on the memo's hits. `rng_words`:
the same with the kernel generator's state at the end's start added (a seeded end draws from it, so a key must
hold it where the end's choices are not scripted). Measured ends: those of states with a blob.

`--plan`: the level-synchronous plan in one process (`levels.run_levels`, 4 partitions), its ends judged before
the shuffle (once per task meeting a state) and after it (once per state, `Job.settles_ends`), side by side
(alternated, `--repeat` pairs): CPU seconds (medians) and their ratio, the ends judged, and whether both give
the single-process explorer's figures.

    PYTHONPATH=$PWD python benchmarks/bench_ends.py [--share | --memo | --relative | --plan] [--repeat 3] [BOUND ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from conformance.explore import levels
from conformance.explore.bfs import Explorer, Result, explore
from conformance.explore.fingerprint import fingerprint
from conformance.explore.manifest import load
from conformance.explore.state import feed_folds
from conformance.harness.choosing import scripted

DEFAULT = ["sr-2s-1m-crash", "sr-2s-1m-choices", "pf-2s-1f-replicas", "am-3s-1db-crash-partition"]


def _entries(names: list[str]) -> list[Any]:
    return [e for e in load()[0] if e.bound.name in names]


def _timed_ends(ex: Explorer) -> list[float]:
    """Wrap `ex.end_of`: [CPU seconds in it, calls]."""
    spent = [0.0, 0.0]
    real = ex.end_of

    def end_of(node: Any) -> Any:
        t = time.process_time()
        try:
            return real(node)
        finally:
            spent[0] += time.process_time() - t
            spent[1] += 1

    ex.end_of = end_of  # type: ignore[method-assign]
    return spent


def share(entry: Any, repeat: int) -> dict[str, object]:
    loops, ends, copies = [], [], 0
    for _ in range(repeat):
        ex = Explorer(entry.bound)
        spent = _timed_ends(ex)
        t = time.process_time()
        res = ex.run(max_states=entry.max_states)
        loops.append(time.process_time() - t)
        ends.append(spent[0])
        copies = res.end_copies
    loop, end = statistics.median(loops), statistics.median(ends)
    return {
        "bound": entry.bound.name,
        "states": res.states,
        "loop_cpu_s": round(loop, 3),
        "ends_cpu_s": round(end, 3),
        "ends_share": round(end / loop, 3),
        "states_per_cpu_s": round(res.states / loop, 1),
        "end_copies": copies,
    }


def memo(entry: Any) -> dict[str, object]:
    ex = Explorer(entry.bound)
    keys: set[tuple[str, str]] = set()
    measured = [0]
    real = ex.end_of

    def end_of(node: Any) -> Any:
        if node.blob is not None:
            s = ex.restore(node)
            if s.incremental is not None:
                calls = ex.driver.finish(s)
                feed_folds(s)
                folds = fingerprint([s.incremental])
                with scripted(s.system, [], ex.ranges, extend=True):
                    for call in calls:
                        s.apply(call)
                keys.add((fingerprint(ex.space.roots(s, node.book)[:2]), folds))
                measured[0] += 1
        return real(node)

    ex.end_of = end_of  # type: ignore[method-assign]
    ex.run(max_states=entry.max_states)
    return {"bound": entry.bound.name, "ends_measured": measured[0], "distinct_keys": len(keys)}


def _sim(system: Any) -> Any:
    """The kernel simulator a model system runs on (sr: `system.sim`, pf: `system.cluster.sim`), or None (am)."""
    sim = getattr(system, "sim", None)
    return sim if sim is not None else getattr(getattr(system, "cluster", None), "sim", None)


def relative(entry: Any) -> dict[str, object]:
    ex = Explorer(entry.bound)
    outputs: set[tuple[Any, ...]] = set()
    with_rng: set[tuple[Any, ...]] = set()
    measured = [0]
    real = ex.end_of

    def end_of(node: Any) -> Any:
        if node.blob is not None:
            s = ex.restore(node)
            sim = _sim(s.system)
            if sim is not None:
                start, now, words = len(s.events()), sim.now_ms, repr(sim.rng.getstate())
                with scripted(s.system, [], ex.ranges, extend=True):
                    for call in ex.driver.finish(s):
                        s.apply(call)
                out = tuple(
                    (e.kind, e.node, e.entity, e.ts_ms - now, json.dumps(e.attrs, sort_keys=True, default=str))
                    for e in s.events()[start:]
                )
                outputs.add(out)
                with_rng.add((out, words))
                measured[0] += 1
        return real(node)

    ex.end_of = end_of  # type: ignore[method-assign]
    ex.run(max_states=entry.max_states)
    n = measured[0]
    return {
        "bound": entry.bound.name,
        "ends_measured": n,
        "distinct_relative_outputs": len(outputs),
        "hits_at_most": round(1 - len(outputs) / n, 3) if n else None,
        "distinct_with_rng_words": len(with_rng),
        "hits_at_most_seeded": round(1 - len(with_rng) / n, 3) if n else None,
    }


def _figures(res: Result) -> tuple[Any, ...]:
    f = res.found
    verdict = None if f is None else (f.rule, f.steps, f.start, f.end)
    return res.states, res.transitions, res.per_level, res.depth, res.complete, verdict


def plan(entry: Any, repeat: int) -> dict[str, object]:
    cpu: dict[bool, list[float]] = {False: [], True: []}
    ends: dict[bool, int] = {}
    figs: dict[bool, tuple[Any, ...]] = {}
    for _ in range(repeat):
        for after in (False, True):
            levels._EXPANDERS.clear()
            job = levels.Job(entry.bound, ends_after_shuffle=after)
            spent = _timed_ends(job.expander().ex)
            t = time.process_time()
            res = levels.run_levels(job, max_states=entry.max_states, partitions=4)
            cpu[after].append(time.process_time() - t)
            ends[after], figs[after] = int(spent[1]), _figures(res)
    levels._EXPANDERS.clear()
    before, after = statistics.median(cpu[False]), statistics.median(cpu[True])
    return {
        "bound": entry.bound.name,
        "states": figs[True][0],
        "auto_after_shuffle": levels.Job(entry.bound).settles_ends(),
        "before_cpu_s": round(before, 3),
        "after_cpu_s": round(after, 3),
        "after_over_before": round(after / before, 3),
        "ends_before": ends[False],
        "ends_after": ends[True],
        "same_figures": figs[False] == figs[True] == _figures(explore(entry.bound, max_states=entry.max_states)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bounds", nargs="*", default=DEFAULT)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--share", action="store_true", help="the ends' share of the explore loop (default)")
    mode.add_argument("--memo", action="store_true", help="distinct keys a memo of the end's verdict would have")
    mode.add_argument("--relative", action="store_true", help="bounds on a time-relative memo's hits")
    mode.add_argument("--plan", action="store_true", help="the level plan, ends before and after the shuffle")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for entry in _entries(args.bounds):
        if args.memo or args.relative:
            row = memo(entry) if args.memo else relative(entry)
        else:
            row = plan(entry, args.repeat) if args.plan else share(entry, args.repeat)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
