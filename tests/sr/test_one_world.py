"""sr's generator keeps no discard queue of its own (issue 33): the primary's queued discard events are the fold's
`World.owed`, and those a successful XQUERYDISCARD carried `World.handed` (seed 000, "How shadow messages are
maintained": SR-011, SR-050..SR-053, SR-064).

- The generator's `Server` holds no protocol state; the events it notifies and deletes are read from the World.
- The fold hands the queue over at a successful query: a discard event deleted later (DISCARD_EXPIRE) although it
  went with the answer is one the primary no longer held (`discard-queue-transition`); twin: the same deletion
  before the query, while the event is still queued, is not.
- `discards-in-memory` is a decision over that same state (`Maintenance._remembered`: it forgets the events the
  primary had queued when it last restarted, `World.owed_at_boot`), not a list of its own; twin: the model
  remembers them all.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.kernel.sim import MINUTE
from model.sr import events as ev
from model.sr.cluster_maintenance import Server
from model.sr.mutants import DiscardsInMemory
from model.sr.policy import Policy
from model.sr.protocol import ModelSystem
from model.sr.rules import DISCARD_QUEUE_TRANSITION
from tests.sr.helpers import QUIET, report, sr, violations
from traces.schema import Event


def _run() -> list[Event]:
    """m1 on MBX01, shadow on MBX02, delivered; MBX02's heartbeat query carries the discard notification."""
    s = ModelSystem(3, layout="multi-site-dag", n_servers=2, timing=QUIET)
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(60 * MINUTE)
    return list(s.events())


def _forged_expire(events: list[Event], before: str) -> list[Event]:
    """The run without its DISCARD_NOTIFY, and a DISCARD_EXPIRE of m1's discard event on the primary placed just
    before the first event of kind `before` after the delivery (sequence numbers renumbered in that order)."""
    out = [e for e in events if not (e.mechanism == "sr" and e.kind == ev.DISCARD_NOTIFY)]
    deliver = next(i for i, e in enumerate(out) if e.mechanism == "sr" and e.kind == ev.DELIVER)
    at = next(i for i, e in enumerate(out) if i > deliver and e.mechanism == "sr" and e.kind == before)
    ref = out[at]
    forged = dataclasses.replace(
        out[deliver], event_id=f"{ref.event_id}-forged", kind=ev.DISCARD_EXPIRE, ts_ms=ref.ts_ms,
        attrs={"inst": 1, "shadow": "MBX02"},
    )  # fmt: skip
    first = out[0].seq
    return [dataclasses.replace(e, seq=first + i) for i, e in enumerate([*out[:at], forged, *out[at:]])]


@pytest.mark.unit
def test_the_generator_keeps_no_discard_queue() -> None:
    assert [f.name for f in dataclasses.fields(Server)] == ["name"]
    s = ModelSystem(3, layout="multi-site-dag", n_servers=2, timing=QUIET)
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(30_000)  # delivered (5 s), not yet queried (78 s): the discard event is queued in the fold's World
    assert s.cluster.world.owed == {("MBX01", "MBX02"): {("m1", 1, "mbx"): pytest.approx(s.sim.now_ms, abs=MINUTE)}}
    s.advance(60 * MINUTE)  # the heartbeat query carried it: notified, nothing left queued or handed over
    events = list(s.events())
    assert sr(events, ev.DISCARD_NOTIFY, "m1") and not violations(events), report(events)
    assert not any(s.cluster.world.owed.values()) and not any(s.cluster.world.handed.values())


@pytest.mark.unit
def test_a_discard_event_handed_over_cannot_be_deleted_later() -> None:
    events = _run()
    after = _forged_expire(events, ev.HADISCARD)  # after the query that carried it
    rules = {v.rule for v in violations(after)}
    assert DISCARD_QUEUE_TRANSITION.name in rules, report(after)


@pytest.mark.unit
def test_twin_a_discard_event_deleted_while_queued_is_allowed_by_the_queue_rule() -> None:
    events = _run()
    before = _forged_expire(events, ev.XQUERYDISCARD)
    rules = {v.rule for v in violations(before)}
    assert DISCARD_QUEUE_TRANSITION.name not in rules, report(before)


@pytest.mark.unit
def test_discards_in_memory_is_a_decision_over_the_same_world() -> None:
    """The primary restarts (same storage) before the shadow queries: the mutant forgets the queued event (its
    shadow is never notified), the model remembers it; both read the one `World.owed`."""

    def run(flaw: Policy | None) -> ModelSystem:
        s = ModelSystem(3, layout="multi-site-dag", n_servers=2, timing=QUIET, policy=flaw)
        s.submit("m1", "MBX01", ["mbx"])
        s.advance(30_000)
        s.crash("MBX01")
        s.restart("MBX01")
        s.advance(60 * MINUTE)
        return s

    model, mutant = run(None), run(DiscardsInMemory())
    assert sr(list(model.events()), ev.DISCARD_NOTIFY, "m1"), report(list(model.events()))
    assert not sr(list(mutant.events()), ev.DISCARD_NOTIFY, "m1"), report(list(mutant.events()))
