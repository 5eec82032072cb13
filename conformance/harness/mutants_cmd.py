"""`haconform mutants`: the kill report of the model's planted bugs (`search.kill_mutant`, `search.kill_report`),
with the optional column from `haconform explore MECH --mutants --json` reports. Registered by
`conformance.cli.suite` (its exit statuses)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.harness.search import MECHANISMS, driver, kill_mutant, kill_report


def cmd_mutants(args: argparse.Namespace) -> int:
    """`haconform mutants`: the kill report (exit 1 when a mutant survives)."""

    mechs = [args.mechanism] if args.mechanism else list(MECHANISMS)
    try:
        explored = _explored(args.explore_report or [])
    except ValueError as exc:
        print(f"haconform mutants: {exc}", file=sys.stderr)
        return 2
    kills = []
    for m in mechs:
        for name in sorted(driver(m).mutants()):
            if args.only and name not in args.only:
                continue
            k = kill_mutant(m, name, args.profile, args.budget)
            kills.append((m, k))
            if not args.json:
                when = f"{k.seconds_to_kill:6.2f} s" if k.seconds_to_kill is not None else "     -  "
                how = {"also": " (an also-rule)", "other": " (NOT one of the mutant's rules)"}.get(k.caught_by, "")
                print(
                    f"{m:<3} {name:<36} {'killed' if k.killed else 'SURVIVED':<8} {when} "
                    f"{k.steps if k.steps is not None else '-':>3} steps  {k.rule} {k.requirement}{how}"
                    + (f"  [explore: {_explore_text(explored.get((m, name)))}]" if explored else "")
                    + (f"  [must be caught by: {', '.join(k.expected)}]" if not k.killed else ""),
                    flush=True,
                )
    report = kill_report([k for _, k in kills])
    if args.json:
        rows = [
            {"mechanism": m, **k.to_json(), **({"explore": explored.get((m, k.mutant))} if explored else {})}
            for m, k in kills
        ]
        print(json.dumps({"mutants": rows, "summary": report}, indent=2))
    else:
        print(
            f"{report['killed']} of {report['mutants']} mutants killed; median time to kill "
            f"{report['median_seconds_to_kill']} s, worst {report['worst_seconds_to_kill']} s; median "
            f"counterexample {report['median_steps']} steps"
        )
    return 1 if report["survivors"] else 0


def _explored(paths: list[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """The kill report's `explore` column, from `haconform explore MECH --mutants --json` outputs (computed apart,
    so that the mutant searches do not take longer): (mechanism, mutant) -> found, depth, rule, bound."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path in paths:
        try:
            rows = json.loads(Path(path).read_text(encoding="utf-8"))["mutants"]
            for r in rows:
                keep = ("found", "depth", "rule", "bound", "states")
                out[(r["mechanism"], r["mutant"])] = {k: r[k] for k in keep}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a `haconform explore --mutants --json` report ({exc!r})") from exc
    return out


def _explore_text(row: dict[str, Any] | None) -> str:
    if row is None:
        return "not explored"
    return f"found at depth {row['depth']} in {row['bound']}" if row["found"] else f"not found in {row['bound']}"
