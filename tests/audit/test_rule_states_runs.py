"""The four rule states and cause first on real runs of `haconform check --html --junit` (issue 29): the real-log
sample path (the shipped tracking + SMTP protocol logs, imported as an auditor would and without what the
boundary and protocol rules need), the clean sample corpus, and the planted ack-before-shadow bug.

In each: summary.json's rows pass `check_rule_rows`, the terminal's `rules:` line, the page and the JUnit file
say the same counts, no rule judged 0 times is held anywhere, JUnit has one case per rule that applied (skipped
with its reason when not judged). On the mutant, the terminal's first violation and JUnit's first failure are
the cause (SR-031), as on the page; the twin: the old orders (by requirement, by rule name) put a consequence
first.
"""

from __future__ import annotations

import contextlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.audit.junit import applies
from conformance.audit.report_data import check_rule_rows, states_line
from conformance.cli import main
from conformance.engine.rulesets import SIMULATED_ONLY
from tests.audit.test_rule_states import _table_rows, cases, first_screen_problems, held_problems
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
MUTANT = SAMPLES_DIR / "mutants" / "sr--ack-before-shadow.jsonl"


def _check(base: Path, name: str, paths: list[str], *extra: str) -> dict[str, Any]:
    out = base / name
    argv = ["check", *paths, "--engine", "python", "--quiet", "--out", str(out), "--html", f"{out}.html",
            "--junit", f"{out}.xml", *extra]  # fmt: skip
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        status = main(argv)
    return {
        "status": status,
        "terminal": said.getvalue(),
        "summary": json.loads((out / "summary.json").read_text()),
        "page": Path(f"{out}.html").read_text(),
        "junit": Path(f"{out}.xml").read_text(),
        "violations": [json.loads(x) for x in (out / "violations.jsonl").read_text().splitlines() if x.strip()],
        "unknown": [json.loads(x) for x in (out / "unknown.jsonl").read_text().splitlines() if x.strip()],
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("states")
    trace = base / "imported.jsonl"  # no --boundary, no protocol logs: as the real logs were imported
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["import", "msgtrk", str(DATA / "pair"), "--out", str(trace), "--no-protocol-logs"]) == 0
    return {
        "real-logs": _check(base, "real-logs", [str(trace)], "--skew", "100", "--allow-unknown"),
        "clean": _check(base, "clean", [str(SAMPLES_DIR / "clean")]),
        "mutant": _check(base, "mutant", [str(MUTANT)]),
    }


@pytest.mark.parametrize("name", ["real-logs", "clean", "mutant"])
def test_four_states_in_summary_terminal_page_and_junit(runs, name):
    run = runs[name]
    rows = check_rule_rows(run["summary"]["rules"])
    line = states_line(rows)
    assert f"rules: {line}" in run["terminal"].splitlines()
    assert line in run["page"] and held_problems(run["page"]) == []
    for r in rows:
        if r["state"] == "not-judged":
            assert f"  not judged: {r['requirement']} {r['rule']}: {r['reason']}" in run["terminal"] or (
                "more in summary.json" in run["terminal"]
            )
    got = {n: (outcome, text) for n, outcome, text in cases(run["junit"])}
    applied = {f"{r['requirement']} {r['rule']}": r for r in rows if applies(r, run["summary"])}
    assert all(
        r["state"] == "not-applicable" or r["rule"] in SIMULATED_ONLY for r in rows if not applies(r, run["summary"])
    )
    assert set(got) == {*applied, "groups that could not be judged"}
    for case, r in applied.items():
        outcome, text = got[case]
        expected = {"violated": "failure", "held": "passed", "not-judged": "skipped"}[r["state"]]
        assert outcome == expected, case
        if outcome == "passed":
            assert text.startswith(f"held: {r['judged']} instance(s) judged, none violated") and r["judged"] > 0
        if outcome == "skipped":
            assert text.startswith(f"not judged: {r['reason']}") and r["reason"]
    if name == "mutant":
        assert run["status"] == 1 and any(r["state"] == "violated" for r in rows)
    else:
        assert not any(r["state"] == "violated" for r in rows) and any(r["state"] == "held" for r in rows)


def test_real_logs_not_judged_rules_are_named(runs):
    rows = runs["real-logs"]["summary"]["rules"]
    idle = {r["rule"] for r in rows if r["state"] == "not-judged"}
    assert {"smtp-ack-after-shadow", "msgtrk-shadow-in-boundary"} <= idle  # no protocol logs, no boundary
    run = runs["real-logs"]
    assert run["summary"]["verdict"] == "unknown" and run["status"] == 0  # --allow-unknown
    assert "No violation: every rule" not in run["page"]
    assert first_screen_problems(run["page"], run) == []  # the UNKNOWN page says what was not judged first


def test_cause_first_in_terminal_and_junit(runs):
    run = runs["mutant"]
    samples = [x for x in run["terminal"].splitlines() if x.startswith("  [")]
    assert samples[0].startswith("  [SR-031 shadow-before-ack]")  # the planted bug, not its consequences
    assert _table_rows(run["page"], "rules-violated")[0][0] == "shadow-before-ack"  # the page's rules table too
    failures = [(n, text) for n, outcome, text in cases(run["junit"]) if outcome == "failure"]
    assert failures[0][0] == "SR-031 shadow-before-ack"
    assert not any("['" in text for _, text in failures)  # readable text, no Python list
    suite = ET.fromstring(run["junit"])
    assert all("['" not in (f.text or "") for f in suite.iter("failure"))
    # twin: the old orders put a consequence first
    by_requirement = sorted(run["violations"], key=lambda v: (v["requirement"], v["rule"]))
    assert by_requirement[0]["requirement"] == "SR-008"
    by_name = sorted({v["rule"] for v in run["violations"]})
    assert by_name[0] == "primary-copy-transition"  # SR-027, the old JUnit's first failure
