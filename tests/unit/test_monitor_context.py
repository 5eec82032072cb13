"""Every monitor group receives its trace's context events (TRACE_START and `*_CONFIG`), whatever its scope.

Durations a monitor compares must come from the recorded configuration, so an entity-scope monitor needs
the trace's TRACE_START and configuration events even though they belong to other entities.
"""

from __future__ import annotations

import dataclasses

import pytest

from conformance.check import run_monitor, trace_contexts
from model.kernel.workload import simulate
from tests.unit.context_probe import ContextProbe
from traces.schema import is_context_kind

pytestmark = pytest.mark.unit


def with_config(events):
    """The workload's trace plus a configuration change recorded after its last event."""
    last = events[-1]
    change = dataclasses.replace(
        last,
        seq=last.seq + 1,
        event_id=f"{last.trace_id}:cfg",
        entity="network",
        kind="NET_CONFIG",
        mechanism="core",
        attrs={"loss_pct": 50},
    )
    return [*events, change]


def traces():
    return with_config(simulate(3)) + with_config(simulate(4))


def expected_context(events) -> str:
    return ",".join(f"{e.kind}@{e.seq}" for e in sorted(events, key=lambda e: e.seq) if is_context_kind(e.kind))


def test_context_kinds():
    assert is_context_kind("TRACE_START") and is_context_kind("NET_CONFIG") and is_context_kind("SR_CONFIG")
    assert not is_context_kind("RECEIVE") and not is_context_kind("CONFIGURE") and not is_context_kind("START")


def test_entity_groups_get_the_trace_context():
    events = traces()
    results = run_monitor(ContextProbe(), events)
    assert len(results) == len({(e.trace_id, e.entity) for e in events})
    for trace in {e.trace_id for e in events}:
        want = expected_context([e for e in events if e.trace_id == trace])
        assert "TRACE_START@0" in want and "NET_CONFIG" in want
        got = {v.explanation for r in results for v in r.violations if v.trace_id == trace}
        assert got == {want}


def test_trace_contexts_twin_other_traces_are_not_mixed_in():
    a, b = simulate(3), simulate(4)
    contexts = trace_contexts(a + b)
    assert {e.trace_id for e in contexts[a[0].trace_id]} == {a[0].trace_id}
    assert len(contexts) == 2
