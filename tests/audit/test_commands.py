"""The audit commands do what the README says (issue 21): `report DIR --html` gives the page `check --html`
gave, JUnit lists only the rules that applied, `explain` reads the snapshot `import copystatus` writes. Each
beside its twin."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.audit.cli import render
from conformance.audit.html import load_report
from conformance.audit.junit import render_junit
from conformance.cli import main
from tests.audit import logs
from tests.audit.test_report_copystatus import COPIES, _write
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit


def _imported_check(tmp_path: Path, monkeypatch) -> Path:
    """An imported two-server log with one violation (discard before the next hop), checked with --html."""
    monkeypatch.chdir(tmp_path)
    p, _ = logs.flow("2013", send_at=5000, discard_at=1000)
    _, s = logs.flow("2010", send_at=5000, discard_at=1000)
    logs.write(Path("logs/mbx1/MSGTRK2023040218-1.LOG"), "2013", p)
    logs.write(Path("logs/mbx2/MSGTRKMS2023040218-1.LOG"), "2010", s)
    assert main(["import", "msgtrk", "logs", "--out", "t.parquet"]) == 0
    argv = ["check", "t.parquet", "--engine", "python", "--skew", "100", "--out", "out", "--quiet"]
    assert main([*argv, "--html", "check.html", "--junit", "junit.xml"]) == 1
    return tmp_path


def test_report_gives_the_page_check_gave(tmp_path, monkeypatch):
    _imported_check(tmp_path, monkeypatch)
    assert main(["report", "out", "--html", "report.html"]) == 0
    assert Path("report.html").read_bytes() == Path("check.html").read_bytes()
    # twin: the page drawn without the checked traces (what `report` gave before) is another page
    render(Path("out"), "bare.html", None, [])
    assert Path("bare.html").read_bytes() != Path("check.html").read_bytes()


def test_report_says_when_the_checked_files_are_not_found(tmp_path, monkeypatch, capsys):
    _imported_check(tmp_path, monkeypatch)
    Path("t.parquet").rename("moved.parquet")
    assert main(["report", "out", "--html", "report.html"]) == 0
    assert "1 of the 1 checked file(s) are not found" in capsys.readouterr().err
    assert main(["report", "out", "--html", "again.html", "--traces", "moved.parquet"]) == 0
    assert Path("again.html").read_bytes() == Path("check.html").read_bytes()


def _cases(junit: Path) -> dict[str, bool]:
    suite = ET.parse(junit).getroot()
    return {c.get("name"): c.find("failure") is not None for c in suite.iter("testcase")}


def test_junit_lists_only_the_rules_that_applied(tmp_path, monkeypatch):
    _imported_check(tmp_path, monkeypatch)
    cases = _cases(Path("junit.xml"))
    assert "TR-003 recv-after-send" not in cases and "TR-006 trace-start" not in cases  # TR-008
    assert cases["SR-052 msgtrk-discard-after-next-hop"] and not cases["TR-001 seq-strictly-increasing"]
    # twin: the same report under rule sets that include the simulated ones lists TR-003 and TR-006
    report = load_report(Path("out"))
    report["summary"]["rule_sets"]["applied"].append("simulated")
    for row in report["summary"]["rules"]:
        if row["rule"] == "trace-start":  # as the engine would have it had a simulated trace been read
            row.update(state="not-judged", reason="no instance of the rule in this input")
    states = report["summary"]["rules_by_state"]
    states["not-applicable"], states["not-judged"] = states["not-applicable"] - 1, states["not-judged"] + 1
    assert "TR-006 trace-start" in render_junit(report)
    # a simulated trace: TR-003/TR-006 apply, the imported-log monitor's rules do not
    clean = SAMPLES_DIR / "clean" / "sr-s1.jsonl"
    assert main(["check", str(clean), "--engine", "python", "--out", "sim", "--quiet", "--junit", "sim.xml"]) == 0
    sim = _cases(Path("sim.xml"))
    assert "TR-006 trace-start" in sim and "TR-003 recv-after-send" in sim
    assert not any("msgtrk" in name for name in sim) and not any(sim.values())


def test_explain_reads_the_snapshot_import_copystatus_writes(tmp_path, capsys):
    export = _write(tmp_path, "csv", COPIES)
    snapshot = tmp_path / "db01.json"
    assert main(["import", "copystatus", str(export), "--out", str(snapshot)]) == 0
    capsys.readouterr()
    for dial in ([], ["--dial", "Lossless"]):
        assert main(["explain", str(export), *dial]) == 0
        from_export = capsys.readouterr().out
        assert main(["explain", str(snapshot), *dial]) == 0
        assert capsys.readouterr().out == from_export
    assert main(["explain", str(snapshot), "--source", "MBX2"]) == 0
    assert "active copy on MBX2 is lost" in capsys.readouterr().out
    assert main(["explain", str(snapshot), "--preference", "MBX1=2"]) == 2  # never ignored in silence
    assert "--preference does not apply" in capsys.readouterr().err
    # twin: a snapshot missing a field BCSS needs is refused, naming it
    doc = json.loads(snapshot.read_text())
    del doc["last_log_generated"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc))
    assert main(["explain", str(broken)]) == 2
    assert "last_log_generated" in capsys.readouterr().err
