"""A trace written by hand, as an external transport's harness would record it: the monitor judges it
without the simulator (same kinds and attributes as `model/sr/README.md`), from the recorded settings and
topology (TRACE_START `config.sr`, SR_CONFIG `topology`)."""

from __future__ import annotations

import json

import pytest

from model.sr.monitor import SrMonitor
from traces.schema import Event
from traces.verdict import Verdict

T0 = 1_767_225_600_000
MSG = "<id-42@contoso.example>"
RECEIVE = {
    "inst": 1, "sender": "smtp.contoso.example", "origin": "outside", "boundary": "dag:DAG1", "site": "Redmond",
    "db": "EX01-7f3a", "forks": ["mbx", "ext:fabrikam.example"], "enabled": True, "reject": True,
    "pref": "PreferRemote", "in_dag": True, "multi_site": True, "max_remote": 4, "max_local": 2,
    "meaning": "attempts", "plan": ["remote"] * 4 + ["local"] * 2, "sender_xshadow": False,
    "xshadow_advertised": False,
}  # fmt: skip
TOPOLOGY = {"EX01": {"site": "Redmond", "dag": "DAG1"}, "EX02": {"site": "Dublin", "dag": "DAG1"}}
CONTEXT = [
    (
        0,
        "harness",
        "TRACE_START",
        {"seed": 0, "model": "sr", "config": json.dumps({"sr": {"reject_on_failure": True}})},
    ),
    (0, "harness", "SR_CONFIG", {"topology": json.dumps(TOPOLOGY)}),
]
STORY = [
    (0, "EX01", "RECEIVE", RECEIVE),
    (5, "EX01", "HAREDIRECT", {"inst": 1, "shadow": "EX02", "try": 1, "site": "remote", "shadow_site": "Dublin",
                               "site_of_primary": "Redmond"}),
    (90, "EX02", "HARECEIVE", {"inst": 1, "primary": "EX01", "boundary": "dag:DAG1", "primary_db": "EX01-7f3a",
                               "forks": ["mbx", "ext:fabrikam.example"]}),
    (95, "EX01", "SHADOW_ACK", {"inst": 1, "shadow": "EX02"}),
    (96, "EX01", "ACCEPT", {"inst": 1, "redundant": True, "acked": True, "response": "250 2.6.0 Queued"}),
    (400, "EX01", "DELIVER", {"inst": 1, "fork": "mbx", "via": "primary"}),
    (900, "EX01", "SEND", {"inst": 1, "fork": "ext:fabrikam.example", "next_hop": "fabrikam.example",
                           "via": "primary"}),
    (901, "EX01", "SAFETYNET", {"inst": 1, "role": "primary"}),
    (60_000, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": True, "reason": "heartbeat", "db": "EX01-7f3a"}),
    (60_000, "EX02", "DISCARD_NOTIFY", {"inst": 1, "fork": "mbx", "primary": "EX01"}),
    (60_000, "EX02", "DISCARD_NOTIFY", {"inst": 1, "fork": "ext:fabrikam.example", "primary": "EX01"}),
    (60_000, "EX02", "HADISCARD", {"inst": 1, "primary": "EX01"}),
    (60_001, "EX02", "SAFETYNET", {"inst": 1, "role": "shadow"}),
    (20_000_000, "harness", "SNAPSHOT", {"quiesced": True}),
]  # fmt: skip


def _trace(rows) -> list[Event]:
    out = []
    for i, (dt, node, kind, attrs) in enumerate([*CONTEXT, *rows]):
        mech = "core" if kind == "TRACE_START" else "sr"
        entity = {"TRACE_START": "ext-1", "SR_CONFIG": "config", "XQUERYDISCARD": f"hb:{node}>EX01"}.get(kind, MSG)
        out.append(Event("ext-1", i, f"ext-1:{i}", T0 + dt, node, mech, entity, kind, attrs))
    return out


@pytest.mark.unit
def test_hand_written_story_is_valid() -> None:
    result = SrMonitor().check(_trace(STORY))
    assert result.verdict is Verdict.VALID, result


@pytest.mark.unit
def test_hand_written_story_without_snapshot_is_unknown() -> None:
    assert SrMonitor().check(_trace(STORY[:-1])).verdict is Verdict.UNKNOWN


@pytest.mark.unit
def test_discard_before_the_external_hop_is_caught() -> None:
    """Move the second discard notification before the SEND: the shadow learned too early (SR-062)."""
    rows = list(STORY)
    rows.insert(6, (800, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": True, "reason": "session"}))
    rows.insert(7, (800, "EX02", "DISCARD_NOTIFY", {"inst": 1, "fork": "ext:fabrikam.example", "primary": "EX01"}))
    del rows[12]
    found = SrMonitor().check(_trace(rows)).violations
    assert [(v.rule, v.requirement) for v in found] == [("no-premature-discard", "SR-062")]


@pytest.mark.unit
def test_rejection_with_another_text_is_caught() -> None:
    """The sender's session times out (ConnectionTimeout) while the shadow is being made: rejected, but with
    another text than the seed's."""
    rows = [
        *STORY[:2],
        (600_000, "EX01", "SESSION_TIMEOUT", {"inst": 1, "session": "inbound", "timeout": "ConnectionTimeout"}),
        (
            600_000,
            "EX01",
            "HAREDIRECTFAIL",
            {"inst": 1, "shadow": "EX02", "try": 1, "reason": "inbound session timed out", "final": True},
        ),
        (600_001, "EX01", "REJECT", {"inst": 1, "response": "450 4.5.1 Message failed to be made redundant"}),
    ]
    found = SrMonitor().check(_trace(rows)).violations
    assert {v.rule for v in found} == {"rejection-text"}


@pytest.mark.unit
def test_unreadable_attributes_make_the_verdict_unknown_not_a_crash() -> None:
    rows = [(dt, node, kind, dict(attrs)) for dt, node, kind, attrs in STORY]
    del rows[1][3]["try"]  # an implementation that does not record the attempt number
    result = SrMonitor().check(_trace(rows))
    assert result.verdict is Verdict.UNKNOWN and "unreadable" in result.notes[0]
