"""SR-067 at the moment of a promotion (SR-I21), found by exploration in session 13.

A shadow promoted after its MessageExpirationTimeout had run (counted from when the shadow was made, SR-I21)
expires at the moment of the promotion: the model emits its FAIL at the PROMOTE's time stamp. A trace cut right
after the PROMOTE (an explored state: crash, restart with a new database, the promotion) is a prefix of that
conformant run, so the end-of-trace judgement (`liveness.at_end`) must not call it expired. Every judgement of
SR-067 reads one due time, `maintenance.queue_due`: a FAIL, a use of the queued copy, a quiesced SNAPSHOT and the
trace's last event. Twins: the same trace with one event a millisecond later, a FAIL a millisecond late, the
promoted copy used a millisecond late, each caught.
"""

from __future__ import annotations

import pytest

from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from model.sr import rules as R
from model.sr.monitor import SrMonitor
from traces.schema import Event

# the shortest path of the false violation (`haconform explore sr --bound sr-3s-2m-2f-d6`, session 13's start)
STEPS = [
    {"op": "submit", "calls": [{"call": "submit", "args": {"msg": "m1", "primary": "MBX01", "forks": ["mbx"]}}]},
    {"op": "advance", "calls": [{"call": "advance", "args": {"ms": 940}}]},
    {"op": "crash", "calls": [{"call": "crash", "args": {"server": "MBX01"}}]},
    {"op": "advance", "calls": [{"call": "advance", "args": {"ms": 1192767}}]},
    {"op": "restart", "calls": [{"call": "restart", "args": {"server": "MBX01", "new_database": True}}]},
    {"op": "advance", "calls": [{"call": "advance", "args": {"ms": 1800000}}]},
]


@pytest.fixture(scope="module")
def explorer() -> Explorer:
    return Explorer(find("sr-3s-2m-2f-d6").bound)


@pytest.fixture(scope="module")
def cut(explorer: Explorer) -> list[Event]:
    """The explored state's trace cut right after MBX02's PROMOTE, past the queue's due time. Since session 14 the
    step also runs the expiry's FAIL due at that millisecond (`ModelSystem.advance` runs what is due at `until`,
    tests/sr/test_sr_due_now.py), so the state's own trace goes on with it; a recorded trace may end at the PROMOTE."""
    events = list(explorer.replay(STEPS).events())
    at = max(i for i, e in enumerate(events) if e.kind == "PROMOTE")
    assert [e.kind for e in events[at + 1 :]] == ["FAIL"] and events[-1].ts_ms == events[at].ts_ms
    return events[: at + 1]


def _then(events: list[Event], dt: int, kind: str, attrs: dict, node: str = "MBX02", entity: str = "m1") -> list:
    last = events[-1]
    nxt = Event(last.trace_id, last.seq + 1, f"{last.trace_id}:{last.seq + 1}", last.ts_ms + dt, node, "sr",
                entity, kind, attrs)  # fmt: skip
    return [*events, nxt]


def _expiry(events: list[Event]) -> list:
    return [v for v in SrMonitor().check(events).violations if v.rule == R.QUEUE_EXPIRY.name]


@pytest.mark.model
def test_the_explored_state_cut_at_the_promotion_is_clean(explorer: Explorer) -> None:
    s = explorer.replay(STEPS)
    assert explorer.judge(s, STEPS, False) is None


@pytest.mark.model
def test_a_trace_ending_at_the_promotion_is_not_expired(cut: list[Event]) -> None:
    assert _expiry(cut) == []


@pytest.mark.model
def test_twin_an_event_a_millisecond_later_without_the_fail_is_caught(cut: list[Event]) -> None:
    beat = {"primary": "MBX01", "ok": True, "db": "MBX01-db1", "held": 1, "reason": "heartbeat"}
    later = _then(cut, 1, "XQUERYDISCARD", beat, entity="hb:MBX02>MBX01")
    assert [v.data["due_ms"] for v in _expiry(later)] == [cut[-1].ts_ms]


@pytest.mark.model
def test_the_fail_at_the_promotion_is_on_time_and_a_millisecond_later_is_late(cut: list[Event]) -> None:
    fail = {"forks": ["mbx"], "inst": 1, "reason": "expired"}
    assert _expiry(_then(cut, 0, "FAIL", fail)) == []
    late = _expiry(_then(cut, 1, "FAIL", fail))
    assert len(late) == 1 and "after MessageExpirationTimeout had run out" in late[0].explanation


@pytest.mark.model
def test_the_promoted_copy_used_at_the_promotion_and_a_millisecond_later(cut: list[Event]) -> None:
    deliver = {"inst": 1, "fork": "mbx", "via": "promoted"}
    assert _expiry(_then(cut, 0, "DELIVER", deliver)) == []
    late = _expiry(_then(cut, 1, "DELIVER", deliver))
    assert len(late) == 1 and "used its queued copy" in late[0].explanation


@pytest.mark.model
def test_the_model_expires_the_promoted_copy_at_the_promotion(explorer: Explorer, cut: list[Event]) -> None:
    s = explorer.replay(STEPS)
    for call in explorer.driver.finish(s):
        s.apply(call)
    events = list(s.events())
    fails = [e for e in events if e.kind == "FAIL"]
    assert [e.ts_ms for e in fails] == [cut[-1].ts_ms]
    assert explorer.judge(s, STEPS, True) is None
