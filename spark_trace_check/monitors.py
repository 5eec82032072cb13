"""Run the core trace rules and the mechanism monitors inside Spark: one shuffle per scope, one pass each.

`repartition(N, key).sortWithinPartitions(...).mapInArrow(fn)`: the fastest ordered per-entity form
measured in the field notes, and it never holds more than one group in memory. The grouping and the
monitor runs are the engine's own `conformance.check.ScopeStream`, the same object the Python engine
drives, so the two engines cannot group differently. The trace pass always runs (whether or not a
trace-scope monitor is registered): it receives each trace in recording order (file, line), judges the
core rules TR-001, TR-003, TR-004, TR-006 with `conformance.check.trace_rules` (the very function of the
Python engine; TR-008 decides which apply), then feeds the trace in seq order (stable, so equal seqs keep
recording order) to the trace-scope monitors. Event-ID uniqueness (TR-002) is corpus-wide and stays one
aggregation (`spark_trace_check.rules`). The order seen inside `fn` is planner behaviour, not a contract:
both orders are checked and a break fails loudly (`OrderBroken`). Rows become `Event`s column-wise (one
`to_pydict` per batch, `attrs` parsed once), without an intermediate dict per row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from conformance.check import Judged, OrderBroken, ScopeStream, trace_rules
from conformance.engine.collector import PausedCollector
from conformance.engine.core_fold import TraceRulesFold
from conformance.engine.folds import GroupFolds
from spark_trace_check.cluster import ship_code
from spark_trace_check.rules import VIOLATION_COLUMNS, VIOLATION_DDL
from traces.schema import CONTEXT_START, CONTEXT_SUFFIX, FIELD_NAMES, Event
from traces.verdict import Monitor, Verdict

__all__ = ["HELD_RULE", "UNKNOWN_RULE", "OrderBroken", "held_violations", "monitor_violations", "trace_context_rows"]

_VIOLATION_SCHEMA = pa.schema(
    [
        ("rule", pa.string()),
        ("requirement", pa.string()),
        ("mechanism", pa.string()),
        ("trace_id", pa.string()),
        ("entity", pa.string()),
        ("event_ids", pa.list_(pa.string())),
        ("explanation", pa.string()),
    ]
)
UNKNOWN_RULE = "__unknown__"
HELD_RULE = "__held__"  # a trace recorded out of seq order: the driver judges it whole (`held_violations`)
Factory = Callable[[], Monitor]


def unknown_row(name: str, first: Event, note: str) -> dict:
    """A monitor could not judge a group: carried beside the violations, counted apart."""
    return {
        "rule": UNKNOWN_RULE,
        "requirement": "",
        "mechanism": name,
        "trace_id": first.trace_id,
        "entity": first.entity,
        "event_ids": [],
        "explanation": note,
    }


def result_rows(judged: Sequence[Judged]) -> list[dict]:
    """Violation rows and unknown rows of judged groups, in the report's row shape."""
    out: list[dict] = []
    for name, first, result in judged:
        out.extend(v.to_json() for v in result.violations)
        if result.verdict is Verdict.UNKNOWN:
            out.extend(unknown_row(name, first, note) for note in result.notes)
    return out


def batch_events(batch: pa.RecordBatch) -> Iterator[Event]:
    """The rows of an Arrow batch (columns FIELD_NAMES, attrs as JSON text) as Events, column-wise."""
    cols = batch.to_pydict()
    loads = json.loads
    for sv, trace, seq, eid, ts, node, mech, entity, kind, attrs in zip(*(cols[n] for n in FIELD_NAMES), strict=True):
        yield Event(trace, seq, eid, ts, node, mech, entity, kind, loads(attrs), sv)


def batch_recorded(batch: pa.RecordBatch) -> Iterator[tuple[tuple[int, int], Event]]:
    """As `batch_events`, each event with its recording position (file rank, line)."""
    ranks, lines = batch.column("file_rank").to_pylist(), batch.column("line").to_pylist()
    for rank, line, event in zip(ranks, lines, batch_events(batch.select(list(FIELD_NAMES))), strict=True):
        yield (rank, line), event


def trace_context_rows(events: DataFrame) -> dict[str, list[dict]]:
    """Each trace's context rows (TRACE_START and `*_CONFIG` events), collected once on the driver.

    They are few per trace (a start and the configuration changes), so they travel to the workers with
    the monitor function instead of being joined onto every row.
    """
    rows = (
        events.where((F.col("kind") == CONTEXT_START) | F.col("kind").endswith(CONTEXT_SUFFIX))
        .select(*FIELD_NAMES)
        .collect()
    )
    found: dict[str, list[dict]] = {}
    for r in rows:
        found.setdefault(r["trace_id"], []).append(r.asDict())
    for evs in found.values():
        evs.sort(key=lambda row: row["seq"])
    return found


def _context_lookup(context_rows: dict[str, list[dict]]) -> Callable[[str], list[Event]]:
    """A trace's context events, built from the broadcast rows once per trace and worker."""
    contexts: dict[str, list[Event]] = {}

    def context_of(trace_id: str) -> list[Event]:
        if trace_id not in contexts:
            contexts[trace_id] = [Event.from_row(row) for row in context_rows.get(trace_id, [])]
        return contexts[trace_id]

    return context_of


def make_scope_runner(scope: str, runs: Sequence[tuple[str, Factory]], context_rows: dict[str, list[dict]]):
    """The mapInArrow function running every (name, factory) monitor of one scope in one pass."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context_of = _context_lookup(context_rows)
        stream = ScopeStream(scope, [(name, factory()) for name, factory in runs], context_of)
        out: list[dict] = []
        with PausedCollector() as collector:  # conformance.engine.collector
            for batch in batches:
                collector.read(batch.num_rows)
                for event in batch_events(batch):
                    judged = stream.feed(event)
                    if judged:
                        out.extend(result_rows(judged))
                if len(out) >= 1000:
                    yield pa.RecordBatch.from_pylist(out, schema=_VIOLATION_SCHEMA)
                    out = []
            out.extend(result_rows(stream.close()))
        if out:
            yield pa.RecordBatch.from_pylist(out, schema=_VIOLATION_SCHEMA)

    return run


def make_trace_runner(runs: Sequence[tuple[str, Factory]], context_rows: dict[str, list[dict]], whole: bool = False):
    """The mapInArrow function of the trace pass: core trace rules and every trace-scope monitor, per trace.

    Rows arrive sorted by (trace, file rank, line). A trace recorded in seq order streams into its folds
    (`conformance.engine.core_fold.TraceRulesFold`, `conformance.engine.folds.GroupFolds`) and is never held.
    At a row whose seq does not exceed the previous one (a TR-001 break), the trace's folds are dropped and
    a `HELD_RULE` row names the trace: the driver judges it again with `whole=True`, which holds each trace
    and judges it with `conformance.check.trace_rules` and the monitors in seq order, as the Python engine
    judges such a trace."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context_of = _context_lookup(context_rows)
        monitors = [(name, factory()) for name, factory in runs]
        out: list[dict] = []
        state = _TraceState(monitors, context_of, whole)
        with PausedCollector() as collector:  # conformance.engine.collector
            for batch in batches:
                collector.read(batch.num_rows)
                for position, event in batch_recorded(batch):
                    found = state.feed(event, position)
                    if found:
                        out.extend(found)
                if len(out) >= 1000:
                    yield pa.RecordBatch.from_pylist(out, schema=_VIOLATION_SCHEMA)
                    out = []
            out.extend(state.close())
        if out:
            yield pa.RecordBatch.from_pylist(out, schema=_VIOLATION_SCHEMA)

    return run


class _TraceState:
    """The trace being judged in one partition of the trace pass (see `make_trace_runner`)."""

    def __init__(self, monitors: list[tuple[str, Monitor]], context_of: Callable[[str], list[Event]], whole: bool):
        self.monitors, self.context_of, self.whole = monitors, context_of, whole
        self.last: tuple | None = None
        self.held: list[Event] = []  # whole=True: the trace's events
        self.core: TraceRulesFold | None = None
        self.folds: GroupFolds | None = None
        self.seq = -1
        self.dropped = False

    def feed(self, event: Event, position: tuple[int, int]) -> list[dict]:
        where = (event.trace_id, *position)
        if self.last is not None and where <= self.last:
            raise OrderBroken(f"trace pass: row {where} arrived after {self.last}")
        out = self.close() if self.last is not None and event.trace_id != self.last[0] else []
        self.last = where
        if self.whole:
            self.held.append(event)
        elif self.dropped:
            pass
        elif event.seq <= self.seq:  # recorded out of seq order: judged whole by a second pass
            self.core = self.folds = None
            self.dropped = True
            out.append({**unknown_row("", event, ""), "rule": HELD_RULE})
        else:
            if self.core is None:
                self.core = TraceRulesFold(event.trace_id)
                context = self.context_of(event.trace_id)
                self.folds = GroupFolds("trace", self.monitors, event, context) if self.monitors else None
            self.seq = event.seq
            self.core.feed(event)
            if self.folds is not None:
                self.folds.feed(event)
        return out

    def close(self) -> list[dict]:
        found: list[dict] = []
        if self.held:
            group, self.held = self.held, []
            found = [v.to_json() for v in trace_rules(group[0].trace_id, group)]
            if self.monitors:
                stream = ScopeStream("trace", self.monitors, self.context_of)
                for event in sorted(group, key=lambda e: e.seq):  # stable: equal seqs keep recording order
                    stream.feed(event)
                found.extend(result_rows(stream.close()))
        elif self.core is not None:
            found = [v.to_json() for v in self.core.finish()]
            if self.folds is not None:
                found.extend(result_rows(self.folds.finish()))
        self.core = self.folds = None
        self.seq, self.dropped = -1, False
        return found


def _trace_pass(events: DataFrame, partitions: int, runs, context_rows, whole: bool) -> DataFrame:
    return (
        events.repartition(partitions, "trace_id")
        .sortWithinPartitions("trace_id", "file_rank", "line")
        .select(*FIELD_NAMES, "file_rank", "line")
        .mapInArrow(make_trace_runner(runs, context_rows, whole), VIOLATION_DDL)
    )


def held_violations(
    events: DataFrame, traces: list[str], partitions: int, runs: Sequence[tuple[str, Factory]]
) -> DataFrame:
    """The trace pass again for the traces the streaming pass handed back (`HELD_RULE`), each judged whole."""
    trace_runs = [(n, f) for n, f in runs if f().scope == "trace"]
    chosen = events.where(F.col("trace_id").isin(traces))
    context_rows = trace_context_rows(chosen) if trace_runs else {}
    return _trace_pass(chosen, partitions, trace_runs, context_rows, whole=True).select(*VIOLATION_COLUMNS)


def monitor_violations(
    events: DataFrame, partitions: int, runs: Sequence[tuple[str, Factory]]
) -> tuple[DataFrame, list[str]]:
    """Violations of the core trace rules and of the monitors `runs` (name, factory; the registry's list,
    `model.registry.monitor_factories`), and the monitors' names.

    One shuffle per scope: the trace pass (core trace rules and every trace-scope monitor) keyed by trace,
    in recording order; the entity-scope monitors share one `mapInArrow` pass over the rows of their
    mechanisms keyed by (trace, mechanism, entity), in seq order.
    """
    ship_code(events.sparkSession)  # the Python workers of a real cluster import the monitors from it
    names = [name for name, _ in runs]
    by_scope: dict[str, list[tuple[str, Factory]]] = {"trace": []}
    records: set[str] = set()
    for name, factory in runs:
        monitor = factory()
        by_scope.setdefault(monitor.scope, []).append((name, factory))
        if monitor.scope == "entity":
            records.add(monitor.mechanism)
    context_rows = trace_context_rows(events) if runs else {}
    cols = list(FIELD_NAMES)
    result = _trace_pass(events, partitions, by_scope["trace"], context_rows, whole=False).select(*VIOLATION_COLUMNS)
    if by_scope.get("entity"):
        keys = ("trace_id", "mechanism", "entity")
        # equal seq: recording order (file, line), the order the Python engine's stable sort keeps
        entity = (
            events.where(F.col("mechanism").isin(sorted(records)))
            .repartition(partitions, *keys)
            .sortWithinPartitions(*keys, "seq", "file_rank", "line")
            .select(*cols)
            .mapInArrow(make_scope_runner("entity", by_scope["entity"], context_rows), VIOLATION_DDL)
        )
        result = result.unionByName(entity.select(*VIOLATION_COLUMNS))
    return result, names
