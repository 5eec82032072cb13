"""The `haconform` command line: spec, simulate, samples, check, and the z3 commands when present.

I/O lives here and in the readers/writers; everything underneath is pure. Exit status: 0 success or a
clean verdict, 1 violations found (or a claim off its expected verdict), 2 unusable input or usage error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

from spec.catalogue import KINDS, MECHANISMS, catalogue

# Modules that add subcommands of their own: each exports register(subparsers).
EXTRA_COMMAND_MODULES = ("spec.claims.cli", "conformance.suite_cli")


def _cmd_spec(args: argparse.Namespace) -> int:
    cat = catalogue()
    if args.interpretations:
        items = [i.to_json() for i in cat.interpretations.values()]
        if args.json:
            print(json.dumps(items, indent=2, ensure_ascii=False))
        else:
            for i in cat.interpretations.values():
                print(f"{i.id}  {i.topic}\n  reading: {i.reading}\n  alternatives: {i.alternatives}"
                      + (f"\n  selectable by parameter {i.parameter}" if i.parameter else "") + "\n")
        return 0
    if args.id:
        if not cat.has(args.id) and args.id not in cat.interpretations:
            print(f"haconform spec: unknown requirement ID {args.id!r}", file=sys.stderr)
            return 2
        entry = cat.requirements.get(args.id) or cat.interpretations[args.id]
        if args.json:
            print(json.dumps(entry.to_json(), indent=2, ensure_ascii=False))
        else:
            for key, value in entry.to_json().items():
                print(f"{key:>12}: {value}")
        return 0
    reqs = [r for r in cat.requirements.values()
            if (not args.mechanism or r.mechanism == args.mechanism) and (not args.kind or r.kind == args.kind)]
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


def _cmd_simulate(args: argparse.Namespace) -> int:
    from model import registry
    from traces.io import write_events

    try:
        spec = registry.get(args.mechanism)
    except KeyError as exc:
        print(f"haconform simulate: {exc.args[0]}", file=sys.stderr)
        return 2
    run = spec.simulate
    if args.mutant:
        if args.mutant not in spec.mutants:
            print(f"haconform simulate: {args.mechanism} has no mutant {args.mutant!r}; "
                  f"known: {', '.join(spec.mutants) or 'none'}", file=sys.stderr)
            return 2
        run = spec.mutants[args.mutant]
    events = run(args.seed, **_parse_options(args.opt))
    write_events(args.out, events)
    print(f"wrote {len(events)} events of {args.mechanism} (seed {args.seed}) to {args.out}", file=sys.stderr)
    return 0


def _cmd_samples(args: argparse.Namespace) -> int:
    from traces.corpus import regenerate

    for path in regenerate(Path(args.out)):
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    if args.engine == "python":
        from conformance.pycheck import run_check
    else:
        from spark_trace_check.job import run_check
    return run_check(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="haconform",
        description="Reference model, conformance suite, z3 proofs and Spark trace checker for shadow "
        "redundancy, Active Manager/BCSS and public folder replication.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("spec", help="show the requirement catalogue", description="Show the requirement "
                       "catalogue: a table, one entry (ID), or JSON.")
    p.add_argument("id", nargs="?", help="show one requirement or interpretation")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--mechanism", choices=sorted(MECHANISMS), help="only this mechanism")
    p.add_argument("--kind", choices=KINDS, help="only this kind")
    p.add_argument("--interpretations", action="store_true", help="list the recorded interpretations")
    p.set_defaults(func=_cmd_spec)

    p = sub.add_parser("simulate", help="run a model and write a trace", description="Run a mechanism "
                       "model with a seed and write its trace (JSONL or Parquet by the extension of --out). "
                       "The same seed gives a byte-identical file.")
    p.add_argument("mechanism", help="mechanism model (net, sr, am, pf: those built so far)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True, help="output file, .jsonl or .parquet")
    p.add_argument("--mutant", help="run a mutant with a planted bug instead of the model")
    p.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE", help="model option")
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser("samples", help="regenerate the shipped sample corpus", description="Regenerate "
                       "the sample corpus (clean traces of every mechanism, and mutant traces with known "
                       "violations) deterministically.")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "traces" / "samples"))
    p.set_defaults(func=_cmd_samples)

    p = sub.add_parser("check", help="check trace corpora (Spark)", description="Validate JSONL/Parquet "
                       "traces against the schema (bad rows quarantined with a reason) and check the "
                       "mechanism-independent rules and every mechanism monitor. Exit 0 clean, 1 "
                       "violations, 2 unusable input.")
    p.add_argument("paths", nargs="+", help="trace files or directories")
    p.add_argument("--out", default="out/check", help="output directory for summary.json and violations")
    p.add_argument("--master", default="local[2]", help="Spark master URL (default local[2])")
    p.add_argument("--engine", choices=("spark", "python"), default="spark",
                   help="spark (default) or the pure-Python reference checker")
    p.add_argument("--partitions", type=int, default=0, help="shuffle partitions (0: 2x the cores)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--strict", action="store_true", help="exit 1 also when some group could not be judged")
    p.add_argument("--skew", type=int, metavar="MS", help="also check cross-server orderings by timestamp, "
                   "allowing each clock to be off by up to MS milliseconds (spec/claims/skew.py)")
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
