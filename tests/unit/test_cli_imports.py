"""`haconform check` loads what checking needs and nothing else (issue 32, startup): no pandas (pyarrow's first
question answered, `traces.arrow_start.arrow_without_pandas`), no Hypothesis, harness, HTML page, networkx or other
command's modules, no simulator or mutant (session 14); a check of JSON Lines loads neither pyarrow nor numpy, and
no check looks its version up in `importlib.metadata` (session 15); and the command line, which loads only the
module of the command it runs, lists every command as the whole one does (`conformance.cli.COMMANDS`). Twins: a
process that loaded one of the listed modules is caught; a command table whose help differs from its module's is
caught; a check that reads Parquet loads pyarrow and numpy (still no pandas); a version other than
pyproject.toml's is caught."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import conformance
import conformance.cli as cli

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "traces" / "samples" / "clean"
# What a check must not load: the data-frame library pyarrow would import, the property-testing library, the
# suite's harness, the HTML page and copy-status reader (the audit commands'), other commands' modules,
# the solver, Spark, the standard library's HTTP client (Hypothesis loads it), and the graph library only the
# simulators' topology uses (issue 32, session 13: 80 ms of every check before `model.kernel.topology` loaded it
# lazily).
HEAVY = (
    "pandas",
    "hypothesis",
    "conformance.harness",
    "conformance.audit.html",
    "conformance.audit.copystatus",
    "conformance.cli.reference",
    "conformance.cli.suite",
    "conformance.explore",
    "conformance.shrink",
    "conformance.upgrade",
    "spec.claims",
    "z3",
    "pyspark",
    "urllib.request",
    "networkx",
    # the simulators, their kernel and the mutants: `model/*/mechanism.py` and the registry's `net` load them on
    # first use (`model.kernel.mechanism.Deferred`; session 14: 26 modules, a sixth of the project's start);
    # numpy's masked arrays, which `np.unique` of no repeated hash loaded (`traces.dataset.repeated_hashes`)
    "model.sr.sim",
    "model.sr.mutants",
    "model.am.sim",
    "model.am.mutants",
    "model.pf.sim",
    "model.pf.mutants",
    "model.kernel.workload",
    "model.kernel.sim",
    "numpy.ma",
    "conformance.incremental",  # `--state` only (`conformance.cli.check.run_incremental`), with its reader:
    "conformance.locations",
)
_PROBE = """
import json, sys
{before}
from conformance.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = {heavy!r}
print(json.dumps(sorted({{h for h in heavy for m in sys.modules if m == h or m.startswith(h + ".")}})))
"""


# What a check of JSON Lines alone must not load (issue 32, session 15): pyarrow and numpy (about 0.25 s of its
# start) load only where Parquet or a dataset is read (`traces.io.iter_parquet`, `conformance.engine.trace_index`,
# `conformance.dataset_check`, ...), and the version a summary records is `conformance.__version__`, not
# `importlib.metadata`'s lookup (16 ms).
PARQUET_ONLY = ("pyarrow", "numpy", "importlib.metadata")


def heavy_loaded(argv: list[str], before: str = "", heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The `heavy` modules a process running `haconform ARGV` loaded (`before`: code run first)."""
    code = _PROBE.format(before=before, argv=argv, heavy=heavy)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_check_help_loads_nothing_heavy():
    assert heavy_loaded(["check", "--help"]) == []


def test_a_check_of_jsonl_and_parquet_loads_nothing_heavy(tmp_path):
    argv = ["check", str(SAMPLES / "sr-s1.jsonl"), str(SAMPLES / "pf-s3.parquet"), "--engine", "python"]
    assert heavy_loaded([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == []
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["verdict"] == "valid"


def test_a_check_of_json_lines_loads_no_pyarrow_numpy_or_metadata(tmp_path):
    argv = ["check", str(SAMPLES / "sr-s1.jsonl"), "--engine", "python", "--out", str(tmp_path / "out"), "--quiet"]
    assert heavy_loaded(argv, heavy=PARQUET_ONLY) == []
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["verdict"] == "valid" and summary["run"]["version"] == conformance.__version__


def test_twin_a_check_that_reads_parquet_loads_pyarrow_and_numpy_and_is_seen(tmp_path):
    argv = ["check", str(SAMPLES / "sr-s1.jsonl"), str(SAMPLES / "pf-s3.parquet"), "--engine", "python"]
    argv += ["--out", str(tmp_path / "out"), "--quiet"]
    assert heavy_loaded(argv, heavy=(*PARQUET_ONLY, "pandas")) == ["numpy", "pyarrow"]  # pandas still not asked


def _version_of(pyproject: str) -> str:
    return tomllib.loads(pyproject)["project"]["version"]


def test_the_version_a_check_records_is_pyprojects_and_a_stale_one_is_caught():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert conformance.__version__ == _version_of(text)
    bumped = text.replace(f'version = "{conformance.__version__}"', 'version = "9.9.9"', 1)
    assert _version_of(bumped) == "9.9.9" != conformance.__version__  # twin: a release that forgot the constant


def test_twin_an_incremental_check_loads_incremental_and_is_seen(tmp_path):
    argv = ["check", str(SAMPLES / "sr-s1.jsonl"), "--engine", "python", "--state", str(tmp_path / "state")]
    loaded = heavy_loaded([*argv, "--out", str(tmp_path / "out"), "--quiet"])
    assert {"conformance.incremental", "conformance.locations"} <= set(loaded)
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["verdict"] == "valid"


def test_twin_a_process_that_loaded_a_heavy_module_is_caught():
    assert {"conformance.cli.suite", "hypothesis"} <= set(
        heavy_loaded(["check", "--help"], "import conformance.cli.suite")
    )
    # pyarrow asked about pandas before the check could answer: pandas is loaded, and seen
    assert "pandas" in heavy_loaded(["check", "--help"], "import pyarrow; pyarrow.array([0])")
    # a simulator's topology built first: networkx is loaded, and seen
    assert "networkx" in heavy_loaded(["check", "--help"], "from model.kernel.topology import Topology; Topology([])")
    # a mechanism's generator and mutants asked for (the deferred entries load them), and seen
    first = "from model.registry import get; get('sr').simulate.__wrapped__; len(get('pf').mutants); get('net').mutants"
    assert {"model.sr.sim", "model.pf.mutants"} <= set(heavy_loaded(["check", "--help"], first))
    assert "model.kernel.sim" in heavy_loaded(["check", "--help"], first + "['seq-repeat']")


def listed(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    """Every command a parser lists, with its help, in order."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(a.dest, a.help) for a in sub._choices_actions]


def test_the_lazy_command_line_lists_every_command_as_the_whole_one():
    whole = cli.build_parser()
    assert listed(whole) == [c for _, commands in cli.COMMANDS for c in commands]
    assert cli.build_parser(None).format_help() == whole.format_help()
    sub = next(a for a in whole._actions if isinstance(a, argparse._SubParsersAction))
    for name, _ in listed(whole):
        lazy = cli.build_parser(name)
        assert lazy.format_help() == whole.format_help(), name
        lazy_sub = next(a for a in lazy._actions if isinstance(a, argparse._SubParsersAction))
        assert lazy_sub.choices[name].format_help() == sub.choices[name].format_help(), name


def test_twin_a_table_whose_help_differs_from_its_module_is_caught(monkeypatch):
    module, commands = cli.COMMANDS[0]
    changed = ((commands[0][0], commands[0][1] + " (stale)"), *commands[1:])
    monkeypatch.setattr(cli, "COMMANDS", ((module, changed), *cli.COMMANDS[1:]))
    assert listed(cli.build_parser()) != [c for _, commands in cli.COMMANDS for c in commands]
    assert cli.build_parser(None).format_help() != cli.build_parser().format_help()


def test_the_command_is_the_first_word_that_is_no_option():
    assert cli.command_of(["check", "x", "--out", "o"]) == "check"
    assert cli.command_of(["--version"]) is None and cli.command_of([]) is None
