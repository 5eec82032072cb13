"""The engine's one driver: trace rows read once into the folds, with everything a check keeps of the read.

Every check is a source (what to read: a corpus's files, one unit's files or slices, the new segments of
an incremental check) and a sink (where the results go: a unit's result, a saved state, the report) around
one `Engine`. `Engine.read` is the one read loop of the engine (issue 32): for every part a reader gives
(`traces.io.iter_trace_file`, `traces.slices.iter_slice`) it counts the rows read, judged and per file
(TR-005), keeps the quarantine rows (`traces.io.RowError.row`), counts events per mechanism, keeps a 64-bit
hash of every event ID (TR-002, resolved by the sink over the whole corpus; the events of hashes the
index already found repeated are kept, `candidates`; none when the index hashed every ID, `told`: each ID is
hashed once) and feeds each event to its
trace's folds (`conformance.engine.stream.Router`; a trace the plan did not stream, recorded out of seq
order (TR-001), is held and judged whole). `Engine.finish` gives the violations and unknown notes.

The violations' events come from this read, never from a read of the files again when the events are at
hand: a held trace's events are held anyway; a streamed trace whose size the plan knows (`sizes`) keeps its
events while it is read and is finished as soon as its last event is fed, its violations given their
events and its kept events dropped, so memory holds the events of the traces being read, not of the unit.
Past `keep` events held at once (one trace larger than that, or many interleaved), the engine stops
keeping and says so (`complete` false): only then does the sink read the files again for the violations
that lack their events (`conformance.engine.outcome.attach_from`). TR-002 is exact over the events whose hash is
repeated (`duplicates_among`).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from itertools import groupby, islice
from operator import attrgetter, ne
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`driver.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from conformance.engine.collector import PausedCollector
from conformance.engine.core_fold import duplicate_id_violations
from conformance.engine.stream import Router, Runs, TraceFolds, results_of
from conformance.engine.tally import RuleCounts
from traces.dataset import id_hash
from traces.event import Event
from traces.io import QuarantineRow, ReadResult

_TRACE_ID = attrgetter("trace_id")
_MASK = 0xFFFF_FFFF_FFFF_FFFF  # `traces.dataset.id_hash`, inlined over a part's event IDs
KEEP_EVENTS = 200_000  # events kept at once for the violations' rows (about 1 KB each as `Event` objects)


class InternalError(RuntimeError):
    """A broken invariant inside haconform (counts that do not reconcile, say): exit 3, never a verdict."""


class Engine:
    """One read of trace rows into the folds (see the module). `streamed`: the traces fed to folds as read
    (None: every trace, the caller guarantees seq order; empty: every trace held whole); `traces`: the traces
    the plan expects (a valid row of another is an internal error; None: any); `sizes`: the events of each
    streamed trace (None: none finished early, none kept); `limit`: `read` stops past that many rows;
    `router`: folds already begun (an incremental check's restored traces), else new ones of `runs`;
    `candidates`: ID hashes known to repeat before the read (the index's), whose events are kept; `hash_of`
    None: no event ID hashed (a driver whose TR-002 is resolved elsewhere, the Spark trace pass); `told`: the
    index already hashed every row's event ID (`conformance.pycheck`), so the read keeps no hash and hashes an
    ID only to keep the events of `candidates` (none at all when there are none): each ID hashed once."""

    def __init__(
        self,
        runs: Runs,
        streamed: set[str] | None,
        *,
        traces: set[str] | None = None,
        sizes: dict[str, int] | None = None,
        hash_of: Callable[[str], int] | None = id_hash,
        keep: int | None = None,
        limit: int | None = None,
        router: Router | None = None,
        candidates: set[int] | None = None,
        told: bool = False,
    ) -> None:
        self.router = Router(runs, streamed) if router is None else router
        self.traces, self.sizes, self.limit = traces, sizes, limit
        self.hash_of = None if told and not candidates else hash_of
        self.told = told
        self.keep = KEEP_EVENTS if keep is None else keep
        self.rows_read = 0
        self.rows_checked = 0
        self.rows_by_file: dict[int, int] = {}
        self.quarantine: list[QuarantineRow] = []
        self.by_mechanism: Counter[str] = Counter()
        self.hashes = array("Q")
        self.wanted = candidates  # ID hashes the index found repeated: their events are kept (TR-002)
        self.candidates: list[tuple[int, int, Event]] = []  # (file rank, arrival, event)
        self.last_rank: dict[str, int] = {}  # trace -> the rank of the file of its last event read
        self.found: list[dict] = []  # violations of the traces finished early, their events attached
        self.unknown: list[dict] = []
        self.kept: dict[str, list[Event]] | None = {} if sizes is not None else None
        self.kept_events = 0
        self.done: set[str] = set()  # streamed traces finished early
        self.complete = True  # every violation's events at hand when `finish` runs
        self.collector = PausedCollector()

    def reading(self) -> AbstractContextManager[PausedCollector]:
        """`with engine.reading(): engine.read(...)`: the cyclic collector paused, run every group's worth."""
        return self.collector

    @cython.locals(ev=Event)  # the comprehensions below read the fields as struct members (session 16)
    def read(
        self, rank: int, name: str, parts: Iterable[ReadResult], advance: Callable[[int], None] | None = None
    ) -> bool:
        """Every part of one file (rank `rank`, named `name`) into the folds; False when `limit` was passed
        (the rest of the file is not read)."""
        by_mech, hash_of, feed = self.by_mechanism, self.hash_of, self.router.feed
        hashes = None if self.told else self.hashes
        traces, kept, last, wanted = self.traces, self.kept, self.last_rank, self.wanted
        by_run = self.router.runs_fed()
        for part in parts:
            self.rows_read += part.rows_read
            self.rows_by_file[rank] = self.rows_by_file.get(rank, 0) + part.rows_read
            self.quarantine.extend(e.row() for e in part.errors)
            events = part.events
            # what is counted of a part's events, column by column (C loops: no per-event Python call)
            trace_ids = [ev.trace_id for ev in events]
            if traces is not None and not traces.issuperset(trace_ids):
                missed = next(t for t in trace_ids if t not in traces)
                raise InternalError(f"{name}: trace {missed!r} was missed by the trace index")
            by_mech.update([ev.mechanism for ev in events])
            if hash_of is not None:
                ids = [ev.event_id for ev in events]
                mine = [h & _MASK for h in map(hash, ids)] if hash_of is id_hash else list(map(hash_of, ids))
                if hashes is not None:
                    hashes.extend(mine)
                if wanted:
                    for e, h in zip(events, mine, strict=True):
                        if h in wanted:
                            self.candidates.append((rank, len(self.candidates), e))
            last.update(dict.fromkeys(trace_ids, rank))
            if by_run and _long_runs(trace_ids):
                for trace, grouped in groupby(events, _TRACE_ID):  # each run of one trace's events at once
                    run = list(grouped)
                    self.router.feed_run(trace, run)
                    if kept is not None:
                        self._keep_run(trace, run)
                        kept = self.kept
            else:
                for e in events:
                    feed(e)
                    if kept is not None:
                        self._keep(e)
                        kept = self.kept
            self.rows_checked += len(events)
            if advance is not None:
                advance(len(events))
            self.collector.read(part.rows_read)
            if self.limit is not None and self.rows_read > self.limit:
                return False
        return True

    def _keep(self, e: Event) -> None:
        """Keep a streamed trace's event; finish the trace once its last event is fed (`sizes`)."""
        trace = e.trace_id
        folds = self.router.traces.get(trace)
        if trace in self.done:
            raise InternalError(f"trace {trace!r}: more events than the trace index counted")
        if folds is None:  # held: the router holds its events
            mine = self.kept.pop(trace, None) if self.router.hold_dropped else None  # type: ignore[union-attr]
            if mine is not None:  # dropped for breaking seq order (`Router.watch`): its kept events held too
                self.kept_events -= len(mine)
                held = self.router.held
                held[-1:-1] = mine  # before the event that broke the order, held by the router
            return
        mine = self.kept.setdefault(trace, [])  # type: ignore[union-attr]
        mine.append(e)
        self.kept_events += 1
        if len(mine) == self.sizes.get(trace):  # type: ignore[union-attr]
            self.kept_events -= len(mine)
            self._finish(trace, folds, mine)
        elif self.kept_events > self.keep:  # too many at once: stop keeping (see the module)
            self.kept, self.kept_events, self.complete = None, 0, False

    def _keep_run(self, trace: str, run: list[Event]) -> None:
        """`_keep` of each event of `run` (one trace's, all fed; a router that `runs_fed`, so the trace's folds
        were neither dropped nor begun again within the run): kept, the trace finished at its last event, or
        keeping stopped at the event that passes `keep`, as event by event."""
        folds = self.router.traces.get(trace)
        if trace in self.done:
            raise InternalError(f"trace {trace!r}: more events than the trace index counted")
        if folds is None:  # held: the router holds its events
            return
        mine = self.kept.setdefault(trace, [])  # type: ignore[union-attr]
        need = self.sizes.get(trace, 0) - len(mine)  # type: ignore[union-attr]  # events until its last
        room = self.keep - self.kept_events  # events kept before keeping stops (at the one past it)
        if 0 < need <= min(len(run), room + 1):  # finished at its last event, before keeping would stop
            if need < len(run):
                raise InternalError(f"trace {trace!r}: more events than the trace index counted")
            self.kept_events -= len(mine)
            mine.extend(run)
            self._finish(trace, folds, mine)
        elif room + 1 <= len(run):  # too many at once: stop keeping (see the module)
            self.kept, self.kept_events, self.complete = None, 0, False
        else:
            mine.extend(run)
            self.kept_events += len(run)

    def _finish(self, trace: str, folds: TraceFolds, mine: list[Event]) -> None:
        """A streamed trace's last event fed and kept: its folds finished, its violations given their events
        (`_keep`, `_keep_run`)."""
        del self.router.traces[trace]
        self.done.add(trace)
        del self.kept[trace]  # type: ignore[union-attr]
        rows, notes = results_of(folds, self.router.counts)
        attach_events(rows, mine)
        self.found.extend(rows)
        self.unknown.extend(notes)

    def close(
        self, trace: str, folds: TraceFolds | None, counts: RuleCounts | None, mine: list[Event] | None
    ) -> tuple[list[dict], list[dict]]:
        """A streamed trace its source says is read to its end (the Spark trace pass: the next key), its
        folds taken from the router (None: dropped): its violations, their events attached from `mine` (the
        trace's events its source kept, a run of rows at a time; None: not kept), and its unknown notes;
        what its rules judged to `counts`."""
        if folds is None:
            return [], []
        rows, notes = results_of(folds, counts)
        if mine is not None:
            attach_events(rows, mine)
        return rows, notes

    def finish(self) -> tuple[list[dict], list[dict], list[Event]]:
        """Every trace's violations (report rows, events attached where at hand) and unknown notes, and the
        events the engine held (held traces'); `complete` says whether every violation has its events."""
        held = self.router.held[:]
        kept = [e for evs in (self.kept or {}).values() for e in evs]
        found, unknown = self.router.finish()
        at_hand = held + kept
        wanted = {i for v in found for i in v["event_ids"]}
        if wanted and not wanted <= {e.event_id for e in at_hand}:
            self.complete = False
        attach_events(found, at_hand)
        self.kept = None
        return self.found + found, self.unknown + unknown, held


def _long_runs(trace_ids: list[str]) -> bool:
    """Whether a part's events come in runs of one trace long enough (8 on average) to be fed a run at once."""
    return len(trace_ids) >= 8 * (1 + sum(map(ne, trace_ids, islice(trace_ids, 1, None))))


def attach_events(violations: list[dict], events: list[Event]) -> None:
    """Each violation's events (report rows, in the order it names them) from `events`."""
    wanted = {i for v in violations for i in v["event_ids"]}
    if not wanted:  # no event to look for (a clean trace): no pass over its events (issue 32, session 16)
        for v in violations:
            v["events"] = []
        return
    rows: dict[str, list[dict]] = {}
    for e in events:
        if e.event_id in wanted:
            rows.setdefault(e.event_id, []).append(e.to_row())
    for v in violations:
        v["events"] = [row for i in v["event_ids"] for row in rows.get(i, [])]


def duplicates_among(events: list[Event]) -> tuple[list[dict], dict[str, list[Event]]]:
    """TR-002 exactly over the events of the repeated hashes, in recording order."""
    same: dict[str, list[Event]] = {}
    for e in events:
        same.setdefault(e.event_id, []).append(e)
    same = {i: evs for i, evs in same.items() if len(evs) > 1}
    dups = [e for evs in same.values() for e in evs]
    out = [v.to_json() for v in duplicate_id_violations(dups)]
    attach_events(out, dups)
    return out, same
