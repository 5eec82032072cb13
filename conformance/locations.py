"""TR-002 when an event ID first repeats in an incremental check (`haconform check PATHS --state DIR`, issue
32): the earlier events of that ID are in files a saved check read, and the state says where (`statedir.Marks`:
a mark every `statedir.CHUNK` rows), so only the marks' rows are read again, never every file.

`Reading` gives the new segments to the engine a part of `CHUNK` rows at a time (`traces.io.iter_jsonl`'s
`marks`, `traces.io.iter_parquet`'s `batch_size`), marks where each part begins, and keeps the new events
whose ID hash an earlier event has (compared with the saved hashes, sorted once, a part at a time).
`Reading.resolve` then gives every repeated hash's events in recording order (TR-002 across the whole corpus,
`conformance.engine.resume.duplicates`): the saved events of the hashes repeated before (`State.repeats`), the
new events kept, and for a hash repeated for the first time its other events read from their marks' rows (the
earlier event of a saved check; two new events of an ID no saved event has). A mark that is not known (a state
saved by the Spark driver, whose tasks hash in no file order, or without `locations.pickle`) answers None:
every file is read for the repeated hashes, as before marks. Every event read from a mark is checked against
its saved hash: a mismatch is a broken invariant (`InternalError`, exit 3), never a verdict.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from conformance.engine import statedir
from conformance.engine.driver import Engine, InternalError
from conformance.engine.resume import repeated_before
from conformance.engine.statedir import State
from traces.columnar import judge_batch
from traces.io import ReadResult, TraceFile, check_parquet_schema, iter_jsonl, iter_parquet
from traces.schema import Event

Located = tuple[str, Event]  # (file name, event)


class Reading:
    """The incremental driver's read of the new segments into `engine` (see the module): `parts` marks and
    keeps as the engine takes each part; `resolve` is `conformance.engine.resume.Resolve`."""

    def __init__(self, state: State, engine: Engine, files: list[TraceFile]) -> None:
        self.state, self.engine = state, engine
        self.paths = {tf.name: tf for tf in files}
        self.order = {tf.name: i for i, tf in enumerate(files)}
        self.base = len(state.hashes)  # the saved events' hashes: indices below this
        saved = np.frombuffer(state.hashes, dtype=np.uint64) if self.base else None
        self.saved = np.sort(saved) if saved is not None else None  # a copy: the view is dropped here
        del saved
        self.kept: list[tuple[str, int, Event]] = []  # (file name, hash index, event): new, ID hash seen before

    def parts(self, tf: TraceFile, start: int, line: int) -> Iterator[ReadResult]:
        """One segment's parts, each marked where it begins (`statedir.Marks.add`) before the engine takes it;
        its new events whose ID hash a saved event has kept once the engine has hashed them."""
        chunk, marks = self.state.marks.chunk, self.state.marks
        starts: list[tuple[int, int]] = []
        parquet = tf.kind == "parquet"
        reader = iter_parquet(tf, batch_size=chunk) if parquet else iter_jsonl(tf, chunk, start, line, marks=starts)
        row, taken = 1, None
        for n, part in enumerate(reader):
            self._keep(taken)
            first = self.base + len(self.engine.hashes)
            byte, at = (0, row) if parquet else starts[n]
            marks.add(first, tf.name, byte, at)
            row += part.rows_read
            taken = (tf.name, first, part)
            yield part
        self._keep(taken)

    def _keep(self, taken: tuple[str, int, ReadResult] | None) -> None:
        """The events of a part the engine has read whose ID hash a saved event has (TR-002's candidates)."""
        if taken is None or self.saved is None or not taken[2].events:
            return
        name, first, part = taken
        at = first - self.base
        mine = np.array(self.engine.hashes[at : at + len(part.events)], dtype=np.uint64)
        where = np.searchsorted(self.saved, mine).clip(max=len(self.saved) - 1)
        for k in np.flatnonzero(self.saved[where] == mine).tolist():
            self.kept.append((name, first + k, part.events[k]))

    def resolve(self, repeated: set[int]) -> list[Located] | None:
        """Every repeated hash's events, (file name, event) in recording order; None when the state cannot
        tell (its repeated hashes' events, or a needed mark, not known)."""
        known = repeated_before(self.state)
        if known is None:
            return None
        hashes = np.frombuffer(self.state.hashes, dtype=np.uint64)
        first_time = np.array(sorted(repeated - known), dtype=np.uint64)
        old = np.flatnonzero(np.isin(hashes[: self.base], first_time))
        with_old = np.unique(hashes[old])  # their new events were kept by the read (`kept`)
        new_only = np.setdiff1d(first_time, with_old)
        new = self.base + np.flatnonzero(np.isin(hashes[self.base :], new_only))
        wanted = {int(i): int(hashes[i]) for i in (*old.tolist(), *new.tolist())}
        del hashes, old, new  # no view of `state.hashes` outlives this call
        located = locate(self.state.marks, self.paths, wanted)
        if located is None:
            return None
        ranked = [(self.order[name], 0, n, name, e) for n, (name, e) in enumerate(self.state.repeats or [])]
        ranked += [(self.order[name], 1, i, name, e) for name, i, e in self.kept]
        ranked += [(self.order[name], int(i >= self.base), i, name, e) for i, (name, e) in located.items()]
        ranked.sort(key=lambda r: r[:3])  # a file's saved events before its appended ones, each in row order
        return [(name, e) for *_, name, e in ranked]


def locate(marks: statedir.Marks, paths: dict[str, TraceFile], wanted: dict[int, int]) -> dict | None:
    """hash index -> (file name, event) of each index of `wanted` (index -> its saved hash), read from its
    mark's rows, each mark's rows read once; None when a mark is not known."""
    by_mark: dict[int, list[int]] = {}
    where: dict[int, tuple[str, int, int]] = {}
    for index in sorted(wanted):
        found = marks.find(index)
        if found is None:
            return None
        m, name, byte, row = found
        by_mark.setdefault(m, []).append(index)
        where[m] = (name, byte, row)
    got: dict[int, Located] = {}
    for m, indices in by_mark.items():
        name, byte, row = where[m]
        events = _events_at(paths[name], byte, row, marks.chunk)
        for index in indices:
            k = index - marks.first[m]
            if k >= len(events) or statedir.stable_hash(events[k].event_id) != wanted[index]:
                raise InternalError(f"{name}: the event read again at line or row {row} + {k} is not the saved one")
            got[index] = (name, events[k])
    return got


def _events_at(tf: TraceFile, byte: int, row: int, chunk: int) -> list[Event]:
    """The events of the `chunk` rows of `tf` beginning at `byte`, line `row` (JSON Lines) or row `row`
    (Parquet: only the row groups holding them are read)."""
    if tf.kind != "parquet":
        return next(iter(iter_jsonl(tf, chunk, byte, row))).events
    import pyarrow.parquet as pq

    check_parquet_schema(tf.path, tf.name)
    handle = pq.ParquetFile(tf.path)
    groups, at, skip = [], 0, 0
    for g in range(handle.metadata.num_row_groups):
        size = handle.metadata.row_group(g).num_rows
        if at + size >= row and at < row - 1 + chunk:
            if not groups:
                skip = row - 1 - at
            groups.append(g)
        at += size
    table = handle.read_row_groups(groups).slice(skip, chunk)
    return [e for batch in table.to_batches() for e, _ in judge_batch(batch) if e is not None]
