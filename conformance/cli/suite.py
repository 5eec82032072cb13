"""`haconform conform`, `replay`, `mutants` and `protocol-doc`: the conformance suite's commands.

Design card, "conformance suite". Exit statuses: 0 pass (or every mutant killed, or the replayed run is
clean), 1 a failure found (a surviving mutant, a reproduced violation, a system under test whose runs
exercise fewer rules than the reference model on the same inputs: `conformance.harness.floor`), 2 unusable
input or usage (an unknown mechanism, a system that cannot be started, an unreadable replay file), 3 internal
error: a bug in haconform, including an exception raised by our rule code while judging a run
(`conformance.harness.failure.InternalError`), reported with its traceback on stderr, never as a verdict.

Every run of `conform` also names the rules the reference model exercised on the same inputs that the system
(or the model itself) never exercised over the whole budget (`conformance.harness.floor.Floor.missing`), on the
terminal and in the JSON report (`coverage_floor.missing`, `missing_rules`).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.cli import replay as replay_cli
from conformance.harness.core import InternalError, SutFailure
from conformance.harness.failure import describe_failure
from conformance.harness.floor import shortfall
from conformance.harness.mutants_cmd import cmd_mutants
from conformance.harness.protocol_doc import DOC_PATH, TRACES_README, render, render_traces_readme
from conformance.harness.report import (
    all_runs_coverage,
    all_runs_text,
    coverage,
    coverage_text,
    failure_json,
    trace_path_for,
    write_json_atomic,
    write_trace,
)
from conformance.harness.search import MECHANISMS, PROFILES, driver, search


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except KeyboardInterrupt:
            raise
        except (Exception, InternalError):  # an internal error is never reported as a verdict
            print(f"haconform {args.command}: internal error\n{traceback.format_exc()}", file=sys.stderr)
            return 3

    return run


def _preflight(mechanism: str, sut: str, timeout_s: float) -> str:
    """Start the system once with a sample setup: '' if it answers, else why it cannot be used."""
    from hypothesis import HealthCheck, given, settings

    sample: list[dict[str, Any]] = []

    @settings(max_examples=1, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(driver(mechanism).setup)
    def draw(setup: dict[str, Any]) -> None:
        sample.append(setup)

    draw()
    try:
        system = replay_cli.sut_factory(mechanism, sut, timeout_s)(sample[0])
    except SutFailure as exc:
        return str(exc)
    system.close()
    return ""


def _cmd_conform(args: argparse.Namespace) -> int:

    if args.sut:
        why = _preflight(args.mechanism, args.sut, args.timeout)
        if why:
            print(f"haconform conform: the system under test cannot be used: {why}", file=sys.stderr)
            return 2
    out = search(
        args.mechanism,
        replay_cli.sut_factory(args.mechanism, args.sut, args.timeout),
        args.profile,
        args.budget,
        keep_traces=args.coverage_traces,
        shrink_budget_s=args.shrink_budget,
        shrink_replays=args.shrink_replays,
        keep_going=args.keep_going,
        cover_per_run=args.coverage_perturbations,
    )
    if out.error:
        print(f"haconform conform: the run stopped on an error that is not a verdict: {out.error}", file=sys.stderr)
        if out.traceback:
            print(out.traceback, file=sys.stderr, end="")
        return 3
    drv = driver(args.mechanism)
    traces = out.traces + ([out.failure.events] if out.failure and out.failure.events else [])
    nothing_judged = not out.failure and out.runs > 0 and out.unjudged_runs >= out.runs
    cov = coverage(args.mechanism, drv.monitor(), traces)
    target = args.sut or "the reference model"
    all_cov = None
    if args.coverage_perturbations > 0:
        all_cov = all_runs_coverage(args.mechanism, out.rule_runs, out.covered_runs, args.coverage_perturbations)
    floor = None
    if not nothing_judged and any(i is not None for i in out.inputs):  # the model's coverage on the same inputs
        floor = shortfall(args.mechanism, cov, out.inputs, all_cov["exercised"] if all_cov else ())
    below = bool(args.sut) and not out.failure and floor is not None and floor.below  # the floor: systems only
    summary: dict[str, Any] = {
        "mechanism": args.mechanism,
        "sut": args.sut,
        "profile": args.profile,
        "runs": out.runs,
        "steps": out.steps,
        "seconds": round(out.elapsed_s, 2),
        "budget_spent": out.exhausted_budget,
        "verdict": "fail" if out.failure or below else ("unknown" if nothing_judged else "pass"),
        "unjudged_runs": out.unjudged_runs,
        "unjudged_notes": out.unjudged_notes,
        "coverage_sample": cov,
    }
    if all_cov is not None:
        summary["coverage"] = all_cov
    if out.failure:
        summary["found"] = {"seconds": _round(out.first_found_s), "run": out.first_found_run}
    if floor is not None:
        summary["coverage_floor"] = floor.to_json()
    if out.minimised is not None:
        summary["minimised"] = out.minimised.to_json()
    if out.failure:
        replay = Path(args.replay_out or f"haconform-replay-{args.mechanism}.json")
        write_json_atomic(replay, failure_json(out.failure, args.sut))
        summary["failure"] = failure_json(out.failure, args.sut)
        summary["replay_file"] = str(replay)
        trace_file = Path(args.trace_out) if args.trace_out else trace_path_for(replay)
        if write_trace(trace_file, out.failure.events):
            summary["trace_file"] = str(trace_file)
        text = describe_failure(out.failure, replay if not args.sut else f"{replay} --sut {json.dumps(args.sut)}")
        if "trace_file" in summary:
            text += f"\ntrace: {trace_file} ({len(out.failure.events)} events; haconform check {trace_file})"
        text += f"\nfound after {out.first_found_s or 0.0:.1f} s, in run {out.first_found_run} of {out.runs}" + (
            "" if args.keep_going else " (the search stopped at the first failure; --keep-going lets Hypothesis run on)"
        )
    elif nothing_judged:
        text = (
            f"UNKNOWN {args.mechanism}: the monitor could not fully judge any of the {out.runs} runs of {target} "
            "(not a pass: its records lack what the rules need); first reasons:\n  " + "\n  ".join(out.unjudged_notes)
        )
    elif below:
        text = floor.text(args.mechanism, target)
    else:
        text = (
            f"PASS {args.mechanism}: {target} passed {out.runs} runs ({out.steps} steps) in {out.elapsed_s:.1f} s"
            + (" (budget spent)" if out.exhausted_budget else "")
        )
        if floor is not None and args.sut:
            text += (
                f"\n  coverage floor: {len(floor.exercised)} rule(s) exercised, the reference model "
                f"{len(floor.reference)} on the same inputs (required: {floor.required})"
            )
        if out.unjudged_runs:
            text += f"\n  but {out.unjudged_runs} run(s) were judged only in part; first reasons:\n    " + (
                "\n    ".join(out.unjudged_notes)
            )
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(text)
        if out.minimised is not None:
            print(out.minimised.text())
        print(all_runs_text(all_cov) if all_cov is not None else coverage_text(cov))
        if floor is not None:
            print(floor.missing_text(target))
        elif not nothing_judged:
            print("coverage against the reference model: not measured (no finished run kept: --coverage-traces 0?)")
    if out.failure or below:
        return 1
    return 2 if nothing_judged else 0  # unknown: the records are unusable for a verdict, never a pass


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _cmd_protocol_doc(args: argparse.Namespace) -> int:

    path = Path(args.out) if args.out else DOC_PATH
    docs = [(path, render())]
    if not args.out and TRACES_README.exists():  # an installed package ships traces/README.md beside the code
        docs.append((TRACES_README, render_traces_readme(TRACES_README.read_text(encoding="utf-8"))))
    if args.check:
        stale = [p for p, text in docs if (p.read_text(encoding="utf-8") if p.exists() else "") != text]
        for p in stale:
            print(f"haconform protocol-doc: {p} is out of date; run `haconform protocol-doc`", file=sys.stderr)
        return 1 if stale else 0
    for p, text in docs:
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "conform",
        help="search a system (or the model) for violations",
        description="Drive a system under test through the mechanism's protocol with the "
        "generator's inputs and faults and judge its events with the monitors. With --sut the "
        "system is a child process speaking JSON lines (conformance/PROTOCOL.md); without, the "
        "reference model. On a failure: the seed, the shrunk steps, the rule, its requirement "
        "and seed section, and a replay file. Exit 0 pass, 1 failure, 2 unusable (a bad --sut, or "
        "no run the monitor could fully judge: verdict unknown, never a pass), 3 internal.",
    )
    p.add_argument("mechanism", choices=MECHANISMS)
    p.add_argument("--sut", help='the command that starts the system, e.g. "python examples/sut/sr_node.py"')
    p.add_argument("--profile", choices=sorted(PROFILES), default="quick", help="quick (default) or deep")
    p.add_argument("--budget", type=float, help="seconds of search before stopping (default: the profile's)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for one reply (then: a crash)")
    p.add_argument("--replay-out", help="where to write the replay file (default haconform-replay-MECH.json)")
    p.add_argument(
        "--trace-out",
        help="where to write a failure's trace, complete (TRACE_START, context and set-up events, seq numbers) for "
        "`haconform check`, `shrink` and `report` (default: the replay file's name, .trace.jsonl)",
    )
    p.add_argument(
        "--shrink-budget",
        type=float,
        help="seconds for minimising a failure by replay after the search (default: what is left of 1.25 budgets, "
        "10 to 30 s)",
    )
    p.add_argument("--shrink-replays", type=int, default=400, help="most replays the minimiser makes (default 400)")
    p.add_argument(
        "--coverage-traces",
        type=int,
        default=12,
        help="finished traces sampled for the coverage floor of --sut (the reference model replays their inputs)",
    )
    p.add_argument(
        "--coverage-perturbations",
        type=int,
        default=8,
        help="one-event perturbations of every finished run for the coverage report over all runs (default 8; "
        "0: only the sampled traces' coverage)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="do not stop at the first failure: Hypothesis goes on running (its own shrinking of the failure) "
        "until that is done or the budget is spent",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=_guard(_cmd_conform))

    replay_cli.register_replay(sub, _guard)

    p = sub.add_parser(
        "mutants",
        help="run the suite against every built-in mutant",
        description="Kill report: for each mutant of the model, whether the suite finds it, the "
        "time to the first failure, the steps of the minimal counterexample and the rule that caught it. "
        "A mutant counts as killed only when that rule is its expected rule or one of its also-rules "
        "(other rules that legitimately expose it); shadow redundancy's parameter mutants (behaviour "
        "with one duration, configuration saying another) are listed too. Exit 1 if any mutant survives.",
    )
    p.add_argument("mechanism", nargs="?", choices=MECHANISMS)
    p.add_argument("--profile", choices=sorted(PROFILES), default="quick")
    p.add_argument("--budget", type=float, help="seconds per mutant (default: the profile's)")
    p.add_argument("--only", action="append", help="only this mutant (repeatable)")
    p.add_argument(
        "--explore-report",
        action="append",
        metavar="FILE",
        help="add the column 'found by exploration, at which depth' from `haconform explore MECH --mutants --json` "
        "output (repeatable: one file per mechanism)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_guard(cmd_mutants))

    p = sub.add_parser(
        "protocol-doc",
        help="regenerate conformance/PROTOCOL.md and the vocabulary of traces/README.md",
        description="Write (or with --check, verify) the stdio protocol document generated "
        "from conformance/harness/schemas/*.json and the event vocabulary tables (model/*/vocabulary.py), "
        "and the generated vocabulary block of traces/README.md.",
    )
    p.add_argument("--check", action="store_true", help="exit 1 if the document is not current")
    p.add_argument("--out", help="write elsewhere")
    p.set_defaults(func=_guard(_cmd_protocol_doc))
