"""Found by the sr state machine (`tests/sr/test_stateful.py`, seed 39382, on a fresh clone): a server down
for longer than SafetyNetHoldTime restarts, and a Safety Net resubmission at the same instant used a copy
whose hold time had run out while the server was down (SR-065, `safetynet-hold`). The expiry timer was
rescheduled at the restart, but the request came before it ran. The model now expires an overdue entry at
the restart and never resubmits one (`model/sr/cluster.py`)."""

from __future__ import annotations

import dataclasses

import pytest

from conformance.check import verdict
from conformance.harness.core import replay_steps
from conformance.harness.search import driver

pytestmark = pytest.mark.unit

SETUP = {
    "auto_discard_ms": 172800000, "enabled": False, "expiration_ms": 1200000, "heartbeat_ms": 120000,
    "hub": False, "layout": "single-site-dag", "max_local": 2, "max_remote": 4, "n_servers": 3,
    "preference": "PreferRemote", "reject_on_failure": False, "resubmit_ms": 10800000,
    "retry_meaning": "attempts", "safety_net_hold_ms": 2400000, "seed": 39382, "stall_p": 0.0,
}  # fmt: skip


def _c(call: str, **args: object) -> dict:
    return {"call": call, "args": args}


STEPS = [
    {"op": "submit", "calls": [_c("submit", msg="m1", primary="MBX03", forks=["mbx"], origin="outside")]},
    {"op": "hub", "calls": [_c("submit", msg="m2", primary="MBX01", forks=["mbx", "hub:HUB2010"], origin="hub2010")]},
    {"op": "advance", "calls": [_c("advance", ms=1000)]},
    {"op": "isolate", "calls": [_c("isolate", server="MBX01")]},
    {"op": "crash", "calls": [_c("crash", server="MBX01")]},
    {"op": "advance", "calls": [_c("advance", ms=11400000)]},  # down for much longer than SafetyNetHoldTime
    {"op": "bounce", "calls": [_c("crash", server="MBX01"), _c("restart", server="MBX01", new_database=False)]},
    {"op": "resubmit", "calls": [_c("safetynet_resubmit", server="MBX01")]},  # the same instant as the restart
]


def _run() -> list:
    d = driver("sr")
    session, _ = replay_steps(d, d.model_factory()(SETUP), SETUP, STEPS)
    return list(session.events())


def test_an_overdue_safety_net_copy_expires_at_the_restart_and_is_never_resubmitted():
    events = _run()
    m2 = [e.kind for e in events if e.entity == "m2" and e.node == "MBX01"]
    assert "SAFETYNET_EXPIRE" in m2 and "RESUBMIT" not in m2
    assert not [v for v in verdict(events, [driver("sr").monitor()]).violations if v.rule == "safetynet-hold"]


def test_twin_the_old_order_breaks_safetynet_hold():
    """The model's old behaviour: the overdue copy resubmitted at the restart, before its expiry."""
    events = _run()
    expire = next(i for i, e in enumerate(events) if e.entity == "m2" and e.kind == "SAFETYNET_EXPIRE")
    e = events[expire]
    resubmit = dataclasses.replace(e, kind="RESUBMIT", attrs={"inst": 1, "fork": "mbx", "source": "SAFETYNET"})
    redeliver = dataclasses.replace(e, kind="DUPLICATEDELIVER", attrs={"inst": 1, "fork": "mbx", "via": "safetynet"})
    old = [*events[:expire], resubmit, redeliver, *events[expire:]]
    old = [dataclasses.replace(x, seq=i, event_id=f"{x.trace_id}:{i}") for i, x in enumerate(old)]
    assert "safetynet-hold" in {v.rule for v in verdict(old, [driver("sr").monitor()]).violations}
