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

import gzip
from array import array
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
        return resolve_repeats(self.state, self.paths, self.order, self.base, self.kept, repeated, True)


def resolve_repeats(
    state: State,
    paths: dict[str, TraceFile],
    order: dict[str, int],
    base: int,
    kept: list[tuple[str, int, Event]],
    repeated: set[int],
    kept_saved: bool,
) -> list[Located] | None:
    """Every repeated hash's events, (file name, event) in recording order (`conformance.engine.resume.Resolve`),
    from the saved ones (`State.repeats`), the new ones the read kept (`kept`: (file name, hash index, event))
    and, for a hash repeated for the first time, its events read from their marks' rows: the saved events only
    when the read kept every new event whose hash a saved event has (`kept_saved`: the single-process read), else
    (the Spark pass, which keeps only the hashes repeated before) every one of its events. `base`: the saved
    events' hashes are the indices below it. None when the state cannot tell (its repeated hashes' events, or a
    needed mark, not known)."""
    known = repeated_before(state)
    if known is None:
        return None
    hashes = np.frombuffer(state.hashes, dtype=np.uint64)
    first_time = np.array(sorted(repeated - known), dtype=np.uint64)
    if kept_saved:
        old = np.flatnonzero(np.isin(hashes[:base], first_time))
        with_old = np.unique(hashes[old])  # their new events were kept by the read (`kept`)
        new_only = np.setdiff1d(first_time, with_old)
        indices = [*old.tolist(), *(base + np.flatnonzero(np.isin(hashes[base:], new_only))).tolist()]
    else:
        indices = np.flatnonzero(np.isin(hashes, first_time)).tolist()
    wanted = {int(i): int(hashes[i]) for i in indices}
    del hashes  # no view of `state.hashes` outlives this call
    located = locate(state.marks, paths, wanted)
    if located is None:
        return None
    ranked = [(order[name], 0, n, name, e) for n, (name, e) in enumerate(state.repeats or [])]
    ranked += [(order[name], 1, i, name, e) for name, i, e in kept]
    ranked += [(order[name], int(i >= base), i, name, e) for i, (name, e) in located.items()]
    ranked.sort(key=lambda r: r[:3])  # a file's saved events before its appended ones, each in row order
    return [(name, e) for *_, name, e in ranked]


# --- the Spark pass's hashes (session 14): where each event was read, so the state marks them too ---------------
def pack_located(hashes: array, ranks: array, lines: array) -> bytes:
    """A Spark task's event-ID hashes with where each event was read (file rank, line or row): the three
    columns' bytes one after another, 20 bytes an event (`unpack_located`)."""
    if not len(hashes) == len(ranks) == len(lines):
        raise InternalError(f"trace pass: {len(hashes)} hashes kept for {len(lines)} events read")
    return hashes.tobytes() + ranks.tobytes() + lines.tobytes()


def unpack_located(blob: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hashes, file ranks, lines) of a `pack_located` blob."""
    n, rest = divmod(len(blob), 20)
    if rest:
        raise InternalError(f"trace pass: a hashes blob of {len(blob)} bytes is not 20 bytes an event")
    raw = np.frombuffer(blob, dtype=np.uint8)
    return raw[: 8 * n].view(np.uint64), raw[8 * n : 12 * n].view(np.int32), raw[12 * n :].view(np.int64)


class Placed:
    """The Spark tasks' hashes added to `state.hashes` in file order (file rank, then line or row), each part of
    at most `Marks.chunk` rows of one file marked where it begins: a JSON Lines mark's byte is not known
    (`statedir.LINE_ONLY`: found again by counting lines), a Parquet mark's row is. `index(rank, line)`: the
    hash index of the event read there."""

    def __init__(self, state: State, blobs: list[bytes], files: list[TraceFile]) -> None:
        cols = [unpack_located(b) for b in blobs]
        hashes = np.concatenate([c[0] for c in cols]) if cols else np.zeros(0, np.uint64)
        ranks = np.concatenate([c[1] for c in cols]).astype(np.int64) if cols else np.zeros(0, np.int64)
        lines = np.concatenate([c[2] for c in cols]) if cols else np.zeros(0, np.int64)
        self.keys = (ranks << 40) | lines  # a line or row below 2^40
        how = np.argsort(self.keys, kind="stable")
        self.keys = self.keys[how]
        if len(self.keys) > 1 and not (np.diff(self.keys) > 0).all():
            raise InternalError("trace pass: two events hashed at one file rank and line")
        self.base = len(state.hashes)
        state.hashes.frombytes(hashes[how].tobytes())
        marks, chunk = state.marks, state.marks.chunk
        ranks, lines = ranks[how], lines[how]
        at = 0
        while at < len(lines):  # one iteration a mark: a part of at most `chunk` rows of one file
            rank, line = int(ranks[at]), int(lines[at])
            end = int(np.searchsorted(self.keys, (rank << 40) | (line + chunk)))
            tf = files[rank]
            marks.add(self.base + at, tf.name, 0 if tf.kind == "parquet" else statedir.LINE_ONLY, line)
            at = end

    def index(self, rank: int, line: int) -> int:
        return self.base + int(np.searchsorted(self.keys, (rank << 40) | line))


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
        if byte == statedir.LINE_ONLY:
            byte = _byte_of_line(tf, row)
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


def _byte_of_line(tf: TraceFile, row: int) -> int:
    """Where line `row` of a JSON Lines file begins (gzip: in the decompressed stream), its lines counted."""
    with gzip.open(tf.path, "rb") if tf.kind == "jsonl.gz" else open(tf.path, "rb") as handle:
        for _ in range(row - 1):
            if not handle.readline():
                raise InternalError(f"{tf.name}: a mark at line {row}, past the file's end")
        return handle.tell()
