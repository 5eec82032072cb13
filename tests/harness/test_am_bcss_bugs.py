"""The reference Active Manager's best copy selection (`examples/sut/am_bcss.py`) and its planted
bugs, each caught by the rule of the seed statement it breaks, on a hand-made replay file.

Each replay passes on the model and on the correct `am_node.py` (the twins), and fails on the node with the
bug planted and on the model's mutant of the same flaw, naming the statement's rule and requirement.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance.cli import main

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]
NODE = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'am_node.py'}"
REPLAYS = Path(__file__).parent / "replays"
# replay file -> (am_node bug, model mutant, the rule and requirement that must be reported)
CASES = {
    "am-retry-failed-mount": ("retry-failed-mount", "retry-failed-mount", "next-best-copy (AM-025)"),
    "am-blocked-copy-activated": ("activate-blocked", "ignore-blocked", "never-blocked (AM-034)"),
    "am-lossless-switchover": (
        "lossless-switchover-by-queue",
        "lossless-switchover-by-queue",
        "sort-lossless-switchover (AM-037)",
    ),
}


def _replay(name: str, *extra: str) -> list[str]:
    return ["replay", str(REPLAYS / f"{name}.json"), *extra]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_correct_systems_pass_the_replay(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_replay(name)) == 0, capsys.readouterr().out
    assert main(_replay(name, "--sut", NODE)) == 0, capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_planted_bug_is_caught_by_its_statement_s_rule(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    bug, mutant, rule = CASES[name]
    capsys.readouterr()
    assert main(_replay(name, "--sut", f"{NODE} --bug {bug}")) == 1
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("violated: "))
    assert first.startswith(f"violated: {rule}"), out
    assert "bcss-record (AM-039) -" not in out  # the record rule is evidence, never the verdict's lead
    assert main(_replay(name, "--mutant", mutant)) == 1
    assert f"violated: {rule}" in capsys.readouterr().out
