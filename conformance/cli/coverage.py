"""`haconform coverage`: the matrix requirement x (rules, properties, claims, tests, code) (issue 9).

Reads the citations `conformance.coverage.collect` finds. Exit status: 0 when every behaviour, invariant, ordering
and timing requirement is cited or listed with a reason in `spec/uncited.toml` and no listed one is cited
after all; 1 otherwise (the gaps are printed); 2 for a malformed list.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from conformance.coverage import CATEGORIES, collect, gaps, load_uncited, matrix
from spec.catalogue import MECHANISMS, CatalogueError, catalogue


def _cmd_coverage(args: argparse.Namespace) -> int:

    cat = catalogue()
    try:
        uncited = load_uncited(cat)
    except CatalogueError as exc:
        print(f"haconform coverage: {exc}", file=sys.stderr)
        return 2
    cov = collect(cat)
    rows = matrix(cat, cov, args.mechanism)
    unlisted, stale = gaps(cat, cov, uncited)
    if args.mechanism:
        unlisted = [r for r in unlisted if cat.get(r).mechanism == args.mechanism]
        stale = [r for r in stale if cat.get(r).mechanism == args.mechanism]
    for row in rows:
        row["uncited_reason"] = uncited.get(row["id"], "")
    if args.json:
        doc = {
            "requirements": rows,
            "rules_tables": cov.tables,
            "uncited_unlisted": unlisted,
            "listed_but_cited": stale,
        }
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(f"{'ID':<8} {'kind':<16} " + " ".join(f"{c:>10}" for c in CATEGORIES))
        for row in rows:
            mark = "  (uncited: listed)" if row["uncited_reason"] else ""
            if not any(row[c] for c in CATEGORIES) and not row["uncited_reason"]:
                mark = "  (cited by nothing)"
            print(f"{row['id']:<8} {row['kind']:<16} " + " ".join(f"{row[c]:>10}" for c in CATEGORIES) + mark)
        cited = sum(1 for row in rows if any(row[c] for c in CATEGORIES))
        print(
            f"\n{len(rows)} requirements, {cited} cited, {len(rows) - cited} cited by nothing "
            f"({len([r for r in rows if r['uncited_reason']])} listed in spec/uncited.toml)"
        )
        for status in cov.tables.values():
            if status != "table":
                print(f"note: {status}; its rules are counted from source text", file=sys.stderr)
        for rid in unlisted:
            print(f"gap: {rid} ({cat.get(rid).kind}) is cited by nothing and not listed in spec/uncited.toml")
        for rid in stale:
            print(f"stale: {rid} is listed in spec/uncited.toml but cited by {cov.of(rid)[0].where}")
    return 1 if unlisted or stale else 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "coverage",
        help="which rules, properties, claims and tests cite each requirement",
        description="Print the matrix requirement x (rules, properties, claims, tests, code): how many places "
        "cite each requirement ID. Exit 1 when a behaviour, invariant, ordering or timing requirement is cited "
        "by nothing and not listed with a reason in spec/uncited.toml, or a listed one is cited.",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--mechanism", choices=sorted(MECHANISMS), help="only this mechanism's requirements")
    p.set_defaults(func=_cmd_coverage)
