"""`benchmarks/pair_runs.py` (the whole-process, paired figures of benchmarks/README.md): every counted run is
reaped with its own resource usage, the warm-up is not counted, A and B alternate, and the exit statuses are
reported. Judged by memory, not time (no timed assertion): a child that fills 64 MiB shows a peak of at least
64 MiB on its side, and its twin, a child that allocates nothing, shows less."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from pair_runs import main, run_once

FILL = "b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096])"


@pytest.mark.unit
def test_a_run_reports_its_child_s_peak_and_status() -> None:
    big = run_once([sys.executable, "-c", FILL])
    small = run_once([sys.executable, "-c", "pass"])  # twin: nothing allocated
    assert big.peak_mib >= 64 > small.peak_mib
    assert run_once([sys.executable, "-c", "import sys; sys.exit(3)"]).status == 3


@pytest.mark.unit
def test_pairs_alternate_and_the_warm_up_is_not_counted(capsys: pytest.CaptureFixture[str]) -> None:
    b = shlex.join([sys.executable, "-c", "pass"])
    assert main(["-n", "2", "--warmup", "1", "--vs", b, "--", sys.executable, "-c", FILL]) == 0
    out = capsys.readouterr().out
    assert "counted runs: A 2, B 2" in out
    peak = next(line for line in out.splitlines() if line.startswith("peak_mib"))
    a_side, b_side, ratio = peak.split("|")
    assert float(a_side.split()[3]) >= 64 > float(b_side.split()[2])  # A's min, B's min
    assert float(ratio.split()[1]) > 1  # A/B's min: the larger child is A, pair by pair


@pytest.mark.unit
def test_no_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["-n", "2"])
    assert exc.value.code == 2
