"""The engine's jobs written once and used by every driver: the quarantine row (`traces.io.RowError.row`),
seq order across files (`conformance.engine.trace_index.SeqOrder`), whether saved folds can be continued
(`conformance.engine.stream.not_continued`) and the split of runs into trace and entity folds
(`conformance.engine.stream.split_runs`) and the grouping of a list of events (`groups_of`).
Each with a twin that must fail: an out-of-order span, a
continuation going back in seq, an entity-scope monitor kept apart from the trace-scope ones."""

from __future__ import annotations

import pytest

from conformance.engine.stream import TraceFolds, group_key, groups_of, not_continued, split_runs
from conformance.engine.trace_index import SeqOrder
from model.registry import monitor_runs
from traces.io import RowError
from traces.schema import Event

pytestmark = pytest.mark.unit


def test_one_quarantine_row_from_a_reader_and_from_a_spark_row():
    error = RowError("a.jsonl", 3, "seq", "not an integer")
    assert error.row() == {"file": "a.jsonl", "line": 3, "field": "seq", "reason": "not an integer"}
    spark_row = {"file_rank": 1, "line": 3, "field": "seq", "reason": "not an integer"}
    assert RowError.of(spark_row, ["z.jsonl", "a.jsonl"]).row() == error.row()


def test_seq_order_across_files_in_reading_order():
    order = SeqOrder()
    order.add({"t1": (1, 5, True), "t2": (1, 2, True), "t3": (4, 9, False)})
    order.add({"t1": (6, 8, True), "t2": (2, 3, True)})  # t2 goes back to seq 2 (twin: out of order)
    assert order.ordered() == {"t1"}
    assert order.ok == {"t1": True, "t2": False, "t3": False}


def _event(seq: int) -> Event:
    return Event(trace_id="t", seq=seq, event_id=f"e{seq}", ts_ms=seq, node="S", mechanism="core", entity="", kind="X")


def test_saved_folds_continue_only_after_their_last_seq():
    trace_runs, entity_runs = split_runs([])
    folds = TraceFolds(_event(1), trace_runs, entity_runs)
    for seq in (1, 2, 3):
        folds.feed(_event(seq))
    assert not_continued(folds, 4) is None
    assert not_continued(folds, 3) == "its new events begin at seq 3, not after 3"  # twin: goes back


def test_runs_split_by_scope_and_events_keyed_by_group():
    runs = monitor_runs()
    trace_runs, entity_runs = split_runs(runs)
    assert all(m.scope == "trace" for _, m in trace_runs)
    assert all(m.scope == "entity" and m.mechanism == mech for mech, rs in entity_runs.items() for _, m in rs)
    assert len(trace_runs) + sum(map(len, entity_runs.values())) == len(runs)
    assert entity_runs  # twin: the registry has entity-scope monitors, kept apart from the trace ones
    e = _event(1)
    assert group_key("trace", e) == ("t",) and group_key("entity", e) == ("t", "core", "")


def test_the_list_api_groups_events_as_the_folds_do():
    """`groups_of` (the list API's `group_for`, the audit's replay) forms exactly the entity groups a trace's
    folds form as they are fed; twin: the trace-scope grouping is one group per trace, not the folds' keys."""
    from model.registry import simulate

    events = simulate("am", 1)
    trace_runs, entity_runs = split_runs(monitor_runs())
    folds: dict[str, TraceFolds] = {}
    for e in sorted(events, key=lambda e: (e.trace_id, e.seq)):
        folds.setdefault(e.trace_id, TraceFolds(e, trace_runs, entity_runs)).feed(e)
    formed = {(t, *key) for t, f in folds.items() for key in f.entities}
    monitor = next(m for _, m in entity_runs["am"])
    assert set(groups_of(monitor, events)) == {k for k in formed if k[1] == "am"} != set()
    whole = next(m for _, m in trace_runs)
    assert set(groups_of(whole, events)) == {(t,) for t in folds} != formed
