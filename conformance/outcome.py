"""What the single-process drivers share (`conformance.pycheck` for a corpus, `conformance.dataset_check` for an
ingested dataset, `conformance.incremental`) and the Spark trace pass, so that none of them imports another:
a group of whole traces judged in memory by the engine (a trace out of seq order, TR-001), the attaching of
each violation's events, TR-002's exact second read, and the report (`finish_outcome`). The monitor list
is the registry's (`model.registry`).
"""

from __future__ import annotations

from collections.abc import Callable

from conformance.engine.driver import attach_events, duplicates_among
from conformance.engine.tally import RuleCounts, nothing_judged, nothing_judged_note, rule_rows
from conformance.report import CheckOutcome, count_rules, violation_key
from traces.dataset import id_hash
from traces.io import iter_trace_file
from traces.schema import Event

DEFAULT_CAP = 100_000


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
