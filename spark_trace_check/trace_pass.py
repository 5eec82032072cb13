"""The Spark trace pass: every row judged once, in the Python pass that feeds the folds; one shuffle.

`rows.repartition(N, key).sortWithinPartitions(key, file_rank, line).mapInArrow(fn)`: each task receives
whole traces in recording order as Arrow batches of raw rows (`spark_trace_check.raw`). Per batch, the
rows are judged column by column by the single-process engine's own functions (`traces.columnar.judge_batch`
for Parquet rows: pyarrow compute over the columns, `attrs` parsed once; `traces.rows.check_line` for
JSONL lines), and each valid event goes straight into its trace's folds: `conformance.engine.stream.
TraceFolds`, the object the single-process driver feeds (core rules TR-001/003/004/006, the trace-scope
monitors and one fold per (mechanism, entity) for the entity-scope monitors, reading the trace's context as
it grows). So the entity monitors need no shuffle of their own, no context rows are collected first, and a
rule or monitor added to the engine runs here unchanged. The pass is a source and sink around the engine's
one driver (`conformance.engine.driver.Engine`, issue 32): each run of rows of one key from one file goes in
as a part (`traces.io.ReadResult`), and the engine's read loop counts, keeps the quarantine rows and hashes,
and feeds its router, which checks seq order as rows come (`Router.watch`, no index being at hand) and
continues saved folds (`Router.restored`). The pass emits violations, unknown notes, quarantined rows and
per-mechanism counts (`OUT_DDL`, told apart by `kind`), and the events of the rows the driver marked
`wanted` (TR-002's candidates, `CANDIDATE_KIND`), found per batch.

Incremental checking (`keep`, a `Keep`): the pass also emits each streamed trace's pickled folds before
they finish (`FOLDS_KIND`) and, once per task, the stable hashes of the event IDs it read with where each
event was read (`HASHES_KIND`, packed in `blob` by `conformance.locations.pack_located`: the driver puts them
in file order and marks where they were read), the two parts of the state `conformance.engine.statedir`
saves; a trace whose folds
were saved (`Keep.restored`, only the traces the new rows touch) continues them, and one whose new events
do not go on in seq is named in a `HELD_KIND` row with the reason (the driver refuses to continue it).

A trace whose rows break seq order (TR-001), or whose parsed trace ID differs from the shuffle key, has its
folds dropped and is named in a `HELD_KIND` row: the driver judges it again with `whole=True`, which holds
such traces and judges them with `conformance.engine.stream.judge_whole`, as the single-process engine judges
a held trace. The order seen inside `fn` is planner behaviour, not a contract: it is checked, and a break
fails loudly (`OrderBroken`).

A task of the pass may be tried again (a lost Python worker, issue 35): its rows reach the driver only through
`collect()` (or `toLocalIterator`), never accumulators, so a retried task's rows, counts and folds count once.
"""

from __future__ import annotations

import json
import pickle
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from conformance.check import OrderBroken
from conformance.engine import driver
from conformance.engine.driver import Engine, attach_events
from conformance.engine.statedir import stable_hash
from conformance.engine.stream import Router, Runs, judge_whole
from conformance.engine.tally import RuleCounts
from conformance.locations import pack_located
from model.registry import monitor_runs
from spark_trace_check.faults import die_once, kill_marker
from spark_trace_check.raw import RAW_COLUMNS, Judgement, judge_rows
from traces.io import ReadResult, RowError
from traces.schema import Event
from traces.verdict import Monitor

__all__ = [
    "CANDIDATE_KIND",
    "FOLDS_KIND",
    "HASHES_KIND",
    "HELD_KIND",
    "OUT_DDL",
    "TALLY_KIND",
    "Keep",
    "OrderBroken",
    "judge_rows",
    "keyed",
    "rule_counts",
    "trace_pass",
    "violation_row",
]

OUT_DDL = (
    "kind string, rule string, requirement string, mechanism string, trace_id string, entity string, "
    "event_ids array<string>, explanation string, file_rank int, line bigint, field string, reason string, "
    "count bigint, blob binary, data string, events string"
)
_OUT_SCHEMA = pa.schema(
    [(c.split(" ")[0], pa.list_(pa.string()) if "array" in c else pa.string()) for c in OUT_DDL.split(", ")[:8]]
    + [("file_rank", pa.int32()), ("line", pa.int64()), ("field", pa.string()), ("reason", pa.string())]
    + [("count", pa.int64()), ("blob", pa.binary()), ("data", pa.string()), ("events", pa.string())]
)
VIOLATION_KIND, UNKNOWN_KIND, QUARANTINE_KIND, COUNT_KIND, HELD_KIND = "v", "u", "q", "n", "h"
FOLDS_KIND, HASHES_KIND, TALLY_KIND = "f", "x", "t"
CANDIDATE_KIND = "c"  # a raw row marked `wanted` (TR-002's candidates): its event pickled in `blob` (None: invalid)

Factory = Callable[[], Monitor]


class Keep:
    """What the trace pass keeps for incremental checking: `restored` (a broadcast value, or a dict) holds
    the pickled folds of the saved traces the new rows touch; `repeated`: the stable ID hashes the saved
    state saw repeated, whose new events the pass sends back (`CANDIDATE_KIND`, TR-002 with no file read
    again when no hash repeats for the first time, `conformance.engine.resume.duplicates`)."""

    def __init__(self, restored, repeated: frozenset[int] = frozenset()) -> None:
        self.restored = restored
        self.repeated = repeated

    def folds(self) -> dict[str, bytes]:
        value = self.restored
        return value if isinstance(value, dict) else value.value


class _KeyedRouter(Router):
    """The engine's router (`watch`: traces are checked for seq order as they are read, no index being
    at hand) that folds only events of the trace the shuffle key names (`key`); another trace's event is
    named in `misread` (the JVM read its key otherwise) and not folded: its trace is judged whole."""

    def __init__(self, runs: Runs, restored: dict[str, bytes] | None) -> None:
        super().__init__(runs, None, watch=True, restored=restored)
        self.key: str | None = None
        self.misread: list[str] = []

    def feed(self, e: Event) -> None:
        if e.trace_id != self.key:
            self.misread.append(e.trace_id)
            return
        self.watched(e)


class _Pass:
    """One task of the trace pass (see the module): a source and sink around the engine's one driver
    (`conformance.engine.driver.Engine`: the read loop, counts, quarantine rows, hashes; its router checks
    seq order and continues saved folds), or, `held`, the held traces' events collected and judged whole."""

    def __init__(
        self,
        skew_ms: int | None,
        held: frozenset[str] | None,
        extra: Sequence[tuple[str, Factory]],
        keep: Keep | None = None,
    ) -> None:
        self.runs = monitor_runs(skew_ms) + [(name, factory()) for name, factory in extra]
        self.held = held  # None: the streaming pass
        self.kept: dict[str, list[tuple[int, int, Event]]] = {}
        self.out: list[dict] = []
        self.last: tuple | None = None
        self.key: bytes | None = None
        self.restored = keep.folds() if keep is not None else None  # None: keep nothing
        self.repeated = keep.repeated if keep is not None else frozenset()
        self.router = _KeyedRouter(self.runs, self.restored)
        self.ranks, self.lines = array("i"), array("q")  # incremental: where each hashed event was read
        hash_of = stable_hash if self.restored is not None else None
        self.engine = Engine([], None, router=self.router, hash_of=hash_of)
        self.events: list[Event] | None = []  # the key's trace's events, kept a run at a time (`close_trace`)
        self.told = 0  # the router's dropped traces already named in HELD rows
        self.rules = RuleCounts()  # what the rules judged: one row per task, or per trace when incremental

    def batch(self, batch: pa.RecordBatch) -> None:
        keys, ranks, lines = (batch.column(c).to_pylist() for c in ("key", "file_rank", "line"))
        judged = judge_rows(batch)
        if "wanted" in batch.schema.names:  # TR-002's candidates, marked by the driver: kept in this one read
            self._candidates(batch.column("wanted"), ranks, lines, judged)
        begin = 0
        for i, (key, rank, line) in enumerate(zip(keys, ranks, lines, strict=True)):
            where = (key is not None, key or b"", rank, line)
            if self.last is not None and where <= self.last:
                raise OrderBroken(f"trace pass: row {where} arrived after {self.last}")
            self.last = where
            if i > begin and (key != keys[begin] or rank != ranks[begin]):
                self._run(keys[begin], ranks[begin], lines[begin:i], judged[begin:i])
                begin = i
        if begin < len(keys):
            self._run(keys[begin], ranks[begin], lines[begin:], judged[begin:])

    def _candidates(self, wanted: pa.Array, ranks: list[int], lines: list[int], judged: list[Judgement]) -> None:
        """One `CANDIDATE_KIND` row per raw row of the batch marked `wanted` (found per batch, not per row),
        so the driver resolves TR-002 from the events of this read and knows it got every marked row."""
        for i in pc.indices_nonzero(wanted.fill_null(False)).to_pylist():
            event = judged[i][0]
            blob = pickle.dumps(event, pickle.HIGHEST_PROTOCOL) if event is not None else None
            self.out.append({"kind": CANDIDATE_KIND, "file_rank": ranks[i], "line": lines[i], "blob": blob})

    def _run(self, key: bytes | None, rank: int, lines: list[int], judged: list[Judgement]) -> None:
        """Rows of one trace key from one file, in recording order: into the engine (or held)."""
        if self.held is not None:
            for line, (event, _) in zip(lines, judged, strict=True):
                if event is not None and event.trace_id in self.held:
                    self.kept.setdefault(event.trace_id, []).append((rank, line, event))
            return
        if key != self.key:
            self.close_trace()
            self.key = key
            self.router.key = key.decode("utf-8", "replace") if key is not None else None
        part = ReadResult(rows_read=len(judged))
        for line, (event, problem) in zip(lines, judged, strict=True):
            if event is not None:
                part.events.append(event)
            else:
                part.errors.append(RowError("", line, problem.field, problem.reason))  # type: ignore[union-attr]
        self.engine.read(rank, "", (part,))
        if self.restored is not None and part.events:  # every event is hashed: its place kept beside its hash
            at = [line for line, (e, _) in zip(lines, judged, strict=True) if e is not None]
            self.ranks.extend([rank] * len(at))
            self.lines.extend(at)
            if self.repeated:
                self._repeated(rank, at, part)
        if self.events is not None:  # kept per run, not per event; another trace's (misread) left out
            mine = part.events if not self.router.misread else [e for e in part.events if e.trace_id == self.router.key]
            self.events.extend(mine)
            if len(self.events) > driver.KEEP_EVENTS:  # too many: the driver fetches this trace's events
                self.events = None
        self.out.extend(
            {"kind": QUARANTINE_KIND, "file_rank": rank, "line": q["line"], "field": q["field"], "reason": q["reason"]}
            for q in self.engine.quarantine
        )
        self.engine.quarantine.clear()
        key_text, router = self.router.key, self.router
        self.out.extend(_held(trace, key_text) for trace in router.misread)
        router.misread.clear()
        if len(router.dropped) > self.told:
            for trace, why in islice(router.dropped.items(), self.told, None):
                self.out.append({**_held(trace, key_text), "explanation": why} if why else _held(trace, key_text))
            self.told = len(router.dropped)

    def _repeated(self, rank: int, lines: list[int], part: ReadResult) -> None:
        """The events of `part` (at `lines`) whose ID hash the saved state saw repeated (`Keep.repeated`),
        from the hashes the engine just kept: one `CANDIDATE_KIND` row each."""
        mine = self.engine.hashes[len(self.engine.hashes) - len(part.events) :]
        for line, e, h in zip(lines, part.events, mine, strict=True):
            if h in self.repeated:
                blob = pickle.dumps(e, pickle.HIGHEST_PROTOCOL)
                self.out.append({"kind": CANDIDATE_KIND, "file_rank": rank, "line": line, "blob": blob})

    def close_trace(self) -> None:
        """The trace of the key read so far: its violations, their events from those kept with its runs."""
        trace, mine, self.events = self.router.key, self.events, []
        if trace is None:
            return
        folds = self.router.traces.pop(trace, None)
        if folds is not None and self.restored is not None:
            blob = pickle.dumps(folds, protocol=pickle.HIGHEST_PROTOCOL)  # before they finish
            rank = self.engine.last_rank[trace]
            self.out.append({"kind": FOLDS_KIND, "trace_id": trace, "blob": blob, "file_rank": rank})
        counts = RuleCounts() if self.restored is not None else self.rules
        found, notes = self.engine.close(trace, folds, counts, mine)
        if folds is not None:
            self._emit(trace, found, notes, counts)
        self.router.key = None

    def _emit(self, trace: str, found: list[dict], notes: list[dict], counts: RuleCounts) -> None:
        self.out.extend({"kind": VIOLATION_KIND, **v, "data": _data(v), "events": _events(v)} for v in found)
        if counts is not self.rules:  # incremental: each trace's own counts, saved with its results
            self.out.append(
                {"kind": TALLY_KIND, "trace_id": trace, "blob": pickle.dumps(counts, pickle.HIGHEST_PROTOCOL)}
            )
        self.out.extend(
            {"kind": UNKNOWN_KIND, "trace_id": trace, "mechanism": u["mechanism"], "explanation": u["note"]}
            for u in notes
        )

    def finish(self) -> None:
        self.close_trace()
        for trace in sorted(self.kept):
            events = [e for _, _, e in sorted(self.kept[trace], key=lambda x: (x[0], x[1]))]
            notes: list[dict] = []
            counts = RuleCounts() if self.restored is not None else self.rules
            found = judge_whole(events, self.runs, notes, counts)
            attach_events(found, events)
            self._emit(trace, found, notes, counts)
        self.kept = {}
        if self.restored is None:
            self.out.append({"kind": TALLY_KIND, "blob": pickle.dumps(self.rules, pickle.HIGHEST_PROTOCOL)})
        by_mech = self.engine.by_mechanism
        self.out.extend({"kind": COUNT_KIND, "mechanism": m, "count": n} for m, n in sorted(by_mech.items()))
        if self.restored is not None:
            blob = pack_located(self.engine.hashes, self.ranks, self.lines)
            self.out.append({"kind": HASHES_KIND, "blob": blob})

    def drain(self) -> pa.RecordBatch:
        out, self.out = self.out, []
        return pa.RecordBatch.from_pylist(out, schema=_OUT_SCHEMA)


def _data(v: dict) -> str | None:
    """A violation's structured values (`traces.verdict.Violation.data`) as JSON text for the Arrow row."""
    return json.dumps(v["data"], sort_keys=True) if v.get("data") else None


def _events(v: dict) -> str | None:
    """A violation's events (report rows), attached in the pass from the events it kept, as JSON text; None
    when the pass did not keep them (the driver fetches those)."""
    return json.dumps(v["events"]) if "events" in v else None


def violation_row(r: Any, columns: Sequence[str]) -> dict:
    """A report row of a collected violation row: its columns, its data and its events (when the pass
    attached them) parsed back."""
    out = {c: r[c] for c in columns}
    if r["data"] is not None:
        out["data"] = json.loads(r["data"])
    if r["events"] is not None:
        out["events"] = json.loads(r["events"])
    return out


def rule_counts(rows: Iterable[Any], dropped: set[str] = frozenset()) -> RuleCounts:  # type: ignore[assignment]
    """The tallies of the pass's TALLY rows merged (the per-trace rows of traces in `dropped` left out)."""
    counts = RuleCounts()
    for r in rows:
        if r["trace_id"] is None or r["trace_id"] not in dropped:
            counts.merge(pickle.loads(r["blob"]))
    return counts


def _held(trace_id: str, key: str | None) -> dict:
    return {"kind": HELD_KIND, "trace_id": trace_id, "entity": key}


def make_runner(
    skew_ms: int | None,
    held: frozenset[str] | None,
    extra: Sequence[tuple[str, Factory]] = (),
    keep: Keep | None = None,
) -> Callable:
    """The `mapInArrow` function of the trace pass (`held` None) or of the held traces' pass; `extra`:
    (name, factory) monitors run beside the registered ones (tests); `keep`: incremental checking."""

    marker = kill_marker()  # test-only (spark_trace_check.faults): None in any real check

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        state = _Pass(skew_ms, held, extra, keep)
        first = marker is not None
        with state.engine.reading():  # the collector paused (`conformance.engine.collector`)
            for batch in batches:
                state.batch(batch)
                if len(state.out) >= 1000 or first:
                    yield state.drain()
                if first:  # a batch judged and its rows sent: a retry must not count them twice
                    first = False
                    die_once(marker)
            state.finish()
        yield state.drain()

    return run


_PASSED = [c for c in RAW_COLUMNS if c not in ("key", "id")]  # `id` serves the JVM's TR-002 aggregation only


def _passed(rows: DataFrame) -> list[str]:
    """The columns the Python pass gets: the raw row's, and `wanted` when the driver marked TR-002's candidates."""
    return _PASSED + (["wanted"] if "wanted" in rows.columns else [])


def keyed(rows: DataFrame) -> DataFrame:
    return rows.select(F.col("key").cast("binary").alias("key"), *_passed(rows))


def trace_pass(
    rows: DataFrame,
    partitions: int,
    skew_ms: int | None,
    held: frozenset[str] | None = None,
    extra: Sequence[tuple[str, Factory]] = (),
    keep: Keep | None = None,
) -> DataFrame:
    """Every row judged and every trace folded (see the module): one shuffle by trace, sorted by recording
    order within each partition. With `held`, only those traces are judged, each whole; with `keep`, the
    folds and event-ID hashes are emitted too (incremental checking). A boolean column `wanted` (TR-002's
    candidates, `spark_trace_check.job.mark_candidates`) has each marked row's event sent back (`CANDIDATE_KIND`)."""
    ordered = rows.select("key", *_passed(rows)).repartition(partitions, "key")
    ordered = ordered.sortWithinPartitions("key", "file_rank", "line")
    return keyed(ordered).mapInArrow(make_runner(skew_ms, held, extra, keep), OUT_DDL)
