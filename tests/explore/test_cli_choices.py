"""`haconform explore`'s choice options (issue 33, "every allowed choice explored"): `--choices`, `--ranges`,
`--construction` and `--end-choices` set the manifest's fields of the same names on a command-line bound or on a
manifest bound, which then is no longer the pinned one (`--check` refuses it, as do `--mutants` and `--all`).

The figures are those spec/explore.toml records beside am-3s-1db-crash-partition's pinned 147: 120 states with the
first PAM's holder drawn by the seed (one root), 91 with no choice point at all."""

from __future__ import annotations

import json

import pytest

from conformance.cli import main

BOUND = ["explore", "am", "--bound", "am-3s-1db-crash-partition", "--engine", "python", "--json"]


def _states(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, dict]:
    assert main([*BOUND, *flags]) == 0
    out = json.loads(capsys.readouterr().out)
    return out["states"], out["choice_points"]


def test_the_options_change_what_is_explored(capsys: pytest.CaptureFixture[str]) -> None:
    pinned, said = _states(capsys)
    assert pinned == 147 and said == {"choices": True, "ranges": "ends", "construction": "branch", "end_choices": 2}
    # twin: an option the explorer ignored would leave the pinned count
    seeded, said = _states(capsys, "--construction", "seed")
    assert seeded == 120 and said["construction"] == "seed"
    off, said = _states(capsys, "--choices", "off")
    assert off == 91 and said == {"choices": False, "ranges": None, "construction": "seed", "end_choices": 0}
    assert _states(capsys, "--choices", "on")[0] == pinned  # the manifest's own setting, said again


def test_sr_labels_and_a_command_line_bound(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explore", "sr", "--servers", "2", "--messages", "1", "--faults", "0", "--depth", "1", "--json"]
    assert main([*args, "--engine", "python", "--choices", "sr.shadow-server", "--end-choices", "0"]) == 0
    said = json.loads(capsys.readouterr().out)["choice_points"]
    assert said["choices"] == ["sr.shadow-server"] and said["end_choices"] == 0


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--check", "--end-choices", "1"], "--check compares with bound 'am-3s-1db-crash-partition' as pinned"),
        (["--choices", "net.loss"], "field 'choices' must be true or false (sr: or a list of labels)"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], flags: list[str], error: str) -> None:
    assert main([*BOUND, *flags]) == 2
    assert error in capsys.readouterr().err


def test_not_with_the_manifests_own_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "am", "--mutants", "--choices", "off"]) == 2
    assert "--choices: not with --mutants or --all" in capsys.readouterr().err
    assert main(["explore", "pf", "--all", "--end-choices", "0"]) == 2
    assert "--end-choices: not with --mutants or --all" in capsys.readouterr().err
    assert main(["explore", "sr", "--bound", "sr-2s-1m-crash", "--choices", "sr.nosuch"]) == 2
    assert "not sr choice points" in capsys.readouterr().err
