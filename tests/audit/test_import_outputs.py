"""Reading the output as input: `check` on the folder an import wrote reads only the trace. Every
other file an import (or a check report, or `import copystatus`) writes there is told by its content, listed as
skipped with the reason (in the output and summary.json), and the counts reconcile in every outcome. Each beside
its twin: a trace named like a quarantine is still read, a quarantine renamed like a trace is still skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance.cli import main
from tests.audit.test_report_copystatus import COPIES, _write
from traces.io import discover

pytestmark = pytest.mark.unit

PAIR = Path(__file__).parent / "data" / "pair"
CHECK = ["--engine", "python", "--skew", "100", "--allow-unknown", "--quiet"]


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def _assert_reconciles(report: Path) -> dict:
    """The summary's counts equal the rows of the files beside it, whatever the verdict."""
    s = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    violations, quarantine = _lines(report / "violations.jsonl"), _lines(report / "quarantine.jsonl")
    assert s["counts_reconcile"] and s["rows_read"] == s["rows_checked"] + s["rows_quarantined"]
    assert (s["violations_written"], s["quarantine_written"]) == (violations, quarantine)
    assert s["violations_total"] == violations + quarantine  # quarantined rows are TR-005's violations
    assert s["unknown_total"] == _lines(report / "unknown.jsonl")
    assert sum(r["count"] for r in s["violations_by_rule"]) == s["violations_total"]
    return s


def _import(tmp_path: Path, out: str, *, quarantined: bool) -> tuple[Path, int]:
    logs = shutil.copytree(PAIR, tmp_path / "logs")
    if quarantined:
        with (logs / "mbx1" / "MSGTRK2023040218-1.LOG").open("a", encoding="utf-8") as f:
            f.write("not,a,row\r\n")
    status = main(["import", "msgtrk", str(logs), "--out", str(tmp_path / "out" / out), "--boundary", "D=mbx1,mbx2"])
    return tmp_path / "out", status


@pytest.mark.parametrize("quarantined", [False, True])
@pytest.mark.parametrize("out", ["trace.jsonl", "trace.parquet", "."])
def test_check_on_the_import_folder_reads_only_the_trace(tmp_path, out, quarantined, capsys):
    folder, status = _import(tmp_path, out, quarantined=quarantined)
    assert status == (1 if quarantined else 0)
    copystatus = _write(tmp_path, "list", COPIES)
    assert main(["import", "copystatus", str(copystatus), "--out", str(folder / "db01.json")]) == 0
    written = sorted(p.name for p in folder.iterdir())
    traces = [n for n in written if n.endswith((".jsonl", ".parquet")) and ".quarantine." not in n]
    assert len(traces) == 1 and len(written) == 3  # the trace, its quarantine, the copy-status snapshot
    capsys.readouterr()
    # a first check writes its report into the same folder; the second check reads that folder again
    assert main(["check", str(folder), *CHECK, "--out", str(folder / "report")]) in (0, 1)
    assert main(["check", str(folder), *CHECK[:-2], "--allow-unknown", "--out", str(tmp_path / "again")]) in (0, 1)
    said = "".join(capsys.readouterr())
    s = _assert_reconciles(tmp_path / "again")
    _assert_reconciles(folder / "report")
    assert s["files"] == [str(folder / traces[0])]
    skipped = {Path(x["file"]).relative_to(folder).as_posix(): x["reason"] for x in s["files_skipped"]}
    every = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert sorted(skipped) == sorted(set(every) - {traces[0]})  # every file an import or check wrote, listed
    assert "quarantine" in skipped[traces[0].rsplit(".", 1)[0] + ".quarantine.jsonl"]
    assert "summary haconform check wrote" in skipped["report/summary.json"]
    assert "violations" in skipped["report/violations.jsonl"] and "unknown" in skipped["report/unknown.jsonl"]
    assert f"skipped {folder / traces[0].rsplit('.', 1)[0]}.quarantine.jsonl: " in said
    assert s["rows_quarantined"] == 0  # no quarantined line of the import became a TR-005 violation


def test_twin_content_not_name_decides(tmp_path):
    folder, _ = _import(tmp_path, "trace.jsonl", quarantined=True)
    (folder / "trace.quarantine.jsonl").rename(folder / "renamed.jsonl")  # a quarantine named like a trace
    shutil.copy(folder / "trace.jsonl", folder / "copy.quarantine.jsonl")  # a trace named like a quarantine
    found = discover([folder])
    assert sorted(Path(f.name).name for f in found.files) == ["copy.quarantine.jsonl", "trace.jsonl"]
    assert [Path(x["file"]).name for x in found.skipped] == ["renamed.jsonl"]
    # a damaged trace (its rows have the event fields) is still read, and its bad rows judged (TR-005)
    bad = folder / "damaged.jsonl"
    bad.write_text('{"seq": 1, "kind": "X", "column": 3}\n', encoding="utf-8")
    assert "damaged.jsonl" in [Path(f.name).name for f in discover([folder]).files]


def test_twin_a_quarantine_named_on_the_command_line_is_refused_naming_it(tmp_path, capsys):
    folder, _ = _import(tmp_path, "trace.jsonl", quarantined=True)
    q = folder / "trace.quarantine.jsonl"
    assert main(["check", str(q), *CHECK, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert f"{q}: holds a quarantine of unreadable lines" in err and "name the trace itself" in err


def test_a_folder_left_with_only_the_quarantine_is_unusable_and_lists_it(tmp_path, capsys):
    """The unusable outcome reconciles too: nothing read, the files not read listed in summary.json."""
    folder, _ = _import(tmp_path, "trace.jsonl", quarantined=True)
    (folder / "trace.jsonl").unlink()
    assert main(["check", str(folder), *CHECK, "--out", str(tmp_path / "r")]) == 2
    assert "0 trace file(s) read, 1 skipped" in capsys.readouterr().err
    s = json.loads((tmp_path / "r" / "summary.json").read_text(encoding="utf-8"))
    assert s["verdict"] == "unusable"
    assert [Path(x["file"]).name for x in s["files_skipped"]] == ["trace.quarantine.jsonl"]
