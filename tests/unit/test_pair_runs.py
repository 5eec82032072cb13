"""`benchmarks/pair_runs.py` (the whole-process, paired figures of benchmarks/README.md): every counted run is
reaped with its own resource usage, the warm-up is not counted, A and B alternate, and the exit statuses are
reported. Judged by memory, not time (no timed assertion): a child that fills 64 MiB shows a peak of at least
64 MiB on its side, and its twin, a child that allocates nothing, shows less. The script runs in a process of its
own, as it is used: a child forked from a large process (this test run) may report its parent's high-water mark."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "pair_runs.py"
FILL = "b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096])"


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def _peaks(out: str) -> tuple[float, float, float]:
    """A's min, B's min and A/B's min of the peak-memory row."""
    row = next(line for line in out.splitlines() if line.startswith("peak_mib"))
    a_side, b_side, ratio = row.split("|")
    return float(a_side.split()[2]), float(b_side.split()[1]), float(ratio.split()[1])


@pytest.mark.unit
def test_pairs_alternate_the_warm_up_is_not_counted_and_peaks_are_per_run() -> None:
    b = shlex.join([sys.executable, "-c", "pass"])  # twin of A: nothing allocated
    done = _script("-n", "2", "--warmup", "1", "--vs", b, "--", sys.executable, "-c", FILL)
    assert done.returncode == 0, done.stderr
    assert "counted runs: A 2, B 2" in done.stdout
    a_peak, b_peak, ratio = _peaks(done.stdout)
    assert a_peak >= 64 > b_peak
    assert ratio > 1  # pair by pair, the larger child is A


@pytest.mark.unit
def test_exit_statuses_are_reported() -> None:
    done = _script("-n", "1", "--warmup", "0", "--", sys.executable, "-c", "import sys; sys.exit(3)")
    assert done.returncode == 0 and "exit statuses seen: [3]" in done.stdout


@pytest.mark.unit
def test_no_command_is_a_usage_error() -> None:
    assert _script("-n", "2").returncode == 2
