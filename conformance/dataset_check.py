"""`haconform check DATASET`: check an ingested dataset (`traces.dataset`) without parsing or shuffling.

The rows were validated at ingest (TR-005): the quarantine, the input files and the counts come from the
manifest, and the valid rows are typed by the dataset's own Arrow schema (verified against the trace
schema, with every file's size, row count and SHA-256; a mismatch is an unusable input, exit 2, naming the
file). Every data file holds whole traces in recording order, so each file is checked on its own, streamed
through the engine's folds as `conformance.pycheck` streams a raw corpus (`conformance.engine.stream.Router`:
the core rules of each trace, TR-001, TR-003, TR-004, TR-006, and every monitor of the registry's list); a
trace recorded out of seq order (found from the `trace_id` and `seq` columns first) is held and judged
whole. Corpus-wide event-ID uniqueness (TR-002) comes from the duplicates recorded at ingest, re-verified
against the files' `event_id` column (a hash per event, then the exact IDs of the repeated hashes).

The report is the one a check of the original input gives: same summary counts, violations (with their
events) and quarantine lines. The Python engine reads one file at a time, batch by batch, into the engine's one
driver (`conformance.engine.driver.Engine`), each event fed to its trace's folds and each trace finished at
its last row (memory: the folds and events of the traces being read, the traces held, and 8 bytes per
event); the violations' events come from that read (a second read of the file only past the events the
engine keeps at once). The Spark
engine (`spark_trace_check.dataset`) runs `judge_file` in one task per file.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from conformance.engine.driver import Engine, InternalError
from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome, attach_events, duplicates_among, finish_outcome
from conformance.engine.tally import RuleCounts
from conformance.progress import Progress
from model.registry import monitor_runs
from traces.dataset import Dataset, DatasetError, id_hash, is_dataset, open_dataset, repeated_hashes, table_events
from traces.io import ReadResult, TraceFileError
from traces.schema import Event

BATCH_ROWS = 65_536
# pyarrow loads where a dataset is read, not at import (`conformance.pycheck` asks `dataset_of` of every input): a
# check of JSON Lines needs neither pyarrow nor numpy (issue 32, session 15: about 0.25 s of its start).


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
    """One data file, read once with pyarrow batch by batch into the engine's one driver
    (`conformance.engine.driver.Engine`; the unit of work of a Spark task): each event fed to its trace's
    folds, a trace finished at its last row (the file holds it whole), its violations given their events
    from that read. `hashes` collects a hash of every event ID."""
    runs = monitor_runs(skew_ms) if runs is None else runs
    sizes, broken = trace_order(path)
    streamed = set(sizes) - broken
    engine = Engine(runs, streamed, sizes={t: n for t, n in sizes.items() if t in streamed})
    with engine.reading():
        engine.read(0, path, _parts(path))
        found, unknown, _ = engine.finish()
    if not engine.complete:  # more events than the engine keeps at once: the file read again for them
        _attach(path, found)
    if hashes is not None:
        hashes.extend(engine.hashes)
    return {
        "violations": found,
        "unknown": unknown,
        "rows": engine.rows_checked,
        "by_mechanism": dict(engine.by_mechanism),
        "counts": engine.router.counts,
    }


def _parts(path: str) -> Iterator[ReadResult]:
    """A data file's batches as the engine's parts (its rows were validated at ingest)."""
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
        events = table_events(batch)
        yield ReadResult(events=events, rows_read=len(events))


def trace_order(path: str) -> tuple[Counter[str], set[str]]:
    """(the rows of every trace of a data file, the traces whose rows break seq order, TR-001), from the
    `trace_id` and `seq` columns only: the file holds each trace's rows together, in recording order."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    sizes: Counter[str] = Counter()
    broken: set[str] = set()
    last: tuple[str, int] | None = None
    for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=["trace_id", "seq"]):
        tid, seq = batch.column(0), batch.column(1)
        if not len(tid):
            continue
        sizes.update({row["values"]: row["counts"] for row in pc.value_counts(tid).to_pylist()})
        if last is not None and last[0] == tid[0].as_py() and seq[0].as_py() <= last[1]:
            broken.add(last[0])
        n = len(tid)
        back = pc.and_(pc.equal(tid.slice(1), tid.slice(0, n - 1)), pc.less_equal(seq.slice(1), seq.slice(0, n - 1)))
        broken.update(tid.slice(1).filter(back).to_pylist())
        last = (tid[n - 1].as_py(), seq[n - 1].as_py())
    return sizes, broken


def _attach(path: str, violations: list[dict]) -> None:
    """Each violation's events, from a second read of the file keeping only the rows they name."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not violations:
        return
    wanted = pa.array(sorted({i for v in violations for i in v["event_ids"]}), pa.string())
    chosen: list[Event] = []
    for batch in pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS):
        chosen.extend(table_events(batch.filter(pc.is_in(batch.column("event_id"), value_set=wanted))))
    attach_events(violations, chosen)


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
    return duplicates_among(dups)  # every event of `dups` shares its ID with another (checked above)


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
    counts = RuleCounts()
    rows_checked = 0
    for r in results:
        counts.merge(r["counts"])
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
        counts=counts,
    )


def check_dataset(
    path: str, *, skew_ms: int | None = None, cap: int = DEFAULT_CAP, progress: Progress | None = None
) -> CheckOutcome:
    """The single-process engine over a dataset: one file in memory at a time."""
    import pyarrow.parquet as pq

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
