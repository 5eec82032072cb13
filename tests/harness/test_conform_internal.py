"""`haconform conform`: a bug in our rule code is an internal error, exit 3, with its traceback in the error log,
never "fail" and never "unusable" (issue 29). A rule function of the sr monitor is made to raise `KeyError`
(what a misspelt key would do): the run ends at once with exit 3, even against a system that is wrong (its
failure must not hide the checker's bug), and no replay file is written; `haconform mutants` does not report
the mutant as surviving. Twin: the same wrong system, with the rule code intact, gives a FAIL verdict naming
the rule (SR-031), exit 1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import model.sr.monitor as sr_monitor
from conformance.cli import main

ROOT = Path(__file__).resolve().parents[2]
SR_NODE = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'sr_node.py'}"
WRONG = f"{SR_NODE} --bug ack-before-shadow"  # acknowledges the sender before the shadow is made (SR-031)

pytestmark = pytest.mark.model


def _conform(tmp_path: Path, *args: str) -> int:
    replay = tmp_path / "replay.json"
    return main(["conform", "sr", *args, "--budget", "20", "--shrink-budget", "3", "--replay-out", str(replay)])


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sr monitor's deferred checks (SR-058, run by every verdict) raise as a misspelt key would."""

    def flush_due(*args: object, **kwargs: object) -> list:
        raise KeyError("planted")

    monkeypatch.setattr(sr_monitor, "flush_due", flush_due)


def _internal(code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, err = capsys.readouterr()
    assert code == 3, (out, err)
    assert "internal error in the sr monitor: KeyError: 'planted'" in err
    assert "Traceback (most recent call last)" in err and 'raise KeyError("planted")' in err
    assert "FAIL" not in out and "UNKNOWN" not in out and "PASS" not in out
    assert not (tmp_path / "replay.json").exists()


@pytest.mark.usefixtures("planted")
def test_a_bug_in_rule_code_is_exit_3_against_a_wrong_system(tmp_path: Path, capsys) -> None:
    _internal(_conform(tmp_path, "--sut", WRONG), tmp_path, capsys)


@pytest.mark.usefixtures("planted")
def test_a_bug_in_rule_code_is_exit_3_on_the_model_too(tmp_path: Path, capsys) -> None:
    _internal(_conform(tmp_path, "--json"), tmp_path, capsys)


def test_twin_a_wrong_system_is_a_fail_naming_the_rule(tmp_path: Path, capsys) -> None:
    code = _conform(tmp_path, "--sut", WRONG)
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert out.startswith("FAIL sr: ") and "violated: shadow-before-ack (SR-031)" in out
    assert "internal error" not in err and (tmp_path / "replay.json").exists()


@pytest.mark.usefixtures("planted")
def test_a_bug_in_rule_code_is_exit_3_in_the_kill_report_not_a_survivor(capsys) -> None:
    code = main(["mutants", "sr", "--only", "ack-before-shadow", "--budget", "10"])
    out, err = capsys.readouterr()
    assert code == 3, (out, err)
    assert "mutant ack-before-shadow: internal error in the sr monitor: KeyError: 'planted'" in err
    assert "SURVIVED" not in out
