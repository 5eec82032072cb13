"""`haconform check --engine python`: the single-process engine, same report as the Spark job.

Every file under the given paths is read or listed as skipped with its reason (`traces.io.discover`);
rows are validated by the one definition of a valid row (`traces.rows`; Parquet column-wise by
`traces.columnar`), shared with Spark. Both paths are a source around the engine's one driver
(`conformance.engine.driver.Engine`: the read loop, the counts, the quarantine, held traces, the
violations' events, the event-ID hashes) and end in `conformance.engine.units.finish_units`:
- a corpus of at most `ONCE_EVENTS` rows (and the units' budget) is read once: every file once, every
  trace held and judged whole, the violations' events and TR-002's repeated IDs resolved from the events
  at hand (tests/engine/test_read_once.py counts the reads);
- a larger one streams: files are indexed by trace first (`conformance.engine.trace_index`: rows per trace, and
  whether each trace is recorded in seq order), then units of whole traces (`conformance.engine.units`, the same
  units and the same judging as the Spark driver's `spark_trace_check.units`) are read one after another,
  each event fed to its trace's folds as it is read (`conformance.engine.stream`), so memory holds the
  folds' live state and the events of the traces being read; a trace out of seq order (TR-001) is held
  and judged whole. The violations' events come from that read. Event-ID uniqueness (TR-002) costs 8 bytes
  per event, a 64-bit hash; the index's hashes seen twice name the candidates whose events the units keep,
  resolved exactly from them (`conformance.engine.units.kept_duplicates`, shared with the Spark units plan);
  by a second read of the files only when the index could not tell them.
The counts must reconcile (TR-005): rows read, rows that reached the rules and rows quarantined, and every
file's rows against what its units read, or the run is an internal error.
"""

from __future__ import annotations

from array import array
from collections import Counter
from contextlib import suppress

from conformance.dataset_check import check_dataset, dataset_of
from conformance.engine.driver import Engine, duplicates_among
from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome, duplicate_ids
from conformance.engine.trace_index import GROUP_EVENTS, FileIndex
from conformance.engine.units import (
    SKIP_OWN_IDS,
    UnitResult,
    finish_units,
    index_files,
    judge_unit,
    kept_duplicates,
    plan_units,
    result_of,
)
from conformance.progress import Progress
from model.registry import monitor_runs
from traces.dataset import id_hash, repeated_hashes
from traces.discovery import TraceFile, discover
from traces.io import iter_trace_file
from traces.schema import Event

__all__ = ["DEFAULT_CAP", "check_held", "check_paths"]

ONCE_EVENTS = 100_000  # a corpus of at most this many rows is read once, its events held (about 1 KB each)


def check_paths(
    paths: list[str],
    *,
    cap: int = DEFAULT_CAP,
    skew_ms: int | None = None,
    group_events: int = GROUP_EVENTS,
    progress: Progress | None = None,
) -> CheckOutcome:
    """Check a corpus: read once whole when it holds at most `min(group_events, ONCE_EVENTS)` rows, else unit
    by unit of whole traces (`conformance.engine.units`), each event fed to its folds as it is read;
    `group_events` is the units' budget (the events whose folds are live at once)."""
    if (dataset := dataset_of(paths)) is not None:
        return check_dataset(dataset, skew_ms=skew_ms, cap=cap, progress=progress)
    found = discover(paths)
    runs = monitor_runs(skew_ms)
    names = [name for name, _ in runs]
    limit = min(group_events, ONCE_EVENTS)
    once = _read_once(found.files, runs, limit) if limit > 0 and _footer_rows(found.files) <= limit else None
    if once is not None:
        if progress is not None:
            progress.start(once[0].rows_checked)
            progress.advance(once[0].rows_checked)
        return _once_outcome(found, *once, names, cap)
    index, unique = index_files(found.files, range(len(found.files)), id_hash, SKIP_OWN_IDS)
    told = array("Q")
    told_all = True  # the index hashed every row's event ID: the units hash none again (issue 32, session 13)
    for n, entry in enumerate(index):
        told.extend(entry.ids)
        told_all = told_all and len(entry.ids) == entry.rows
        index[n] = entry._replace(ids=array("Q"))
    told_all = told_all or unique  # unique: no ID repeats, so none to hash in the units either
    predicted = set() if unique else repeated_hashes(told)  # sorts it in place
    del told
    units = plan_units(index, group_events)
    if progress is not None:
        progress.start(sum(u.events for u in units))
    advance = progress.advance if progress is not None else None
    results = [judge_unit(found.files, u, runs, id_hash, advance, predicted or None, told_all) for u in units]
    repeated: set[int] | None = None  # told_all: `predicted` holds every repeated hash
    if not told_all:
        hashes = array("Q")
        for r in results:
            hashes.extend(r.hashes)
            r.hashes = array("Q")
        repeated = repeated_hashes(hashes)  # sorts it in place
        del hashes
    return finish_units(
        found, index, results, names, _exact(found.files, results, repeated, predicted), engine="python", cap=cap
    )


def check_held(paths: list[str], *, skew_ms: int | None = None) -> tuple[CheckOutcome, list[Event]]:
    """A corpus read once whole, whatever its size, and its report, with every valid event it holds (in
    recording order): for a tool that goes on with the events (`conformance.shrink`), no second read."""
    found = discover(paths)
    runs = monitor_runs(skew_ms)
    result, held = _read_once(found.files, runs, None)  # type: ignore[misc]
    return _once_outcome(found, result, list(held), [name for name, _ in runs], DEFAULT_CAP), held


def _once_outcome(found, result: UnitResult, held: list[Event], names: list[str], cap: int) -> CheckOutcome:
    """The report of a corpus read once whole (`_read_once`)."""
    index = [FileIndex(Counter(), {}, result.rows_by_file.get(rank, 0)) for rank in range(len(found.files))]
    duplicates = _duplicates(result, held)
    return finish_units(found, index, [result], names, duplicates, engine="python", cap=cap)


def _read_once(files: list[TraceFile], runs: list, limit: int | None) -> tuple[UnitResult, list[Event]] | None:
    """A corpus of at most `limit` rows read once, every trace held whole (`Engine` with nothing streamed:
    the events are at hand for the violations and TR-002, the verdicts those of streaming,
    tests/engine/test_fold_stream.py); None past `limit` rows (the corpus is then indexed and read in units:
    the rows read so far, at most `limit` and a reader's part, are read again)."""
    engine = Engine(runs, set(), limit=limit)
    with engine.reading():
        for rank, tf in enumerate(files):
            if not engine.read(rank, tf.name, iter_trace_file(tf)):
                return None
        found, unknown, held = engine.finish()
    return result_of(engine, found, unknown), held


def _exact(
    files: list[TraceFile], results: list[UnitResult], repeated: set[int] | None, predicted: set[int]
) -> tuple[list[dict], dict]:
    """TR-002 exactly: over the events the units kept for the hashes the index found repeated
    (`conformance.engine.units.kept_duplicates`; `repeated` None: the units hashed nothing, the index told every
    ID); by a second read of the files only when those cannot tell."""
    found = kept_duplicates(results, repeated, predicted)
    return found if found is not None else duplicate_ids(files, predicted if repeated is None else repeated)


def _footer_rows(files: list[TraceFile]) -> int:
    """The rows the corpus's Parquet files hold, from their footers alone (no data read): a corpus known to
    be larger than the read-once limit is indexed at once, not read in part and then again. A footer that
    cannot be read counts nothing here: the read says what is wrong with the file. pyarrow loads only for a
    Parquet file (issue 32, session 15: a check of JSON Lines needs neither pyarrow nor numpy)."""
    rows = 0
    for tf in files:
        if tf.kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            with suppress(OSError, pa.ArrowException):
                rows += pq.read_metadata(tf.path).num_rows
    return rows


def _duplicates(result: UnitResult, held: list[Event]) -> tuple[list[dict], dict]:
    """TR-002 from the hashes kept in the one read, resolved exactly over the held events (no second read)."""
    repeated = repeated_hashes(result.hashes)  # sorts it in place
    result.hashes = array("Q")
    if not repeated:
        return [], {}
    return duplicates_among([e for e in held if id_hash(e.event_id) in repeated])
