"""Each mechanism's fold summarises its state for the report (`describe(entity)`, issue 21): JSON-able, read
only (a fold asked after every event reaches the verdict of one left alone), and about the entity asked."""

from __future__ import annotations

import json

import pytest

from conformance.audit.states import monitor_for
from conformance.check import trace_contexts
from conformance.engine.folds import start_fold
from conformance.engine.stream import groups_of
from model.registry import get, simulate

pytestmark = pytest.mark.unit


def _said(r):
    """A result as compared: its per-rule tally by content (issue 29: a `Tally` has no equality of its own)."""
    return r.verdict, r.violations, r.notes, (r.tally.judged, r.tally.unjudged) if r.tally is not None else None


@pytest.mark.parametrize("name", ["sr", "am", "pf"])
def test_describe_is_json_read_only_and_about_the_entity(name):
    mechanism = get(name).records
    events = simulate(name, 1)
    monitor = monitor_for(mechanism)
    assert monitor is not None
    context = trace_contexts(events)
    described = 0
    for key, group in groups_of(monitor, sorted(events, key=lambda e: e.seq)).items():
        asked, alone = start_fold(monitor, context[key[0]]), start_fold(monitor, context[key[0]])
        for e in group:
            asked.feed(e)
            alone.feed(e)
            if e.mechanism == mechanism:
                summary = asked.describe(e.entity)
                text = json.dumps(summary)
                assert "violations so far" in summary
                if e.kind in ("RECEIVE", "MOUNT_START", "REPLICA_CREATE", "DB_CREATE"):
                    assert e.entity in text, (e.kind, summary)
                described += 1
        assert _said(asked.finish()) == _said(alone.finish())  # asking changed nothing
    assert described > 10


def test_sr_describe_follows_the_message():
    events = simulate("sr", 1)
    fold = monitor_for("sr").start(trace_contexts(events)[events[0].trace_id])
    seen = {}
    for e in sorted(events, key=lambda e: e.seq):
        fold.feed(e)
        if e.kind in ("RECEIVE", "SHADOW_ACK", "ACCEPT") and e.entity not in seen.get(e.kind, {}):
            seen.setdefault(e.kind, {})[e.entity] = fold.describe(e.entity)
    msg = next(iter(seen["ACCEPT"]))
    attempt = f"{msg} attempt 1"
    assert seen["RECEIVE"][msg][attempt]["outcome"] == "-"
    assert seen["SHADOW_ACK"][msg][attempt]["shadow acknowledged"] is True
    assert seen["ACCEPT"][msg][attempt]["outcome"] == "accepted"
    assert fold.describe("no-such-message")["no-such-message"] == "not seen yet"
