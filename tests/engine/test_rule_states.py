"""What each rule judged, in the report (issue 29): four states per rule, never "held" without an instance, and
a check where nothing beyond the format rules judged anything is unknown, never valid.

The states come from `conformance.engine.tally.rule_rows` over the tallies every fold keeps
(`traces.verdict.Tally`); the engines add them up (`RuleCounts`). Tested on a clean sample, a mutant, and
hand-made counts (the twins: a rule with no judged instance, a mechanism absent from the input). A rule bug
(an exception in rule code that is not a documented input fault) is an internal error, exit 3; its twin, a
truncated trace, stays unknown.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import model.sr.step as sr_step
from conformance.check import verdict
from conformance.cli import main
from conformance.engine.tally import STATES, UNCOUNTED, RuleCounts, nothing_judged, rule_rows
from conformance.pycheck import check_paths
from traces.corpus import SAMPLES_DIR
from traces.io import read_events
from traces.verdict import Rule, Tally, Verdict

pytestmark = pytest.mark.unit

CLEAN = SAMPLES_DIR / "clean"
ACK = SAMPLES_DIR / "mutants" / "sr--ack-before-shadow.jsonl"


def consistent(row: dict) -> None:
    """The one definition of a row's state from its counts (the module's docstring)."""
    assert row["state"] in STATES
    assert row["held"] == row["judged"] - row["violated"] >= 0, row
    if row["state"] == "violated":
        assert row["violated"] > 0, row
    elif row["state"] == "held":
        assert row["judged"] > 0 and row["violated"] == 0, row
    else:
        assert row["judged"] == 0 and row["violated"] == 0 and row["reason"], row


def test_clean_sample_every_row_is_consistent_and_every_mechanism_judged_something():
    outcome = check_paths([str(CLEAN)])
    assert outcome.verdict == "valid"
    for row in outcome.rules:
        consistent(row)
    held = {r["mechanism"] for r in outcome.rules if r["state"] == "held"}
    seen = {m for m in ("sr", "am", "pf") if outcome.events_by_mechanism.get(m)}
    assert seen and seen <= held, (seen, held)
    assert not outcome.nothing_judged


def test_mutant_violated_rules_match_the_violation_counts():
    outcome = check_paths([str(ACK)])
    counted = {(v["mechanism"], v["rule"]): v["count"] for v in outcome.violations_by_rule}
    rows = {(r["mechanism"], r["rule"]): r for r in outcome.rules}
    assert counted
    for key, n in counted.items():
        assert rows[key]["state"] == "violated" and rows[key]["violated"] == n
        assert rows[key]["judged"] >= n
    for row in outcome.rules:
        consistent(row)


def _table_rows(counts: RuleCounts, seen: dict[str, int], violations=()) -> dict[str, dict]:
    return {(r["mechanism"], r["rule"]): r for r in rule_rows(counts, list(violations), seen, ["sr"])}


def test_a_rule_with_no_judged_instance_is_never_held():
    counts = RuleCounts()
    tally = Tally()
    rule = Rule("shadow-before-ack", "SR-031", "always", "")
    tally.judge(rule, 3)
    counts.add("sr", tally)
    rows = _table_rows(counts, {"sr": 10})
    assert rows[("sr", "shadow-before-ack")]["state"] == "held"
    assert rows[("sr", "shadow-before-ack")]["judged"] == 3
    other = rows[("sr", "reject-required")]
    assert other["state"] == "not-judged" and other["judged"] == 0
    assert other["reason"] == "no instance of the rule in this input"


def test_twin_skipped_absent_and_violated_rules_take_their_own_state():
    counts = RuleCounts()
    tally = Tally()
    tally.skip(Rule("shadow-in-boundary", "SR-015", "always", ""), "no recorded topology", 2)
    counts.add("sr", tally)
    rows = _table_rows(counts, {"sr": 10}, [{"rule": "shadow-placement", "mechanism": "sr", "count": 2}])
    skipped = rows[("sr", "shadow-in-boundary")]
    assert skipped["state"] == "not-judged" and skipped["reason"] == "no recorded topology"
    assert skipped["not_judged"] == 2
    assert rows[("sr", "shadow-placement")]["state"] == "violated"
    assert rows[("sr", "shadow-placement")]["judged"] == 2  # a violation is an instance judged
    absent = _table_rows(counts, {"am": 10})[("sr", "shadow-before-ack")]
    assert absent["state"] == "not-applicable"


def test_nothing_judged_beyond_the_format_rules_is_said():
    counts = RuleCounts()
    tally = Tally()
    tally.judge(Rule("seq-strictly-increasing", "TR-001", "always", ""), 5)
    counts.add("core", tally)
    counts.add("sr", Tally())
    rows = rule_rows(counts, [], {"sr": 5}, ["sr"])
    assert nothing_judged(rows)
    tally.judge(Rule("recv-after-send", "TR-003", "always", ""))  # twin: one instance of a rule that is not format
    counts2 = RuleCounts()
    counts2.add("core", tally)
    counts2.add("sr", Tally())
    assert not nothing_judged(rule_rows(counts2, [], {"sr": 5}, ["sr"]))


def test_summary_json_carries_the_rule_rows(tmp_path):
    out = tmp_path / "out"
    assert main(["check", str(CLEAN), "--engine", "python", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nothing_judged"] is False
    assert sum(summary["rules_by_state"].values()) == len(summary["rules"]) > 50
    for row in summary["rules"]:
        consistent(row)


def test_a_bug_in_rule_code_is_an_internal_error(tmp_path, monkeypatch, capsys):
    """A planted bug (a misspelt key, a None dereferenced) in the sr rules: exit 3, never unknown."""
    real = sr_step.step

    def planted(w, e):
        if e.kind == "SHADOW_ACK":
            return {}["misspelt-key"]
        return real(w, e)

    monkeypatch.setattr(sr_step, "step", planted)
    import model.sr.monitor as sr_monitor

    monkeypatch.setattr(sr_monitor, "step", planted)
    out = tmp_path / "out"
    status = main(["check", str(CLEAN / "sr-s1.jsonl"), "--engine", "python", "--out", str(out), "--quiet"])
    assert status == 3, capsys.readouterr()
    assert "misspelt-key" in (out / "haconform-error.log").read_text()


def test_twin_a_trace_missing_an_attribute_stays_unknown():
    """The twin of the planted bug: an event lacking an attribute its rules read is an input fault of the
    trace: the monitor names the event and what it lacks, the verdict is unknown, and nothing is raised."""
    events, cut = [], False
    for e in read_events(CLEAN / "sr-s1.jsonl").events:
        if e.kind == "HAREDIRECT" and not cut:
            e, cut = dataclasses.replace(e, attrs={k: v for k, v in e.attrs.items() if k != "try"}), True
        events.append(e)
    result = verdict(events)
    assert result.verdict is Verdict.UNKNOWN and not result.violations
    assert any("HAREDIRECT" in n and "try" in n for n in result.notes), result.notes


PAIR_LOG = Path(__file__).resolve().parents[1] / "audit" / "data" / "pair" / "mbx1" / "MSGTRK2023040218-1.LOG"


def log_without_shadow_rows(directory: Path, keep: tuple[str, ...] = (",RECEIVE,", ",DELIVER,")) -> Path:
    """A message tracking log of one server holding only rows no shadow redundancy rule reads (an Exchange
    log of a server that made no shadow: the issue's real 2010 and MSGTRKMS files), imported as a trace.
    `keep` with `,HAREDIRECT,` is the twin: a log with a shadow the audit rules judge."""
    lines = PAIR_LOG.read_text(encoding="utf-8-sig").splitlines()
    rows = [x for x in lines if x.startswith("#") or any(k in x for k in keep)]
    if ",HAREDIRECT," not in keep:  # a server that made no shadow records none in S:Replication (judged, issue 31)
        rows = [x.replace("S:Replication=MBX2", "") for x in rows]
    log = directory / "logs" / "mbx1" / "MSGTRK2023040218-1.LOG"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    trace = directory / "imported.parquet"
    assert main(["import", "msgtrk", str(directory / "logs"), "--out", str(trace)]) == 0
    return trace


def test_a_check_with_nothing_to_judge_is_unknown_exit_2(tmp_path, capsys):
    trace = log_without_shadow_rows(tmp_path)
    out = tmp_path / "out"
    assert main(["check", str(trace), "--engine", "python", "--out", str(out), "--quiet"]) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "unknown" and summary["nothing_judged"] is True
    notes = [json.loads(x)["note"] for x in (out / "unknown.jsonl").read_text().splitlines()]
    assert any(n.startswith("nothing to judge") and "msgtrk" in n for n in notes), notes
    assert not any(r["state"] == "held" and r["requirement"] not in FORMAT for r in summary["rules"])
    accepted = tmp_path / "accepted"
    assert main(["check", str(trace), "--engine", "python", "--out", str(accepted), "--quiet", "--allow-unknown"]) == 0


def test_twin_a_log_with_a_shadow_is_judged(tmp_path):
    trace = log_without_shadow_rows(tmp_path, (",RECEIVE,", ",HAREDIRECT,", ",SEND,"))
    outcome = check_paths([str(trace)])
    assert not outcome.nothing_judged
    assert any(r["judged"] and r["requirement"] not in FORMAT for r in outcome.rules)


FORMAT = {"TR-001", "TR-002", "TR-004", "TR-005", "TR-006", "TR-008"}


def test_a_monitor_that_gives_no_tally_judged_nothing_it_can_show():
    """A result without a tally (a monitor that does not count) never makes its rules held nor the check judged."""
    counts = RuleCounts()
    counts.add("sr", None)
    rows = rule_rows(counts, [], {"sr": 5}, ["sr"])
    sr = [r for r in rows if r["mechanism"] == "sr"]
    assert sr and all(r["state"] == "not-judged" and r["reason"] == UNCOUNTED for r in sr)
    assert nothing_judged(rows)


def test_a_monitor_without_a_rules_table_shows_the_rules_its_violations_name():
    found = [{"rule": "probe", "requirement": "TR-001", "mechanism": "probe", "count": 2}]
    rows = [r for r in rule_rows(RuleCounts(), found, {"sr": 5}, ["probe"]) if r["mechanism"] == "probe"]
    assert [(r["rule"], r["state"], r["violated"]) for r in rows] == [("probe", "violated", 2)]
    assert not [r for r in rule_rows(RuleCounts(), [], {"sr": 5}, ["probe"]) if r["mechanism"] == "probe"]
