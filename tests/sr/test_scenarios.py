"""The seed's own stories, replayed step by step on the reference model (seed 000)."""

from __future__ import annotations

import dataclasses

import pytest

from model.kernel.sim import MINUTE, SECOND
from model.sr import events as ev
from model.sr.mutants import DiscardsInMemory
from model.sr.protocol import ModelSystem
from spec.catalogue import param_ms
from tests.sr.helpers import QUIET, kinds, report, sr, violations

HB = param_ms("ShadowHeartbeatFrequency")
RESUBMIT = param_ms("ShadowResubmitTimeSpan")
SLOW = dataclasses.replace(QUIET, hop_slow_p=1.0)


def _clean(system: ModelSystem) -> None:
    found = violations(system.events())
    assert not found, "\n".join(map(str, found)) + "\n" + report(system.events())


def _shadow_of(system: ModelSystem, msg: str) -> str:
    return sr(system.events(), ev.HARECEIVE, msg)[0].node


@pytest.mark.unit
def test_shadow_creation_sequence() -> None:
    """SR-027..SR-031, SR-016: second session while the sender waits; ack only after the shadow's ack."""
    s = ModelSystem(1, timing=QUIET)
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(MINUTE)
    assert kinds(s.events(), "m1")[:5] == [ev.RECEIVE, ev.HAREDIRECT, ev.HARECEIVE, ev.SHADOW_ACK, ev.ACCEPT]
    redirect = sr(s.events(), ev.HAREDIRECT, "m1")[0]
    assert redirect.attrs["site"] == "remote" and redirect.attrs["shadow_site"] != "site0"
    assert sr(s.events(), ev.ACCEPT, "m1")[0].attrs == {
        "inst": 1,
        "redundant": True,
        "acked": True,
        "response": ev.ACK_TEXT,
    }
    s.finish()
    assert sr(s.events(), ev.HADISCARD, "m1")
    _clean(s)


@pytest.mark.unit
def test_mailbox01_returns_with_new_database() -> None:
    """SR-059, SR-068, SR-070, SR-071: the shadow sees the new database ID at its next heartbeat."""
    s = ModelSystem(2, timing=SLOW)
    s.submit("m1", "MBX01", ["mbx", "ext:contoso.example"])
    s.advance(10 * SECOND)
    s.crash("MBX01")
    s.advance(10 * MINUTE)
    s.restart("MBX01", new_database=True)
    back = s.sim.now_ms
    s.advance(HB + MINUTE)
    assert [e.attrs["role"] for e in sr(s.events(), ev.LOST, "m1")] == ["primary"]
    promote = sr(s.events(), ev.PROMOTE, "m1")
    assert promote and promote[0].attrs["reason"] == "database_id"
    assert promote[0].ts_ms - back <= HB  # the seed's bound, measured from the return (SR-I07)
    s.finish()
    assert {e.attrs["fork"] for e in sr(s.events(), entity="m1") if e.kind in ev.PROCESSING} == {
        "mbx",
        "ext:contoso.example",
    }
    _clean(s)


@pytest.mark.unit
def test_mailbox01_returns_with_same_database() -> None:
    """SR-058, SR-069, SR-072, SR-073: promotion after the resubmit span; duplicates on return."""
    s = ModelSystem(3, timing=SLOW)
    s.submit("m1", "MBX01", ["mbx", "ext:contoso.example"])
    s.advance(10 * SECOND)
    s.isolate("MBX01")
    s.advance(RESUBMIT + HB + MINUTE)
    promote = sr(s.events(), ev.PROMOTE, "m1")
    assert promote and promote[0].attrs["reason"] == "resubmit_timespan"
    waited = promote[0].ts_ms - promote[0].attrs["last_contact_ms"]
    assert RESUBMIT <= waited <= RESUBMIT + HB  # SR-I06/SR-I08: checks happen on heartbeat ticks
    s.heal()
    s.advance(2 * 60 * MINUTE)
    evs = sr(s.events(), entity="m1")
    assert [e.kind for e in evs if e.attrs.get("fork") == "mbx"].count(ev.DELIVER) == 1
    assert [e.kind for e in evs if e.attrs.get("fork") == "mbx"].count(ev.DUPLICATEDELIVER) == 1
    assert [e.kind for e in evs if e.attrs.get("fork") == "ext:contoso.example"].count(ev.SEND) == 2
    s.finish()
    _clean(s)


@pytest.mark.unit
def test_timeout_after_shadow_was_made() -> None:
    """SR-041..SR-043: accepted anyway; the sender redelivers; a second, unrelated shadow; hidden dup."""
    s = ModelSystem(4, timing=dataclasses.replace(QUIET, ack_loss_p=1.0, max_insts=2))
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(30 * MINUTE)
    accepts = sr(s.events(), ev.ACCEPT, "m1")
    assert [(a.attrs["inst"], a.attrs["redundant"], a.attrs["acked"]) for a in accepts] == [
        (1, True, False),
        (2, True, False),
    ]
    assert sorted(e.attrs["inst"] for e in sr(s.events(), ev.HARECEIVE, "m1")) == [1, 2]
    s.finish()
    kinds_ = kinds(s.events(), "m1")
    assert kinds_.count(ev.DELIVER) == 1 and kinds_.count(ev.DUPLICATEDELIVER) == 1
    _clean(s)


@pytest.mark.unit
@pytest.mark.parametrize("reject", [True, False])
def test_no_shadow_server_reject_or_accept(reject: bool) -> None:
    """SR-019, SR-020, SR-048, SR-I13: MBX04 is alone in its site outside the DAG."""
    s = ModelSystem(5, layout="mixed", timing=dataclasses.replace(QUIET, max_insts=1), reject_on_failure=reject)
    s.submit("m1", "MBX04", ["mbx"])
    s.advance(MINUTE)
    fails = sr(s.events(), ev.HAREDIRECTFAIL, "m1")
    assert [f.attrs["reason"] for f in fails] == ["No suitable shadow servers"] * 2
    if reject:
        assert [e.attrs["response"] for e in sr(s.events(), ev.REJECT, "m1")] == [
            "451 4.4.0 Message failed to be made redundant"
        ]
        assert not sr(s.events(), ev.ACCEPT, "m1")
    else:
        assert sr(s.events(), ev.ACCEPT, "m1")[0].attrs["redundant"] is False
    s.finish()
    _clean(s)


@pytest.mark.unit
def test_stalled_shadow_sessions_time_out() -> None:
    """SR-039, SR-040: each stalled shadow session ends after ConnectionInactivityTimeout; the sender's
    session ends at ConnectionTimeout, and the message is accepted without a shadow (default)."""
    s = ModelSystem(6, timing=dataclasses.replace(QUIET, stall_p=1.0, max_insts=1))
    start = s.sim.now_ms
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(15 * MINUTE)
    outs = [(e.attrs["session"], e.ts_ms - start) for e in sr(s.events(), ev.SESSION_TIMEOUT, "m1")]
    assert outs == [
        ("shadow", param_ms("ReceiveConnectionInactivityTimeoutMailbox")),
        ("inbound", param_ms("ReceiveConnectionTimeoutMailbox")),
    ]
    accept = sr(s.events(), ev.ACCEPT, "m1")[0]
    assert accept.attrs["redundant"] is False and accept.attrs["acked"] is False
    s.finish()
    _clean(s)


@pytest.mark.unit
def test_exchange_2010_hub() -> None:
    """SR-036..SR-038: no XSHADOW from 2013; Safety Net never resubmits to the 2010 Hub."""
    s = ModelSystem(7, hub=True, timing=QUIET)
    s.submit("m1", "MBX01", ["mbx", "hub:HUB2010"], origin="hub2010")
    s.advance(5 * MINUTE)
    rec = sr(s.events(), ev.RECEIVE, "m1")[0]
    assert rec.attrs["sender_xshadow"] is True and rec.attrs["xshadow_advertised"] is False
    s.safetynet_resubmit("MBX01")
    assert [e.attrs["fork"] for e in sr(s.events(), ev.RESUBMIT, "m1")] == ["mbx"]
    s.finish()
    _clean(s)


def _discard_story(policy=None) -> ModelSystem:
    s = ModelSystem(8, timing=QUIET, policy=policy)
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(3 * SECOND)
    shadow = _shadow_of(s, "m1")
    s.isolate(shadow)
    s.advance(MINUTE)
    s.crash("MBX01")
    s.restart("MBX01")
    s.heal()
    s.advance(2 * HB)
    return s


@pytest.mark.unit
def test_discard_notifications_survive_a_restart() -> None:
    """SR-057: the primary restarts (same database) before the shadow asks; the shadow still learns."""
    s = _discard_story()
    assert sr(s.events(), ev.HADISCARD, "m1")
    s.finish()
    _clean(s)


@pytest.mark.unit
def test_discard_notifications_in_memory_is_caught() -> None:
    """Twin of the above: notifications kept in memory are lost and the shadow is never released."""
    s = _discard_story(DiscardsInMemory())
    assert not sr(s.events(), ev.HADISCARD, "m1")
    s.finish()
    assert {v.rule for v in violations(s.events())} == {"shadow-released"}


@pytest.mark.unit
def test_disabled_makes_no_shadow() -> None:
    """SR-018: ShadowRedundancyEnabled false."""
    s = ModelSystem(9, timing=QUIET, enabled=False)
    s.submit("m1", "MBX01", ["mbx"])
    s.finish()
    assert not sr(s.events(), ev.HAREDIRECT)
    assert sr(s.events(), ev.ACCEPT, "m1")[0].attrs["redundant"] is False
    _clean(s)
