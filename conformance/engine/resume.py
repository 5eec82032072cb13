"""What both drivers of incremental checking (`haconform check PATHS --state DIR`) share: the single-process
driver (`conformance.incremental`) and the Spark driver (`spark_trace_check.incremental`) read the one state
format (`conformance.engine.statedir`), so a state saved by one is continued by the other.

Here, independent of how rows are read: the new segments of a corpus since a state was saved (`segments`),
the refusals (`NotContinued`: the state is set aside with the reason and everything is checked anew; a
state of another key is refused by `statedir.load`, exit 2), the saved state loaded or begun (`resume`),
a touched trace's folds checked for continuation (`restore`), the new violations' events attached
(`attach`), and the report of everything from the state (`outcome`: TR-002 over the stable hashes of old
and new event IDs, resolved from the saved events of the hashes already repeated and the new events the
read kept of them, `duplicates`; rows as a full check gives them). This sits above `conformance.engine`
because it builds the report (`conformance.engine.outcome`, `conformance.report`), which the engine layer may
not import. Requirements: TR-001 (seq order, why a trace going back cannot be continued), TR-002 (event IDs unique
across old and new events), TR-005 (counts reconcile).
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable
from pathlib import Path

from conformance.engine import statedir
from conformance.engine.driver import InternalError, duplicates_among
from conformance.engine.outcome import CheckOutcome, finish_outcome, repeated_events
from conformance.engine.statedir import FileFacts, State, StateError
from conformance.engine.tally import RuleCounts
from model.registry import monitor_runs
from traces.dataset import repeated_hashes
from traces.io import TraceFile, iter_trace_file

Segment = tuple[TraceFile, int, int]  # a file, the byte to start at, the number of its first line
# (trace, event ID) -> that event's report rows: how a driver fetches the new violations' events
Fetch = Callable[[list[Segment], set[tuple[str, str]]], dict[tuple[str, str], list[dict]]]
# every repeated ID hash -> their events, (file name, event) in recording order; None: not known (read the files)
Resolve = Callable[[set[int]], "list[tuple[str, object]] | None"]


class NotContinued(StateError):
    """The saved state cannot be continued by this input (a file changed, a trace goes back in seq)."""


def segments(files: list[TraceFile], state: State) -> list[Segment]:
    """What is new in each file since the state was saved; NotContinued for a change that is not an append."""
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


def resume(state_dir: Path, skew_ms: int | None, body: Callable[[State, list], CheckOutcome]) -> CheckOutcome:
    """`body(state, runs)` with the saved state (a new one when `state_dir` does not exist). A state of another
    key: StateError (exit 2). A state this input cannot continue is set aside, said on stderr, and `body`
    runs again with a new state (everything checked anew)."""
    runs = monitor_runs(skew_ms)
    want = statedir.key([name for name, _ in runs], skew_ms)
    state = statedir.load(state_dir, want)
    try:
        return body(state or State(want), runs)
    except NotContinued as exc:
        if state is None:
            raise InternalError(f"an empty state could not be continued: {exc}") from exc
        print(f"haconform check: --state {state_dir}: {exc}; checking everything anew", file=sys.stderr)
        return body(State(want), runs)


def check_after(trace: str, file: str, state: State, order: dict[str, int]) -> None:
    """New events of a saved trace in `file` continue it only if `file` is not read before the file holding
    its last saved event (`order`: position in the corpus): else they come earlier in recording order."""
    last = state.last_file.get(trace)
    if last is not None and order[file] < order[last]:
        raise NotContinued(f"trace {trace!r}: new events in {file}, which is read before {last} (its saved events)")


def judged_whole(trace: str) -> NotContinued:
    return NotContinued(f"trace {trace!r}: judged whole for breaking TR-001, or its new events are out of seq order")


def read_events(todo: list[Segment], missing: set[tuple[str, str]]) -> dict[tuple[str, str], list[dict]]:
    """The report rows of the events `missing` names, read from `todo` by the single-process reader."""
    got: dict[tuple[str, str], list[dict]] = {}
    for tf, start, line in todo:
        for part in iter_trace_file(tf, start, line):
            for e in part.events:
                if (e.trace_id, e.event_id) in missing:
                    got.setdefault((e.trace_id, e.event_id), []).append(e.to_row())
    return got


def attach(
    fresh: dict[str, list[dict]],
    state: State,
    todo: list[Segment],
    files: list[TraceFile],
    fetch_new: Fetch = read_events,
) -> None:
    """Each new violation's events: rows the trace's saved report already holds or the read attached (the
    Spark trace pass attaches the new events it kept, `Engine.close`), else the new segments read again
    (`fetch_new`: the driver's own reader), else (an earlier event named for the first time) every file read
    again, only then."""
    wanted = {i for rows in fresh.values() for v in rows for i in v["event_ids"]}
    if not wanted:
        return
    known: dict[tuple[str, str], list[dict]] = {}
    for trace in fresh:
        for v in [*state.previous.get(trace, ([], [], None))[0], *fresh[trace]]:
            for row in v.get("events", []):
                same = known.setdefault((trace, row["event_id"]), [])
                if row not in same:
                    same.append(row)
    missing = {(t, i) for t, rows in fresh.items() for v in rows for i in v["event_ids"] if (t, i) not in known}
    for fetch, sources in ((fetch_new, todo), (read_events, [(tf, 0, 1) for tf in files])):
        if not missing:
            break
        got = fetch(sources, missing)
        known.update(got)
        missing -= set(got)
    for trace, rows in fresh.items():
        for v in rows:
            v["events"] = [row for i in v["event_ids"] for row in known.get((trace, i), [])]


def repeated_before(state: State) -> set[int] | None:
    """The stable hashes the saved state already saw repeated (`State.repeats`), whose new events the read
    keeps (`conformance.engine.driver.Engine` `candidates`); None when the state does not know them."""
    if state.repeats is None:
        return None
    return {statedir.stable_hash(e.event_id) for _, e in state.repeats}


def duplicates(
    found, state: State, new: list[tuple[str, object]] | None, resolve: Resolve | None = None
) -> tuple[list[dict], dict]:
    """TR-002 exactly over the old and new events (TR-002 across the whole corpus, in recording order), and
    `state.repeats` brought up to date. `resolve` (the driver's, given every repeated hash): their events,
    (file name, event) in recording order, or None when it cannot tell (`conformance.locations`: from the
    saved events, the new events the read kept and the rows the state's marks locate). Without it, when
    every repeated hash was already repeated in the saved state, from the saved events and the new events of
    those hashes the read kept (`new`: (file name, event) in reading order; None: the driver kept none),
    with no file read; else every file read for them."""
    repeated = repeated_hashes(array("Q", state.hashes))  # sorts its copy in place
    known = repeated_before(state)
    if not repeated:
        state.repeats = []
        return [], {}
    resolved = resolve(repeated) if resolve is not None else None
    if resolved is not None:
        events = resolved
    elif known is not None and new is not None and repeated <= known:
        events = [*state.repeats, *new]  # type: ignore[misc]
    else:
        events = [(tf.name, e) for tf in found.files for e in repeated_events(tf, repeated, statedir.stable_hash)]
    order = {tf.name: i for i, tf in enumerate(found.files)}
    events.sort(key=lambda pair: order[pair[0]])  # stable: a file's saved events before its appended ones
    state.repeats = events
    return duplicates_among([e for _, e in events])  # type: ignore[misc]


def outcome(
    found,
    state: State,
    monitors: list[str],
    cap: int,
    state_dir: Path,
    engine: str,
    new: list | None = None,
    resolve: Resolve | None = None,
) -> CheckOutcome:
    """The report of everything from the state (saved into `state_dir` first): every trace's rows, TR-002
    over the old and new event IDs' stable hashes (`duplicates`, `new`: the new events of the hashes the
    state already saw repeated, kept by the read; `resolve`: the driver's), the counts reconciled (TR-005)."""
    violations: list[dict] = []
    unknown: list[dict] = []
    counts = RuleCounts()
    for trace in sorted(state.results):
        rows, notes, judged = state.results[trace]
        violations.extend(dict(v) for v in rows)
        unknown.extend(notes)
        counts.merge(judged)
    found_duplicates = duplicates(found, state, new, resolve)
    if state.rows_read != state.rows_checked + len(state.quarantine):
        raise InternalError("incremental check: the counts do not reconcile")
    order = {tf.name: i for i, tf in enumerate(found.files)}
    quarantine = sorted(state.quarantine, key=lambda q: (order[q["file"]], q["line"]))
    statedir.save(state_dir, state)
    return finish_outcome(
        engine=engine,
        files=[tf.name for tf in found.files],
        rows_read=state.rows_read,
        rows_checked=state.rows_checked,
        quarantine=quarantine,
        violations=violations,
        unknown=unknown,
        by_mechanism=state.by_mechanism,
        monitors=monitors,
        files_skipped=found.skipped,
        duplicates=found_duplicates,
        cap=cap,
        counts=counts,
    )
