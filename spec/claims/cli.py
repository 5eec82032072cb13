"""Command line: `haconform prove` and `haconform validate-config FILE` (also `python -m spec.claims ...`).

`register(subparsers)` adds both sub-commands to an argparse parser; each sets `func(args) -> int`, the
exit status: prove gives 1 if any claim's or twin's verdict differs from its expectation (a time-out or a
vacuous proof counts as different); validate-config gives 1 when a constraint is violated and 2 for an
unreadable file, an unknown key or an ill-typed value. The claim and configuration modules are
imported when a command runs, not when it is registered, so a problem in them (say a requirement ID
gone from the catalogue) is reported by these two commands alone and never breaks the rest of the CLI.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from spec.catalogue import CatalogueError


def _prove(args: argparse.Namespace) -> int:
    try:
        from spec.claims.registry import run_all
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = run_all(args.only or None)
    if args.markdown or args.update_doc:
        from spec.claims.report import DOC, claims_table, constraints_table, coverage_table, update_doc

        tables = [claims_table(results), constraints_table(), coverage_table()]
        if args.update_doc:
            DOC.write_text(update_doc(DOC.read_text(encoding="utf-8"), tables), encoding="utf-8")
        else:
            print(*tables, sep="\n\n")
        return 0 if all(r.ok for r in results) else 1
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
        return 0 if all(r.ok for r in results) else 1
    width = max(len(r.claim.name) for r in results)
    print(f"{'claim':<{width}}  {'requirement':<11}  {'expected':<8}  {'got':<8}  {'time':>7}  twin")
    for r in results:
        c = r.claim
        twin = f"{c.twin_expected}/{r.twin.verdict}"
        mark = "" if r.ok else "   <-- DIFFERS"
        print(
            f"{c.name:<{width}}  {c.requirement:<11}  {c.expected:<8}  {r.main.verdict:<8}  "
            f"{r.main.seconds * 1000:>5.0f}ms  {twin}{mark}"
        )
        if args.verbose:
            pad = " " * (width + 4)
            print(f"{pad}claim: {c.statement}")
            print(f"{pad}assumes: " + f"\n{pad}         ".join(r.main.assumptions))
            for k, v in r.main.counterexample.items():
                print(f"{pad}{k} = {v}")
            print(f"{pad}twin: {c.twin_statement}")
        for outcome in (r.main, r.twin):
            if outcome.detail:
                print(f"{'':<{width}}    {outcome.detail}")
    bad = [r.claim.name for r in results if not r.ok]
    print(f"\n{len(results) - len(bad)}/{len(results)} claims as expected" + (f"; differ: {bad}" if bad else ""))
    return 1 if bad else 0


def _report_json(path: str, report: Any) -> dict[str, Any]:
    def item(c, w):
        return {
            "constraint": c.name,
            "basis": c.basis,
            "requirements": list(c.requirements),
            "words": w,
        }

    return {
        "file": path,
        "valid": report.valid,
        "checked": report.checked,
        "given": list(report.given),
        "violated": [item(c, w) for c, w in report.violated],
        "warnings": [item(c, w) for c, w in report.warnings],
    }


def _validate(args: argparse.Namespace) -> int:
    try:
        from spec.claims.config import ConfigError, check_config, load_config
    except CatalogueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        report = check_config(load_config(args.file))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # one line naming the file and what is wrong with it, not a raw "[Errno 2]"
        why = "no such file" if isinstance(exc, FileNotFoundError) else (exc.strerror or str(exc)).lower()
        print(f"haconform validate-config: {args.file}: cannot read the deployment file: {why}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(_report_json(args.file, report), indent=2))
        return 0 if report.valid else 1
    if report.valid:
        print(
            f"{args.file}: valid ({len(report.given)} parameters given, the rest at catalogue defaults; "
            f"{report.checked} constraints checked)"
        )
    else:
        print(f"{args.file}: {len(report.violated)} constraint(s) violated:")
        for c, words in report.violated:
            print(f"  - {c.name} ({c.basis}; {', '.join(c.requirements)}): {words}")
    for c, words in report.warnings:
        print(f"  warning: {c.name}: {words}")
    return 0 if report.valid else 1


def register(subparsers: Any) -> None:
    """Add `prove` and `validate-config` to an argparse sub-parser collection."""
    p = subparsers.add_parser("prove", help="prove or refute every ordering and timing claim of the seeds (z3)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--only", action="append", metavar="PREFIX", help="only claims whose name starts with PREFIX")
    p.add_argument("--markdown", action="store_true", help="print the tables of spec/CLAIMS.md")
    p.add_argument("--update-doc", action="store_true", help="rewrite the tables in spec/CLAIMS.md")
    p.add_argument("-v", "--verbose", action="store_true", help="print counterexamples")
    p.set_defaults(func=_prove)
    v = subparsers.add_parser("validate-config", help="check a deployment's settings against the seeds' constraints")
    v.add_argument("file", help="TOML or JSON file: catalogue parameter names to values")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.set_defaults(func=_validate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spec.claims", description=__doc__.splitlines()[0])
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))
