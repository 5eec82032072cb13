"""A trace out of seq order (TR-001) is held and judged whole by the engine, as the list-based replay judged it.

`conformance.check.verdict` is a Router over the events plus TR-002 (session 7, issue 20), every trace held
and fed to its folds sorted by seq, with TR-001 and TR-006 judged on its recording order
(`core_fold.HeldRulesFold`, `stream.whole_trace`), as the drivers judge a trace out of seq order. The
reference here is the list-based replay that `conformance.check` ran before: TR-002, per trace the core
rules written out plainly (TR-006 and TR-001 in recording order, TR-003 and TR-004 in seq order, TR-008 from
the first recorded event), then each monitor's `fold_all` over each group of `group_for` with the trace's
whole context. Damaged recordings (two events swapped, a seq repeated, a configuration (or TRACE_START) recorded last, a
trace reversed) of model and mutant traces of every mechanism must get the reference's verdict.
Twins: the held trace fed in recording order instead of seq order (a sort key that keeps it) disagrees with
the reference; a plain fold fed the sorted trace decides TR-008 from the wrong event.
"""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest

import conformance.engine.stream as stream
from conformance.check import group_for, run_monitor, trace_contexts, verdict
from conformance.engine import core_rules as C
from conformance.engine.core_fold import HeldRulesFold, TraceRulesFold, core_violation, duplicate_id_violations
from conformance.engine.rulesets import applies
from model.registry import get, monitors
from traces.schema import Event
from traces.verdict import MonitorResult, Verdict, fold_all

pytestmark = pytest.mark.model

CASES = [("sr", "model", 1), ("sr", "ack-before-shadow", 2), ("am", "model", 1), ("pf", "answer-non-subset", 1)]
CASES += [("net", "recv-without-send", 1)]


def _reference_core(trace: str, evs: list[Event]) -> list:
    out = []
    simulated = applies("trace-start", evs[0])
    if simulated and (evs[0].kind != "TRACE_START" or evs[0].seq != 0):
        why = f"the trace begins with {evs[0].kind} at seq {evs[0].seq}, not TRACE_START at seq 0"
        out.append(core_violation(C.TRACE_START, trace, evs[0].entity, (evs[0].event_id,), why))
    for prev, cur in itertools.pairwise(evs):
        if cur.seq <= prev.seq:
            why = f"seq {cur.seq} is recorded after seq {prev.seq}"
            out.append(core_violation(C.SEQ_STRICTLY_INCREASING, trace, cur.entity, (prev.event_id, cur.event_id), why))
    last: dict[str, Event] = {}
    sends: dict[object, Event] = {}
    for e in sorted(evs, key=lambda e: e.seq):
        p = last.get(e.node)
        if p is not None and e.ts_ms < p.ts_ms:
            why = f"node {e.node} records ts {e.ts_ms} after ts {p.ts_ms}: its clock went back {p.ts_ms - e.ts_ms} ms"
            out.append(core_violation(C.NODE_CLOCK_MONOTONIC, trace, e.entity, (p.event_id, e.event_id), why))
        last[e.node] = e
        if simulated and e.kind == "NET_SEND":
            sends.setdefault(e.attrs.get("wire"), e)
        elif simulated and e.kind == "NET_RECV":
            send, wire = sends.get(e.attrs.get("wire")), e.attrs.get("wire")
            if send is None:
                why = f"wire message {wire} is received by {e.node} but was never recorded as sent before"
                out.append(core_violation(C.RECV_AFTER_SEND, trace, e.entity, (e.event_id,), why))
            elif send.node != e.attrs.get("src"):
                why = f"wire message {wire} claims sender {e.attrs.get('src')} but was sent by {send.node}"
                out.append(core_violation(C.RECV_AFTER_SEND, trace, e.entity, (send.event_id, e.event_id), why))
    return out


def _reference(events: list[Event]) -> MonitorResult:
    results = [MonitorResult.of(duplicate_id_violations(events))]
    by_trace: dict[str, list[Event]] = {}
    for e in events:
        by_trace.setdefault(e.trace_id, []).append(e)
    results += [MonitorResult.of(_reference_core(t, by_trace[t])) for t in sorted(by_trace)]
    contexts = trace_contexts(events)
    for m in monitors():
        for group in group_for(m, events):
            if m.scope == "trace" and not any(e.mechanism == m.mechanism for e in group):
                continue
            results.append(fold_all(m, group, contexts.get(group[0].trace_id, [])))
    notes = [n for r in results if r.verdict is Verdict.UNKNOWN for n in r.notes]
    return MonitorResult.of([v for r in results for v in r.violations], notes)


def _key(result: MonitorResult) -> tuple:
    plain = ({k: x for k, x in v.to_json().items() if k != "data"} for v in result.violations)  # data: not equality
    return result.verdict, sorted(str(v) for v in plain), sorted(result.notes)


def _damaged(events: list[Event], rng: random.Random) -> dict[str, list[Event]]:
    n = len(events)
    i = rng.randrange(2, n - 1)
    swapped = [*events[:i], events[i + 1], events[i], *events[i + 2 :]]
    j = rng.randrange(2, n)
    repeated = [*events[:j], dataclasses.replace(events[j], seq=events[j - 1].seq), *events[j + 1 :]]
    k = next((x for x, e in enumerate(events) if e.kind.endswith("_CONFIG")), 0)  # else TRACE_START
    config_last = [*events[:k], *events[k + 1 :], events[k]]
    return {"swapped": swapped, "repeated-seq": repeated, "config-last": config_last, "reversed": events[::-1]}


def _all_damaged() -> list[tuple[str, list[Event]]]:
    out = []
    for mech, run, seed in CASES:
        spec = get(mech)
        events = (spec.simulate if run == "model" else spec.mutants[run])(seed)
        for how, damaged in _damaged(events, random.Random(seed)).items():
            out.append((f"{mech}/{run}/{seed}/{how}", damaged))
    return out


DAMAGED = _all_damaged()


@pytest.mark.parametrize(("name", "events"), DAMAGED, ids=[name for name, _ in DAMAGED])
def test_a_held_trace_gets_the_list_based_verdict(name, events):
    got = verdict(events)
    assert got.violations and any(v.rule == "seq-strictly-increasing" for v in got.violations), name
    assert _key(got) == _key(_reference(events)), name


def test_run_monitor_gives_each_group_the_reference_result():
    _, events = DAMAGED[0]
    monitor = get("sr").monitor()
    contexts = trace_contexts(events)
    want = [fold_all(monitor, g, contexts.get(g[0].trace_id, [])) for g in group_for(monitor, events)]
    assert [_key(r) for r in run_monitor(monitor, events)] == [_key(r) for r in want]


def test_twin_a_held_trace_fed_in_recording_order_disagrees(monkeypatch):
    monkeypatch.setattr(stream, "_SEQ", lambda e: 0)  # the sort keeps recording order: the folds see it unsorted
    differ = [name for name, events in DAMAGED if _key(verdict(events)) != _key(_reference(events))]
    assert differ, "feeding held traces unsorted must change some verdict, or the parity test proves nothing"


def _imported_out_of_order() -> list[Event]:
    def ev(seq: int, mech: str, kind: str, attrs: dict) -> Event:
        return Event("imp", seq, f"imp-{seq}", 1000 + seq, "n2", mech, "m1", kind, attrs)

    marker = ev(3, "msgtrk", "IMPORT_START", {})
    recv = ev(1, "net", "NET_RECV", {"wire": "w1", "src": "n1"})  # no send: TR-003 only for simulated traces
    return [marker, recv]


def test_a_held_imported_trace_is_judged_by_its_first_recorded_event():
    events = _imported_out_of_order()
    rules = {v.rule for v in verdict(events, []).violations}
    assert rules == {"seq-strictly-increasing"}  # TR-008: imported, so no TR-003 or TR-006
    assert _key(verdict(events)) == _key(_reference(events))
    held = HeldRulesFold("imp", events)
    for e in sorted(events, key=lambda e: e.seq):
        held.feed(e)
    assert {v.rule for v in held.finish()} == {"seq-strictly-increasing"}


def test_twin_a_plain_fold_fed_the_sorted_trace_takes_it_for_simulated():
    events = _imported_out_of_order()
    plain = TraceRulesFold("imp")
    for e in sorted(events, key=lambda e: e.seq):
        plain.feed(e)
    assert {"trace-start", "recv-after-send"} <= {v.rule for v in plain.finish()}
