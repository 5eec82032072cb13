"""What each rule judged, in every output (issue 29): four states per rule (violated, held, not judged, not
applicable) on the terminal, the HTML page and JUnit, read from summary.json `rules` through
`report_data.check_rule_rows`; and cause first in every output that lists violations.

These tests render hand-made summaries (the shape of the data contract): an UNKNOWN import of real-log shape
(no boundary, no protocol logs: the `smtp-*` and boundary rules judged nothing), a VALID one, and inconsistent
rows the renderers must refuse. Each check has its twin.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html import escape
from typing import Any

import pytest

from conformance.audit.html import render_html
from conformance.audit.junit import plain, render_junit
from conformance.audit.report_data import (
    RuleRowError,
    by_state,
    check_rule_rows,
    rule_rows,
    states_line,
)
from conformance.cli import main
from conformance.engine.outcome import CheckOutcome
from conformance.report import rules_lines, sample_lines
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit


def row(rule: str, req: str, mech: str, state: str, judged: int = 0, violated: int = 0, reason: str | None = None):
    return {"rule": rule, "requirement": req, "mechanism": mech, "kind": "always", "state": state,
            "judged": judged, "held": max(judged - violated, 0), "violated": violated, "not_judged": 0,
            "reason": reason, "statement": f"the statement of {rule}"}  # fmt: skip


NO_PROTOCOL = "no SMTP protocol log in the input"
NO_SR = "no event of mechanism sr in the input"
NO_BOUNDARY = "no transport high availability boundary recorded (import --boundary)"


def imported_rows(violated: int = 0) -> list[dict[str, Any]]:
    """The rows of a real-log import without boundaries or protocol logs (the issue's 41 rows)."""
    return [
        row("seq-strictly-increasing", "TR-001", "core", "held", 41),
        row("event-id-unique", "TR-002", "core", "held", 41),
        row("node-clock-monotonic", "TR-004", "core", "held", 41),
        row("schema-conformance", "TR-005", "core", "held", 41),
        {**row("msgtrk-import-start-first", "TR-008", "msgtrk", "held", 1), "not_judged": 2},
        row("msgtrk-discard-after-next-hop", "SR-052", "msgtrk", "violated" if violated else "held", 3, violated),
        row("msgtrk-shadow-in-boundary", "SR-015", "msgtrk", "not-judged", reason=NO_BOUNDARY),
        row("msgtrk-resubmit-across-boundary", "SR-025", "msgtrk", "not-judged", reason=NO_BOUNDARY),
        *[row(n, q, "msgtrk", "not-judged", reason=NO_PROTOCOL) for n, q in
          (("smtp-ack-after-shadow", "SR-031"), ("smtp-ack-despite-shadow-failure", "SR-021"),
           ("smtp-shadow-session-announced", "SR-030"), ("smtp-shadow-session-discard-query", "SR-054"))],
        row("shadow-before-ack", "SR-031", "sr", "not-applicable", reason=NO_SR),
        row("primary-copy-transition", "SR-027", "sr", "not-applicable", reason=NO_SR),
    ]  # fmt: skip


def report(verdict: str, rows: list[dict[str, Any]], unknown: list[dict[str, Any]] = ()) -> dict[str, Any]:
    summary = {"tool": "haconform check", "engine": "python", "verdict": verdict, "files": [], "rows_read": 41,
               "rows_checked": 41, "rows_quarantined": 0, "counts_reconcile": True, "monitors": ["sr", "msgtrk"],
               "events_by_mechanism": {"msgtrk": 41}, "violations_by_rule": [], "rules": rows,
               "rules_by_state": by_state(rows)}  # fmt: skip
    return {"summary": summary, "violations": [], "cards": [], "found": {"notes": []}, "quarantine": [],
            "unknown": list(unknown)}  # fmt: skip


UNKNOWN = [{"mechanism": "skew", "note": "msg-1: two rows in the same millisecond on two servers: order unknown"}]


# --- the rows are checked -----------------------------------------------------------------------------------


def test_consistent_rows_pass_and_count_by_state():
    rows = imported_rows()
    assert check_rule_rows(rows) is rows
    assert states_line(rows) == "0 violated, 6 held, 6 not judged, 2 not applicable"
    assert states_line(imported_rows(violated=2)) == "1 violated, 5 held, 6 not judged, 2 not applicable"


@pytest.mark.parametrize(
    "change, said",
    [
        ({"state": "held", "reason": None}, "a rule judged 0 times is never held"),  # the bug
        ({"state": "held", "held": 1}, "held 1 is not judged 0 - violated 0"),
        ({"state": "violated"}, "a rule judged 0 times is never violated"),
        ({"reason": None}, "without a reason"),
        ({"state": "passed"}, "is none of"),
        ({"judged": -1}, "not a count"),
    ],
)
def test_twin_inconsistent_rows_are_refused(change, said):
    rows = imported_rows()
    rows[7] = {**rows[7], **change}  # SR-025, not judged: forced into a lie
    with pytest.raises(RuleRowError, match=re.escape(said)):
        check_rule_rows(rows)
    with pytest.raises(RuleRowError):  # and every renderer refuses it: none writes a page that says it held
        render_html(report("unknown", rows, UNKNOWN))
    with pytest.raises(RuleRowError):
        render_junit(report("unknown", rows, UNKNOWN))
    with pytest.raises(RuleRowError):
        rules_lines(report("unknown", rows)["summary"])


def test_twin_a_judged_rule_not_shown_held_and_counts_by_state_that_lie():
    rows = imported_rows()
    rows[4] = {**rows[4], "state": "not-judged", "reason": "?"}  # judged once: it held
    with pytest.raises(RuleRowError, match="it is 'held'"):
        check_rule_rows(rows)
    lying = report("valid", imported_rows())["summary"]
    lying["rules_by_state"] = {**lying["rules_by_state"], "held": 12, "not-judged": 0}
    with pytest.raises(RuleRowError, match="rules_by_state"):
        rule_rows(lying)


# --- terminal -----------------------------------------------------------------------------------------------


def test_terminal_states_line_and_the_rules_not_judged():
    lines = rules_lines(report("unknown", imported_rows())["summary"])
    assert lines[0] == "rules: 0 violated, 6 held, 6 not judged, 2 not applicable"
    assert f"  not judged: SR-031 smtp-ack-after-shadow: {NO_PROTOCOL}" in lines
    assert f"  not judged: SR-015 msgtrk-shadow-in-boundary: {NO_BOUNDARY}" in lines
    assert not any("shadow-before-ack" in line for line in lines)  # not applicable: counted, not listed
    many = [row(f"rule-{i}", f"SR-{i:03}", "sr", "not-judged", reason="no instance") for i in range(13)]
    lines = rules_lines(report("unknown", many)["summary"])
    assert len(lines) == 1 + 10 + 1 and lines[-1] == "  ... and 3 more in summary.json"
    assert rules_lines({"verdict": "valid"}) == []  # a summary without rows says nothing it does not know


# --- HTML ---------------------------------------------------------------------------------------------------


def _table_rows(page: str, table: str) -> list[list[str]]:
    found = re.search(rf"<table id='{table}'>(.*?)</table>", page, re.S)
    if not found:
        return []
    rows = re.findall(r"<tr class='[^']*'>(.*?)</tr>", found.group(1), re.S)
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td>(.*?)</td>", r, re.S)] for r in rows]


def held_problems(page: str) -> list[str]:
    """What on a page says a rule held that judged nothing: a held row with 0 judged, the old blanket sentence."""
    out = [f"{r[1]} {r[0]} shown held with {r[4]} judged" for r in _table_rows(page, "rules-table") if r[4] == "0"]
    if "every rule listed below was checked and held" in page:
        out.append("the page says every rule listed below was checked and held")
    return out


def first_screen_problems(page: str, rep: dict[str, Any]) -> list[str]:
    """What an UNKNOWN page does not say before its first section (the run): each unknown note and not-judged
    rule must be named above it."""
    top = page[: page.index("<h2 id='run'>")]
    out = [f"note {u['note']!r} not on the first screen" for u in rep["unknown"] if escape(u["note"]) not in top]
    idle = [r for r in rep["summary"]["rules"] if r["state"] == "not-judged"]
    out += [f"{r['requirement']} {r['rule']} not on the first screen" for r in idle if f"{r['rule']}</b>" not in top]
    out += [f"the reason {r['reason']!r} not on the first screen" for r in idle if escape(r["reason"]) not in top]
    return out


def test_html_four_states_with_per_rule_counts():
    rep = report("invalid", imported_rows(violated=2))
    page = render_html(rep)
    assert "1 violated, 5 held, 6 not judged, 2 not applicable" in page
    assert _table_rows(page, "rules-violated")[0][:7] == [
        "msgtrk-discard-after-next-hop", "SR-052", "msgtrk", "always", "3", "1", "2"]  # fmt: skip
    judged = {r[0]: r[4] for r in _table_rows(page, "rules-table")}
    assert judged == {
        "seq-strictly-increasing": "41",
        "event-id-unique": "41",
        "node-clock-monotonic": "41",
        "schema-conformance": "41",
        "msgtrk-import-start-first": "1",
    }  # per rule, not per monitor
    assert {r[0]: r[7] for r in _table_rows(page, "rules-table")}["msgtrk-import-start-first"] == "2"  # not judged
    idle = {r[0]: r[8] for r in _table_rows(page, "rules-not-judged")}
    assert idle["smtp-ack-after-shadow"] == NO_PROTOCOL and idle["msgtrk-shadow-in-boundary"] == NO_BOUNDARY
    assert {r[0] for r in _table_rows(page, "rules-idle")} == {"shadow-before-ack", "primary-copy-transition"}
    assert held_problems(page) == []


def test_unknown_page_says_what_was_not_judged_first():
    rep = report("unknown", imported_rows(), UNKNOWN)
    page = render_html(rep)
    assert held_problems(page) == [] and first_screen_problems(page, rep) == []
    assert "No violation found, but not everything could be judged" in page
    # twin: the page as it was (the badge's blanket sentence, the reasons only at the bottom) fails both checks
    old = page.replace(page[page.index("<div class='why'") : page.index("<h2 id='run'>")], "")
    old = old.replace("No violation found, but", "No violation: every rule listed below was checked and held. But")
    assert first_screen_problems(old, rep) and held_problems(old)
    bad = page.replace(
        "<table id='rules-table'>", "<table id='rules-table'><tr class='held'><td>x</td><td>SR-1</td><td>sr</td>"
        "<td>always</td><td>0</td><td>0</td><td>0</td><td>0</td><td></td></tr>", 1)  # fmt: skip
    assert held_problems(bad) == ["SR-1 x shown held with 0 judged"]


def test_valid_page_says_held_only_when_it_is_true():
    rows = [r for r in imported_rows() if r["state"] != "not-judged"]
    page = render_html(report("valid", rows))
    assert "every rule that applied to this input (6) was judged and held" in page
    page = render_html(report("valid", imported_rows()))
    assert "judged and held" not in page and "6 of the 12 rules that applied held; 6 were not judged" in page


# --- JUnit --------------------------------------------------------------------------------------------------


def cases(xml: str) -> list[tuple[str, str, str]]:
    """(name, outcome, text) per test case: outcome failure/skipped/passed, text its message or system-out."""
    out = []
    for c in ET.fromstring(xml).iter("testcase"):
        f, s, o = c.find("failure"), c.find("skipped"), c.find("system-out")
        if f is not None:
            out.append((c.get("name"), "failure", f.get("message")))
        elif s is not None:
            out.append((c.get("name"), "skipped", f"{s.get('message')}\n{s.text or ''}"))
        else:
            out.append((c.get("name"), "passed", o.text if o is not None else ""))
    return out


def test_junit_states_skipped_reasons_and_unknown_notes():
    rep = report("invalid", imported_rows(violated=2), UNKNOWN)
    rep["violations"] = [
        {"rule": "msgtrk-discard-after-next-hop", "requirement": "SR-052", "mechanism": "msgtrk", "trace_id": "t",
         "entity": f"m{i}", "event_ids": [f"t:{i}"], "explanation": "discarded while ['mbx2', 'mbx3'] held it",
         "events": [{"event_id": f"t:{i}", "seq": i, "ts_ms": 1000 * i, "node": "mbx1", "kind": "DISCARD"}]}
        for i in (2, 1)
    ]  # fmt: skip
    got = {name: (outcome, text) for name, outcome, text in cases(render_junit(rep))}
    assert got["SR-052 msgtrk-discard-after-next-hop"][0] == "failure"
    assert "discarded while mbx2, mbx3 held it" in got["SR-052 msgtrk-discard-after-next-hop"][1]  # no ['...']
    assert "t/m1:" in got["SR-052 msgtrk-discard-after-next-hop"][1]  # the earliest first
    assert got["TR-001 seq-strictly-increasing"] == ("passed", "held: 41 instance(s) judged, none violated")
    assert got["TR-008 msgtrk-import-start-first"] == (
        "passed", "held: 1 instance(s) judged, none violated; 2 could not be judged")  # fmt: skip
    assert got["SR-031 smtp-ack-after-shadow"] == ("skipped", f"not judged: {NO_PROTOCOL}\n")
    assert got["SR-015 msgtrk-shadow-in-boundary"] == ("skipped", f"not judged: {NO_BOUNDARY}\n")
    assert "SR-031 shadow-before-ack" not in got  # not applicable: not a test case
    assert UNKNOWN[0]["note"] in got["groups that could not be judged"][1]
    suite = ET.fromstring(render_junit(rep))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("13", "1", "7")
    assert not any(outcome == "passed" and "held: 0" in text for _, outcome, text in cases(render_junit(rep)))
    # twin: the sentence as the rule wrote it carries a Python list
    assert plain("only from ['receiving']") == "only from receiving" and plain("from []") == "from none"


def test_sample_lines_without_violations():
    assert sample_lines([]) == []


# --- the commands refuse rows that lie --------------------------------------------------------------------


def _with_rows(monkeypatch, rows: list[dict[str, Any]]) -> None:
    summary = CheckOutcome.summary

    def planted(self: CheckOutcome, **kw: Any) -> dict[str, Any]:
        return {**summary(self, **kw), "rules": rows, "rules_by_state": by_state(rows)}

    monkeypatch.setattr(CheckOutcome, "summary", planted)


@pytest.mark.parametrize("state, judged, status", [("held", 3, 0), ("held", 0, 3)])
def test_check_refuses_a_rule_judged_0_times_shown_held(tmp_path, monkeypatch, capsys, state, judged, status):
    """The rows as the engine hands them to the terminal: honest, they are said; a rule judged 0 times and
    marked held (the twin) is an internal error (exit 3) before any report is written."""
    _with_rows(monkeypatch, [row("shadow-before-ack", "SR-031", "sr", state, judged)])
    argv = ["check", str(SAMPLES_DIR / "clean" / "sr-s1.jsonl"), "--engine", "python", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--junit", str(tmp_path / "j.xml")]) == status
    said = capsys.readouterr()
    if status == 0:
        assert "rules: 0 violated, 1 held, 0 not judged, 0 not applicable" in said.out.splitlines()
        assert cases((tmp_path / "j.xml").read_text())[0] == (
            "SR-031 shadow-before-ack", "passed", "held: 3 instance(s) judged, none violated")  # fmt: skip
    else:
        assert "a rule judged 0 times is never held" in said.err and not (tmp_path / "j.xml").exists()


def test_report_refuses_a_summary_whose_rows_lie(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    rows = imported_rows()
    rows[6] = {**rows[6], "state": "held", "reason": None}
    (out / "summary.json").write_text(json.dumps(report("valid", rows)["summary"]))
    for name in ("violations", "quarantine", "unknown"):
        (out / f"{name}.jsonl").write_text("")
    assert main(["report", str(out), "--html", str(tmp_path / "r.html")]) == 2
    assert "SR-015 msgtrk-shadow-in-boundary" in capsys.readouterr().err and not (tmp_path / "r.html").exists()
    rows[6] = imported_rows()[6]  # twin: the same directory with the row as it was
    (out / "summary.json").write_text(json.dumps(report("valid", rows)["summary"]))
    assert main(["report", str(out), "--html", str(tmp_path / "r.html")]) == 0


def test_a_summary_without_rule_rows_claims_no_held_rule():
    """A report directory written before the rows existed (`haconform report` on it): violated rules from the
    counts, the rest not judged (their monitor ran) or not applicable; none held, whatever the counts say."""
    old = report("invalid", [])["summary"]
    del old["rules"], old["rules_by_state"]
    old["violations_by_rule"] = [{"rule": "shadow-before-ack", "requirement": "SR-031", "mechanism": "sr", "count": 2}]
    old["events_by_mechanism"], old["monitors"] = {"sr": 40}, ["sr", "am"]
    rows = check_rule_rows(rule_rows(old))
    states = {r["rule"]: r["state"] for r in rows}
    assert states["shadow-before-ack"] == "violated" and "held" not in states.values()
    assert states["primary-copy-transition"] == "not-judged"
    assert {r["state"] for r in rows if r["mechanism"] == "am"} == {"not-applicable"}
    page = render_html({**report("invalid", []), "summary": old})
    assert held_problems(page) == [] and "summary.json holds no per-rule counts" in page
