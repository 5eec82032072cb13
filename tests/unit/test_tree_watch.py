"""`benchmarks/tree_watch.py` (the 10^8 Spark check's whole-tree cost, issue 32): `--help` prints its usage and
exits 0 instead of trying to run a program called `--help`; the watched command's exit status is the script's
(twin: a command that exits 3 makes the script exit 3, not 0), and the summary line goes to stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "tree_watch.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.unit
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_prints_the_usage_and_exits_0(flag: str) -> None:
    done = _run(flag)
    assert done.returncode == 0, done.stderr
    assert "process tree" in done.stdout


@pytest.mark.unit
def test_no_command_is_a_usage_error() -> None:
    assert _run().returncode == 2


@pytest.mark.unit
def test_the_command_s_exit_status_is_the_script_s() -> None:
    clean = _run(sys.executable, "-c", "pass")
    assert clean.returncode == 0 and "peak RSS of the process tree" in clean.stderr
    failing = _run(sys.executable, "-c", "import sys; sys.exit(3)")  # twin
    assert failing.returncode == 3
