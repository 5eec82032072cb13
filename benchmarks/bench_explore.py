"""Exhaustive exploration (issues 22, 33): growing bounds per mechanism until one does not finish in the budget,
or (`--defaults`) the explore loop's speed on each mechanism's default bounds.

Ladder: each bound is explored once (one process, one core); printed: distinct states, transitions, depth,
seconds, states/s, and whether it finished. The largest finished bound per mechanism goes into
benchmarks/README.md.

`--defaults` (issue 33): every non-slow bound of `spec/explore.toml`, explored `--repeat` times in this process;
printed per bound: distinct states, transitions, the explore loop's own seconds (`Result.seconds`: not the
interpreter's start nor the imports), states/s (best and median of the repeats), states per CPU second of the
loop (the process's CPU time: the figure that holds on a shared machine, one core per process), how states were restored
(`copy`, or `replay` for a model whose timers are still closures) and bytes per state (visited fingerprints plus
the frontier's largest size). Runs against whichever tree is on PYTHONPATH (the script imports nothing of its
own), so a tree before issue 33 is measured by the same loop (it reports no restore and no bytes):

`--unit-costs` (session 11): per mechanism's first default bound, the CPU milliseconds of one copy's parts on
the states of a depth-3 path (the middle new successor each time): `freeze` (pickling a new state), `thaw`
(unpickling a source per edge), the fingerprint, the edge verdict (session 13: the folds copied and finished, the
session's own folds going on), and the blob's bytes; the same on any tree since issue 33.

    python benchmarks/bench_explore.py --budget 600 [--mechanism sr]
    PYTHONPATH=$PWD python benchmarks/bench_explore.py --defaults --repeat 5 [--mechanism am] [--no-choices]
        [--no-fixed]
    PYTHONPATH=$PWD python benchmarks/bench_explore.py --unit-costs [--repeat 200]
    PYTHONPATH=$PWD python benchmarks/bench_explore.py --split [--mechanism pf]
    cd /tmp && PYTHONPATH=TREE python3 TREE/benchmarks/bench_explore.py --bound NAME [--depth D] [--set JSON]

`--split` (session 28): per default bound, the loop's CPU split into the model's steps, the judging and the rest,
the events fed per state, and the ceilings on states per CPU second that the model and the folds alone put on it.

`--bound` (session 21): one manifest bound explored once by the single-process explorer, optionally to `--depth` and
with fields changed (`--set '{"messages": 3, "kinds": [...]}'`: a shape counted before it is listed); printed as one
JSON row: states, states per level, transitions and the process's CPU seconds for the exploration.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from conformance.explore.bfs import Explorer, explore
from conformance.explore.spaces import Bound

SR_KINDS = ("crash", "partition", "resubmit", "new-database")
AM_KINDS = ("crash", "partition", "fail_database", "switchover")
PF_KINDS = ("add_replica", "remove_replica", "crash", "loss")

# growing bounds, smallest first
LADDER: dict[str, list[Bound]] = {
    "sr": [
        Bound("sr", "sr-3s-1m-f1-d5", 3, 1, 1, SR_KINDS, 5),
        Bound("sr", "sr-3s-1m-f1-d6", 3, 1, 1, SR_KINDS, 6),
        Bound("sr", "sr-3s-2m-f1-d6", 3, 2, 1, SR_KINDS, 6),
        Bound("sr", "sr-3s-2m-f2-d7", 3, 2, 2, SR_KINDS, 7),
    ],
    "am": [
        Bound("am", "am-4s-2db-f2-d4", 4, 2, 2, AM_KINDS, 4),
        Bound("am", "am-4s-2db-f3-d5", 4, 2, 3, AM_KINDS, 5),
        Bound("am", "am-4s-2db-f4-d6", 4, 2, 4, AM_KINDS, 6),
    ],
    "pf": [
        Bound("pf", "pf-3s-1f-f1-d4", 3, 1, 1, PF_KINDS, 4),
        Bound("pf", "pf-3s-1f-f1-d5", 3, 1, 1, PF_KINDS, 5),
        Bound("pf", "pf-3s-2f-f1-d6", 3, 2, 1, PF_KINDS, 6),
    ],
}


def run(mechanism: str, budget_s: float) -> list[dict[str, object]]:
    rows = []
    for bound in LADDER[mechanism]:
        ex = Explorer(bound)
        deadline = time.monotonic() + budget_s
        res = ex.run(deadline=deadline)
        row = {**res.to_json(), "finished": res.complete, "states_per_s": round(res.states / res.seconds, 1)}
        row.pop("states_per_level", None)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if not res.complete:
            break
    return rows


def _default_entries(mechanism: str) -> list[Any]:
    """The mechanism's default (non-slow) bounds of the manifest, in its order."""
    from conformance.explore.manifest import load

    return [e for e in load()[0] if e.bound.mechanism == mechanism and not e.slow]


def defaults(
    mechanism: str, repeat: int, choices: bool = True, compress: bool = False, fixed: bool = True
) -> list[dict[str, object]]:
    """The explore loop's speed on the mechanism's default (non-slow) manifest bounds (`choices` False: every
    random choice drawn by the seed, the state space explored before issue 33; `fixed` False: every state copies
    its configuration, session 14's fixed table off)."""
    rows = []
    for entry in _default_entries(mechanism):
        rates, cpu_rates, res = [], [], None
        for _ in range(repeat):
            ex = Explorer(entry.bound)
            knows = hasattr(ex, "choices")  # a tree before issue 33 has no choice points (and no compression)
            ex.choices, ex.compress = choices and entry.bound.choices, compress  # sr's bounds: `choices = false`
            if hasattr(ex, "share_fixed"):  # session 14
                ex.share_fixed = fixed
            cpu = time.process_time()
            res = ex.run(max_states=entry.max_states)
            cpu_rates.append(res.states / max(time.process_time() - cpu, 1e-9))
            rates.append(res.states / res.seconds)
        assert res is not None
        rates.sort()
        cpu_rates.sort()
        row = {
            "bound": entry.bound.name,
            "choice_points": (choices and entry.bound.choices) if knows else None,
            "compressed": compress if knows else None,
            "fixed_table": fixed if hasattr(ex, "share_fixed") else None,
            "states": res.states,
            "transitions": res.transitions,
            "loop_seconds_best": round(res.states / rates[-1], 3),
            "states_per_s_best": round(rates[-1], 1),
            "states_per_s_median": round(rates[len(rates) // 2], 1),
            "states_per_cpu_s_median": round(cpu_rates[len(cpu_rates) // 2], 1),
            "restore": getattr(res, "restore", "replay (before issue 33)"),
            "bytes_per_state": round(getattr(res, "bytes_per_state", 0.0), 1),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def unit_costs(mechanism: str, repeat: int) -> dict[str, object]:
    """CPU ms per freeze, thaw and fingerprint on the states of a depth-3 path of the mechanism's first default
    bound (choice points off), each timed over `repeat` rounds."""
    from conformance.explore.state import freeze, thaw

    try:  # session 15: each fold copied as deep as its finish writes (`conformance.explore.edges`)
        from conformance.explore.edges import edge_verdict
    except ImportError:
        try:  # session 13: the edge verdict's copy of the folds (before: `Incremental.verdict`'s copy)
            from conformance.explore.state import edge_verdict
        except ImportError:

            def edge_verdict(s: Any) -> Any:
                return s.judge(final=True)

    entry = _default_entries(mechanism)[0]
    ex = Explorer(entry.bound)
    ex.choices = False
    node, nodes = ex.root(), []
    for _ in range(3):
        new = [e[2] for e in ex.successors(node) if e[2] is not None]
        node = new[len(new) // 2]
        node.live = None
        nodes.append(node)
    sessions = [ex.restore(n) for n in nodes]

    def ms(fn: object) -> float:
        cpu = time.process_time()
        for _ in range(repeat):
            for s, n in zip(sessions, nodes, strict=True):
                fn(s, n)  # type: ignore[operator]
        return round((time.process_time() - cpu) / repeat / len(nodes) * 1e3, 4)

    row = {
        "bound": entry.bound.name,
        "freeze_ms": ms(lambda s, n: freeze(s)),
        "thaw_ms": ms(lambda s, n: thaw(n.blob, ex.driver, ex.setup)),
        "fingerprint_ms": ms(lambda s, n: ex.fingerprint(s, n.book)),
        "edge_verdict_ms": ms(lambda s, n: edge_verdict(s)),
        "blob_bytes": sum(len(n.blob) for n in nodes) // len(nodes),
    }
    print(json.dumps(row), flush=True)
    return row


def split(mechanism: str) -> list[dict]:
    """Where the loop's CPU goes on each default bound (session 28): the model's steps (`Session.apply`: the
    actions' protocol calls and the fairness ends' calls), the judging (`Explorer._violation`: the folds fed the
    new events and finished, the invariants and end checks) and the rest (copies, fingerprints, the frontier, the
    search's bookkeeping), timed by wrapping the first two; the events fed to the folds per state. From them, the
    ceilings on states per CPU second if the rest cost nothing (`if_only_model_and_judging`), if judging alone
    were left (`if_only_judging`) and (session 29) if the model's steps alone were (`if_only_model`: the
    simulation that makes the states, nothing judged, nothing copied): what issue 33's target asks of the model
    and the folds themselves, whatever the copies cost. The wrappers add about a microsecond a call; each bound
    runs twice in this process, the second measured (the first pays the process's first-use costs); choice
    points as in the manifest."""
    from conformance.engine.growing import Incremental
    from conformance.harness.core import Session

    spent = {"model": 0.0, "judging": 0.0, "events": 0}

    def timed(fn: Any, key: str) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            cpu = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.process_time() - cpu

        return wrapper

    def counted(fn: Any) -> Any:
        def wrapper(self: Any, e: Any) -> Any:
            spent["events"] += 1
            return fn(self, e)

        return wrapper

    saved = (Session.apply, Explorer._violation, Incremental.feed)
    rows = []
    try:
        Session.apply = timed(Session.apply, "model")  # type: ignore[method-assign]
        Explorer._violation = timed(Explorer._violation, "judging")  # type: ignore[method-assign]
        Incremental.feed = counted(Incremental.feed)  # type: ignore[method-assign]
        for entry in _default_entries(mechanism):
            Explorer(entry.bound).run(max_states=entry.max_states)  # warm: the process's first-use costs left out
            spent.update(model=0.0, judging=0.0, events=0)
            ex = Explorer(entry.bound)
            cpu = time.process_time()
            res = ex.run(max_states=entry.max_states)
            loop = time.process_time() - cpu
            model, judging = spent["model"], spent["judging"]
            row = {
                "bound": entry.bound.name,
                "states": res.states,
                "transitions": res.transitions,
                "loop_cpu_s": round(loop, 3),
                "model_share": round(model / loop, 3),
                "judging_share": round(judging / loop, 3),
                "rest_share": round(1 - (model + judging) / loop, 3),
                "events_per_state": round(spent["events"] / max(1, res.states), 1),
                "states_per_cpu_s": round(res.states / loop, 1),
                "if_only_model_and_judging": round(res.states / max(model + judging, 1e-9), 1),
                "if_only_judging": round(res.states / max(judging, 1e-9), 1),
                "if_only_model": round(res.states / max(model, 1e-9), 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        Session.apply, Explorer._violation, Incremental.feed = saved  # type: ignore[method-assign]
    return rows


def one_bound(name: str, depth: int, changes: dict) -> dict:
    """One manifest bound (its `depth` and fields changed) explored once in this process: its figures and CPU s."""
    from conformance.explore.manifest import load

    entries = {e.bound.name: e for e in load()[0]}
    bound = entries[name].bound.with_(**({"depth": depth} if depth else {}), **changes)
    cpu = time.process_time()
    res = explore(bound)
    row = {
        "bound": name,
        "changes": changes,
        "depth": bound.depth,
        "states": res.states,
        "per_level": res.per_level,
        "transitions": res.transitions,
        "result": res.result,
        "cpu_s": round(time.process_time() - cpu, 2),
    }
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per bound")
    ap.add_argument("--mechanism", choices=sorted(LADDER), action="append")
    ap.add_argument("--defaults", action="store_true", help="the explore loop's speed on the default bounds")
    ap.add_argument("--repeat", type=int, default=3, help="with --defaults: explorations per bound")
    ap.add_argument("--no-choices", action="store_true", help="with --defaults: choice points off (the seed draws)")
    ap.add_argument("--no-fixed", action="store_true", help="with --defaults: the fixed table off (session 14)")
    ap.add_argument("--compress", action="store_true", help="with --defaults: frontier blobs LZ4-compressed")
    ap.add_argument("--unit-costs", action="store_true", help="ms per freeze, thaw and fingerprint per mechanism")
    ap.add_argument("--split", action="store_true", help="the loop's CPU: the model, the judging, the rest")
    ap.add_argument("--bound", help="one manifest bound, explored once (its CPU seconds and figures)")
    ap.add_argument("--depth", type=int, default=0, help="with --bound: explore to this depth")
    ap.add_argument("--set", default="{}", help="with --bound: fields changed, as a JSON object")
    args = ap.parse_args()
    if args.bound:
        one_bound(args.bound, args.depth, json.loads(args.set))
        return
    for m in args.mechanism or sorted(LADDER):
        if args.unit_costs:
            unit_costs(m, args.repeat)
        elif args.split:
            split(m)
        elif args.defaults:
            defaults(m, args.repeat, not args.no_choices, args.compress, not args.no_fixed)
        else:
            run(m, args.budget)


if __name__ == "__main__":
    main()
