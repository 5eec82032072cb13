"""Trace ordering under clock skew: hand-made traces for each of the four verdicts, and the API the
Spark checker uses (per-entity classification, pair bounds merged across entities, one solve per trace)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from spec.claims.skew import (
    DEFAULT_ORDERINGS,
    NET_SEND_BEFORE_RECV,
    SR_ORDERINGS,
    Ordering,
    apply_conflicts,
    check_skew,
    classify,
    merge_pair_bounds,
    pair_bounds,
    resolve,
    to_violations,
)
from spec.claims.skew_graph import conflicting_pairs
from traces.io import read_events
from traces.schema import Event

SAMPLES = Path(__file__).resolve().parents[2] / "traces" / "samples"


def msg(wire: str, src: str, sent: int, dst: str, received: int) -> list[tuple]:
    """One message as plain tuples (event_id, node, ts_ms, kind, entity, attrs)."""
    attrs = {"wire": wire}
    return [
        (f"{wire}.s", src, sent, "NET_SEND", f"{src}->{dst}", attrs),
        (f"{wire}.r", dst, received, "NET_RECV", f"{src}->{dst}", attrs),
    ]


def verdicts(report) -> list[str]:
    return verdicts_of(report.instances)


def verdicts_of(instances) -> list[str]:
    return [i.verdict for i in instances]


@pytest.mark.unit
def test_consistent_receive_clearly_after_send() -> None:
    report = check_skew(msg("w1", "a", 1_000, "b", 1_100), 10)
    assert verdicts(report) == ["consistent"] and report.verdict == "consistent"
    assert report.min_skew_ms == 0


@pytest.mark.unit
def test_violation_receive_before_send_beyond_any_allowed_skew() -> None:
    report = check_skew(msg("w1", "a", 1_100, "b", 1_000), 10)
    assert verdicts(report) == ["violation"]
    assert "100 ms before" in report.instances[0].explanation
    assert report.min_skew_ms == 50  # offsets +50 / -50 would explain it


@pytest.mark.unit
def test_ambiguous_within_the_skew() -> None:
    report = check_skew(msg("w1", "a", 1_010, "b", 1_005), 10)
    assert verdicts(report) == ["ambiguous"]
    assert report.min_skew_ms == 3  # ceil(5 / 2)


@pytest.mark.unit
def test_inconsistent_each_fits_alone_but_not_together() -> None:
    # a->b and b->c each 15 ms "early" (fits 10+10 ms alone), so c's clock would be 30 ms behind a's: > 20.
    events = msg("w1", "a", 1_015, "b", 1_000) + msg("w2", "b", 2_015, "c", 2_000) + msg("w3", "a", 3_000, "c", 3_500)
    report = check_skew(events, 10)
    assert verdicts(report) == ["inconsistent", "inconsistent", "consistent"]
    assert report.verdict == "inconsistent"
    assert report.min_skew_ms == 15
    assert check_skew(events, 15).verdict == "ambiguous"  # a larger bound explains the trace


@pytest.mark.unit
def test_cycle_no_skew_explains() -> None:
    events = msg("w1", "a", 1_010, "b", 1_000) + msg("w2", "b", 2_010, "a", 2_000)
    report = check_skew(events, 10)
    assert verdicts(report) == ["inconsistent", "inconsistent"]
    assert report.min_skew_ms is None


@pytest.mark.unit
def test_per_node_bounds_and_default() -> None:
    events = msg("w1", "a", 1_030, "b", 1_000)
    assert check_skew(events, {"a": 5, "b": 5}).verdict == "violation"
    assert check_skew(events, {"a": 25, "*": 5}).verdict == "ambiguous"
    with pytest.raises(KeyError, match="no skew bound for node 'b'"):
        check_skew(events, {"a": 25})


@pytest.mark.unit
def test_same_node_and_unmatched_receive_are_violations_whatever_the_skew() -> None:
    same = msg("w1", "a", 1_000, "a", 999)
    assert verdicts(check_skew(same, 1_000)) == ["violation"]
    orphan = msg("w1", "a", 1_000, "b", 1_100)[1:]
    report = check_skew(orphan, 1_000)
    assert verdicts(report) == ["violation"] and "has no NET_SEND" in report.instances[0].explanation


@pytest.mark.unit
def test_strict_ordering_and_custom_rule() -> None:
    before_after = Ordering("status_request_before_status", "BF-032", "STATUS_REQUEST", "STATUS", "folder")
    strict = Ordering("x", "BF-032", "STATUS_REQUEST", "STATUS", "folder", strict=True)
    events = [
        ("e1", "a", 500, "STATUS_REQUEST", "f", {"folder": "f1"}),
        ("e2", "a", 500, "STATUS", "f", {"folder": "f1"}),
    ]
    assert check_skew(events, 0, [before_after]).verdict == "consistent"
    assert check_skew(events, 0, [strict]).verdict == "violation"


@pytest.mark.unit
def test_events_objects_and_violations() -> None:
    rows = msg("w1", "a", 1_100, "b", 1_000)
    events = [
        Event("t1", n, eid, ts, node, "core", ent, kind, attrs)
        for n, (eid, node, ts, kind, ent, attrs) in enumerate(rows)
    ]
    report = check_skew(events, 10)
    (v,) = to_violations(report, "t1", "a->b")
    assert v.rule == NET_SEND_BEFORE_RECV.rule and v.requirement == "TR-003" and v.event_ids == ("w1.s", "w1.r")


@pytest.mark.unit
def test_per_entity_then_per_trace_gives_the_same_answer() -> None:
    """What the Spark checker does: classify per entity, merge pair bounds per trace, resolve once."""
    events = msg("w1", "a", 1_015, "b", 1_000) + msg("w2", "b", 2_015, "c", 2_000) + msg("w3", "a", 3_000, "c", 3_500)
    by_entity: dict[str, list] = {}
    for e in events:
        by_entity.setdefault(e[4], []).append(e)
    parts = [classify(evs, 10) for evs in by_entity.values()]
    merged = merge_pair_bounds(*(pair_bounds(p) for p in parts))
    assert merged == pair_bounds(classify(events, 10))
    whole = resolve([i for p in parts for i in p], 10)
    assert sorted(verdicts(whole)) == sorted(verdicts(check_skew(events, 10)))
    # the distributed form: one joint step per trace on the merged bounds, then a pure pass per entity
    conflicts = conflicting_pairs(merged, lambda node: 10)
    marked = [i for p in parts for i in apply_conflicts(p, conflicts, merged)]
    assert sorted(verdicts_of(marked)) == sorted(verdicts(whole)) == ["consistent", "inconsistent", "inconsistent"]


@pytest.mark.unit
def test_sample_corpus() -> None:
    """Simulated traces share one clock: with skew 0 every send precedes its receive in every clean sample."""
    clean = sorted((SAMPLES / "clean").glob("*.*"))
    assert clean
    for path in clean:
        report = check_skew(read_events(path).events, 0, (*DEFAULT_ORDERINGS, *SR_ORDERINGS))
        assert report.counts["violation"] == report.counts["inconsistent"] == report.counts["ambiguous"] == 0, path
        assert report.min_skew_ms == 0, path
        if path.name.startswith(("net", "sr")):  # traces with network or shadow-creation events
            assert report.counts["consistent"] > 0, path
    mutant = check_skew(read_events(sorted((SAMPLES / "mutants").glob("net--recv-without-send*.jsonl"))[0]).events, 0)
    assert mutant.counts["violation"] >= 1


@pytest.mark.unit
def test_hundred_thousand_events_in_seconds() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_skew", SAMPLES.parents[1] / "benchmarks" / "bench_skew.py")
    bench = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(bench)  # type: ignore[union-attr]
    trace = bench.synthetic_trace(100_000)
    start = time.perf_counter()
    report = check_skew(trace, 50)
    assert time.perf_counter() - start < 10
    assert len(report.instances) == 50_000 and report.counts["violation"] == 10


@pytest.mark.unit
def test_shadow_orderings_key_on_message_and_instance() -> None:
    """SR-031 across two clocks: the primary's redundant ACCEPT must follow the shadow's HARECEIVE."""

    def ev(eid: str, node: str, ts: int, kind: str, **attrs) -> tuple:
        return (eid, node, ts, kind, "msg-1", {"inst": 1, **attrs})

    ok = [
        ev("h", "shadow", 1_000, "HARECEIVE"),
        ev("k", "primary", 1_050, "SHADOW_ACK"),
        ev("a", "primary", 1_050, "ACCEPT", redundant=True),
    ]
    assert verdicts(check_skew(ok, 10, SR_ORDERINGS)) == ["consistent", "consistent"]
    early = [ev("a", "primary", 900, "ACCEPT", redundant=True), ev("h", "shadow", 1_000, "HARECEIVE")]
    (bad,) = check_skew(early, 10, SR_ORDERINGS).instances
    assert bad.verdict == "violation" and bad.requirement == "SR-031"
    unshadowed = [ev("a", "primary", 900, "ACCEPT", redundant=False), ev("h", "shadow", 1_000, "HARECEIVE")]
    assert check_skew(unshadowed, 10, SR_ORDERINGS).instances == ()
    other_instance = [
        ev("h", "shadow", 1_000, "HARECEIVE"),
        ("a", "primary", 1_050, "ACCEPT", "msg-1", {"inst": 2, "redundant": True}),
    ]
    assert verdicts(check_skew(other_instance, 10, SR_ORDERINGS)) == ["violation"]  # no HARECEIVE of inst 2
