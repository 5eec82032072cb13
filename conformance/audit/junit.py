"""JUnit XML from a check report directory (`haconform check --junit FILE`): one test case per rule that applied.

The test cases are summary.json `rules` (TR-009, issue 29), read through `report_data.rule_rows` (an inconsistent row is
refused, never written as a pass): a violated rule is a failing case, a held rule a passing one whose
`system-out` gives how many instances it judged, a rule not judged a skipped case whose message gives the
reason. Rules not applicable to the input (no event of their mechanism) are not listed, nor are the rules that
do not apply by the rule sets (TR-008: TR-003 and TR-006 when no trace is simulated) unless they judged
something. The failing cases come first, cause first: in the order of
their first violation in the report's order (`report_data.in_cause_order`: per entity, the earliest first),
and each failure lists its violations in that order, as readable text. The groups that could not be judged
are one more case, skipped with every note of unknown.jsonl.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any
from xml.etree import ElementTree as ET

from conformance.audit.report_data import in_cause_order, rule_rows
from conformance.engine.outcome import SCHEMA_RULE
from conformance.engine.rulesets import SIMULATED_ONLY, summary_rule_sets

MAX_LISTED = 50
_PY_LIST = re.compile(r"\[((?:'[^'\[\]]*'(?:, )?)*)\]")


def plain(text: str) -> str:
    """A sentence without Python's list syntax: `from ['receiving', 'queued']` -> `from receiving, queued`."""
    return _PY_LIST.sub(lambda m: ", ".join(re.findall(r"'([^']*)'", m.group(1))) or "none", text)


def _violation_line(v: dict[str, Any]) -> str:
    return (
        f"[{v['requirement']} {v['rule']}] {v['trace_id']}/{v['entity']}: {plain(v['explanation'])} "
        f"(events: {', '.join(v.get('event_ids', []))})"
    )


def _failure(case: ET.Element, r: dict[str, Any], listed: list[dict[str, Any]], report: dict[str, Any]) -> None:
    if r["rule"] == SCHEMA_RULE[0]:
        lines = [
            f"{q.get('file')}:{q.get('line')}: field {q.get('field')!r}: {q.get('reason')}"
            for q in report["quarantine"][:MAX_LISTED]
        ]
        first = f"first: {lines[0]}" if lines else "see quarantine.jsonl"
    else:
        lines = [_violation_line(v) for v in listed[:MAX_LISTED]]
        first = (
            f"first: {listed[0]['trace_id']}/{listed[0]['entity']}: {plain(listed[0]['explanation'])}"
            if listed
            else ("see violations.jsonl")
        )
    more = r["violated"] - len(lines)
    if more > 0:
        lines.append(f"... and {more} more (see {'quarantine' if r['rule'] == SCHEMA_RULE[0] else 'violations'}.jsonl)")
    failure = ET.SubElement(
        case,
        "failure",
        message=f"{r['violated']} violation(s) of {r['requirement']} {r['rule']} in {r['judged']} judged; {first}",
        type="violation",
    )
    failure.text = "\n".join(lines)


def applies(r: dict[str, Any], summary: dict[str, Any]) -> bool:
    """Whether rule row `r` is a test case: applicable to the input, and in a rule set that applied (TR-008)."""
    if r["state"] == "not-applicable":
        return False
    sets = summary.get("rule_sets") or summary_rule_sets(
        summary.get("events_by_mechanism", {}), summary.get("monitors", [])
    )
    outside = r["mechanism"] == "core" and r["rule"] in SIMULATED_ONLY and "simulated" not in sets.get("applied", [])
    return not outside or bool(r["judged"])


def render_junit(report: dict[str, Any]) -> str:
    s = report["summary"]
    rows = [r for r in rule_rows(s) if applies(r, s)]
    listed: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for v in in_cause_order(report["violations"]):
        listed[(v["requirement"], v["rule"])].append(v)
    rank = {key: k for k, key in enumerate(listed)}  # each rule at its first violation, cause first
    violated = sorted(
        (r for r in rows if r["state"] == "violated"), key=lambda r: rank.get((r["requirement"], r["rule"]), len(rank))
    )
    cases = violated + [r for r in rows if r["state"] != "violated"]
    suite = ET.Element(
        "testsuite",
        name="haconform check",
        tests=str(len(cases) + 1),
        failures=str(len(violated)),
        errors="0",
        skipped=str(sum(r["state"] == "not-judged" for r in rows) + bool(report["unknown"])),
    )
    for r in cases:
        case = ET.SubElement(
            suite, "testcase", classname=f"haconform.{r['mechanism']}", name=f"{r['requirement']} {r['rule']}"
        )
        if r["state"] == "violated":
            _failure(case, r, listed[(r["requirement"], r["rule"])], report)
        elif r["state"] == "not-judged":
            ET.SubElement(case, "skipped", message=f"not judged: {r.get('reason')}")
        else:
            out = ET.SubElement(case, "system-out")
            unjudged = f"; {r['not_judged']} could not be judged" if r.get("not_judged") else ""
            out.text = f"held: {r['judged']} instance(s) judged, none violated{unjudged}"
    case = ET.SubElement(suite, "testcase", classname="haconform.unknown", name="groups that could not be judged")
    if report["unknown"]:
        skipped = ET.SubElement(case, "skipped", message=f"{len(report['unknown'])} group(s) could not be judged")
        skipped.text = "\n".join(f"{u.get('mechanism')}: {u.get('note')}" for u in report["unknown"])
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
