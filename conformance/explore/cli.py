"""`haconform explore`: exhaustive exploration of the model within a bound (issue 22).

`haconform explore MECHANISM --bound NAME` (a bound of `spec/explore.toml`) or `--servers N --messages M
--faults F --kinds a,b --depth D`: every state the model reaches, every transition judged by the monitor,
every state's fairness end judged by the liveness rules. A violation prints the shortest path and writes it
as a replay file (`haconform replay FILE [--sut ...]`). `--check` compares the figures with the manifest;
`--all` explores every manifest bound (`--slow` too); `--mutants` explores each mutant in the manifest's
mutant bound and prints the depth at which each is found (the kill report's `explore` column:
`haconform mutants --explore-report FILE`). Exit 0 clean (and, with --check, as pinned), 1 a violation
(or a figure that differs from the manifest, or a mutant not found at its pinned depth), 2 usage, 3 internal.

`--choices`, `--ranges`, `--construction` and `--end-choices` set the bound's choice fields for one run (issue 33;
conformance/explore/README.md, "On the command line"); the output says which choices were explored.

`--engine spark [--master URL]` explores one bound (or `--all`) level by level on Spark (`spark_trace_check.explore`:
the same counts, verdict and shortest path), printing each level's figures; `--engine auto` (the default) chooses
as `check` does: Spark with `--master`, or when the bound's pinned size is past the point where Spark finishes
first on this machine's cores (`choose_engine`), else the single-process explorer.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.cli.suite import _guard
from conformance.driver_choice import Choice, cores
from conformance.explore.bfs import Result, explore
from conformance.explore.levels import Job, say
from conformance.explore.manifest import MANIFEST, ManifestError, Unpinned, bound_of, compare, find, load
from conformance.explore.spaces import Bound, BoundError
from conformance.explore.witness import WITNESSES
from conformance.harness.report import write_json_atomic
from conformance.harness.search import MECHANISMS, driver
from model.kernel.choice import RANGE_POINTS


def choice_options(args: argparse.Namespace) -> dict[str, Any]:
    """The choice options given on the command line, as the manifest fields they set (`choices`, `ranges`,
    `construction`, `end_choices`; issue 33, session 13's choice points at construction and at the end)."""
    out: dict[str, Any] = {}
    if args.choices is not None:
        words = [w for w in args.choices.split(",") if w]
        out["choices"] = {"on": True, "off": False}.get(args.choices, words)
    if args.ranges is not None:
        out["ranges"] = args.ranges
    if args.construction is not None:
        out["construction"] = args.construction == "branch"
    if args.end_choices is not None:
        out["end_choices"] = args.end_choices
    return out


def _fields(bound: Bound) -> dict[str, Any]:
    """A bound as the manifest table it came from (so the command line's changes are checked as the manifest's)."""
    raw = {k: getattr(bound, k) for k in ("mechanism", "name", "servers", "messages", "faults", "depth", "symmetry")}
    choices = list(bound.choices) if isinstance(bound.choices, tuple) else bound.choices
    raw.update(kinds=list(bound.kinds), waits_ms=list(bound.waits_ms), setup=dict(bound.setup), choices=choices)
    raw.update(ranges=bound.ranges, construction=bound.construction, end_choices=bound.end_choices)
    return raw


def _bound(args: argparse.Namespace) -> tuple[Bound, Any]:
    """The bound to explore, and its manifest entry (None: a bound of the command line's, or a manifest bound whose
    choice options the command line changed: its pinned figures are not this bound's)."""
    changes = choice_options(args)
    if args.bound:
        entry = find(args.bound, Path(args.manifest))
        if entry.bound.mechanism != args.mechanism:
            raise ManifestError(f"bound {args.bound!r} is a {entry.bound.mechanism} bound, not {args.mechanism}")
        if not changes:
            return entry.bound, entry
        if args.check:
            raise BoundError(f"--check compares with bound {args.bound!r} as pinned: not with {_flags(changes)}")
        return bound_of({**_fields(entry.bound), **changes}, f"bound {args.bound!r} with {_flags(changes)}"), None
    raw = {
        "mechanism": args.mechanism,
        "name": "cli",
        "servers": args.servers,
        "messages": args.messages,
        "faults": args.faults,
        "kinds": [k for k in (args.kinds or "").split(",") if k],
        "depth": args.depth,
        "symmetry": args.symmetry,
        **changes,
    }
    return bound_of(raw, "command line"), None


def _explored(bound: Bound) -> dict[str, Any]:
    """Which of the model's random choices the bound explored (all four off when `choices` is)."""
    on = bound.choices is not False
    return {
        "choices": list(bound.choices) if isinstance(bound.choices, tuple) else on,
        "ranges": bound.ranges if on else None,
        "construction": "branch" if on and bound.construction else "seed",
        "end_choices": bound.end_choices if on else 0,
    }


def _said(e: dict[str, Any]) -> str:
    if e["choices"] is False:
        return "off (every choice drawn by the seed)"
    what = "on" if e["choices"] is True else "on for " + ", ".join(e["choices"])
    ends = f"its first {e['end_choices']} resolutions" if e["end_choices"] else "drawn by the seed"
    return f"{what}; ranges {e['ranges']}; construction: {e['construction']}; each fairness end: {ends}"


def _flags(changes: dict[str, Any]) -> str:
    return ", ".join(f"--{k.replace('_', '-')}" for k in changes)


def _print(res: Result, replay: Path | None) -> None:
    rate = res.states / res.seconds if res.seconds else 0.0
    print(
        f"{res.mechanism} {res.bound}: {res.states} distinct states, {res.transitions} transitions, depth "
        f"{res.depth}{'' if res.complete else ' (stopped at --max-states)'}, {res.seconds:.1f} s ({rate:.0f} states/s)"
    )
    print(f"  states per level: {res.per_level}")
    f = res.found
    if f is None:
        print("  result: clean")
        return
    what = "WITNESS of the refuted claim" if f.kind == "witness" else "VIOLATION"
    print(f"  {what} {f.rule} ({f.requirement}) at depth {f.depth}{' (fairness end)' if f.kind == 'end' else ''}")
    print(f"  {f.explanation}")
    for n, step in enumerate(f.steps, 1):
        calls = "; ".join(f"{c['call']}({json.dumps(c['args'], sort_keys=True)})" for c in step["calls"])
        print(f"  step {n}: {step['op']}: {calls}")
    if replay:
        print(f"  replay: haconform replay {replay}")


# measured side by side on the shared 2-core machine (load about 17; benchmarks/README.md, "Session 10: exploration
# on Spark"): the copying explorer in one process against the level plan on a standalone cluster of one worker
PYTHON_STATES_RATE = 30  # distinct states/s, one process (sr-2s-2m-crash 51, am-4s-2db-crash-partition 9)
SPARK_STATES_PER_CORE = 36  # distinct states/s per core in a large level: about 1.2x one process (the same work)
SPARK_FIXED_S = 30.0  # s: session start-up and the first level's warm-up
SPARK_LEVEL_S = 12.0  # s: a level's jobs, planning and task start-up, however small the level


def choose_engine(states: int | None, n_cores: int, master: str | None, depth: int = 0) -> Choice:
    """`--engine auto`: Spark with a `--master`, or when a bound of `states` (pinned; None: not known before
    exploring) and `depth` levels finishes first there on `n_cores` cores (`conformance.driver_choice`'s rule,
    for states, with a cost per level).

        states / PYTHON_STATES_RATE > SPARK_FIXED_S + depth * SPARK_LEVEL_S + states / (n_cores * SPARK_STATES_PER_CORE)
    """
    if master:
        return Choice("spark", f"--master {master} given")
    if states is None:
        return Choice("python", "the bound's size is not known before exploring (not pinned in the manifest)")
    spark_rate = n_cores * SPARK_STATES_PER_CORE
    if n_cores < 2 or spark_rate <= PYTHON_STATES_RATE:  # one core: the driver and the worker share it
        return Choice("python", f"{n_cores} core(s): Spark cannot outrun one process here")
    limit = int((SPARK_FIXED_S + depth * SPARK_LEVEL_S) / (1 / PYTHON_STATES_RATE - 1 / spark_rate)) + 1
    side = "python" if states < limit else "spark"
    how = "below" if side == "python" else "at least"
    return Choice(side, f"{states:,} states pinned, {how} {limit:,} where Spark starts to win on {n_cores} cores")


class Engine:
    """The engine `--engine` names (resolved once for `auto`), with one Spark session for every bound it runs."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.session = args, None

    def run(
        self, bound: Bound, entry: Any, max_states: int | None, mutant: str | None = None, witness: str | None = None
    ) -> Result:
        args = self.args
        ends = not getattr(args, "no_ends", False)
        engine = args.engine
        if engine == "auto":
            choice = choose_engine(entry.states if entry is not None else None, cores(), args.master, bound.depth)
            engine = choice.engine
            print(choice.line().replace("haconform check", "haconform explore"), file=sys.stderr)
        if engine == "python":
            if args.compress or args.regroup:  # auto chose one process: what only Spark uses is said unused
                print("haconform explore: one process: --compress and --regroup not used (Spark only)", file=sys.stderr)
            goal = WITNESSES[witness] if witness else None
            return explore(bound, mutant, max_states=max_states, ends=ends, goal=goal)
        from spark_trace_check import explore as on_spark  # pyspark: loaded only for the Spark engine

        if self.session is None:
            self.session = on_spark.session(args.master or "local[2]")
        job = Job(bound, mutant, None, witness, ends, compress=args.compress, regroup=args.regroup)
        return on_spark.run_spark(self.session, job, max_states, args.partitions or None, progress=say)


def _cmd_one(args: argparse.Namespace) -> int:
    bound, entry = _bound(args)
    if args.check and entry is not None and not entry.pinned:  # refused before exploring: nothing to judge against
        raise Unpinned(f"--check: bound {entry.bound.name!r} is not pinned (pinned = false): nothing to compare with")
    if args.witness and args.witness not in WITNESSES:
        raise BoundError(f"--witness: no witness for claim {args.witness!r} (known: {', '.join(WITNESSES)})")
    res = Engine(args).run(bound, entry, args.max_states, args.mutant, args.witness)
    replay = None
    if res.found is not None:
        replay = Path(args.replay_out or f"haconform-explore-{bound.mechanism}.json")
        write_json_atomic(replay, res.replay_file(args.mutant))
    diffs = compare(entry, res) if args.check and entry is not None else []
    if args.json:
        extra = {"replay_file": str(replay) if replay else None, "manifest": diffs, "choice_points": _explored(bound)}
        print(json.dumps({**res.to_json(), **extra}))
    else:
        _print(res, replay)
        print(f"  choice points: {_said(_explored(bound))}")
        for d in diffs:
            print(f"  MANIFEST: {d}")
    return 1 if res.found is not None or diffs else 0


def _cmd_all(args: argparse.Namespace) -> int:
    entries, _ = load(Path(args.manifest))
    bad = 0
    engine = Engine(args)
    for e in entries:
        if e.bound.mechanism != args.mechanism or (e.slow and not args.slow):
            continue
        if not e.pinned:  # session 15: listed for a quiet machine to pin; not run, not judged
            print(f"{e.bound.name:<28} not pinned (pinned = false): not explored, not judged", flush=True)
            continue
        res = engine.run(e.bound, e, e.max_states)
        diffs = compare(e, res)
        bad += bool(diffs)
        print(
            f"{e.bound.name:<28} {res.states:>7} states depth {res.depth} {res.result:<9} {res.seconds:6.1f} s "
            + ("ok" if not diffs else "; ".join(diffs)),
            flush=True,
        )
    return 1 if bad else 0


def explore_mutants(
    mechanism: str, manifest: Path = MANIFEST, only: list[str] | None = None, progress: bool = False
) -> list[dict[str, Any]]:
    """Each mutant explored in the mechanism's mutant bound, only its own rules armed (as the kill report)."""
    _, mutant_bounds = load(manifest)
    mb = mutant_bounds[mechanism]
    bound, expected = mb.bound, mb.found_at
    rows = []
    for name, rules in sorted(driver(mechanism).mutants().items()):
        if only and name not in only:
            continue
        res = explore(mb.for_mutant(name), name, watch=frozenset(rules))
        f = res.found
        if progress:
            at = f"depth {f.depth}" if f else "not found"
            print(f"  {name}: {at} ({res.states} states)", file=sys.stderr)
        rows.append(
            {
                "mechanism": mechanism,
                "mutant": name,
                "found": f is not None,
                "depth": f.depth if f else None,
                "rule": f.rule if f else "",
                "kind": f.kind if f else "",
                "bound": bound.name,
                "states": res.states,
                "seconds": round(res.seconds, 2),
                "expected_depth": expected.get(name),
                "pinned": name in expected,
            }
        )
    return rows


def _cmd_mutants(args: argparse.Namespace) -> int:
    rows = explore_mutants(args.mechanism, Path(args.manifest), args.only, progress=args.json)
    wrong = [r for r in rows if r["pinned"] and r["depth"] != r["expected_depth"]]
    if args.json:
        print(json.dumps({"mutants": rows, "differ_from_manifest": [r["mutant"] for r in wrong]}, indent=2))
    else:
        for r in rows:
            at = f"depth {r['depth']}" if r["found"] else "not found"
            print(
                f"{r['mechanism']:<3} {r['mutant']:<36} {at:<10} {r['rule']:<28} {r['states']:>6} states "
                f"{r['seconds']:6.1f} s" + (f"  (manifest: {r['expected_depth']})" if r in wrong else "")
            )
        print(
            f"{sum(r['found'] for r in rows)} of {len(rows)} mutants found by exploration in {rows[0]['bound']}"
            if rows
            else "no mutants"
        )
    return 1 if wrong else 0


def _cmd_explore(args: argparse.Namespace) -> int:
    try:
        if (args.mutants or args.all) and choice_options(args):
            raise BoundError(
                f"{_flags(choice_options(args))}: not with --mutants or --all (they run the manifest's bounds)"
            )
        if (args.engine == "python" or args.mutants) and (args.compress or args.regroup):
            raise BoundError(
                "--compress and --regroup set how Spark holds and splits a level's frontier: with --engine spark "
                "(or auto) only, not with --engine python or --mutants (one process)"
            )
        if args.mutants:
            return _cmd_mutants(args)
        if args.all:
            return _cmd_all(args)
        if not args.bound and None in (args.servers, args.messages, args.faults, args.depth):
            print(
                "haconform explore: give --bound NAME, or --servers, --messages, --faults and --depth", file=sys.stderr
            )
            return 2
        return _cmd_one(args)
    except BoundError as exc:  # ManifestError too
        print(f"haconform explore: {exc}", file=sys.stderr)
        return 2


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, not {text!r}")
    return int(text)


def register(sub: Any) -> None:

    p = sub.add_parser(
        "explore",
        help="explore every state of the model within a bound (BFS), judging every step",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    p.add_argument("mechanism", choices=MECHANISMS)
    p.add_argument("--bound", help="a bound named in the manifest (spec/explore.toml)")
    p.add_argument("--servers", type=int, help="servers (am: DAG members; pf: stores)")
    p.add_argument("--messages", type=int, help="sr: messages submitted; pf: folders created; am: databases")
    p.add_argument("--faults", type=int, help="faults (and am administration steps) on one path")
    p.add_argument("--kinds", help="comma-separated fault kinds (see conformance/explore/README.md)")
    p.add_argument("--depth", type=int, help="steps on one path")
    p.add_argument("--symmetry", action="store_true", help="symmetry reduction over server names (am only)")
    p.add_argument("--mutant", help="explore one of the model's mutants instead")
    p.add_argument(
        "--witness",
        metavar="CLAIM",
        help="search for the shortest behaviour of the model showing a claim z3 refuted as stated "
        "(pf.replica_add.step1_before_step2)",
    )
    p.add_argument(
        "--choices",
        help="the model's random choices: on (each allowed outcome explored), off (drawn by the seed), or for sr the "
        "comma-separated choice-point labels branched on (default: the bound's, on for a command-line bound)",
    )
    p.add_argument("--ranges", choices=RANGE_POINTS, help="the values of a range explored (default: the bound's, ends)")
    p.add_argument(
        "--construction",
        choices=("branch", "seed"),
        help="the construction's choices: one root per resolution, or drawn by the seed (default: the bound's, branch)",
    )
    p.add_argument(
        "--end-choices",
        type=_count,
        metavar="N",
        help="each fairness end judged under its first N resolutions (0: drawn by the seed; default: the bound's, 2)",
    )
    p.add_argument("--mutants", action="store_true", help="explore every mutant in the manifest's mutant bound")
    p.add_argument("--only", action="append", help="with --mutants: only this mutant (repeatable)")
    p.add_argument("--all", action="store_true", help="every manifest bound of the mechanism, checked")
    p.add_argument("--slow", action="store_true", help="with --all: the slow bounds too")
    p.add_argument("--check", action="store_true", help="compare the figures with the manifest (exit 1 if they differ)")
    p.add_argument("--max-states", type=int, help="stop after this many distinct states")
    p.add_argument("--no-ends", action="store_true", help="do not judge each state's fairness end (liveness)")
    p.add_argument("--manifest", default=str(MANIFEST), help="the manifest (default spec/explore.toml)")
    p.add_argument("--replay-out", help="where to write the replay file (default haconform-explore-MECH.json)")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--engine",
        choices=("auto", "python", "spark"),
        default="auto",
        help="auto (default: Spark with --master or past the bound's pinned size where Spark finishes first on "
        "this machine's cores, else one process; the choice and why on one line), python, or spark (level by "
        "level, the same figures; --mutants always runs in one process)",
    )
    p.add_argument("--master", help="Spark master URL (default local[2]); implies --engine spark under auto")
    p.add_argument("--partitions", type=int, default=0, help="Spark: partitions of the visited set (0: 2x the cores)")
    # session 25: the two settings the 10^6-state bounds were measured with (conformance/explore/README.md, "On
    # Spark"), which only the benchmark scripts could set before
    p.add_argument("--compress", action="store_true", help="Spark: each frontier state's blob LZ4-compressed")
    p.add_argument(
        "--regroup",
        type=_count,
        default=0,
        metavar="K",
        help="Spark: each level's frontier regrouped by its states' ancestors K levels up (0: not regrouped)",
    )
    p.set_defaults(func=_guard(_cmd_explore))
