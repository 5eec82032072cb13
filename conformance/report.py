"""The check report shared by both engines: summary.json, violations.jsonl, quarantine.jsonl, verdict.

Counts reconcile (rows read = rows checked + rows quarantined) and are written whatever the verdict.
Quarantined rows break TR-005 and count as violations of rule `schema-conformance`. Files list at most
`cap` entries each, in a deterministic order; the summary always carries the full counts.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

SCHEMA_RULE = ("schema-conformance", "TR-005")
EXIT_CLEAN, EXIT_VIOLATIONS, EXIT_UNUSABLE = 0, 1, 2


@dataclass
class CheckOutcome:
    engine: str
    files: list[str]
    rows_read: int
    rows_quarantined: int
    quarantine: list[dict[str, Any]]  # file, line, field, reason, raw (at most the cap)
    violations_total: int
    violations: list[dict[str, Any]]  # Violation.to_json() + "events": [rows] (at most the cap)
    violations_by_rule: list[dict[str, Any]]  # rule, requirement, mechanism, count
    unknown: list[dict[str, Any]] = field(default_factory=list)
    unknown_total: int = 0
    events_by_mechanism: dict[str, int] = field(default_factory=dict)
    monitors: list[str] = field(default_factory=list)

    @property
    def rows_checked(self) -> int:
        return self.rows_read - self.rows_quarantined

    @property
    def verdict(self) -> str:
        if self.violations_total or self.rows_quarantined:
            return "invalid"
        return "unknown" if self.unknown_total else "valid"

    def summary(self) -> dict[str, Any]:
        rules = list(self.violations_by_rule)
        if self.rows_quarantined:
            rules.append({"rule": SCHEMA_RULE[0], "requirement": SCHEMA_RULE[1], "mechanism": "core",
                          "count": self.rows_quarantined})
        return {
            "tool": "haconform check",
            "engine": self.engine,
            "verdict": self.verdict,
            "files": self.files,
            "rows_read": self.rows_read,
            "rows_checked": self.rows_checked,
            "rows_quarantined": self.rows_quarantined,
            "counts_reconcile": self.rows_read == self.rows_checked + self.rows_quarantined,
            "events_by_mechanism": dict(sorted(self.events_by_mechanism.items())),
            "monitors": self.monitors,
            "violations_total": self.violations_total + self.rows_quarantined,
            "violations_by_rule": sorted(rules, key=lambda r: (r["requirement"], r["rule"])),
            "violations_written": len(self.violations),
            "quarantine_written": len(self.quarantine),
            "unknown_total": self.unknown_total,
        }


def count_rules(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts = Counter((v["rule"], v["requirement"], v["mechanism"]) for v in violations)
    return [{"rule": r, "requirement": q, "mechanism": m, "count": n} for (r, q, m), n in sorted(counts.items())]


def violation_key(v: dict[str, Any]) -> tuple:
    return (v["trace_id"], v["requirement"], v["rule"], v["entity"], list(v["event_ids"]), v["explanation"])


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def write_outcome(outcome: CheckOutcome, out_dir: Path | str, *, strict: bool = False,
                  stream: TextIO | None = None) -> int:
    """Write the report files and a short readable verdict (to stdout unless `stream`); return the exit status."""
    stream = stream or sys.stdout  # looked up per call, so a replaced sys.stdout is honoured
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = outcome.summary()
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _write_jsonl(out / "violations.jsonl", outcome.violations)
    _write_jsonl(out / "quarantine.jsonl", outcome.quarantine)
    _write_jsonl(out / "unknown.jsonl", outcome.unknown)
    print(f"haconform check ({outcome.engine}): {len(outcome.files)} file(s), {outcome.rows_read} rows read, "
          f"{outcome.rows_checked} checked, {outcome.rows_quarantined} quarantined", file=stream)
    for rule in summary["violations_by_rule"]:
        print(f"  {rule['count']:>7}  {rule['requirement']:<7} {rule['mechanism']:<5} {rule['rule']}", file=stream)
    for q in outcome.quarantine[:3]:
        where = f"{q['file']}:{q['line']}"
        print(f"  quarantined {where}: field {q['field']!r}: {q['reason']}", file=stream)
    for v in outcome.violations[:5]:
        print(f"  [{v['requirement']} {v['rule']}] {v['trace_id']}/{v['entity']}: {v['explanation']}", file=stream)
    print(f"verdict: {summary['verdict'].upper()} ({summary['violations_total']} violation(s), "
          f"{outcome.unknown_total} unjudgeable group(s)); report in {out}/", file=stream)
    if summary["verdict"] == "invalid":
        return EXIT_VIOLATIONS
    if summary["verdict"] == "unknown" and strict:
        return EXIT_VIOLATIONS
    return EXIT_CLEAN
