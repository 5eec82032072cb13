"""The `haconform` command line: every command, each loaded only when asked for.

I/O lives here and in the readers/writers; everything underneath is pure. Exit status: 0 success or a
clean verdict, 1 violations found (or a claim off its expected verdict), 2 unusable input or usage error,
3 internal error (one line on stderr, the full trace in a log file; never reported as a verdict).

Startup (issue 32): a command's module is imported only when the command line names it (`COMMANDS`: each
module, and the name and one-line help of every command it adds); the other commands are listed by name and
help alone, so `haconform --help` lists every command as before, and `haconform check` loads what checking
needs and no other command's modules (no pandas, Hypothesis, harness or HTML page; tests/unit/
test_cli_imports.py). The table is checked against what each module registers (tests/unit/test_cli.py).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from traces import fastpath
from traces.arrow_start import arrow_without_pandas

ROOT = Path(__file__).resolve().parents[2]  # the directory holding the packages

# Each module adding commands (it exports register(subparsers)), with the name and help of every command it
# adds, in the order `haconform --help` lists them.
COMMANDS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "conformance.cli.reference",
        (
            ("spec", "show the requirement catalogue"),
            ("simulate", "run a model and write a trace"),
            ("samples", "regenerate the shipped sample corpus"),
        ),
    ),
    ("conformance.cli.check", (("check", "check trace corpora (Spark)"),)),
    (
        "spec.claims.cli",
        (
            ("prove", "prove or refute every ordering and timing claim of the seeds (z3)"),
            ("validate-config", "check a deployment's settings against the seeds' constraints"),
        ),
    ),
    ("conformance.cli.coverage", (("coverage", "which rules, properties, claims and tests cite each requirement"),)),
    (
        "conformance.audit.cli",
        (
            ("import", "import real Exchange logs"),
            ("explain", "which copy BCSS tries first, and why"),
            ("report", "a self-contained HTML page from a check report directory"),
        ),
    ),
    (
        "conformance.cli.suite",
        (
            ("conform", "search a system (or the model) for violations"),
            ("replay", "rerun a replay file's steps against a system or the model"),
            ("mutants", "run the suite against every built-in mutant"),
            ("protocol-doc", "regenerate conformance/PROTOCOL.md and the vocabulary of traces/README.md"),
        ),
    ),
    ("conformance.cli.ingest", (("ingest", "read and validate trace corpora once into a dataset for fast checks"),)),
    (
        "conformance.upgrade",
        (("upgrade", "rewrite a schema-version-1 trace as version 2 where the change is mechanical"),),
    ),
    ("conformance.shrink", (("shrink", "reduce a recorded trace to a small sub-trace that still violates a rule"),)),
    (
        "conformance.explore.cli",
        (("explore", "explore every state of the model within a bound (BFS), judging every step"),),
    ),
)
EVERY = "*"  # build_parser's default: every command's module loaded


class _Version(argparse.Action):
    """`haconform --version`: the version, then which path the modules of the optional compiled build load
    by (`traces.fastpath`; each listed module is imported to say so)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version  # standard library, for this option only

        try:
            number = version("haconform")
        except PackageNotFoundError:
            number = "not installed"
        for name in fastpath.listed():
            importlib.import_module(name)
        print(f"haconform {number}: {fastpath.describe()}")
        parser.exit(0)


def _shipped(module: str) -> bool:
    """Whether a command module is in this tree (a build may leave a package out: its commands are not listed)."""
    base = ROOT.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _not_loaded(args: argparse.Namespace) -> int:
    raise RuntimeError(f"haconform: the module of command {args.command!r} was not loaded")


def build_parser(command: str | None = EVERY) -> argparse.ArgumentParser:
    """The command line. `command`: the command to be run, whose module is loaded to add its options; the other
    commands get a parser holding their name and help alone (`COMMANDS`); EVERY (the default) loads every
    command's module, None none."""
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
    for module, commands in COMMANDS:
        if not _shipped(module):
            continue
        if command == EVERY or any(name == command for name, _ in commands):
            importlib.import_module(module).register(sub)
            continue
        for name, text in commands:
            sub.add_parser(name, help=text).set_defaults(func=_not_loaded)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command an argument list runs: its first word that is no option (the top level's options take no
    value), or None (`--help`, `--version`, nothing)."""
    return next((word for word in argv if not word.startswith("-")), None)


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
        report = importlib.import_module("conformance.report")  # loaded on the error path only
        if out and getattr(args, "command", None) == "check":
            return report.write_internal_error(report.check_out_dir(out), one_line, trace)
        if out and Path(out).is_dir():
            path = Path(out) / report.ERROR_LOG
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
    words = sys.argv[1:] if argv is None else list(argv)
    command = command_of(words)
    hook = arrow_without_pandas() if command == "check" else None
    try:
        return _run(command, words)
    finally:
        if hook in sys.meta_path:
            sys.meta_path.remove(hook)  # type: ignore[arg-type]


def _run(command: str | None, words: list[str]) -> int:
    """`main`'s command run, its errors turned into exit statuses."""
    parser = build_parser(command)
    args = parser.parse_args(words)
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
