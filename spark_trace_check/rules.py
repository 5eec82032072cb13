"""Mechanism-independent trace rules as Spark DataFrame -> DataFrame functions, one per rule.

Each returns violations in the common shape (rule, requirement, mechanism, trace_id, entity, event_ids,
explanation) and mirrors `conformance.check.core_violations` exactly; the parity tests hold them together.
Input: validated events with `file_rank` and `line` (recording order = file order, then line).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
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


def seq_strictly_increasing(ev: DataFrame) -> DataFrame:
    """TR-001: within a trace, seq strictly increases in recording (file, line) order."""
    w = Window.partitionBy("trace_id").orderBy("file_rank", "line")
    df = ev.select(
        "trace_id",
        "entity",
        "seq",
        "event_id",
        F.lag("seq").over(w).alias("prev_seq"),
        F.lag("event_id").over(w).alias("prev_id"),
    )
    bad = df.where("prev_seq is not null and seq <= prev_seq")
    why = F.format_string("seq %d is recorded after seq %d", F.col("seq"), F.col("prev_seq"))
    return _shape(
        bad, "seq-strictly-increasing", F.col("trace_id"), F.col("entity"), F.array("prev_id", "event_id"), why
    )


def node_clock_monotonic(ev: DataFrame) -> DataFrame:
    """TR-004: one node's timestamps never decrease in seq order."""
    w = Window.partitionBy("trace_id", "node").orderBy("seq", "file_rank", "line")
    df = ev.select(
        "trace_id",
        "node",
        "entity",
        "ts_ms",
        "event_id",
        F.lag("ts_ms").over(w).alias("prev_ts"),
        F.lag("event_id").over(w).alias("prev_id"),
    )
    bad = df.where("prev_ts is not null and ts_ms < prev_ts")
    why = F.format_string(
        "node %s records ts %d after ts %d: its clock went back %d ms",
        F.col("node"),
        F.col("ts_ms"),
        F.col("prev_ts"),
        F.col("prev_ts") - F.col("ts_ms"),
    )
    return _shape(bad, "node-clock-monotonic", F.col("trace_id"), F.col("entity"), F.array("prev_id", "event_id"), why)


def recv_after_send(ev: DataFrame) -> DataFrame:
    """TR-003: every NET_RECV has an earlier NET_SEND of the same wire, by the node it names as sender."""
    wire = F.get_json_object("attrs", "$.wire")
    sends = ev.where(F.col("kind") == "NET_SEND").select("trace_id", wire.alias("wire"), "seq", "node", "event_id")
    recvs = ev.where(F.col("kind") == "NET_RECV").select(
        "trace_id",
        wire.alias("wire"),
        F.col("seq").alias("r_seq"),
        F.col("node").alias("r_node"),
        F.col("event_id").alias("r_id"),
        F.col("entity"),
        F.get_json_object("attrs", "$.src").alias("src"),
    )
    joined = recvs.join(sends, ["trace_id", "wire"], "left").where("seq is null or seq < r_seq")
    first = joined.groupBy("trace_id", "wire", "r_id", "r_node", "entity", "src").agg(
        F.min_by(F.struct("node", "event_id"), "seq").alias("send")
    )
    missing = recvs.join(first.select("r_id"), "r_id", "left_anti")
    why_missing = F.format_string(
        "wire message %s is received by %s but was never recorded as sent before", F.col("wire"), F.col("r_node")
    )
    a = _shape(missing, "recv-after-send", F.col("trace_id"), F.col("entity"), F.array("r_id"), why_missing)
    mism = first.where("send.node is not null and (src is null or send.node != src)")
    why_mism = F.format_string(
        "wire message %s claims sender %s but was sent by %s",
        F.col("wire"),
        F.coalesce("src", F.lit("None")),
        F.col("send.node"),
    )
    b = _shape(mism, "recv-after-send", F.col("trace_id"), F.col("entity"), F.array("send.event_id", "r_id"), why_mism)
    nulls = first.where("send.node is null")
    c = _shape(nulls, "recv-after-send", F.col("trace_id"), F.col("entity"), F.array("r_id"), why_missing)
    return a.unionByName(b).unionByName(c)


def trace_start(ev: DataFrame) -> DataFrame:
    """TR-006: the first recorded event of a trace is TRACE_START with seq 0."""
    first = ev.groupBy("trace_id").agg(F.min_by(F.struct("kind", "seq", "event_id", "entity"), _order()).alias("f"))
    bad = first.where("f.kind != 'TRACE_START' or f.seq != 0")
    why = F.format_string(
        "the trace begins with %s at seq %d, not TRACE_START at seq 0", F.col("f.kind"), F.col("f.seq")
    )
    return _shape(bad, "trace-start", F.col("trace_id"), F.col("f.entity"), F.array("f.event_id"), why)


ALL_RULES = (event_id_unique, seq_strictly_increasing, node_clock_monotonic, recv_after_send, trace_start)


SIMULATED_ONLY = (recv_after_send, trace_start)  # TR-008: not applied to imported logs (conformance.rulesets)


def core_violations(ev: DataFrame) -> DataFrame:
    from conformance.rulesets import spark_simulated

    simulated = spark_simulated(ev)
    out = None
    for rule in ALL_RULES:
        df = rule(simulated if rule in SIMULATED_ONLY else ev)
        out = df if out is None else out.unionByName(df)
    assert out is not None
    return out
