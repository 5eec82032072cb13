"""What the imported-log monitor judged, per rule (issue 29): never "held" where nothing was compared.

The issue's headline: real tracking-log rows imported with no transport boundary and no protocol logs showed
SR-015, SR-025, SR-033 and the four `smtp-*` rules as held. Here the shipped audit sample
(`traces/samples/audit/logs/clean`, tracking logs only) imported without `--boundary` must leave those rules
judged 0 with the reason; its twin, the same logs with the boundary, judges SR-015 and SR-033 (the sample
holds no RESUBMIT: SR-025 is judged on a log that has one), and the shipped tracking-plus-protocol pair
(`tests/audit/data/pair`) judges the `smtp-*` rules it has instances of. On every input here, per rule,
violations <= judged (a skew-inconsistent violation counts against its ordering's rule). A planted bug in rule
code raises out of `conformance.check.verdict` (an internal error, exit 3), while its twin, an import whose
recorded configuration does not parse (an input fault), is unknown with the note. A fold saved and restored
mid-trace gives the tally of one pass.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

import model.msgtrk.monitor as monitor
from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs
from conformance.audit.smtplog import parse_protocol
from conformance.check import verdict
from model.msgtrk import rules as R
from model.msgtrk.judging import NO_BOUNDARY, NO_PROTOCOL_LOG, NO_SKEW
from model.msgtrk.monitor import AuditMonitor
from tests.audit import logs
from tests.audit.logs import MID, line, t
from traces.corpus import SAMPLES_DIR
from traces.schema import Event
from traces.verdict import MonitorResult, Tally, Verdict, restore_fold, save_fold

pytestmark = pytest.mark.unit

SAMPLE = SAMPLES_DIR / "audit" / "logs"
PAIR = Path(__file__).parent / "data"
DAG = {"DAG1": ("mbx1", "mbx2", "mbx3")}
UNJUDGED_WITHOUT_CONTEXT = (*R.BOUNDARY_RULES, *R.SMTP_RULES)


def _import(root: Path, boundaries=None, **cfg) -> list[Event]:
    parsed = parse_logs([str(root)])
    smtp = parse_protocol(parsed.inputs.protocol) if parsed.inputs.protocol else None
    events, _ = build_trace(parsed, ImportConfig(boundaries=boundaries or {}, **cfg), [str(root)], smtp)
    return events


def _base(rule: str) -> str:
    return rule.removesuffix(".skew_inconsistent")


def _bounded(result: MonitorResult) -> None:
    """Per rule, violations <= judged; every rule of the tally is a rule of the table."""
    assert result.tally is not None
    names = set(R.RULES)
    assert set(result.tally.judged) <= names and set(result.tally.unjudged) <= names
    for rule, n in Counter(_base(v.rule) for v in result.violations).items():
        assert n <= result.tally.judged.get(rule, 0), (rule, n, result.tally.judged)


def test_an_import_without_boundary_or_protocol_logs_judges_none_of_those_rules():
    result = AuditMonitor(100).check(_import(SAMPLE / "clean"))
    _bounded(result)
    tally = result.tally
    for rule in UNJUDGED_WITHOUT_CONTEXT:
        assert tally.judged.get(rule.name, 0) == 0, rule.name
        assert tally.unjudged[rule.name][1] in (NO_BOUNDARY, NO_PROTOCOL_LOG), rule.name
    assert tally.unjudged[R.SHADOW_IN_BOUNDARY.name][1] == NO_BOUNDARY
    assert tally.unjudged[R.SMTP_ACK_AFTER_SHADOW.name] == [3, NO_PROTOCOL_LOG]  # one per message shadowed
    assert tally.judged[R.SHADOW_ON_OTHER_SERVER.name] == 3  # what the rows do show is judged


def test_twin_the_same_sample_with_its_boundary_judges_the_boundary_rules():
    result = AuditMonitor(100).check(_import(SAMPLE / "clean", DAG))
    _bounded(result)
    assert result.tally.judged[R.SHADOW_IN_BOUNDARY.name] == 3  # each paired HAREDIRECT
    assert result.tally.judged[R.SAFETYNET_AFTER_BOUNDARY_EXIT.name] == 2  # each SEND to the edge
    assert R.SHADOW_IN_BOUNDARY.name not in result.tally.unjudged


def test_a_resubmit_is_judged_for_its_boundary_only_with_one_recorded(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    resubmit = line(
        "2016",
        date_time=t(9900),
        server_hostname="mbx1",
        source="SAFETYNET",
        event_id="RESUBMIT",
        internal_message_id="101",
        message_id=MID,
    )
    logs.write(tmp_path / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", [*p, resubmit])
    logs.write(tmp_path / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2016", s)
    result = AuditMonitor(100).check(_import(tmp_path, DAG))
    _bounded(result)
    assert result.tally.judged[R.RESUBMIT_ACROSS_BOUNDARY.name] == 1
    assert {v.rule for v in result.violations} == {R.SAFETYNET_AFTER_BOUNDARY_EXIT.name}
    bare = AuditMonitor(100).check(_import(tmp_path))  # twin: no boundary, so neither rule judged
    assert R.RESUBMIT_ACROSS_BOUNDARY.name not in bare.tally.judged and not bare.violations
    assert bare.tally.unjudged[R.RESUBMIT_ACROSS_BOUNDARY.name][1] == NO_BOUNDARY


@pytest.mark.parametrize("name", ["pair", "pair-early-ack"])
def test_the_shipped_protocol_log_pair_judges_the_smtp_rules(name):
    result = AuditMonitor(100).check(_import(PAIR / name, {"DAG1": ("mbx1", "mbx2")}))
    _bounded(result)
    for rule in (R.SMTP_ACK_AFTER_SHADOW, R.SMTP_SHADOW_SESSION_ANNOUNCED, R.SMTP_SHADOW_SESSION_DISCARD_QUERY):
        assert result.tally.judged[rule.name] >= 1, rule.name
    assert not result.tally.unjudged  # everything the pair shows is judged under the bound
    assert [v.rule for v in result.violations] == ([R.SMTP_ACK_AFTER_SHADOW.name] if "early" in name else [])


def test_cross_server_orders_are_skipped_without_a_bound_and_judged_with_one():
    events = _import(SAMPLE / "violation", DAG)
    loose = AuditMonitor(None).check(events)
    _bounded(loose)
    assert loose.tally.judged.get(R.DISCARD_AFTER_NEXT_HOP.name, 0) == 0
    assert loose.tally.unjudged[R.DISCARD_AFTER_NEXT_HOP.name] == [3, NO_SKEW]
    bound = AuditMonitor(100).check(events)
    _bounded(bound)
    assert bound.tally.judged[R.DISCARD_AFTER_NEXT_HOP.name] == 3
    assert [v.rule for v in bound.violations] == [R.DISCARD_AFTER_NEXT_HOP.name]


def test_a_planted_bug_in_rule_code_raises_out_of_the_check(monkeypatch):
    events = _import(SAMPLE / "clean", DAG)
    assert verdict(events).verdict is Verdict.UNKNOWN  # SR-031 not in tracking logs: unknown, not a bug

    def broken(j, entity, primary, h, *rest):
        return h.attrs["no-such-attribute"]  # a misspelt key in rule code

    monkeypatch.setattr(monitor, "judge_redirect", broken)
    with pytest.raises(KeyError):
        verdict(events)


def test_twin_an_unreadable_import_configuration_is_unknown_with_the_note():
    events = _import(SAMPLE / "clean", DAG)
    start = dataclasses.replace(events[0], attrs={**events[0].attrs, "coverage": ["mbx1=early..late"]})
    result = verdict([start, *events[1:]])
    assert result.verdict is Verdict.UNKNOWN and not result.violations
    assert any("IMPORT_START cannot be read" in n and "unreadable configuration" in n for n in result.notes)


def test_a_saved_and_restored_fold_gives_the_tally_of_one_pass():
    events = _import(PAIR / "pair", {"DAG1": ("mbx1", "mbx2")})
    one = AuditMonitor(100)
    whole = one.check(events)
    fold = one.start()
    half = len(events) // 2
    for e in events[:half]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[half:]:
        fold.feed(e)
    resumed = fold.finish()
    assert isinstance(resumed.tally, Tally)
    assert (resumed.tally.judged, resumed.tally.unjudged) == (whole.tally.judged, whole.tally.unjudged)
    assert resumed.violations == whole.violations
