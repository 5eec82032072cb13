"""Every damaged input of the corpus, through the pure-Python engine: a located quarantine entry or a clear
exit 2, never a traceback; counts reconcile; every file is read or listed as skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from tests.damaged.corpus import CASES, Case

pytestmark = pytest.mark.unit


def run(case: Case, tmp: Path, engine: str, capsys) -> tuple[int, str, Path]:
    src = tmp / "in"
    src.mkdir()
    args = case.build(src)
    out = tmp / "out"
    code = main(["check", "--engine", engine, *args, "--out", str(out), "--quiet", *case.extra_args])
    return code, capsys.readouterr().err, out


def verify(case: Case, code: int, err: str, out: Path) -> dict:
    assert code == case.exit, (case.name, err)
    assert "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    if case.exit == 2:
        assert case.message in err and err.count("\n") == 1, err
        assert summary["verdict"] == "unusable" and case.message in summary["error"]
        return summary
    assert summary["counts_reconcile"]
    assert summary["rows_read"] == summary["rows_checked"] + summary["rows_quarantined"]
    if case.rows_read is not None:
        assert summary["rows_read"] == case.rows_read
    quarantine = [json.loads(x) for x in (out / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    got = sorted((Path(q["file"]).name, q["line"], q["field"]) for q in quarantine)
    assert got == sorted((name, line, field) for name, line, field, _ in case.quarantine), got
    for q in quarantine:
        want = next(r for n, ln, f, r in case.quarantine if (n, ln, f) == (Path(q["file"]).name, q["line"], q["field"]))
        assert want in q["reason"], (q, want)
        assert Path(q["file"]).exists() or Path(q["file"]).is_symlink(), q["file"]  # the name as written
    skipped = sorted((Path(s["file"]).name, s["reason"]) for s in summary["files_skipped"])
    assert [n for n, _ in skipped] == sorted(n for n, _ in case.skipped), skipped
    for (name, reason), (want_name, want) in zip(skipped, sorted(case.skipped), strict=True):
        assert name == want_name and want in reason, (name, reason)
    return summary


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_damaged_input_python_engine(case, tmp_path, capsys):
    verify(case, *run(case, tmp_path, "python", capsys))


def test_every_issue_class_is_covered():
    assert {c.klass for c in CASES} >= {
        "encodings",
        "pathological-json",
        "not-what-name-says",
        "skipped-files",
        "empty",
        "paths",
        "disagreement",
    }
