"""What the core trace rules judged (issue 29): `TraceRulesFold.tally` and `HeldRulesFold.tally`.

TR-001 is judged once per event after a trace's first, TR-004 once per event with an earlier event on its node,
TR-003 once per NET_RECV, TR-006 once per trace; on an imported log (TR-008) TR-006 and TR-003 are skipped with
the reason. Per rule, violations <= judged on the model's and every core mutant's traces and on damaged
recordings held whole. A fold saved and restored mid-trace gives the tally of one pass; `finish()` stays a list
of violations. Twin: the same counts on an imported log leave TR-006 and TR-003 at 0 judged.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from collections.abc import Sequence

import pytest

from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs
from conformance.engine import core_rules as C
from conformance.engine.core_fold import CORE_RULES, NOT_APPLIED, HeldRulesFold, TraceRulesFold
from model.kernel.workload import simulate
from model.registry import get
from traces.corpus import SAMPLES_DIR
from traces.io import read_events
from traces.schema import Event
from traces.verdict import Tally, restore_fold, save_fold

pytestmark = pytest.mark.unit

CORE_MUTANTS = sorted((SAMPLES_DIR / "mutants").glob("net--*.jsonl"))


def _fold(events: Sequence[Event]) -> TraceRulesFold:
    """One trace judged as the engine judges it: streamed when in seq order, else held whole."""
    in_order = all(a.seq < b.seq for a, b in itertools.pairwise(events))
    fold = TraceRulesFold(events[0].trace_id) if in_order else HeldRulesFold(events[0].trace_id, events)
    for e in events if in_order else sorted(events, key=lambda e: e.seq):
        fold.feed(e)
    return fold


def _bounded(fold: TraceRulesFold, violations: list) -> None:
    for rule, n in Counter(v.rule for v in violations).items():
        assert n <= fold.tally.judged.get(rule, 0), (rule, n, fold.tally.judged)


def test_core_rules_table_and_the_name_to_requirement_view():
    assert list(CORE_RULES) == ["seq-strictly-increasing", "event-id-unique", "recv-after-send",
                                "node-clock-monotonic", "trace-start"]  # fmt: skip
    assert {r.name: r.requirement for r in C.RULES.values() if r is not C.SCHEMA_CONFORMANCE} == CORE_RULES
    assert C.SCHEMA_CONFORMANCE.requirement == "TR-005" and C.RULES["schema-conformance"] is C.SCHEMA_CONFORMANCE
    assert all(r.mechanism == "core" and r.table == C.__name__ for r in C.RULES.values())


def test_a_clean_trace_counts_each_rule_where_it_compares():
    events = simulate(1)
    fold = _fold(events)
    violations = fold.finish()
    assert isinstance(violations, list) and violations == []
    nodes = {e.node for e in events}
    assert fold.tally.judged == {
        C.TRACE_START.name: 1,
        C.SEQ_STRICTLY_INCREASING.name: len(events) - 1,
        C.NODE_CLOCK_MONOTONIC.name: len(events) - len(nodes),
        C.RECV_AFTER_SEND.name: sum(e.kind == "NET_RECV" for e in events),
    }
    assert fold.tally.judged[C.RECV_AFTER_SEND.name] > 0 and not fold.tally.unjudged


def test_twin_an_imported_log_judges_neither_trace_start_nor_recv_after_send():
    root = SAMPLES_DIR / "audit" / "logs" / "clean"
    events, _ = build_trace(parse_logs([str(root)]), ImportConfig(), [str(root)])
    fold = _fold(events)
    assert fold.finish() == []
    assert C.TRACE_START.name not in fold.tally.judged and C.RECV_AFTER_SEND.name not in fold.tally.judged
    assert fold.tally.unjudged[C.TRACE_START.name] == [1, NOT_APPLIED]
    assert fold.tally.unjudged[C.RECV_AFTER_SEND.name] == [1, NOT_APPLIED]
    assert fold.tally.judged[C.SEQ_STRICTLY_INCREASING.name] == len(events) - 1  # the format rules still judge


@pytest.mark.parametrize("path", CORE_MUTANTS, ids=lambda p: p.stem)
def test_violations_never_exceed_what_was_judged_on_core_mutants(path):
    events = read_events(path).events
    by_trace: dict[str, list[Event]] = {}
    for e in events:
        by_trace.setdefault(e.trace_id, []).append(e)
    seen = 0
    for trace_events in by_trace.values():
        fold = _fold(trace_events)
        violations = fold.finish()
        seen += len(violations)
        _bounded(fold, violations)
    assert seen or path.stem.endswith("event-id-repeat")  # TR-002 is the engine's, over the whole corpus


@pytest.mark.parametrize("mech", ["sr", "am", "pf"])
def test_a_held_trace_counts_as_the_streamed_one(mech):
    events = get(mech).simulate(1)
    streamed = _fold(events)
    streamed.finish()
    i = len(events) // 2
    swapped = [*events[:i], events[i + 1], events[i], *events[i + 2 :]]  # breaks TR-001: held whole
    held = _fold(swapped)
    violations = held.finish()
    assert isinstance(held, HeldRulesFold) and {v.rule for v in violations} >= {C.SEQ_STRICTLY_INCREASING.name}
    _bounded(held, violations)
    assert held.tally.judged == streamed.tally.judged


def test_a_saved_and_restored_fold_gives_the_tally_of_one_pass():
    events = get("sr").mutants["ack-before-shadow"](2)
    events = [dataclasses.replace(e, ts_ms=e.ts_ms - 10**9) if i == 40 else e for i, e in enumerate(events)]
    whole = _fold(events)
    expected = whole.finish()
    fold = TraceRulesFold(events[0].trace_id)
    for e in events[:100]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[100:]:
        fold.feed(e)
    assert fold.finish() == expected and expected  # the clock went back at event 40
    assert (fold.tally.judged, fold.tally.unjudged) == (whole.tally.judged, whole.tally.unjudged)


def test_finish_twice_adds_nothing():
    fold = _fold(simulate(1))
    fold.finish()
    once = dict(fold.tally.judged)
    fold.finish()
    assert fold.tally.judged == once


def test_twin_a_fold_that_counted_nothing_would_be_caught():
    """The bound the tests above check, on a tally that did not count: it must fail."""
    events = simulate(1)
    fold = _fold([*events[:5], dataclasses.replace(events[5], seq=events[4].seq), *events[6:]])  # a seq repeated
    found = fold.finish()
    assert found
    _bounded(fold, found)
    fold.tally = Tally()
    with pytest.raises(AssertionError):
        _bounded(fold, found)
