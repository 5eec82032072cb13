"""`haconform check DATASET`: check an ingested dataset (`traces.dataset`) without parsing or shuffling.

The rows were validated at ingest (TR-005): the quarantine, the input files and the counts come from the
manifest, and the valid rows are typed by the dataset's own Arrow schema (verified against the trace
schema, with every file's size, row count and SHA-256; a mismatch is an unusable input, exit 2, naming the
file). Every data file holds whole traces in recording order, so each file is checked on its own: the core
rules of each trace (TR-001, TR-003, TR-004, TR-006) and every monitor of every scope
(`conformance.pycheck`'s group check, the same code as for a raw corpus). Corpus-wide event-ID uniqueness
(TR-002) comes from the duplicates recorded at ingest, re-verified against the files' `event_id` column
(a hash per event, then the exact IDs of the repeated hashes).

The report is the one a check of the original input gives: same summary counts, violations (with their
events) and quarantine lines. The Python engine reads one file at a time, group by group of whole traces
(memory: one group plus 8 bytes per event); the Spark engine (`spark_trace_check.dataset`) runs
`judge_file` in one task per file.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from typing import Any

import pyarrow.parquet as pq

from conformance.check import core_violations
from conformance.progress import Progress
from conformance.pycheck import DEFAULT_CAP, attach_events, finish_outcome, monitor_runs, violations_of
from conformance.report import CheckOutcome, InternalError
from traces.dataset import Dataset, DatasetError, id_hash, is_dataset, open_dataset, repeated_hashes, trace_groups
from traces.io import TraceFileError
from traces.schema import Event


def dataset_of(paths: list[str]) -> str | None:
    """The dataset to check when the paths name one; None for a raw corpus. A dataset mixed with other
    paths is a usage error (TraceFileError)."""
    found = [p for p in paths if is_dataset(p)]
    if not found:
        return None
    if len(paths) > 1:
        raise TraceFileError(f"{found[0]}: an ingested dataset is checked on its own, not with other paths")
    return found[0]


def judge_file(path: str, skew_ms: int | None, runs: list | None = None, hashes: array | None = None) -> dict:
    """One data file, read with pyarrow group by group (whole traces) and judged: core rules of each trace
    and every monitor (the unit of work of a Spark task). `hashes` collects a hash of every event ID."""
    runs = monitor_runs(skew_ms) if runs is None else runs
    out: dict[str, Any] = {"violations": [], "unknown": [], "rows": 0, "by_mechanism": Counter()}
    for events in trace_groups(path):
        found = violations_of(events, runs, out["unknown"])
        attach_events(found, events)
        out["violations"].extend(found)
        out["rows"] += len(events)
        out["by_mechanism"].update(e.mechanism for e in events)
        if hashes is not None:
            hashes.extend(id_hash(e.event_id) for e in events)
    out["by_mechanism"] = dict(out["by_mechanism"])
    return out


def duplicate_violations(ds: Dataset, seen: Counter[str]) -> tuple[list[dict], dict[str, list[Event]]]:
    """TR-002 from the duplicates recorded at ingest, after checking they are exactly the repeated IDs
    found in the files now (`seen`: ID -> occurrences, for the IDs occurring more than once)."""
    dups = ds.duplicates()
    recorded = Counter(e.event_id for e in dups)
    if recorded != seen:
        raise DatasetError(
            f"{ds.root}: the event IDs occurring more than once in its files ({len(seen)}) are not the ones "
            f"recorded at ingest ({len(recorded)}); ingest the input again"
        )
    same: dict[str, list[Event]] = {}
    for e in dups:
        same.setdefault(e.event_id, []).append(e)
    out = [v.to_json() for v in core_violations(dups) if v.rule == "event-id-unique"]
    attach_events(out, dups)
    return out, same


def assemble(
    ds: Dataset,
    engine: str,
    results: Iterable[dict[str, Any]],
    seen: Counter[str],
    monitors: list[str],
    cap: int = DEFAULT_CAP,
) -> CheckOutcome:
    """The report of a dataset from the per-file results: counts read and quarantined from the manifest
    and the quarantine record, rows checked counted from what the files fed to the rules."""
    violations: list[dict] = []
    unknown: list[dict] = []
    by_mech: Counter[str] = Counter()
    rows_checked = 0
    for r in results:
        violations.extend(r["violations"])
        unknown.extend(r["unknown"])
        by_mech.update(r["by_mechanism"])
        rows_checked += r["rows"]
    if rows_checked != ds.input["rows_checked"]:
        raise InternalError(f"{ds.root}: {rows_checked} rows checked, ingest recorded {ds.input['rows_checked']}")
    quarantine = ds.quarantine()
    if len(quarantine) != ds.manifest["quarantine"]["rows"]:
        raise DatasetError(f"{ds.root}: the quarantine record holds {len(quarantine)} rows, manifest says otherwise")
    return finish_outcome(
        engine=engine,
        files=list(ds.input["files"]),
        rows_read=ds.input["rows_read"],
        rows_checked=rows_checked,
        quarantine=quarantine,
        violations=violations,
        unknown=unknown,
        by_mechanism=dict(by_mech),
        monitors=monitors,
        files_skipped=list(ds.input["files_skipped"]),
        duplicates=duplicate_violations(ds, seen),
        cap=cap,
    )


def check_dataset(
    path: str, *, skew_ms: int | None = None, cap: int = DEFAULT_CAP, progress: Progress | None = None
) -> CheckOutcome:
    """The single-process engine over a dataset: one file in memory at a time."""
    ds = open_dataset(path)
    runs = monitor_runs(skew_ms)
    if progress is not None:
        progress.start(ds.input["rows_checked"])
    hashes = array("Q")
    results = []
    for entry in ds.files:
        results.append(judge_file(str(ds.path(entry)), skew_ms, runs, hashes))
        if progress is not None:
            progress.advance(results[-1]["rows"])
    repeated = repeated_hashes(hashes)
    del hashes
    seen: Counter[str] = Counter()
    if repeated:  # the exact IDs behind the repeated hashes: a second, column-only read
        for entry in ds.files:
            ids = pq.read_table(ds.path(entry), columns=["event_id"]).column("event_id").to_pylist()
            seen.update(i for i in ids if id_hash(i) in repeated)
        seen = Counter({i: n for i, n in seen.items() if n > 1})
    return assemble(ds, "python", results, seen, [name for name, _ in runs], cap)
