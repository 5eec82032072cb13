"""The gate's exit statuses (`conformance.report.exit_status`): 0 only for a judged, clean input; 1 for
violations whatever else; 2 for an unusable input and for a verdict of unknown (some group could not be
judged, e.g. a pf trace without PF_CONFIG) unless `--allow-unknown` accepts it; `--strict` makes unknown 1.
Each test of a status stands beside its twin: the same check on an input that must give another status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.report import exit_status
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit

CLEAN = SAMPLES_DIR / "clean" / "pf-s1.jsonl"
BAD = SAMPLES_DIR / "mutants" / "net--seq-repeat.jsonl"


def unjudgeable(tmp_path: Path) -> Path:
    """The clean pf sample without its PF_CONFIG: no violation, and no configuration to judge it by."""
    path = tmp_path / "pf-no-config.jsonl"
    lines = CLEAN.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"kind":"PF_CONFIG"' not in line), encoding="utf-8")
    return path


def check(*args: str | Path) -> int:
    return main(["check", "--engine", "python", "--quiet", *map(str, args)])


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_exit_status_table() -> None:
    assert [exit_status(v) for v in ("valid", "invalid", "unknown")] == [0, 1, 2]
    assert [exit_status(v, allow_unknown=True) for v in ("valid", "invalid", "unknown")] == [0, 1, 0]
    assert [exit_status(v, strict=True) for v in ("valid", "invalid", "unknown")] == [0, 1, 1]
    assert exit_status("unknown", strict=True, allow_unknown=True) == 1  # --strict wins


def test_an_unjudged_group_is_not_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert check(unjudgeable(tmp_path), "--out", out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 group(s) could not be judged" in err
    assert str(out / "unknown.jsonl") in err and "--allow-unknown" in err
    s = summary(out)
    assert s["verdict"] == "unknown" and s["unknown_total"] == 1 and s["unknown_accepted"] is False
    assert "PF_CONFIG" in (out / "unknown.jsonl").read_text(encoding="utf-8")
    assert "rule_sets" in s  # the report is whole: rule sets recorded even though the gate fails


def test_twin_the_same_trace_with_its_configuration_exits_0(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert check(CLEAN, "--out", out) == 0
    assert summary(out)["verdict"] == "valid" and capsys.readouterr().err == ""


def test_allow_unknown_accepts_it_and_says_so(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert check(unjudgeable(tmp_path), "--out", out, "--allow-unknown") == 0
    s = summary(out)
    assert s["verdict"] == "unknown" and s["unknown_accepted"] is True
    assert "could not be judged" not in capsys.readouterr().err


def test_strict_makes_unknown_a_failure(tmp_path: Path) -> None:
    assert check(unjudgeable(tmp_path), "--out", tmp_path / "a", "--strict") == 1
    assert check(unjudgeable(tmp_path), "--out", tmp_path / "b", "--strict", "--allow-unknown") == 1
    assert summary(tmp_path / "b")["unknown_accepted"] is False


def test_violations_exit_1_whatever_else(tmp_path: Path) -> None:
    both = [unjudgeable(tmp_path), BAD]
    assert check(*both, "--out", tmp_path / "a") == 1
    assert check(*both, "--out", tmp_path / "b", "--allow-unknown") == 1
    s = summary(tmp_path / "b")
    assert s["verdict"] == "invalid" and s["unknown_total"] == 1 and s["unknown_accepted"] is False


def test_the_readme_main_job_input_is_judged_clean(tmp_path: Path) -> None:
    """The clean samples (README's main job) hold no unjudgeable group: they pass the stricter gate."""
    out = tmp_path / "out"
    assert check(SAMPLES_DIR / "clean", "--out", out) == 0
    assert summary(out)["unknown_total"] == 0
