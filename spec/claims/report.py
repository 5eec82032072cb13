"""Markdown tables for spec/CLAIMS.md, generated from the claims and constraints themselves so the
document cannot drift from the code (a test compares them)."""

from __future__ import annotations

from pathlib import Path

from spec.catalogue import SPEC_DIR, catalogue
from spec.claims.config import CONSTRAINTS
from spec.claims.engine import ClaimResult
from spec.claims.registry import all_claims

DOC: Path = SPEC_DIR / "CLAIMS.md"
CLAIM_KINDS = ("ordering", "timing")
# Ordering or timing requirements with no z3 claim, and why.
NOT_CLAIMS = {
    "TR-003": "checked on traces under clock skew: `spec.claims.skew` (built-in ordering)",
    "TR-004": "one node's clock: no skew can excuse it; the skew check reports same-node inversions as violations",
    "AM-007": "an operator precondition, checked by the AM monitor on traces",
    "SR-065": "a retention period with nothing to compare it against; checked by the SR monitor",
}


def claims_table(results: list[ClaimResult]) -> str:
    rows = ["| claim | requirement | expected | got | twin (expected/got) |", "| --- | --- | --- | --- | --- |"]
    for r in results:
        c = r.claim
        rows.append(
            f"| `{c.name}` | {c.requirement} | {c.expected} | {r.main.verdict} | {c.twin_expected}/{r.twin.verdict} |"
        )
    return "\n".join(rows)


def constraints_table() -> str:
    rows = ["| constraint | basis | severity | requirements |", "| --- | --- | --- | --- |"]
    for c in CONSTRAINTS:
        rows.append(f"| `{c.name}` | {c.basis} | {c.severity} | {', '.join(c.requirements)} |")
    rows.append("| `range.<Parameter>` | stated | error | the parameter's own ID (catalogue range) |")
    return "\n".join(rows)


def coverage_table() -> str:
    """Every ordering or timing requirement of the catalogue and the claims that encode it."""
    by_req: dict[str, list[str]] = {}
    for c in all_claims():
        for rid in (c.requirement, *c.covers):
            by_req.setdefault(rid, []).append(c.name)
    rows = ["| requirement | kind | claims |", "| --- | --- | --- |"]
    for r in sorted(catalogue().requirements.values(), key=lambda r: r.id):
        if r.kind in CLAIM_KINDS or r.id in by_req:
            names = ", ".join(f"`{n}`" for n in by_req.get(r.id, [])) or NOT_CLAIMS.get(r.id, "(monitor only)")
            rows.append(f"| {r.id} | {r.kind} | {names} |")
    return "\n".join(rows)


def update_doc(text: str, tables: list[str]) -> str:
    """Replace each table in `text` (found by its header line, ending at a blank line) by its new version."""
    for table in tables:
        header = table.splitlines()[0]
        start = text.index(header + "\n")
        end = text.find("\n\n", start)
        text = text[:start] + table + (text[end:] if end >= 0 else "\n")
    return text
