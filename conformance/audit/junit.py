"""JUnit XML from a check report directory (`haconform check --junit FILE`): one test case per rule.

A rule with violations is a failing test case whose failure text lists them (explanation and events). A rule
with none is listed as passing only when it applied (summary.json `rule_sets`, TR-008): the core rules of every
trace (TR-001, TR-002, TR-004, TR-005 schema conformance), TR-003 and TR-006 only when some trace is simulated
(not for imported logs alone), and the imported-log monitor's rules only when some trace is an imported log;
plus every rule the summary counts. Groups that could not be judged are reported as one skipped case.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from xml.etree import ElementTree as ET

from conformance.engine.core_fold import CORE_RULES
from conformance.engine.rulesets import SIMULATED_ONLY, summary_rule_sets
from conformance.report import SCHEMA_RULE
from model.msgtrk.rules import RULES

MAX_LISTED = 50


def applied_rules(summary: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The rules that applied to the checked traces (name -> (requirement, mechanism)), by the rule sets."""
    sets = summary.get("rule_sets") or summary_rule_sets(
        summary.get("events_by_mechanism", {}), summary.get("monitors", [])
    )
    applied = set(sets.get("applied", []))
    core = {
        k: q
        for k, q in {**CORE_RULES, SCHEMA_RULE[0]: SCHEMA_RULE[1]}.items()
        if k not in SIMULATED_ONLY or "simulated" in applied
    }
    audit = {k: r.requirement for k, r in RULES.items()} if "msgtrk" in applied else {}
    return {**{k: (q, "core") for k, q in core.items()}, **{k: (q, "msgtrk") for k, q in audit.items()}}


def render_junit(report: dict[str, Any]) -> str:
    s = report["summary"]
    counts = {r["rule"]: r for r in s.get("violations_by_rule", [])}
    rules = {
        name: {"rule": name, "requirement": req, "mechanism": m, "count": 0}
        for name, (req, m) in applied_rules(s).items()
    }
    rules.update(counts)
    listed: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in report["violations"]:
        listed[v["rule"]].append(v)
    suite = ET.Element(
        "testsuite",
        name="haconform check",
        tests=str(len(rules) + 1),
        failures=str(sum(1 for r in rules.values() if r["count"])),
        errors="0",
        skipped="1" if report["unknown"] else "0",
    )
    for name in sorted(rules):
        r = rules[name]
        case = ET.SubElement(
            suite, "testcase", classname=f"haconform.{r.get('mechanism', 'core')}", name=f"{r['requirement']} {name}"
        )
        if r["count"]:
            lines = [
                f"[{v['requirement']} {v['rule']}] {v['trace_id']}/{v['entity']}: {v['explanation']} "
                f"(events: {', '.join(v['event_ids'])})"
                for v in listed[name][:MAX_LISTED]
            ]
            if name == "schema-conformance":
                lines = [
                    f"{q.get('file')}:{q.get('line')}: field {q.get('field')!r}: {q.get('reason')}"
                    for q in report["quarantine"][:MAX_LISTED]
                ]
            more = r["count"] - len(lines)
            if more > 0:
                lines.append(f"... and {more} more (see violations.jsonl)")
            failure = ET.SubElement(
                case, "failure", message=f"{r['count']} violation(s) of {r['requirement']}", type="violation"
            )
            failure.text = "\n".join(lines)
    case = ET.SubElement(suite, "testcase", classname="haconform.unknown", name="groups that could not be judged")
    if report["unknown"]:
        skipped = ET.SubElement(case, "skipped", message=f"{len(report['unknown'])} group(s) could not be judged")
        skipped.text = "\n".join(f"{u.get('mechanism')}: {u.get('note')}" for u in report["unknown"][:MAX_LISTED])
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
