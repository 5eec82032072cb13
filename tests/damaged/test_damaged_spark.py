"""The damaged corpus through the Spark engine, in the shared session: the engines agree on every row-level
case (same summary, quarantine entries and violations), and the unusable inputs give the same exit 2 and
message. All row-level cases share one run, each in its own directory, to keep the Spark time down."""

from __future__ import annotations

import json

import pytest

from conformance.cli import main
from conformance.pycheck import check_paths
from spark_trace_check.job import check
from tests.damaged.corpus import CASES
from tests.damaged.test_damaged_python import verify

pytestmark = pytest.mark.spark

ROW_CASES = [c for c in CASES if c.exit != 2 and not c.extra_args]
FATAL_CASES = [c for c in CASES if c.exit == 2 and c.spark]


def _strip(violations: list[dict]) -> list[dict]:
    return [{k: v for k, v in x.items() if k != "events"} for x in violations]


def assert_engines_agree(paths: list[str], spark) -> None:
    sp, py = check(spark, paths), check_paths(paths)
    assert sp.quarantine == py.quarantine
    assert sp.summary() | {"engine": ""} == py.summary() | {"engine": ""}
    assert _strip(sp.violations) == _strip(py.violations)
    assert sp.reconciles and py.reconciles


def test_engines_agree_on_every_row_level_damage(spark, spark_plan, tmp_path):
    for case in ROW_CASES:
        (tmp_path / case.name).mkdir()
        case.build(tmp_path / case.name)
    sp = check(spark, [str(tmp_path)])
    py = check_paths([str(tmp_path)])
    assert sp.quarantine == py.quarantine
    assert sp.summary() | {"engine": ""} == py.summary() | {"engine": ""}
    assert _strip(sp.violations) == _strip(py.violations)
    wanted = {(c.name, n, line, f) for c in ROW_CASES for n, line, f, _ in c.quarantine}
    got = {
        (q["file"][len(str(tmp_path)) + 1 :].split("/")[0], q["file"].rsplit("/", 1)[1], q["line"], q["field"])
        for q in sp.quarantine
    }
    assert got == wanted


@pytest.mark.parametrize("case", FATAL_CASES, ids=lambda c: c.name)
def test_unusable_inputs_exit_2_with_the_same_message(case, spark, tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    args = case.build(src)
    code = main(["check", "--engine", "spark", *args, "--out", str(tmp_path / "out"), "--quiet"])
    verify(case, code, capsys.readouterr().err, tmp_path / "out")


def test_awkward_names_and_allow_empty_through_the_cli(spark, tmp_path, capsys):
    for case in (c for c in CASES if c.name in ("awkward-names", "empty-allowed")):
        (tmp_path / case.name).mkdir()
        args = case.build(tmp_path / case.name)
        out = tmp_path / f"out-{case.name}"
        code = main(["check", "--engine", "spark", *args, "--out", str(out), "--quiet", *case.extra_args])
        summary = verify(case, code, capsys.readouterr().err, out)
        assert summary["engine"] == "spark"
    text = (tmp_path / "out-awkward-names" / "quarantine.jsonl").read_text()
    names = [json.loads(x)["file"] for x in text.splitlines()]
    assert all(n.startswith(str(tmp_path / "awkward-names") + "/") for n in names)
