"""`haconform replay`: rerun a replay file's steps against a system under test or the model, print each step's
events and the verdict (design card, "conformance suite": the counterexample `conform` writes is replayable).

Exit statuses as `conformance.cli.suite`'s: 0 the replayed run is clean, 1 the violation is reproduced (or the system
broke the protocol), 2 an unreadable replay file or an unusable system, 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from conformance.check import verdict
from conformance.harness.choosing import construction_of
from conformance.harness.core import StepError, SutFailure, replay_steps
from conformance.harness.failure import where_in_seed
from conformance.harness.report import ReplayFileError, read_replay, write_trace
from conformance.harness.search import driver
from conformance.harness.systems import process_factory


def sut_factory(mechanism: str, sut: str | None, timeout_s: float) -> Any:
    """The system under test's factory (None: the model's); `conform` and `replay` both call it through this module
    (the tests' seam for a scripted system)."""
    return process_factory(mechanism, sut, timeout_s) if sut else None


def cmd_replay(args: argparse.Namespace) -> int:

    try:
        data = read_replay(Path(args.file))
        drv = driver(data["mechanism"])
    except (ReplayFileError, KeyError) as exc:
        print(f"haconform replay: {exc}", file=sys.stderr)
        return 2
    if args.mutant and args.mutant not in drv.mutants():
        known = ", ".join(sorted(drv.mutants()))
        mech = data["mechanism"]
        print(f"haconform replay: --mutant {args.mutant!r} is not a {mech} mutant ({known})", file=sys.stderr)
        return 2
    sut = args.sut
    factory = sut_factory(data["mechanism"], sut, args.timeout) or drv.model_factory(args.mutant)
    try:  # the root's construction choices the explorer took, re-imposed (issue 33)
        system = construction_of(
            partial(factory, data["setup"]), data.get("construction"), data["setup"].get("branching")
        )
    except SutFailure as exc:
        print(f"haconform replay: the system under test cannot be used: {exc}", file=sys.stderr)
        return 2
    except StepError as exc:
        print(f"haconform replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    try:
        session, per_step = replay_steps(drv, system, data["setup"], data["steps"], end=data.get("end"))
        events = session.events()
        problems = drv.end_checks(session)
    except SutFailure as exc:
        print(f"FAIL: the system under test broke the protocol at {getattr(exc.session, 'where', '?')}: {exc}")
        if args.trace_out and exc.session is not None and write_trace(Path(args.trace_out), exc.session.events()):
            print(f"trace: {args.trace_out} (the events recorded before the bad reply)")
        return 1
    except StepError as exc:
        print(f"haconform replay: {args.file}: {exc}", file=sys.stderr)
        return 2
    finally:
        close = getattr(system, "close", None)
        if close:
            close()
    result = verdict(events, [drv.monitor()])
    opening = events[: len(events) - sum(len(evs) for _, evs in per_step)]  # TRACE_START, context, set-up events
    if args.trace_out:
        write_trace(Path(args.trace_out), events)
    if args.json:
        print(
            json.dumps(
                {
                    "setup_events": [e.to_row() for e in opening],
                    "steps": [{"op": op, "events": [e.to_row() for e in evs]} for op, evs in per_step],
                    "trace_file": args.trace_out,
                    "violations": [v.to_json() for v in result.violations],
                    "problems": [str(p) for p in problems],
                    "problem_rules": [{"rule": p.rule.name, "requirement": p.rule.requirement} for p in problems],
                    "verdict": "fail" if result.violations or problems else "pass",
                },
                indent=2,
                default=str,
            )
        )
    else:
        print("set-up (the harness's TRACE_START and context, the system's set-up events):")
        for e in opening:
            print(_event_line(e))
        for n, ((op, evs), raw) in enumerate(zip(per_step, [*data["steps"], None], strict=True), 1):
            calls = "; ".join(c["call"] for c in raw["calls"]) if raw else "finish"
            print(f"step {n}: {op} ({calls})")
            for e in evs:
                print(_event_line(e))
        for v in result.violations:
            print(f"violated: {v.rule} ({v.requirement}) - {v.explanation}")
            if where_in_seed(v.requirement):
                print(f"  seed: {where_in_seed(v.requirement)}")
        for p in problems:
            print(f"problem: {p}")
        print("verdict:", "FAIL" if result.violations or problems else "pass")
        if args.trace_out:
            print(f"trace: {args.trace_out} ({len(events)} events; haconform check {args.trace_out})")
    return 1 if result.violations or problems else 0


def _event_line(e: Any) -> str:
    """One event as `replay` prints it: its seq (as in the trace file and in violations' event IDs) first."""
    return f"    {e.seq:>4} {e.event_id} {e.ts_ms} {e.node} {e.entity} {e.kind} {json.dumps(e.attrs, sort_keys=True)}"


def register_replay(
    sub: Any, guard: Callable[[Callable[[argparse.Namespace], int]], Callable[[argparse.Namespace], int]]
) -> None:
    """The `replay` command's parser (`guard`: the suite's internal-error wrapper)."""
    p = sub.add_parser(
        "replay",
        help="rerun a replay file's steps against a system or the model",
        description="Rerun exactly the steps of a replay file written by `haconform conform` "
        "against --sut (default: the reference model), print each step's events and the "
        "verdict. Exit 1 when the violation is reproduced.",
    )
    p.add_argument("file")
    p.add_argument("--sut", help="the command that starts the system (default: the model)")
    p.add_argument("--mutant", help="replay against one of the model's mutants instead")
    p.add_argument(
        "--trace-out",
        metavar="FILE",
        help="write the replayed run as a complete trace (TRACE_START, context and set-up events, seq numbers, "
        "schema version 2) that `haconform check`, `shrink` and `report` take as it is",
    )
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=guard(cmd_replay))
