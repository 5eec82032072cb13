"""`benchmarks/proctree.py` (issue 33: peak memory of the process tree of a Spark exploration): the resident set
of every descendant counts, not only this process's. Twin: the same watch after the child is gone does not see
its memory. Polled by hand (`TreeWatch.poll`) while the child is known to be alive: no timing in the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from proctree import TreeWatch, tree

MB = 2**20
CHILD = (  # 96 MB, every page touched, then wait for stdin to close
    "import sys; b = bytearray(96 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); "
    "sys.stdin.read()"
)


@pytest.mark.unit
def test_a_descendant_s_memory_counts_and_a_gone_one_does_not() -> None:
    watch = TreeWatch()
    watch.poll()
    alone = watch.peak_bytes
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        assert child.pid in tree(watch.root)[0]
        watch.poll()
        assert watch.peak_bytes >= alone + 96 * MB
    finally:
        child.communicate("")
    # twin: a fresh watch polled after the child exited sees only this process
    after = TreeWatch()
    after.poll()
    assert after.peak_bytes < alone + 96 * MB
    assert child.pid not in tree(after.root)[0] and watch.processes >= 2
