"""The report's data and what every driver shares to finish it (`conformance.pycheck` for a corpus,
`conformance.dataset_check` for an ingested dataset, `conformance.incremental`, the Spark plans): the
outcome of a check (`CheckOutcome`: counts, violations, notes, rule rows; written by `conformance.report`),
each violation's events attached by a read of the files again when the engine did not keep them
(`attach_from`), TR-002's exact second read when its candidates were not kept (`duplicate_ids`), and the
report (`finish_outcome`). The monitor list is the registry's (`model.registry`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.engine.driver import InternalError, attach_events, duplicates_among
from conformance.engine.tally import RuleCounts, by_state, nothing_judged, nothing_judged_note, rule_rows
from traces.dataset import id_hash
from traces.io import iter_trace_file
from traces.schema import Event

DEFAULT_CAP = 100_000
SCHEMA_RULE = ("schema-conformance", "TR-005")


@dataclass
class CheckOutcome:
    engine: str
    files: list[str]
    rows_read: int  # counted by the readers: non-blank lines and Parquet rows
    rows_checked: int  # counted where the events enter the rules
    rows_quarantined: int  # counted from the quarantine itself
    quarantine: list[dict[str, Any]]  # file, line, field, reason (at most the cap)
    violations_total: int
    violations: list[dict[str, Any]]  # Violation.to_json() + "events": [rows] (at most the cap)
    violations_by_rule: list[dict[str, Any]]  # rule, requirement, mechanism, count
    unknown: list[dict[str, Any]] = field(default_factory=list)
    unknown_total: int = 0
    events_by_mechanism: dict[str, int] = field(default_factory=dict)
    monitors: list[str] = field(default_factory=list)
    files_skipped: list[dict[str, str]] = field(default_factory=list)  # file, reason
    rules: list[dict[str, Any]] = field(default_factory=list)  # one row per rule (`conformance.engine.tally`)
    nothing_judged: bool = False  # no rule beyond the format rules judged an instance: unknown, never valid

    @property
    def reconciles(self) -> bool:
        return self.rows_read == self.rows_checked + self.rows_quarantined

    def require_reconciled(self) -> None:
        if not self.reconciles:
            raise InternalError(
                f"counts do not reconcile: {self.rows_read} rows read, {self.rows_checked} "
                f"reached the rules, {self.rows_quarantined} quarantined ({self.engine} engine)"
            )

    @property
    def verdict(self) -> str:
        if self.violations_total or self.rows_quarantined:
            return "invalid"
        return "unknown" if self.unknown_total else "valid"

    def summary(self, *, allow_unknown: bool = False) -> dict[str, Any]:
        rules = list(self.violations_by_rule)
        if self.rows_quarantined:
            rules.append(
                {
                    "rule": SCHEMA_RULE[0],
                    "requirement": SCHEMA_RULE[1],
                    "mechanism": "core",
                    "count": self.rows_quarantined,
                }
            )
        return {
            "tool": "haconform check",
            "engine": self.engine,
            "verdict": self.verdict,
            "files": self.files,
            "files_skipped": self.files_skipped,
            "rows_read": self.rows_read,
            "rows_checked": self.rows_checked,
            "rows_quarantined": self.rows_quarantined,
            "counts_reconcile": self.reconciles,
            "events_by_mechanism": dict(sorted(self.events_by_mechanism.items())),
            "monitors": self.monitors,
            "violations_total": self.violations_total + self.rows_quarantined,
            "violations_by_rule": sorted(rules, key=lambda r: (r["requirement"], r["rule"])),
            "violations_written": len(self.violations),
            "quarantine_written": len(self.quarantine),
            "unknown_total": self.unknown_total,
            "unknown_accepted": self.verdict == "unknown" and allow_unknown,
            "nothing_judged": self.nothing_judged,
            "rules_by_state": by_state(self.rules),
            "rules": self.rules,
        }


def count_rules(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts = Counter((v["rule"], v["requirement"], v["mechanism"]) for v in violations)
    return [{"rule": r, "requirement": q, "mechanism": m, "count": n} for (r, q, m), n in sorted(counts.items())]


def violation_key(v: dict[str, Any]) -> tuple:
    return (v["trace_id"], v["requirement"], v["rule"], v["entity"], list(v["event_ids"]), v["explanation"])


def attach_from(violations: list[dict], held: list[Event], files: list, traces: set[str]) -> None:
    """Attach each violation's events: from the held events when they hold them all, else by reading the
    group's files again, only for a group with violations (streamed events are not kept)."""
    if not violations:
        return
    wanted = {i for v in violations for i in v["event_ids"]}
    if wanted <= {e.event_id for e in held}:
        attach_events(violations, held)
        return
    chosen: list[Event] = []
    for tf in files:
        for part in iter_trace_file(tf):
            chosen.extend(e for e in part.events if e.event_id in wanted and e.trace_id in traces)
    attach_events(violations, chosen)


def finish_outcome(
    *,
    engine: str,
    files: list[str],
    rows_read: int,
    rows_checked: int,
    quarantine: list[dict],
    violations: list[dict],
    unknown: list[dict],
    by_mechanism: dict[str, int],
    monitors: list[str],
    files_skipped: list[dict[str, str]],
    duplicates: tuple[list[dict], dict[str, list[Event]]],
    cap: int,
    counts: RuleCounts,
) -> CheckOutcome:
    """The report of a check (a corpus or an ingested dataset): TR-002 violations added, and a violation whose
    event ID is used elsewhere too gets that ID's events from the whole corpus in recording order; violations
    and notes in report order; lists cut at `cap` (totals are counted before the cut)."""
    dup_violations, same = duplicates
    for v in violations:
        if any(i in same for i in v["event_ids"]):
            v["events"] = [e.to_row() for i in v["event_ids"] for e in same.get(i, [])] or v["events"]
    violations.extend(dup_violations)
    by_rule = count_rules(violations)
    counts.count("core", "event-id-unique", rows_checked)  # TR-002: every event checked for a repeated ID
    counts.count("core", "schema-conformance", rows_read)  # TR-005: every row read checked against the schema
    quarantined = [{"rule": "schema-conformance", "mechanism": "core", "count": len(quarantine)}]
    rules = rule_rows(counts, by_rule + quarantined, by_mechanism, monitors)
    empty = nothing_judged(rules) and rows_checked > 0  # no events at all: `--allow-empty` decides
    if empty:
        unknown.append({"mechanism": "core", "note": nothing_judged_note(by_mechanism)})
    unknown.sort(key=lambda u: (u["mechanism"], u["note"]))
    violations.sort(key=violation_key)
    return CheckOutcome(
        engine=engine,
        files=files,
        rows_read=rows_read,
        rows_checked=rows_checked,
        rows_quarantined=len(quarantine),
        quarantine=quarantine[:cap],
        violations_total=len(violations),
        violations=violations[:cap],
        violations_by_rule=by_rule,
        unknown=unknown[:cap],
        unknown_total=len(unknown),
        events_by_mechanism=by_mechanism,
        monitors=monitors,
        files_skipped=files_skipped,
        rules=rules,
        nothing_judged=empty,
    )


def repeated_events(tf, repeated: set[int], hash_of: Callable[[str], int] = id_hash) -> list[Event]:
    """The events of one file whose ID hash (by `hash_of`, the function that made the hashes) is in
    `repeated`, in row order: TR-002's second read of that file."""
    return [e for part in iter_trace_file(tf) for e in part.events if hash_of(e.event_id) in repeated]


def duplicate_ids(
    files: list, repeated: set[int], hash_of: Callable[[str], int] = id_hash
) -> tuple[list[dict], dict[str, list[Event]]]:
    """TR-002 exactly: a second read keeps only the events whose ID hash was seen twice, in recording order."""
    return duplicates_among([e for tf in files for e in repeated_events(tf, repeated, hash_of)])
