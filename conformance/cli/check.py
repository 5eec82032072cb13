"""`haconform check`: its options, the choice of engine, the single-process engine's report frames, and the
post-step (summary.json's rule sets and run facts, then --html/--junit).

`run_check` and `run_incremental` run the single-process checks, a corpus (`conformance.pycheck.check_paths`)
and incremental (`--state DIR`, `conformance.incremental`), each under a progress line, and write the report
(`conformance.report.run_and_report`; exit statuses there). The Spark engine's frames are
`spark_trace_check.job.run_check` and `spark_trace_check.incremental`, loaded only for that engine. This
module loads what checking needs and no other command's modules (the HTML page's only with --html/--junit,
incremental's only with --state; tests/unit/test_cli_imports.py lists what a check must not load).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from conformance import recorded_options
from conformance.audit.report_data import run_facts
from conformance.audit.sniff import import_hint
from conformance.driver_choice import choose, cores, input_events, state_events
from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome
from conformance.engine.rulesets import summary_rule_sets
from conformance.progress import Progress
from conformance.pycheck import check_paths
from conformance.report import (
    EXIT_CLEAN,
    EXIT_INTERNAL,
    EXIT_UNUSABLE,
    EXIT_VIOLATIONS,
    OutDirError,
    atomic_write,
    check_out_dir,
    run_and_report,
    write_unusable,
)

HELP = "check trace corpora (Spark)"


def run_check(args: argparse.Namespace) -> int:
    """`haconform check PATHS --engine python`."""

    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_paths(args.paths, skew_ms=args.skew, progress=progress)

    return run_and_report(args, "python", compute)


def run_incremental(args: argparse.Namespace) -> int:
    """`haconform check PATHS --state DIR --engine python` (`conformance.incremental`, loaded only here: a check
    without `--state` does not load it or the saved locations' reader; session 14)."""
    check_incremental = importlib.import_module("conformance.incremental").check_incremental

    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_incremental(
                args.paths, Path(args.state), cap=DEFAULT_CAP, skew_ms=args.skew, progress=progress
            )

    return run_and_report(args, "python", compute)


def _cmd_check(args: argparse.Namespace) -> int:
    if (refused := refuse_raw_logs(args)) is not None:  # raw logs, not a trace: the import command, one line
        return refused
    if (said := recorded_options.apply(args)) is not None and not args.quiet:  # --skew a shrunk trace records
        print(said, file=sys.stderr)
    state = getattr(args, "state", None)
    if args.engine == "auto":  # conformance.driver_choice: decided before any engine starts
        events, sized = (None, "") if args.master else (input_events(args.paths), "")
        if state and not args.master:
            events, sized = state_events(args.paths, state)
        choice = choose(events, cores(), master=args.master, sized=sized)
        args.engine = choice.engine
        if not args.quiet:
            print(choice.line(), file=sys.stderr)
    args.master = args.master or "local[2]"
    if state and args.engine == "python":
        run = run_incremental
    elif state:
        from spark_trace_check.incremental import run_check as run  # pyspark: loaded only for the Spark engine
    elif args.engine == "python":
        run = run_check
    else:
        from spark_trace_check.job import run_check as run  # pyspark: loaded only for the Spark engine

    return post_check(args, run(args))  # summary's rule sets, then --html/--junit from the report


def refuse_raw_logs(args: argparse.Namespace) -> int | None:
    """`haconform check` given raw Exchange logs (or a copy-status export) instead of a trace: one line naming
    the `haconform import` command to run, a summary.json saying so, exit 2; None when the paths are no raw logs."""
    hint = import_hint(args.paths)
    if hint is None:
        return None
    print(f"haconform check: input unusable: {hint}", file=sys.stderr)
    try:
        write_unusable(check_out_dir(args.out), str(args.engine), hint)
    except OutDirError as exc:
        print(f"haconform check: {exc}", file=sys.stderr)
    return EXIT_UNUSABLE


def post_check(args: argparse.Namespace, status: int) -> int:
    """After `haconform check`: record the rule sets in summary.json, then --html/--junit from the report (the
    page's modules, `conformance.audit.cli`, loaded only then)."""
    if status not in (EXIT_CLEAN, EXIT_VIOLATIONS) and not getattr(args, "report_written", False):
        return status

    out = Path(args.out)
    summary_path = out / "summary.json"
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        summary["rule_sets"] = summary_rule_sets(summary.get("events_by_mechanism", {}), summary.get("monitors", []))
        summary["run"] = run_facts(summary.get("files", []))  # version, time, input hashes (the HTML report's)
        if getattr(args, "tasks_retried", None) is not None:  # Spark: failed task attempts tried again (issue 35)
            summary["run"]["tasks_retried"] = args.tasks_retried
        text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        atomic_write(summary_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        if getattr(args, "html", None) or getattr(args, "junit", None):
            page = importlib.import_module("conformance.audit.cli")
            page.render(out, args.html, args.junit, args.paths if args.html else None)
    except Exception as exc:  # an internal error is never a verdict
        print(f"haconform check: internal error while writing the report: {exc!r}", file=sys.stderr)
        return EXIT_INTERNAL
    return status


def _attempts(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of attempts, at least 1, got {text!r}")
    return int(text)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `check` to the command line's subcommands."""
    p = sub.add_parser(
        "check",
        help=HELP,
        description="Validate JSONL/Parquet "
        "traces against the schema (bad rows quarantined with a reason) and check the "
        "mechanism-independent rules and every mechanism monitor. Exit 0 judged and clean, 1 "
        "violations, 2 unusable input, no events, or some group could not be judged (verdict unknown, "
        "see unknown.jsonl; --allow-unknown accepts it), 3 internal error.",
    )
    p.add_argument("paths", nargs="+", help="trace files or directories")
    p.add_argument("--out", default="out/check", help="output directory for summary.json and violations")
    p.add_argument("--master", help="Spark master URL (default local[2]); implies --engine spark under auto")
    p.add_argument(
        "--engine",
        choices=("auto", "spark", "python"),
        default="auto",
        help="auto (default: the single-process engine below the input size where Spark wins on this "
        "machine's cores, Spark above it or with --master; the choice and why on one line), spark, or "
        "python (the single-process reference engine)",
    )
    p.add_argument("--partitions", type=int, default=0, help="shuffle partitions (0: 2x the cores)")
    p.add_argument(
        "--spark-plan",
        choices=("auto", "units", "shuffle"),
        default=None,
        help="Spark engine: units (tasks judge units of whole traces read from the files; no shuffle of rows), "
        "shuffle (every row shuffled by trace), auto (units unless traces are spread over many files)",
    )
    p.add_argument(
        "--task-attempts",
        type=_attempts,
        metavar="N",
        help="Spark engine: try a failed task (a lost Python worker) up to N times before the check fails "
        "(default 4, as a cluster; 1: no retry; also HACONFORM_TASK_ATTEMPTS). Local masters become local[N,F]; "
        "on a cluster it sets spark.task.maxFailures",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar (events/s, ETA) on stderr even when it is not a terminal",
    )
    p.add_argument(
        "--allow-unknown",
        action="store_true",
        help="accept a verdict of unknown (no violations, some group could not be judged): exit 0 instead "
        "of 2; summary.json says unknown_accepted",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 (not 2) when some group could not be judged; overrides --allow-unknown",
    )
    p.add_argument(
        "--skew",
        type=int,
        metavar="MS",
        help="also check cross-server orderings by timestamp, "
        "allowing each clock to be off by up to MS milliseconds (spec/claims/skew.py)",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="accept an input holding no events (exit 0) instead of exit 2 'no events'",
    )
    p.add_argument(
        "--state",
        metavar="DIR",
        help="incremental checking (both engines, one state format): keep every trace's fold state in DIR; "
        "a later check with the same DIR, by either engine, reads only new files and lines appended to JSON "
        "Lines files, and reports as a full check would; auto sizes only the new events",
    )

    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report (haconform report)")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML file: one test case per rule")
    p.set_defaults(func=_cmd_check)
