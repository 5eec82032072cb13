"""`haconform ingest PATH... --out DATASET`: read and validate a corpus once, write a dataset for checks.

The dataset format is `traces.dataset` (documented in `traces/README.md`); `haconform check DATASET`
recognises it (`conformance.dataset_check`). Exit status: 0 written, 2 unusable input (a file that cannot
be read, no rows at all) or `--out` holding something else, 3 internal error (through the CLI).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from conformance.progress import Progress
from traces.ingest import ingest
from traces.io import TraceFileError


def _cmd_ingest(args: argparse.Namespace) -> int:

    try:
        if args.engine == "spark":
            from spark_trace_check.ingest import run_ingest

            manifest = run_ingest(args)
        else:
            with Progress.for_args(args, label="ingesting", done="ingested", unit="rows") as bar:
                bar.start(None)
                manifest = ingest(args.paths, args.dataset, files=args.files, progress=bar.advance).manifest
    except TraceFileError as exc:
        print(f"haconform ingest: input unusable: {exc}", file=sys.stderr)
        return 2
    counts = manifest["input"]
    if not args.quiet:
        print(
            f"haconform ingest: {len(counts['files'])} file(s), {len(counts['files_skipped'])} skipped, "
            f"{counts['rows_read']} rows read, {counts['rows_checked']} valid, {counts['rows_quarantined']} "
            f"quarantined; {len(manifest['files'])} data file(s) in {args.dataset}/",
            file=sys.stderr,
        )
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "ingest",
        help="read and validate trace corpora once into a dataset for fast checks",
        description="Read and validate JSONL/Parquet traces once (bad rows quarantined with a reason, as by "
        "check) and write a Parquet dataset: valid events bucketed by trace into N files, each sorted by trace "
        "in recording order, with a manifest (_haconform.json) of the files, their hashes, the input files, "
        "the quarantine and the counts. `haconform check DATASET` then skips parsing and the shuffle. "
        "Exit 0 written, 2 unusable input or --out, 3 internal error.",
    )
    p.add_argument("paths", nargs="+", help="trace files or directories")
    # dest is not `out`: an internal error's log must not land inside the dataset (cli._error_log)
    p.add_argument("--out", dest="dataset", required=True, help="dataset directory (new, empty, or an earlier one)")
    p.add_argument("--files", type=int, default=4, metavar="N", help="number of data files (buckets; default 4)")
    p.add_argument(
        "--engine", choices=("python", "spark"), default="python", help="python (default, bounded memory) or spark"
    )
    p.add_argument("--master", default="local[2]", help="Spark master URL (with --engine spark)")
    p.add_argument("--quiet", action="store_true", help="no summary line")
    p.add_argument(
        "--progress",
        action="store_true",
        help="a bar with rows/s (Python engine) even when stderr is not a terminal; final line with the rate",
    )
    p.set_defaults(func=_cmd_ingest)
