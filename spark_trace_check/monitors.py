"""Run the mechanism monitors inside Spark, streaming one entity (or one trace) at a time.

`repartition(N, key).sortWithinPartitions(key, seq).mapInArrow(fn)`: the fastest ordered per-entity form
measured in the field notes, and it never holds more than one group in memory. Groups are cut at key
changes and carried across Arrow batches. The order seen inside `fn` is planner behaviour, not a
contract, so `fn` checks it and fails loudly if it breaks. The monitors are the same objects the
pure-Python checker runs (`conformance.check.run_monitor`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from conformance.monitor import Monitor, Verdict
from spark_trace_check.rules import VIOLATION_COLUMNS, VIOLATION_DDL
from traces.schema import CONTEXT_START, CONTEXT_SUFFIX, FIELD_NAMES, Event

_VIOLATION_SCHEMA = pa.schema([
    ("rule", pa.string()), ("requirement", pa.string()), ("mechanism", pa.string()), ("trace_id", pa.string()),
    ("entity", pa.string()), ("event_ids", pa.list_(pa.string())), ("explanation", pa.string()),
])


UNKNOWN_RULE = "__unknown__"


def unknown_row(mechanism: str, first: Event, note: str) -> dict:
    """A monitor could not judge a group: carried beside the violations, counted apart."""
    return {"rule": UNKNOWN_RULE, "requirement": "", "mechanism": mechanism, "trace_id": first.trace_id,
            "entity": first.entity, "event_ids": [], "explanation": note}


class OrderBroken(RuntimeError):
    """Rows reached a monitor out of (key, seq) order: the plan no longer sorts as assumed."""


def _to_batch(rows: list[dict]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=_VIOLATION_SCHEMA)


def trace_context_rows(events: DataFrame) -> dict[str, list[dict]]:
    """Each trace's context rows (TRACE_START and `*_CONFIG` events), collected once on the driver.

    They are few per trace (a start and the configuration changes), so they travel to the workers with
    the monitor function instead of being joined onto every row.
    """
    rows = (events.where((F.col("kind") == CONTEXT_START) | F.col("kind").endswith(CONTEXT_SUFFIX))
            .select(*FIELD_NAMES).collect())
    found: dict[str, list[dict]] = {}
    for r in rows:
        found.setdefault(r["trace_id"], []).append(r.asDict())
    for evs in found.values():
        evs.sort(key=lambda row: row["seq"])
    return found


def make_runner(mechanism: str, scope: str, factory: Callable[[], Monitor] | None = None,
                context_rows: dict[str, list[dict]] | None = None):
    """The mapInArrow function for one monitor: a registered mechanism's, or one made by `factory`."""
    context_rows = context_rows or {}

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from model.registry import get

        monitor = factory() if factory is not None else get(mechanism).monitor()  # type: ignore[misc]
        contexts: dict[str, list[Event]] = {}

        def context_of(trace_id: str) -> list[Event]:
            if trace_id not in contexts:
                contexts[trace_id] = [Event.from_row({**row, "attrs": json.loads(row["attrs"])})
                                      for row in context_rows.get(trace_id, [])]
            return contexts[trace_id]

        group: list[Event] = []
        key: tuple[str, ...] | None = None
        last: tuple | None = None
        out: list[dict] = []

        def flush() -> None:
            if group and (scope == "entity" or any(e.mechanism == monitor.mechanism for e in group)):
                result = monitor.check(group, context_of(group[0].trace_id))
                out.extend(v.to_json() for v in result.violations)
                if result.verdict is Verdict.UNKNOWN:
                    out.extend(unknown_row(mechanism, group[0], note) for note in result.notes)

        for batch in batches:
            for row in batch.to_pylist():
                row["attrs"] = json.loads(row["attrs"])
                event = Event.from_row(row)
                k = (event.trace_id,) if scope == "trace" else (event.trace_id, event.entity)
                position = (*k, event.seq)
                if last is not None and position < last:
                    raise OrderBroken(f"monitor {mechanism}: row {position} arrived after {last}")
                last = position
                if k != key:
                    flush()
                    group, key = [], k
                group.append(event)
            if len(out) >= 1000:
                yield _to_batch(out)
                out = []
        flush()
        if out:
            yield _to_batch(out)

    return run


def monitor_violations(
    events: DataFrame, partitions: int, extra: Sequence[tuple[str, Callable[[], Monitor]]] = ()
) -> tuple[DataFrame | None, list[str]]:
    """Violations of every registered monitor and of the `extra` (name, factory) ones, and their names."""
    from model.registry import mechanisms

    cols = list(FIELD_NAMES)
    result: DataFrame | None = None
    names: list[str] = []
    runs = [(n, s.monitor, s.records) for n, s in mechanisms().items() if s.monitor is not None]
    runs += [(n, f, f().mechanism) for n, f in extra]
    context_rows = trace_context_rows(events) if runs else {}
    for name, factory, records in runs:
        scope = factory().scope
        names.append(name)
        if scope == "trace":
            df = events.select(*cols).repartition(partitions, "trace_id").sortWithinPartitions("trace_id", "seq")
        else:
            df = (events.where(F.col("mechanism") == records).select(*cols)
                  .repartition(partitions, "trace_id", "entity").sortWithinPartitions("trace_id", "entity", "seq"))
        found = df.mapInArrow(make_runner(name, scope, factory, context_rows), VIOLATION_DDL).select(*VIOLATION_COLUMNS)
        result = found if result is None else result.unionByName(found)
    return result, names
