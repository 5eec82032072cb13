"""Time whole commands over several runs, and two commands against each other pair by pair (A B A B ...).

    python3 benchmarks/pair_runs.py -n 3 -- python3 -m conformance check /tmp/f1m --engine python --out /tmp/o1
    python3 benchmarks/pair_runs.py -n 3 --vs "env PYTHONPATH=<old tree> python3 -m conformance check /tmp/f1m
        --engine python --out /tmp/o1" -- env PYTHONPATH=<new tree> python3 -m conformance check /tmp/f1m
        --engine python --out /tmp/o2

The figures the project's benchmark notes quote as "whole-process, paired" (benchmarks/README.md): each run is a
child process reaped with `os.wait4`, whose resource usage covers the child and every descendant it waited for; CPU
= user + system seconds; peak = the largest single process's resident set (`ru_maxrss`), not the tree's sum
(`benchmarks/tree_watch.py` sums the tree). A descendant its parent leaves unreaped is not counted: a Spark check's
JVM and Python workers are not (measured: 0.7 CPU s for a check whose process tree spent over 20), so for Spark use
`bench_check.py` (its `tree_cpu`) or `tree_watch.py`, which read every descendant from /proc. Run it as its own
process: a child started by a large process can report that process's high-water mark as its own peak. With `--vs`,
A is the command after `--` and B the `--vs` string (split as a shell splits words, run without a shell); A and B
alternate, so a machine whose speed drifts moves both sides of each pair, and the ratio A/B is taken pair by pair.
Prints min, median and max of each figure; the commands' exit statuses are printed, not acted on. Wall time here is
the benchmark's own measurement: the model never reads a clock.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    user: float
    sys: float
    wall: float
    peak_mib: float
    status: int

    @property
    def cpu(self) -> float:
        return self.user + self.sys


FIGURES = ("user", "sys", "cpu", "wall", "peak_mib")


def run_once(argv: list[str]) -> Run:
    """One run of `argv`, its output discarded (counted by nobody: redirect inside the command to keep it)."""
    t0 = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    return Run(usage.ru_utime, usage.ru_stime, time.monotonic() - t0, usage.ru_maxrss / 1024, child.returncode)


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} {statistics.median(values):.3f} {max(values):.3f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=5, help="counted runs of each command (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="runs of each command not counted, first (default 1)")
    p.add_argument("--vs", help="command B, one string split as a shell splits words")
    p.add_argument("--timeout", type=float, default=None, help="stop starting runs past this many seconds")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- command A and its arguments")
    args = p.parse_args(argv)
    a = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not a or args.n < 1 or args.warmup < 0:
        p.error("give -n >= 1, --warmup >= 0 and a command after --")
    b = shlex.split(args.vs) if args.vs else None
    t0 = time.monotonic()
    runs: dict[str, list[Run]] = {"A": [], "B": []}
    for i in range(args.warmup + args.n):
        if args.timeout is not None and time.monotonic() - t0 > args.timeout:
            print(f"time bound of {args.timeout:g} s reached: {len(runs['A'])} runs counted", file=sys.stderr)
            break
        for side, cmd in (("A", a), ("B", b)):
            if cmd is None:
                continue
            r = run_once(cmd)
            if i >= args.warmup:
                runs[side].append(r)
    pairs = min(len(runs["A"]), len(runs["B"])) if b else 0
    print(f"A: {shlex.join(a)}" + (f"\nB: {shlex.join(b)}" if b else ""))
    print(f"counted runs: A {len(runs['A'])}" + (f", B {len(runs['B'])}" if b else "") + "; figure: min median max")
    for name in FIGURES:
        line = f"{name:9} A {spread([getattr(r, name) for r in runs['A']])}" if runs["A"] else f"{name:9} A -"
        if b and runs["B"]:
            line += f" | B {spread([getattr(r, name) for r in runs['B']])}"
        if pairs:
            ratios = [
                getattr(x, name) / max(getattr(y, name), 1e-9) for x, y in zip(runs["A"], runs["B"], strict=False)
            ]
            line += f" | A/B {spread(ratios)}"
        print(line)
    statuses = sorted({r.status for side in runs.values() for r in side})
    print(f"exit statuses seen: {statuses}")
    return 0 if runs["A"] else 3


if __name__ == "__main__":
    sys.exit(main())
