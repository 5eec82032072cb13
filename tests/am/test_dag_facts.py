"""The DAG facts a database's group folds from its context, derived once per trace (issue 32, seed 002).

`model.am.monitor_dag.DagFacts`: the engine's context list (`conformance.engine.stream.Context`) lets the
database folds of a trace share the DAG facts each AM_DAG_CONFIG makes. For the model and every mutant, the
engine's folds (sharing) must judge every group as a fold given a plain context (its own facts), with the
facts derived once per AM_DAG_CONFIG of the trace. Twins: a different AM_DAG_CONFIG at the same place of
another fold's context is derived again (its own claims, not the shared ones), and a faulty one stops every
fold with the note of a fold that shares nothing.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from conformance.engine.stream import Context, whole_trace
from model.am import events as ev
from model.am.monitor import _FACTS, AmFold, AmMonitor
from model.am.monitor_dag import DagFacts
from model.am.mutants import MUTANTS, SIMULATORS
from model.am.sim import simulate
from traces.schema import Event
from traces.verdict import fold_all

pytestmark = pytest.mark.model

RUNS = ("model", *sorted(MUTANTS))


@cache
def trace(run: str, seed: int = 1) -> tuple[Event, ...]:
    events = simulate(seed) if run == "model" else SIMULATORS[run](seed)
    first = events[0].trace_id
    return tuple(sorted((e for e in events if e.trace_id == first), key=lambda e: e.seq))


def chain(root: DagFacts) -> list[DagFacts]:
    out, node = [], root.next
    while node is not None:
        out.append(node)
        node = node.next
    return out


@pytest.mark.parametrize("run", RUNS)
def test_shared_facts_judge_as_each_fold_alone_and_are_derived_once(run: str) -> None:
    events = trace(run)
    folds = whole_trace(events, [], {"am": [("am", AmMonitor())]})
    context = folds.context
    assert isinstance(context, Context)
    dbs = {key: group for key, group in folds.entities.items() if key[1] != "DAG1"}
    assert len(dbs) >= 2  # a trace with several databases, or nothing is shared
    for (_, entity), group in folds.entities.items():
        own = [e for e in events if e.mechanism == "am" and e.entity == entity]
        ((_, _, fold),) = group.folds
        assert fold.finish() == fold_all(AmMonitor(), own, tuple(context)), (run, entity)
    configs = [e for e in context if e.kind == ev.AM_DAG_CONFIG]
    nodes = chain(context.derived[_FACTS])
    assert [n.event for n in nodes] == configs  # one node per AM_DAG_CONFIG of the trace, made once
    for group in dbs.values():
        ((_, _, fold),) = group.folds
        assert isinstance(fold, AmFold) and fold.replay.fold_dag is False
        assert fold.facts is nodes[-1]  # every database's fold went along the same nodes


def shared_pair(first: list[Event], second: list[Event]) -> tuple[AmFold, AmFold]:
    """Two folds of `DB1`'s events whose contexts share one `derived` mapping, as the engine's do."""
    a, b = Context(), Context()
    a.extend(first)
    b.extend(second)
    b.derived = a.derived
    return AmMonitor().start(a), AmMonitor().start(b)


def db_events(events: tuple[Event, ...], entity: str) -> list[Event]:
    return [e for e in events if e.mechanism == "am" and e.entity == entity]


def changed_at_first(**attrs: object) -> tuple[tuple[Event, ...], list[Event], list[Event], int]:
    """The model's trace, its context, and that context with its first AM_DAG_CONFIG changed, and where."""
    events = trace("model")
    context = [e for e in events if e.kind in (ev.AM_DAG_CONFIG, "TRACE_START")]
    at = next(i for i, e in enumerate(context) if e.kind == ev.AM_DAG_CONFIG)
    other = [*context]
    other[at] = replace(context[at], attrs={**context[at].attrs, **attrs})
    return events, context, other, at


def test_another_event_at_the_same_place_is_derived_again() -> None:
    events, context, other, at = changed_at_first(claims=["MBX9"])
    same, changed = shared_pair(context, context), shared_pair(context, other)
    own = db_events(events, "DB1")
    for fold in (*same, *changed):
        for e in own:
            fold.feed(e)
    assert same[0].facts is same[1].facts  # the same events: the same nodes
    shared = chain(changed[0].cursor.events.derived[_FACTS])
    assert changed[0].facts is shared[-1] and all(changed[1].facts is not n for n in shared)  # its own nodes
    assert changed[0].finish() == fold_all(AmMonitor(), own, context)
    assert changed[1].finish() == fold_all(AmMonitor(), own, other)  # judged as a fold of its own context
    # the twin: after the replaced event alone, each fold's world holds the claims of its own context's event
    first, second = shared_pair(context[: at + 1], other[: at + 1])
    first.finish()
    second.finish()
    assert first.replay.w.claims == frozenset(context[at].attrs["claims"])
    assert second.replay.w.claims == {"MBX9"}


def test_a_faulty_dag_config_stops_every_sharing_fold_as_one_alone() -> None:
    events, _, bad, _ = changed_at_first(health=["MBX1/Search"])
    pair = shared_pair(bad, bad)
    for fold in pair:
        for e in db_events(events, "DB1"):
            fold.feed(e)
    alone = fold_all(AmMonitor(), db_events(events, "DB1"), bad)
    assert any("health entry" in n for n in alone.notes)  # the fault is reported, the fold stopped
    assert [f.finish() for f in pair] == [alone, alone]
    assert pair[0].facts is None and pair[1].facts is None
