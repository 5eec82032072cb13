"""The size of a state's copy (issue 33, session 24): the mean and largest blob the single-process explorer makes on
each default (non-slow) bound of the manifest, or on the bounds named, and the share of them that refer to the fixed
table's kernel generator words (`conformance.explore.fixed`).

    PYTHONPATH=TREE python3 TREE/benchmarks/bench_blob_sizes.py [--mechanism M] [BOUND ...]

Every blob `Explorer.freeze` makes during one exploration is counted (the frontier's copies, a root's, an end's
resolutions'); uncompressed. Run it from /tmp against each tree to compare two trees. Figures, never a test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.explore import bfs
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load


def sizes(bound: Any) -> dict[str, object]:
    """One exploration of `bound`, every blob's length kept."""
    made: list[bytes] = []
    freeze = bfs.freeze

    def kept(*args: Any, **kwargs: Any) -> bytes:
        blob = freeze(*args, **kwargs)
        made.append(blob)
        return blob

    bfs.freeze = kept
    try:
        ex = Explorer(bound)
        res = ex.run()
    finally:
        bfs.freeze = freeze
    words = [w[1] for w in getattr(ex.fixed, "words", [])]
    return {
        "bound": bound.name,
        "states": res.states,
        "blobs": len(made),
        "mean_bytes": round(sum(map(len, made)) / max(1, len(made)), 1),
        "max_bytes": max(map(len, made), default=0),
        "holding_table_words": sum(1 for b in made if any(w in b for w in words)),
        "table_words": len(words),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bounds", nargs="*", help="manifest bounds (default: every non-slow one of the mechanism)")
    ap.add_argument("--mechanism", default=None, help="sr, am or pf (default: all three)")
    args = ap.parse_args()
    entries = load()[0]
    chosen = (
        [e for e in entries if e.bound.name in args.bounds]
        if args.bounds
        else [e for e in entries if not e.slow and args.mechanism in (None, e.bound.mechanism)]
    )
    for entry in chosen:
        print(json.dumps(sizes(entry.bound)), flush=True)


if __name__ == "__main__":
    main()
