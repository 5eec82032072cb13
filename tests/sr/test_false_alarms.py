"""Two false alarms of the sr monitor, each with a twin that
must still fail.

- Without a recorded topology the plan of shadow attempts is unknown: a failed first attempt may or may not
  end shadow creation, so a second attempt is allowed (it was reported as SR-028, shadow-while-inbound-open).
- A successful XQUERYDISCARD the monitor cannot read (an input fault) carries discard notifications: they were
  reported as SR-053 (discard-by-query, "without a successful XQUERYDISCARD") on the message.
"""

from __future__ import annotations

import dataclasses

import pytest

from model.sr import events as ev
from model.sr import rules as R
from model.sr.monitor import SrMonitor
from model.sr.sim import simulate
from traces.schema import Event
from traces.verdict import MonitorResult, Verdict

T0 = 1_767_225_600_000
MSG = "<alarm-1@contoso.example>"
SECOND_ATTEMPT = [
    (0, "EX01", "RECEIVE", {"inst": 1, "forks": ["mbx"]}),
    (5, "EX01", "HAREDIRECT", {"inst": 1, "shadow": "EX02", "try": 1}),
    (900, "EX01", "HAREDIRECTFAIL", {"inst": 1, "shadow": "EX02", "try": 1, "reason": "refused"}),
    (905, "EX01", "HAREDIRECT", {"inst": 1, "shadow": "EX03", "try": 2}),
    (990, "EX03", "HARECEIVE", {"inst": 1, "primary": "EX01"}),
    (995, "EX01", "SHADOW_ACK", {"inst": 1, "shadow": "EX03"}),
    (996, "EX01", "ACCEPT", {"inst": 1, "redundant": True, "acked": True}),
]


def _trace(rows: list[tuple]) -> list[Event]:
    return [
        Event("alarm", i, f"alarm:{i}", T0 + dt, node, "sr", MSG, kind, attrs)
        for i, (dt, node, kind, attrs) in enumerate(rows)
    ]


def _rules(result: MonitorResult) -> list[str]:
    return sorted({v.rule for v in result.violations})


@pytest.mark.unit
def test_a_second_shadow_attempt_without_a_recorded_topology_is_no_sr028() -> None:
    result = SrMonitor().check(_trace(SECOND_ATTEMPT))
    assert R.SHADOW_WHILE_INBOUND_OPEN.name not in _rules(result), result
    assert result.verdict is Verdict.UNKNOWN  # no topology: placement and boundaries not judged
    assert result.tally.judged[R.SHADOW_WHILE_INBOUND_OPEN.name] == 2


@pytest.mark.unit
def test_twin_a_second_attempt_after_the_senders_session_timed_out_is_sr028() -> None:
    rows = list(SECOND_ATTEMPT)
    rows.insert(2, (800, "EX01", "SESSION_TIMEOUT", {"inst": 1, "session": "inbound"}))
    assert R.SHADOW_WHILE_INBOUND_OPEN.name in _rules(SrMonitor().check(_trace(rows)))


def _with_query(change) -> tuple[list[Event], Event]:
    """A generated run whose first successful XQUERYDISCARD carrying discard notifications is changed."""
    events = simulate(1)
    for i, e in enumerate(events):
        if e.kind != ev.XQUERYDISCARD or not e.attrs["ok"]:
            continue
        if any(n.kind == ev.DISCARD_NOTIFY and n.ts_ms == e.ts_ms and n.node == e.node for n in events[i + 1 : i + 4]):
            attrs = dict(e.attrs)
            if change(attrs) is False:
                return [*events[:i], *events[i + 1 :]], e
            out = list(events)
            out[i] = dataclasses.replace(e, attrs=attrs)
            return out, out[i]
    raise AssertionError("no successful query with notifications in the run")


@pytest.mark.unit
def test_notifications_of_an_unreadable_query_are_no_sr053() -> None:
    events, e = _with_query(lambda a: a.update(primary=["EX1"]))
    result = SrMonitor().check(events)
    assert result.verdict is Verdict.UNKNOWN, result.violations[:2]
    assert any(n.startswith(f"{e.event_id} (XQUERYDISCARD): unreadable") for n in result.notes)
    assert result.tally.unjudged[R.DISCARD_BY_QUERY.name][1] == "the XQUERYDISCARD it answers is unreadable"


@pytest.mark.unit
def test_twin_notifications_with_no_query_at_all_are_sr053() -> None:
    events, _ = _with_query(lambda a: False)  # the query left out: the notifications come unasked for
    assert R.DISCARD_BY_QUERY.name in _rules(SrMonitor().check(events))
