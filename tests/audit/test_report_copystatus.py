"""Copy-status exports in three forms -> explain; the HTML page in a real headless Chromium; JUnit."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.audit.copystatus import CopyStatusError, read_copy_status
from conformance.cli import main
from tests.audit import logs

pytestmark = pytest.mark.unit

COPIES = [
    {
        "Name": "DB01\\MBX1",
        "Status": "Mounted",
        "CopyQueueLength": 0,
        "ReplayQueueLength": 0,
        "ActivationPreference": 1,
        "ContentIndexState": "Healthy",
        "LastInspectedLogTime": "02.04.2023 18:54:01",
    },
    {
        "Name": "DB01\\MBX2",
        "Status": "Healthy",
        "CopyQueueLength": 4,
        "ReplayQueueLength": 2,
        "ActivationPreference": 2,
        "ContentIndexState": "Healthy",
        "LastInspectedLogTime": "02.04.2023 18:53:59",
    },
    {
        "Name": "DB01\\MBX3",
        "Status": "Healthy",
        "CopyQueueLength": 1,
        "ReplayQueueLength": 0,
        "ActivationPreference": 3,
        "ContentIndexState": "Healthy",
        "LastInspectedLogTime": "02.04.2023 18:54:00",
    },
]


def _write(tmp_path: Path, form: str, copies: list[dict]) -> Path:
    if form == "json":
        path = tmp_path / "status.json"
        path.write_text(json.dumps(copies, indent=2), encoding="utf-8-sig")
    elif form == "csv":
        path = tmp_path / "status.csv"
        keys = list(copies[0])
        lines = [
            "#TYPE Microsoft.Exchange.Management.SystemConfigurationTasks.DatabaseCopyStatusEntry",
            ",".join(f'"{k}"' for k in keys),
        ]
        lines += [",".join(f'"{c.get(k, "")}"' for k in keys) for c in copies]
        path.write_text("\r\n".join(lines) + "\r\n")
    else:
        path = tmp_path / "status.txt"
        blocks = ["\n".join(f"{k:<32} : {v}" for k, v in c.items()) for c in copies]
        path.write_text("\n\n" + "\n\n".join(blocks) + "\n\n")
    return path


@pytest.mark.parametrize("form", ["json", "csv", "list"])
def test_each_export_form_gives_the_same_snapshot_and_answer(tmp_path, form, capsys):
    snap = read_copy_status(_write(tmp_path, form, COPIES))
    assert snap.source == "MBX1" and [c.server for c in snap.copies] == ["MBX1", "MBX2", "MBX3"]
    assert snap.copy("MBX2").copy_queue(snap.last_log_generated) == 4
    assert main(["explain", str(_write(tmp_path, form, COPIES))]) == 0
    out = capsys.readouterr().out
    assert "BCSS tries MBX3 first" in out and "AM-035" in out  # smallest copy queue, sort by copy queue
    assert main(["explain", str(_write(tmp_path, form, COPIES)), "--dial", "Lossless"]) == 0
    assert "BCSS tries MBX2 first" in capsys.readouterr().out  # Lossless: by activation preference (AM-036)


def test_exclusions_carry_requirement_ids(tmp_path, capsys):
    copies = [dict(c) for c in COPIES]
    copies[2]["ActivationSuspended"] = True
    copies[1]["Status"] = "FailedAndSuspended"
    assert main(["explain", str(_write(tmp_path, "json", copies))]) == 0
    out = capsys.readouterr().out
    assert "left out: MBX3: blocked from activation (AM-034)" in out
    assert "left out: MBX2: meets no criteria set (AM-050)" in out


def test_missing_fields_are_named_and_only_catalogue_defaults_used(tmp_path, capsys):
    copies = [{k: v for k, v in c.items() if k != "ActivationPreference"} for c in COPIES]
    path = _write(tmp_path, "list", copies)
    with pytest.raises(CopyStatusError, match="field ActivationPreference is missing"):
        read_copy_status(path)
    assert main(["explain", str(path)]) == 2
    assert "ActivationPreference" in capsys.readouterr().err
    prefs = ["--preference", "MBX1=1", "--preference", "MBX2=2", "--preference", "MBX3=3"]
    assert main(["explain", str(path), *prefs]) == 0
    assert "GoodAvailability (catalogue default, AM-P01)" in capsys.readouterr().out
    no_ci = [{k: v for k, v in c.items() if k != "ContentIndexState"} for c in COPIES]
    with pytest.raises(CopyStatusError, match="field ContentIndexState is missing"):
        read_copy_status(_write(tmp_path, "csv", no_ci))


def _check_report(tmp_path: Path) -> tuple[Path, Path, int]:
    p, _ = logs.flow("2013", send_at=5000, discard_at=1000)
    _, s = logs.flow("2010", send_at=5000, discard_at=1000)
    logs.write(tmp_path / "logs" / "mbx1" / "MSGTRK2023040218-1.LOG", "2013", p)
    logs.write(tmp_path / "logs" / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2010", s)
    trace = tmp_path / "t.parquet"
    assert main(["import", "msgtrk", str(tmp_path / "logs"), "--out", str(trace)]) == 0
    html, junit = tmp_path / "report.html", tmp_path / "junit.xml"
    status = main(
        [
            "check",
            str(trace),
            "--engine",
            "python",
            "--skew",
            "100",
            "--out",
            str(tmp_path / "out"),
            "--html",
            str(html),
            "--junit",
            str(junit),
        ]
    )
    return html, junit, status


def test_check_html_and_junit_from_imported_logs(tmp_path):
    html, junit, status = _check_report(tmp_path)
    assert status == 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["rule_sets"]["applied"] == ["core", "msgtrk"] and "simulated" in summary["rule_sets"]["not_applied"]
    page = html.read_text()
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    assert "SR-052" in page and "MSGTRKMS2023040218-1.LOG:7" in page
    suite = ET.parse(junit).getroot()
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["SR-052 msgtrk-discard-after-next-hop"]
    assert "MSGTRKMS2023040218-1.LOG:7" in failed[0].find("failure").text
    assert main(["report", str(tmp_path / "out"), "--html", str(tmp_path / "again.html")]) == 0
    assert main(["report", str(tmp_path / "nothing")]) == 2


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


@pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (Debian package `chromium`; scripts/install.sh installs it)"
)
def test_timeline_is_drawn_in_headless_chromium(tmp_path):
    html, _, _ = _check_report(tmp_path)
    profile = tmp_path / "profile"
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--dump-dom",
        html.resolve().as_uri(),
    ]
    dom = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    # the script ran in the browser: the SVG exists only in the rendered DOM, not in the file
    assert '<svg class="timeline"' not in html.read_text() and '<svg class="timeline"' in dom
    assert 'aria-label="timeline of 5 events on 2 lanes"' in dom
    assert dom.count('<g class="event') == 5 and 'class="event judged' in dom and 'class="event involved' in dom
    assert ">mbx1<title>" in dom and ">mbx2<title>" in dom  # the lanes' labels
