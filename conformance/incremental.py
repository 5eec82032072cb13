"""`haconform check PATHS --state DIR`: incremental checking, the single-process driver (the Spark driver is
`spark_trace_check.incremental`; both share `conformance.engine.resume` and one state format).

The first check with a new DIR is a full check that also saves, for every trace, its folds before they
finish (`conformance.engine.stream.TraceFolds`), its report rows, every file's facts, the counts, the
quarantine, a stable hash of every event ID and where it was read (`conformance.engine.statedir`, marks every
`statedir.CHUNK` rows: `conformance.locations`). A later check with the same
DIR reads only what is new, once: files it has not read, and lines appended to plain JSON Lines files it has
read (the bytes read before must be unchanged: size, SHA-256), folded as they are read, seq order checked on
the way (`conformance.engine.stream.Router.watch`: no index pass first). New events continue their traces' restored
folds, or start new ones; every other trace keeps its saved report rows. The report is the one a full check
of everything gives (tests/engine/test_incremental.py compares them on clean, mutant and damaged corpora).

What cannot be continued is refused with the reason (exit 2), never guessed: a file changed otherwise than
by appended lines, or missing; a Parquet or gzip file that changed; new events of a trace that go back in
seq (a trace that broke TR-001 is judged whole and cannot be continued); a state saved by another version,
configuration (monitors, `--skew`) or schema (`statedir.key`).
"""

from __future__ import annotations

import pickle
from collections import Counter
from functools import partial
from pathlib import Path

from conformance.engine import statedir
from conformance.engine.driver import Engine
from conformance.engine.outcome import CheckOutcome, attach_events
from conformance.engine.resume import (
    Fetch,
    NotContinued,
    Segment,
    attach,
    check_after,
    judged_whole,
    outcome,
    read_events,
    resume,
    segments,
)
from conformance.engine.statedir import FileFacts, State
from conformance.engine.stream import JUDGED_WHOLE, Router, TraceFolds, judge_whole, results_of
from conformance.engine.tally import RuleCounts
from conformance.locations import Reading
from conformance.progress import Progress
from traces.io import discover, iter_trace_file
from traces.schema import Event

__all__ = ["NotContinued", "check_incremental", "segments"]


def check_incremental(
    paths: list[str], state_dir: Path, *, cap: int, skew_ms: int | None = None, progress: Progress | None = None
) -> CheckOutcome:
    """The report of a full check of `paths`, reading only what the state in `state_dir` has not seen. A
    state that this input cannot continue is set aside, said on stderr, and everything is checked anew."""
    return resume(state_dir, skew_ms, lambda state, runs: _check(paths, state_dir, state, runs, cap, progress))


def _check(
    paths: list[str], state_dir: Path, state: State, runs: list, cap: int, progress: Progress | None
) -> CheckOutcome:
    names = [name for name, _ in runs]
    state.previous = dict(state.results)  # the report rows as saved (their attached events are reused)
    found = discover(paths)
    todo = segments(found.files, state)
    # one read of the new segments: seq order checked as they are read (`Router.watch`), saved folds continued
    router = Router(runs, None, watch=True, restored=state.folds, hold_dropped=True)
    if progress is not None:
        progress.start(None)  # the new rows are counted as they are read
    reading = Reading(state, Engine([], None, hash_of=statedir.stable_hash, router=router, sizes={}), found.files)
    fetch = _read(todo, state, reading, {tf.name: i for i, tf in enumerate(found.files)}, progress)
    held = router.held
    router.held = []
    fresh: dict[str, list[dict]] = {}
    for trace in sorted(router.traces):
        folds: TraceFolds = router.traces.pop(trace)
        state.folds[trace] = pickle.dumps(folds, protocol=pickle.HIGHEST_PROTOCOL)
        counts = RuleCounts()
        rows, notes = results_of(folds, counts)
        fresh[trace] = rows
        state.results[trace] = (rows, notes, counts)
    attach(fresh, state, todo, found.files, fetch)
    if held:  # new traces recorded out of seq order: judged whole, never continued
        by_trace: dict[str, list[Event]] = {}
        for e in held:
            by_trace.setdefault(e.trace_id, []).append(e)
        for trace, evs in by_trace.items():
            notes = []
            counts = RuleCounts()
            rows = judge_whole(evs, runs, notes, counts)
            attach_events(rows, evs)
            state.results[trace], state.folds[trace] = (rows, notes, counts), None
    for tf, _, _ in todo:
        state.files[tf.name] = FileFacts.of(tf.path, tf.kind)
    return outcome(found, state, names, cap, state_dir, "python", resolve=reading.resolve)


def _read(
    todo: list[Segment], state: State, reading: Reading, order: dict[str, int], progress: Progress | None
) -> Fetch:
    """Read the new segments once into the router through the engine's one read loop (`Engine`); count and
    hash as the full engine does, into the state. A saved trace is continued only if its new events go on
    in seq and come in a file not read before its saved events' (`check_after`), else the state is not
    continued (`NotContinued`); a new trace out of seq order is held whole: its events kept before the drop
    and those after it (past the engine's bound, its events are read again from the segments). The new
    events are kept up to the engine's bound (`sizes` empty: kept, none finished early): the fetch of the
    new violations' events from them, else (past the bound) `read_events`, the segments read again. The parts are
    marked where they begin and the new events whose ID hash a saved event has are kept (`locations.Reading`:
    TR-002 from them, the saved ones and the marks' rows, `resume.duplicates`)."""
    engine, router = reading.engine, reading.engine.router
    advance = progress.advance if progress is not None else None
    with engine.reading():
        for rank, (tf, start, first_line) in enumerate(todo):
            engine.read(rank, tf.name, reading.parts(tf, start, first_line), advance)
            for trace in router.continued:  # their first new event is in this file
                check_after(trace, tf.name, state, order)
            router.continued.clear()
            _refuse(router, state)
    lost = set(router.dropped) if not engine.complete else set()
    if lost:  # dropped past the engine's bound: their events before the drop were not kept
        router.held = [e for e in router.held if e.trace_id not in lost] + [
            e
            for tf, start, line in todo
            for part in iter_trace_file(tf, start, line)
            for e in part.events
            if e.trace_id in lost
        ]
    state.rows_read += engine.rows_read
    state.rows_checked += engine.rows_checked
    state.quarantine.extend(engine.quarantine)
    state.hashes.extend(engine.hashes)
    state.by_mechanism = dict(Counter(state.by_mechanism) + engine.by_mechanism)
    state.last_file.update((trace, todo[rank][0].name) for trace, rank in engine.last_rank.items())
    return read_events if engine.kept is None else partial(_from_kept, engine.kept)


def _refuse(router: Router, state: State) -> None:
    """A saved trace whose new events cannot continue its folds: the state is not continued."""
    for trace, why in router.dropped.items():
        if trace in state.folds:
            raise judged_whole(trace) if why in (None, JUDGED_WHOLE) else NotContinued(f"trace {trace!r}: {why}")


def _from_kept(kept: dict[str, list[Event]], _: list[Segment], missing: set[tuple[str, str]]) -> dict:
    """The report rows of the events `missing` names, from the events the read kept (a `resume.Fetch`)."""
    got: dict[tuple[str, str], list[dict]] = {}
    for trace, events in kept.items():
        for e in events:
            if (trace, e.event_id) in missing:
                got.setdefault((trace, e.event_id), []).append(e.to_row())
    return got
