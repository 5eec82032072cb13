"""`haconform check PATHS --state DIR`: incremental checking with the single-process engine.

The first check with a new DIR is a full check that also saves, for every trace, its folds before they
finish (`conformance.engine.stream.TraceFolds`), its report rows, every file's facts, the counts, the
quarantine and a stable hash of every event ID (`conformance.engine.statedir`). A later check with the same
DIR reads only what is new: files it has not read, and lines appended to plain JSON Lines files it has
read (the bytes read before must be unchanged: size, SHA-256). New events continue their traces' restored
folds, or start new ones; every other trace keeps its saved report rows. The report is the one a full check
of everything gives (tests/engine/test_incremental.py compares them on clean, mutant and damaged corpora).

What cannot be continued is refused with the reason (exit 2), never guessed: a file changed otherwise than
by appended lines, or missing; a Parquet or gzip file that changed; new events of a trace that go back in
seq (a trace that broke TR-001 is judged whole and cannot be continued); a state saved by another version,
configuration (monitors, `--skew`) or schema (`statedir.key`).
"""

from __future__ import annotations

import pickle
import sys
from array import array
from collections import Counter
from pathlib import Path

from conformance.engine import statedir
from conformance.engine.collector import PausedCollector
from conformance.engine.statedir import FileFacts, State, StateError
from conformance.engine.stream import Router, TraceFolds, results_of
from conformance.outcome import DEFAULT_CAP, attach_events, duplicate_ids, finish_outcome, violations_of
from conformance.progress import Progress
from conformance.report import CheckOutcome, InternalError, run_and_report
from conformance.streamplan import file_index
from model.registry import monitor_runs
from traces.dataset import repeated_hashes
from traces.io import TraceFile, discover, iter_trace_file
from traces.schema import Event

Segment = tuple[TraceFile, int, int]  # a file, the byte to start at, the number of its first line


def segments(files: list[TraceFile], state: State) -> list[Segment]:
    """What is new in each file since the state was saved; StateError for a change that is not an append."""
    out: list[Segment] = []
    names = {tf.name for tf in files}
    missing = sorted(set(state.files) - names)
    if missing:
        raise NotContinued(f"{missing[0]}: read by the saved check, missing now")
    for tf in files:
        old = state.files.get(tf.name)
        if old is None:
            out.append((tf, 0, 1))
            continue
        now = FileFacts.of(tf.path, tf.kind, old.size) if Path(tf.path).stat().st_size >= old.size else None
        if now is None or now.sha256 != old.sha256:
            raise NotContinued(f"{tf.name}: changed since the saved check (not only lines appended)")
        size = Path(tf.path).stat().st_size
        if size == old.size:
            continue
        if tf.kind != "jsonl":
            raise NotContinued(
                f"{tf.name}: a {tf.kind} file grew since the saved check; only JSON Lines files take appends"
            )
        if old.size and not _ends_line(tf.path, old.size):
            raise NotContinued(f"{tf.name}: its last line was incomplete when the state was saved")
        out.append((tf, old.size, old.lines + 1))
    return out


def _ends_line(path: str, size: int) -> bool:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) == b"\n"


class NotContinued(StateError):
    """The saved state cannot be continued by this input (a file changed, a trace goes back in seq)."""


def check_incremental(
    paths: list[str], state_dir: Path, *, cap: int, skew_ms: int | None = None, progress: Progress | None = None
) -> CheckOutcome:
    """The report of a full check of `paths`, reading only what the state in `state_dir` has not seen. A
    state that this input cannot continue is set aside, said on stderr, and everything is checked anew."""
    runs = monitor_runs(skew_ms)
    names = [name for name, _ in runs]
    want = statedir.key(names, skew_ms)
    state = statedir.load(state_dir, want)
    try:
        return _check(paths, state_dir, state or State(want), runs, cap, progress)
    except NotContinued as exc:
        if state is None:
            raise InternalError(f"an empty state could not be continued: {exc}") from exc
        print(f"haconform check: --state {state_dir}: {exc}; checking everything anew", file=sys.stderr)
        return _check(paths, state_dir, State(want), runs, cap, progress)


def _check(
    paths: list[str], state_dir: Path, state: State, runs: list, cap: int, progress: Progress | None
) -> CheckOutcome:
    names = [name for name, _ in runs]
    state.previous = dict(state.results)  # the report rows as saved (their attached events are reused)
    found = discover(paths)
    todo = segments(found.files, state)
    streamed, touched = _plan(todo, state)
    router = Router(runs, streamed)
    router.traces.update(_restored(touched, state))
    if progress is not None:
        progress.start(None)  # the new rows are counted as they are read
    _read(todo, state, router, progress)
    held = router.held
    router.held = []
    fresh: dict[str, list[dict]] = {}
    for trace in sorted(touched):
        folds: TraceFolds | None = router.traces.pop(trace, None)
        if folds is None:
            continue
        state.folds[trace] = pickle.dumps(folds, protocol=pickle.HIGHEST_PROTOCOL)
        rows, notes = results_of(folds)
        fresh[trace] = rows
        state.results[trace] = (rows, notes)
    _attach(fresh, state, todo, found.files)
    if held:  # new traces recorded out of seq order: judged whole, never continued
        by_trace: dict[str, list[Event]] = {}
        for e in held:
            by_trace.setdefault(e.trace_id, []).append(e)
        for trace, evs in by_trace.items():
            notes = []
            rows = violations_of(evs, runs, notes)
            attach_events(rows, evs)
            state.results[trace], state.folds[trace] = (rows, notes), None
    for tf, _, _ in todo:
        state.files[tf.name] = FileFacts.of(tf.path, tf.kind)
    return _outcome(found, state, names, cap, state_dir)


def _plan(todo: list[Segment], state: State) -> tuple[set[str], set[str]]:
    """The traces the new segments continue or begin (`touched`) and which of them stream into folds."""
    last: dict[str, int] = {}
    begins: dict[str, int] = {}
    ordered: dict[str, bool] = {}
    for tf, start, first_line in todo:
        _, spans = file_index(tf, start, first_line)
        for trace, (first, end, inside) in spans.items():
            before = last.get(trace)
            ordered[trace] = ordered.get(trace, True) and inside and (before is None or first > before)
            last[trace] = end
            begins.setdefault(trace, first)
    for trace, ok in ordered.items():
        if trace in state.folds and (state.folds[trace] is None or not ok):
            raise NotContinued(
                f"trace {trace!r}: judged whole for breaking TR-001, or its new events are out of seq order"
            )
    state.begins = begins
    return {t for t, ok in ordered.items() if ok}, set(ordered)


def _restored(touched: set[str], state: State) -> dict[str, TraceFolds]:
    """The saved folds of the traces the new events continue (unpickled once), which must go on in seq."""
    out: dict[str, TraceFolds] = {}
    for trace in touched & set(state.folds):
        folds: TraceFolds = pickle.loads(state.folds[trace])  # type: ignore[arg-type]
        prev = folds.core.prev
        if prev is not None and state.begins[trace] <= prev.seq:
            raise NotContinued(
                f"trace {trace!r}: its new events begin at seq {state.begins[trace]}, not after {prev.seq}"
            )
        out[trace] = folds
    return out


def _read(todo: list[Segment], state: State, router: Router, progress: Progress | None) -> None:
    """Read the new segments into the router; count and hash as the full engine does (no event is kept)."""
    by_mech: Counter[str] = Counter(state.by_mechanism)
    with PausedCollector() as collector:
        _read_segments(todo, state, router, progress, by_mech, collector)
    state.by_mechanism = dict(by_mech)


def _read_segments(todo, state: State, router: Router, progress, by_mech: Counter[str], collector) -> None:
    for tf, start, first_line in todo:
        for part in iter_trace_file(tf, start, first_line):
            collector.read(part.rows_read)
            state.rows_read += part.rows_read
            state.quarantine.extend(
                {"file": e.file, "line": e.line, "field": e.field, "reason": e.reason} for e in part.errors
            )
            for e in part.events:
                state.rows_checked += 1
                by_mech[e.mechanism] += 1
                state.hashes.append(statedir.stable_hash(e.event_id))
                router.feed(e)
            if progress is not None:
                progress.advance(len(part.events))


def _attach(fresh: dict[str, list[dict]], state: State, todo: list[Segment], files: list[TraceFile]) -> None:
    """Each new violation's events: rows the trace's saved report already holds, else the new segments read
    again, else (an earlier event named for the first time) every file read again, only then."""
    wanted = {i for rows in fresh.values() for v in rows for i in v["event_ids"]}
    if not wanted:
        return
    known: dict[tuple[str, str], list[dict]] = {}
    for trace in fresh:
        for v in state.previous.get(trace, ([], []))[0]:
            for row in v.get("events", []):
                same = known.setdefault((trace, row["event_id"]), [])
                if row not in same:
                    same.append(row)
    missing = {(t, i) for t, rows in fresh.items() for v in rows for i in v["event_ids"] if (t, i) not in known}
    for sources in ([(tf, start, line) for tf, start, line in todo], [(tf, 0, 1) for tf in files]):
        if not missing:
            break
        got: dict[tuple[str, str], list[dict]] = {}
        for tf, start, line in sources:
            for part in iter_trace_file(tf, start, line):
                for e in part.events:
                    if (e.trace_id, e.event_id) in missing:
                        got.setdefault((e.trace_id, e.event_id), []).append(e.to_row())
        known.update(got)
        missing -= set(got)
    for trace, rows in fresh.items():
        for v in rows:
            v["events"] = [row for i in v["event_ids"] for row in known.get((trace, i), [])]


def _outcome(found, state: State, monitors: list[str], cap: int, state_dir: Path) -> CheckOutcome:
    violations: list[dict] = []
    unknown: list[dict] = []
    for trace in sorted(state.results):
        rows, notes = state.results[trace]
        violations.extend(dict(v) for v in rows)
        unknown.extend(notes)
    repeated = repeated_hashes(array("Q", state.hashes))  # sorts its copy in place
    duplicates = duplicate_ids(found.files, repeated, statedir.stable_hash) if repeated else ([], {})
    if state.rows_read != state.rows_checked + len(state.quarantine):
        raise InternalError("incremental check: the counts do not reconcile")
    order = {tf.name: i for i, tf in enumerate(found.files)}
    quarantine = sorted(state.quarantine, key=lambda q: (order[q["file"]], q["line"]))
    statedir.save(state_dir, state)
    return finish_outcome(
        engine="python",
        files=[tf.name for tf in found.files],
        rows_read=state.rows_read,
        rows_checked=state.rows_checked,
        quarantine=quarantine,
        violations=violations,
        unknown=unknown,
        by_mechanism=state.by_mechanism,
        monitors=monitors,
        files_skipped=found.skipped,
        duplicates=duplicates,
        cap=cap,
    )


def run_check(args) -> int:
    """`haconform check PATHS --state DIR`: the report frame of `haconform check` (conformance.report)."""

    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_incremental(
                args.paths, Path(args.state), cap=DEFAULT_CAP, skew_ms=args.skew, progress=progress
            )

    return run_and_report(args, "python", compute)
