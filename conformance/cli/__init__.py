"""The `haconform` command line: spec, simulate, samples, check, and the z3 commands when present.

I/O lives here and in the readers/writers; everything underneath is pure. Exit status: 0 success or a
clean verdict, 1 violations found (or a claim off its expected verdict), 2 unusable input or usage error,
3 internal error (one line on stderr, the full trace in a log file; never reported as a verdict).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from conformance import recorded_options
from conformance.audit.cli import add_check_options, post_check, refuse_raw_logs
from conformance.audit.samples import regenerate as audit_samples
from conformance.cli import check
from conformance.coverage import collect
from conformance.driver_choice import choose, cores, input_events, state_events
from conformance.report import ERROR_LOG, check_out_dir, write_internal_error
from conformance.samples import regenerate
from model import registry
from spec.catalogue import KINDS, MECHANISMS, catalogue
from traces import fastpath
from traces.io import write_events

# Modules that add subcommands of their own: each exports register(subparsers).
EXTRA_COMMAND_MODULES = (
    "spec.claims.cli",
    "conformance.cli.coverage",
    "conformance.audit.cli",
    "conformance.cli.suite",
    "conformance.cli.ingest",
    "conformance.upgrade",
    "conformance.shrink",
    "conformance.explore.cli",
)


def _cmd_spec(args: argparse.Namespace) -> int:
    cat = catalogue()
    if args.interpretations:
        items = [i.to_json() for i in cat.interpretations.values()]
        if args.json:
            print(json.dumps(items, indent=2, ensure_ascii=False))
        else:
            for i in cat.interpretations.values():
                print(
                    f"{i.id}  {i.topic}\n  reading: {i.reading}\n  alternatives: {i.alternatives}"
                    + (f"\n  selectable by parameter {i.parameter}" if i.parameter else "")
                    + (f"\n  enforced by: {', '.join(i.covered_by)}" if i.covered_by else "")
                    + (f"\n  not observable: {i.not_observable}" if i.not_observable else "")
                    + (f"\n  not enforced yet: {i.not_enforced}" if i.not_enforced else "")
                    + "\n"
                )
        return 0
    if args.id:
        if not cat.has(args.id) and args.id not in cat.interpretations:
            print(f"haconform spec: unknown requirement ID {args.id!r}", file=sys.stderr)
            return 2
        entry = cat.requirements.get(args.id) or cat.interpretations[args.id]
        doc = entry.to_json()
        if args.id in cat.param_sources:
            doc["default_source"] = cat.param_sources[args.id].to_json()
        cited: dict[str, list[dict[str, str]]] = {}
        if args.id in cat.requirements and not args.no_citations:
            for cit in collect(cat).of(args.id):
                cited.setdefault(cit.category, []).append(cit.to_json())
            doc["cited_by"] = cited
        if args.json:
            print(json.dumps(doc, indent=2, ensure_ascii=False))
            return 0
        for key, value in doc.items():
            if key not in ("default_source", "cited_by"):
                print(f"{key:>12}: {value}")
        src = doc.get("default_source")
        if src and src["source"] == "none":
            print(f"{'default from':>12}: no seed gives it: {src['reason']} Value from: {src['value_from']}")
        elif src:
            for pin in src["pins"]:
                print(f"{'default at':>12}: {pin['seed']}:{pin['line']}: {pin['text']!r} ({pin['reading']})")
        if "cited_by" in doc:
            print(f"{'cited by':>12}: {sum(map(len, cited.values())) or 'nothing'}")
            for category, cits in cited.items():
                for c in cits:
                    print(f"{category:>12}  {c['where']}" + (f"  {c['detail'][:80]}" if c["detail"] else ""))
        return 0
    reqs = [
        r
        for r in cat.requirements.values()
        if (not args.mechanism or r.mechanism == args.mechanism) and (not args.kind or r.kind == args.kind)
    ]
    if args.json:
        print(json.dumps([r.to_json() for r in reqs], indent=2, ensure_ascii=False))
        return 0
    width = 72
    print(f"{'ID':<8} {'kind':<16} statement")
    for r in reqs:
        lines = textwrap.wrap(r.statement, width) or [""]
        print(f"{r.id:<8} {r.kind:<16} {lines[0]}")
        for line in lines[1:]:
            print(f"{'':<25} {line}")
    print(f"\n{len(reqs)} requirements, {len(cat.interpretations)} interpretations")
    return 0


def _parse_options(pairs: Sequence[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            raise SystemExit(f"haconform: --opt expects KEY=VALUE, got {pair!r}")
        try:
            out[key.replace("-", "_")] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.replace("-", "_")] = raw
    return out


WRITABLE_SUFFIXES = (".jsonl", ".ndjson", ".parquet")  # what traces.io.write_events writes


def _named_options(run: Any) -> tuple[list[str], bool]:
    """The keyword options a simulate function names, and whether it passes others on (**overrides)."""
    params = inspect.signature(run).parameters.values()
    named = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return named, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _unknown_options(run: Any, options: dict[str, Any]) -> list[str]:
    named, open_ended = _named_options(run)
    return [] if open_ended else [k for k in options if k not in named]


def _options_message(mechanism: str, run: Any, unknown: list[str]) -> str:
    named, open_ended = _named_options(run)
    more = " and the model's configuration settings" if open_ended else ""
    return (
        f"haconform simulate: {mechanism} has no option {', '.join(map(repr, unknown))}; "
        f"known: {', '.join(named)}{more}"
    )


def _cmd_simulate(args: argparse.Namespace) -> int:

    try:
        spec = registry.get(args.mechanism)
    except KeyError as exc:
        print(f"haconform simulate: {exc.args[0]}", file=sys.stderr)
        return 2
    run = spec.simulate
    if args.mutant:
        if args.mutant not in spec.mutants:
            print(
                f"haconform simulate: {args.mechanism} has no mutant {args.mutant!r}; "
                f"known: {', '.join(spec.mutants) or 'none'}",
                file=sys.stderr,
            )
            return 2
        run = spec.mutants[args.mutant]
    out = str(args.out)
    if not out.endswith(WRITABLE_SUFFIXES):
        print(
            f"haconform simulate: --out {out}: unknown trace format; give a file ending in "
            f"{', '.join(WRITABLE_SUFFIXES)}",
            file=sys.stderr,
        )
        return 2
    options = _parse_options(args.opt)
    unknown = _unknown_options(run, options)
    if unknown:
        print(_options_message(args.mechanism, run, unknown), file=sys.stderr)
        return 2
    try:
        events = run(args.seed, **options)
    except TypeError as exc:  # an option passed on through **overrides that its target does not take
        if "unexpected keyword argument" not in str(exc):
            raise
        print(_options_message(args.mechanism, run, [str(exc).rsplit(" ", 1)[-1].strip("'")]), file=sys.stderr)
        return 2
    write_events(args.out, events)
    print(f"wrote {len(events)} events of {args.mechanism} (seed {args.seed}) to {args.out}", file=sys.stderr)
    return 0


def _cmd_samples(args: argparse.Namespace) -> int:

    for path in [*regenerate(Path(args.out)), *audit_samples(Path(args.out) / "audit")]:
        print(f"wrote {path}", file=sys.stderr)
    return 0


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
        run_check = check.run_incremental
    elif state:
        from spark_trace_check.incremental import run_check  # pyspark: loaded only for the Spark engine
    elif args.engine == "python":
        run_check = check.run_check
    else:
        from spark_trace_check.job import run_check  # pyspark: loaded only for the Spark engine

    return post_check(args, run_check(args))  # summary's rule sets, then --html/--junit from the report


class _Version(argparse.Action):
    """`haconform --version`: the version, then which path the modules of the optional compiled build load
    by (`traces.fastpath`; each listed module is imported to say so)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        try:
            number = version("haconform")
        except PackageNotFoundError:
            number = "not installed"
        for name in fastpath.listed():
            importlib.import_module(name)
        print(f"haconform {number}: {fastpath.describe()}")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="haconform",
        description="Reference model, conformance suite, z3 proofs and Spark trace checker for shadow "
        "redundancy, Active Manager/BCSS and public folder replication.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="print the version and which path runs (compiled by scripts/build_fast.py, or pure)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "spec",
        help="show the requirement catalogue",
        description="Show the requirement catalogue: a table, one entry (ID), or JSON.",
    )
    p.add_argument("id", nargs="?", help="show one requirement or interpretation")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--mechanism", choices=sorted(MECHANISMS), help="only this mechanism")
    p.add_argument("--kind", choices=KINDS, help="only this kind")
    p.add_argument("--interpretations", action="store_true", help="list the recorded interpretations")
    p.add_argument("--no-citations", action="store_true", help="with ID: do not look for what cites it")
    p.set_defaults(func=_cmd_spec)

    p = sub.add_parser(
        "simulate",
        help="run a model and write a trace",
        description="Run a mechanism "
        "model with a seed and write its trace (JSONL or Parquet by the extension of --out). "
        "The same seed gives a byte-identical file.",
    )
    p.add_argument("mechanism", help="mechanism model (net, sr, am, pf: those built so far)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True, help="output file, .jsonl or .parquet")
    p.add_argument("--mutant", help="run a mutant with a planted bug instead of the model")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE", help="model option")
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser(
        "samples",
        help="regenerate the shipped sample corpus",
        description="Regenerate "
        "the sample corpus (clean traces of every mechanism, and mutant traces with known "
        "violations) and the audit samples (message tracking logs, copy-status exports, deployment files: "
        "audit/) deterministically.",
    )
    p.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "traces" / "samples"))
    p.set_defaults(func=_cmd_samples)

    p = sub.add_parser(
        "check",
        help="check trace corpora (Spark)",
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

    add_check_options(p)
    p.set_defaults(func=_cmd_check)

    for name in EXTRA_COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    return parser


def _attempts(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of attempts, at least 1, got {text!r}")
    return int(text)


_ABORTED = re.compile(
    r"Job aborted due to stage failure: Task (\S+) in stage (\S+) failed (\d+) times?, most recent failure: "
    r"Lost task \S+ in stage \S+ \(TID \d+\) \([^)]*\): (?:[a-z]\w*\.)*(.*)"
)


def _aborted(exc: BaseException) -> re.Match | None:
    """The stage abort in the exception or the ones it was raised from (pyspark raises a worker's error in
    place of the Py4JJavaError that says how often the task was tried, keeping that one as its context)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for line in str(current).split("JVM stacktrace:")[0].splitlines():
            if (found := _ABORTED.search(line)) is not None:
                return found
        current = current.__cause__ or current.__context__
    return None


def _one_line(exc: BaseException) -> str:
    """The exception's type and its most telling line: py4j puts the Java error on a later line, and an
    error raised in a Spark Python worker carries the worker's traceback, whose last line says what failed.
    A stage aborted because a task failed every attempt (a lost Python worker, issue 35) gives the task's
    own error first, then which task and how often it was tried."""
    raw = str(exc).split("JVM stacktrace:")[0].splitlines()
    aborted = _aborted(exc)
    tried = f"task {aborted[1]} in stage {aborted[2]} failed {aborted[3]} time(s)" if aborted else ""
    if any(line.startswith("Traceback (most recent call last)") for line in raw):
        tail = [line.strip() for line in raw if line.strip() and not line.startswith((" ", "\t"))]
        lines = tail[-1:]
        text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        text += f"; {tried}" if tried else ""
    elif aborted:
        cause = aborted[4].split(". Consider setting")[0].strip()  # Spark's advice on tracebacks cut
        cause = cause if len(cause) <= 200 else cause[:197] + "..."
        text = f"{cause}; {tried} ({type(exc).__name__})"
    else:
        lines = [line.strip().lstrip(":").strip() for line in raw]
        lines = [line for line in lines if line and not line.startswith("An error occurred while calling")]
        text = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _full_trace(exc: BaseException) -> str:
    """The Python traceback, plus the JVM stack of every Spark exception in the chain."""
    text = traceback.format_exc()
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        jvm = getattr(current, "_stackTrace", None)
        if isinstance(jvm, str) and jvm and jvm not in text:
            text += f"\nJVM stack trace of {type(current).__name__}:\n{jvm}\n"
        current = current.__cause__ or current.__context__
    return text


def _error_log(args: argparse.Namespace, one_line: str, trace: str) -> Path:
    """Where the full trace goes: the report in `--out` for check, a log file in an `--out` directory for
    other commands, else a temporary file."""

    out = getattr(args, "out", None)
    try:
        if out and getattr(args, "command", None) == "check":
            return write_internal_error(check_out_dir(out), one_line, trace)
        if out and Path(out).is_dir():
            path = Path(out) / ERROR_LOG
            path.write_text(trace, encoding="utf-8", errors="backslashreplace")
            return path
    except Exception:  # the log must land somewhere: fall back to a temporary file
        pass
    with tempfile.NamedTemporaryFile(
        "w", prefix="haconform-error-", suffix=".log", delete=False, encoding="utf-8", errors="backslashreplace"
    ) as handle:
        handle.write(trace)
    return Path(handle.name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit status: 0 clean, 1 violations, 2 unusable input or usage, 3 internal error:
    any unexpected exception becomes one line on stderr and the full trace (Java stack included) in a log."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SystemExit as exc:
        if isinstance(exc.code, str):  # a usage message raised as SystemExit(text) would exit 1
            print(exc.code, file=sys.stderr)
            return 2
        raise
    except Exception as exc:
        one_line = _one_line(exc)
        log = _error_log(args, one_line, _full_trace(exc))
        print(f"haconform: internal error: {one_line}; full trace in {log}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
