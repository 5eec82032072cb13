"""`haconform spec`, `simulate` and `samples`: the requirement catalogue, a model run written as a trace, and the
shipped sample corpus. Loaded by the command line only when one of them is asked for (`conformance.cli`)."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.audit.samples import regenerate as audit_samples
from conformance.coverage import collect
from conformance.samples import regenerate
from model import registry
from spec.catalogue import KINDS, MECHANISMS, catalogue
from traces.io import write_events

HELP = {
    "spec": "show the requirement catalogue",
    "simulate": "run a model and write a trace",
    "samples": "regenerate the shipped sample corpus",
}


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


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add spec, simulate and samples to the command line's subcommands."""
    p = sub.add_parser(
        "spec",
        help=HELP["spec"],
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
        help=HELP["simulate"],
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
        help=HELP["samples"],
        description="Regenerate "
        "the sample corpus (clean traces of every mechanism, and mutant traces with known "
        "violations) and the audit samples (message tracking logs, copy-status exports, deployment files: "
        "audit/) deterministically.",
    )
    p.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "traces" / "samples"))
    p.set_defaults(func=_cmd_samples)
