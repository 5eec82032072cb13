"""Newcomer paths: `check` on raw logs names the `haconform import` command (one line, exit 2);
`shrink` records the `--skew` the violation needs so that `check` of the shrunk file gives the same verdict;
`explain` on a missing file says so in one line. Each beside its twin."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.recorded_options import ATTR
from tests.audit import logs
from traces.io import read_events, write_events

pytestmark = pytest.mark.unit

PAIR = Path(__file__).parent / "data" / "pair"
EXPORT = Path(__file__).parent / "data" / "copystatus" / "two-databases-fl.txt"


def _err_lines(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize(
    ("rel", "what"),
    [
        ("mbx1/MSGTRK2023040218-1.LOG", "an Exchange message tracking log"),
        ("siem/mbx2-msgtrk-export.csv", "an Exchange message tracking log"),
        ("mbx1/RECV2023040218-1.LOG", "an SMTP Receive protocol log"),
        ("mbx2/SEND2023040218-1.LOG", "an SMTP Send protocol log"),
        (".", "a folder of Exchange logs"),
    ],
)
def test_check_on_raw_logs_names_the_import_command(tmp_path, capsys, rel, what):
    given = str(PAIR / rel) if rel != "." else str(PAIR)
    assert main(["check", given, "--out", str(tmp_path / "r")]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1, lines
    assert f"{given} is {what}, not a trace: import first with haconform import msgtrk {given}" in lines[0]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "unusable" and "haconform import msgtrk" in summary["error"]


def test_check_on_a_copy_status_export_names_explain(tmp_path, capsys):
    assert main(["check", str(EXPORT), "--out", str(tmp_path / "r")]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and f"haconform explain {EXPORT}" in lines[0]


def test_twin_a_file_that_is_no_log_gets_no_import_advice(tmp_path, capsys):
    readme = PAIR / "README-from-the-customer.txt"
    assert main(["check", str(readme), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "unknown trace format" in err and "haconform import" not in err


def _skewed_violation(tmp_path: Path) -> Path:
    """An imported two-server log whose SR-052 violation is judged only under a clock bound (--skew)."""
    p, _ = logs.flow("2013", send_at=5000, discard_at=1000)
    _, s = logs.flow("2010", send_at=5000, discard_at=1000)
    logs.write(tmp_path / "logs" / "mbx1" / "MSGTRK2023040218-1.LOG", "2013", p)
    logs.write(tmp_path / "logs" / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2010", s)
    trace = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path / "logs"), "--out", str(trace)]) == 0
    return trace


def _rules(report: Path) -> set[str]:
    return {json.loads(ln)["rule"] for ln in (report / "violations.jsonl").read_text(encoding="utf-8").splitlines()}


def test_shrink_records_skew_and_check_of_the_shrunk_file_gives_the_same_verdict(tmp_path, capsys):
    trace = _skewed_violation(tmp_path)
    check = ["check", "--engine", "python", "--quiet"]
    assert main([*check, str(trace), "--skew", "100", "--out", str(tmp_path / "full")]) == 1
    small = tmp_path / "min.jsonl"
    assert main(["shrink", str(trace), "--rule", "SR-052", "--skew", "100", "--out", str(small)]) == 0
    assert "recording --skew 100" in capsys.readouterr().err
    assert read_events(small).events[0].attrs[ATTR] == ["--skew=100"]
    assert main(["check", str(small), "--engine", "python", "--out", str(tmp_path / "small")]) == 1
    assert "--skew 100, as recorded by haconform shrink" in capsys.readouterr().err
    assert _rules(tmp_path / "small") == _rules(tmp_path / "full") == {"msgtrk-discard-after-next-hop"}
    # an option given on the command line wins, and is said
    assert main(["check", str(small), "--engine", "python", "--skew", "50", "--out", str(tmp_path / "given")]) == 1
    assert "--skew 50 as given" in capsys.readouterr().err


def test_twin_without_the_recorded_option_the_shrunk_file_is_unknown(tmp_path):
    trace = _skewed_violation(tmp_path)
    small = tmp_path / "min.jsonl"
    assert main(["shrink", str(trace), "--rule", "SR-052", "--skew", "100", "--out", str(small)]) == 0
    events = read_events(small).events
    first = events[0]
    bare = tmp_path / "bare.jsonl"
    attrs = {k: v for k, v in first.attrs.items() if k != ATTR}
    write_events(bare, [dataclasses.replace(first, attrs=attrs), *events[1:]])
    assert main(["check", str(bare), "--engine", "python", "--quiet", "--out", str(tmp_path / "bare")]) == 2
    assert not _rules(tmp_path / "bare")  # what the shrunk file gave before issue 31: unknown, no violation


@pytest.mark.parametrize("argv", [["explain"], ["import", "copystatus"]])
def test_a_missing_file_is_one_line_naming_it(tmp_path, capsys, argv):
    missing = tmp_path / "no-such-export.txt"
    assert main([*argv, str(missing)]) == 2
    lines = _err_lines(capsys)
    assert lines == [f"haconform {' '.join(argv)}: input unusable: {missing}: no such file or directory"]
    assert "Errno" not in lines[0]


def test_twin_a_directory_given_to_explain_is_named_too(tmp_path, capsys):
    shutil.copy(EXPORT, tmp_path / "x.txt")
    assert main(["explain", str(tmp_path)]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and str(tmp_path) in lines[0] and "Errno" not in lines[0]
