"""`haconform check --engine python`: the report frames of the single-process checks, a corpus
(`conformance.pycheck.check_paths`) and incremental (`--state DIR`, `conformance.incremental`): each runs
its check under a progress line and writes the report (`conformance.report.run_and_report`; exit statuses
there). The Spark engine's frames are `spark_trace_check.job.run_check` and `spark_trace_check.incremental`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome
from conformance.incremental import check_incremental
from conformance.progress import Progress
from conformance.pycheck import check_paths
from conformance.report import run_and_report


def run_check(args: argparse.Namespace) -> int:
    """`haconform check PATHS --engine python`."""

    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_paths(args.paths, skew_ms=args.skew, progress=progress)

    return run_and_report(args, "python", compute)


def run_incremental(args: argparse.Namespace) -> int:
    """`haconform check PATHS --state DIR --engine python`."""

    def compute() -> CheckOutcome:
        with Progress.for_args(args) as progress:
            return check_incremental(
                args.paths, Path(args.state), cap=DEFAULT_CAP, skew_ms=args.skew, progress=progress
            )

    return run_and_report(args, "python", compute)
