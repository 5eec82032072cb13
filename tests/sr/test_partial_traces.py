"""A trace that lacks the beginning of a message (its RECEIVE) is partial, the same policy as
am and pf (TR-I01): the rules that need the beginning are skipped for it (verdict unknown, exit 2, when nothing
else decides), and every rule that can be judged from what was recorded is judged. Hand-built traces, each with
a twin."""

from __future__ import annotations

import json

import pytest

from model.sr import rules as R
from model.sr.monitor import SrMonitor
from traces.schema import Event
from traces.verdict import MonitorResult, Verdict

T0 = 1_767_225_600_000
MSG = "<partial-1@contoso.example>"
TOPOLOGY = {
    "EX01": {"site": "Redmond", "dag": "DAG1"},
    "EX02": {"site": "Dublin", "dag": "DAG1"},
    "EX03": {"site": "Redmond"},
    "HUB1": {"site": "Redmond", "version": "2010"},
}
CONTEXT = [
    (0, "harness", "TRACE_START", {"seed": 0, "model": "sr", "config": json.dumps({"sr": {}})}),
    (0, "harness", "SR_CONFIG", {"topology": json.dumps(TOPOLOGY)}),
]
BEGINNING = [
    (0, "EX01", "RECEIVE", {"inst": 1, "forks": ["mbx"]}),
    (5, "EX01", "HAREDIRECT", {"inst": 1, "shadow": "EX02", "try": 1}),
    (90, "EX02", "HARECEIVE", {"inst": 1, "primary": "EX01"}),
    (95, "EX01", "SHADOW_ACK", {"inst": 1, "shadow": "EX02"}),
    (96, "EX01", "ACCEPT", {"inst": 1, "redundant": True, "acked": True}),
]
# what a recording that starts after the message was received, shadowed and accepted shows
REST = [
    (30_000, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": True, "reason": "heartbeat", "held": 1}),
    (40_000, "EX01", "DELIVER", {"inst": 1, "fork": "mbx", "via": "primary"}),
    (40_001, "EX01", "SAFETYNET", {"inst": 1, "role": "primary"}),
    (150_000, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": True, "reason": "heartbeat", "held": 1}),
    (150_000, "EX02", "DISCARD_NOTIFY", {"inst": 1, "fork": "mbx", "primary": "EX01"}),
    (150_000, "EX02", "HADISCARD", {"inst": 1, "primary": "EX01"}),
    (150_001, "EX02", "SAFETYNET", {"inst": 1, "role": "shadow"}),
    (20_000_000, "harness", "SNAPSHOT", {"quiesced": True}),
]


def _trace(rows: list[tuple]) -> list[Event]:
    out = []
    for i, (dt, node, kind, attrs) in enumerate([*CONTEXT, *rows]):
        mech = "core" if kind == "TRACE_START" else "sr"
        entity = {"TRACE_START": "partial", "SR_CONFIG": "config"}.get(kind, MSG)
        if kind == "XQUERYDISCARD":
            entity = f"hb:{node}>{attrs['primary']}"
        out.append(Event("partial", i, f"partial:{i}", T0 + dt, node, mech, entity, kind, attrs))
    return out


def _check(rows: list[tuple]) -> MonitorResult:
    return SrMonitor().check(_trace(rows))


def _rules(result: MonitorResult) -> list[str]:
    return sorted({v.rule for v in result.violations})


@pytest.mark.unit
def test_the_whole_story_is_valid() -> None:
    """The twin with its beginning: every record agrees with what the monitor derives."""
    result = _check([*BEGINNING, *REST])
    assert result.verdict is Verdict.VALID, result


@pytest.mark.unit
def test_a_recording_that_starts_after_acceptance_is_partial_not_invalid() -> None:
    """Was INVALID (shadow-record-as-derived: held 1, derived 0); now unknown, with the reasons."""
    result = _check(REST)
    assert result.verdict is Verdict.UNKNOWN, result
    assert not result.violations
    unjudged = result.tally.unjudged
    assert "HARECEIVE" in unjudged[R.SHADOW_RECORD_AS_DERIVED.name][1]
    assert "RECEIVE is not in the trace" in unjudged[R.PRIMARY_COPY_TRANSITION.name][1]
    assert any("does not start with the message's RECEIVE" in n for n in result.notes)


@pytest.mark.unit
def test_fewer_shadows_than_the_trace_shows_is_still_judged() -> None:
    """The twin that must fail: a server saying it holds none while the trace shows it made one and kept it."""
    rows = [*BEGINNING, *REST]
    rows[5] = (30_000, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": True, "reason": "heartbeat", "held": 0})
    result = _check(rows)
    assert _rules(result) == [R.SHADOW_RECORD_AS_DERIVED.name], result


@pytest.mark.unit
def test_a_shadow_for_an_exchange_2010_primary_is_invalid_without_the_receive() -> None:
    """A 2013 server holding a shadow whose primary is an Exchange 2010 Hub is forbidden by seed 000
    whatever came before (SR-015): judged (exit 1), though the message's RECEIVE is missing."""
    result = _check([(500, "EX03", "HARECEIVE", {"inst": 1, "primary": "HUB1"})])
    assert result.verdict is Verdict.INVALID
    assert _rules(result) == [R.SHADOW_IN_BOUNDARY.name], result


@pytest.mark.unit
def test_a_shadow_for_a_2013_primary_of_the_boundary_without_the_receive_is_unknown() -> None:
    """The twin: the same partial shadow for a primary of its boundary: nothing to blame, the rest is unknown."""
    result = _check([(500, "EX02", "HARECEIVE", {"inst": 1, "primary": "EX01"})])
    assert result.verdict is Verdict.UNKNOWN, result
    assert result.tally.judged[R.SHADOW_IN_BOUNDARY.name] == 1


@pytest.mark.unit
def test_a_safety_net_resubmission_across_the_boundary_is_judged_on_a_partial_message() -> None:
    """SR-033 needs only the fork: a resubmission of an external fork is a violation whatever came before."""
    bad = _check([(500, "EX01", "RESUBMIT", {"inst": 1, "fork": "ext:fabrikam.example"})])
    assert _rules(bad) == [R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY.name], bad
    good = _check([(500, "EX01", "RESUBMIT", {"inst": 1, "fork": "mbx"})])
    assert good.verdict is Verdict.UNKNOWN and not good.violations, good


@pytest.mark.unit
def test_a_rejection_text_is_judged_on_a_partial_message() -> None:
    """SR-020 needs only the text: a wrong one is a violation; the seed's text leaves the partial message unknown."""
    bad = _check([(500, "EX01", "REJECT", {"inst": 1, "response": "450 4.5.1 try later"})])
    assert _rules(bad) == [R.REJECTION_TEXT.name], bad
    good = _check([(500, "EX01", "REJECT", {"inst": 1, "response": "451 4.4.0 Message failed to be made redundant"})])
    assert good.verdict is Verdict.UNKNOWN and not good.violations, good


@pytest.mark.unit
def test_heartbeats_to_an_exchange_2010_primary_holding_shadows_are_invalid() -> None:
    """The same forbidden shadow seen only in the 2013 server's queries: `held` shadows for a 2010 Hub."""
    query = {"primary": "HUB1", "ok": True, "reason": "heartbeat", "held": 2}
    result = _check([(500, "EX03", "XQUERYDISCARD", query)])
    assert _rules(result) == [R.SHADOW_IN_BOUNDARY.name], result


@pytest.mark.unit
def test_twin_a_query_to_a_2010_primary_holding_nothing_is_not_judged_a_violation() -> None:
    query = {"primary": "HUB1", "ok": True, "reason": "heartbeat", "held": 0}
    result = _check([(500, "EX03", "XQUERYDISCARD", query)])
    assert result.verdict is Verdict.UNKNOWN and not result.violations, result
