"""The corpus-wide core rule as a Spark aggregation, and the violations' common shape.

Event-ID uniqueness (TR-002) spans the corpus: one aggregation by event ID. The per-trace core rules
(TR-001, TR-003, TR-004, TR-006) need one trace in recording order and are judged in the trace pass of
`spark_trace_check.monitors` by `conformance.check.trace_rules`, the Python engine's own function (they were
one shuffle and one Spark job each here). Violations have the common shape (rule, requirement, mechanism,
trace_id, entity, event_ids, explanation); the parity tests hold both engines together.
Input: validated events with `file_rank` and `line` (recording order = file order, then line).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from conformance.check import CORE_RULES

VIOLATION_COLUMNS = ("rule", "requirement", "mechanism", "trace_id", "entity", "event_ids", "explanation")
VIOLATION_DDL = (
    "rule string, requirement string, mechanism string, trace_id string, entity string, "
    "event_ids array<string>, explanation string"
)


def _shape(df: DataFrame, rule: str, trace: Column, entity: Column, ids: Column, why: Column) -> DataFrame:
    return df.select(
        F.lit(rule).alias("rule"),
        F.lit(CORE_RULES[rule]).alias("requirement"),
        F.lit("core").alias("mechanism"),
        trace.alias("trace_id"),
        entity.alias("entity"),
        ids.alias("event_ids"),
        why.alias("explanation"),
    )


def _order() -> Column:
    return F.struct("file_rank", "line")


def event_id_unique(ev: DataFrame) -> DataFrame:
    """TR-002: one violation per event ID used more than once."""
    dup = (
        ev.groupBy("event_id")
        .agg(
            F.count(F.lit(1)).alias("n"),
            F.min_by(F.struct("trace_id", "entity", "seq"), _order()).alias("first"),
        )
        .where("n > 1")
    )
    why = F.format_string("event ID %s appears %d times", F.col("event_id"), F.col("n"))
    return _shape(dup, "event-id-unique", F.col("first.trace_id"), F.col("first.entity"), F.array("event_id"), why)


def core_violations(ev: DataFrame) -> DataFrame:
    """The corpus-wide core rule (TR-002). The per-trace ones are judged in the trace pass (`monitors`)."""
    return event_id_unique(ev)
