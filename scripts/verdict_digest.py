"""Every verdict one mechanism's monitor gives, as text lines to diff before and after a change to it.

    python scripts/verdict_digest.py sr --seeds 6 > before.txt    # (on the old code)
    python scripts/verdict_digest.py sr --seeds 6 > after.txt     # (on the new code); diff the two

For the model and every mutant of the mechanism, seeds 1..N: the trace simulated, judged by the registered
monitor per group (`conformance.check.run_monitor`), one line per result: mutant, seed, verdict, then each
violation (rule, entity, event IDs, explanation) and note, in the monitor's own order. A refactoring of a
monitor that keeps its verdicts keeps this output byte for byte.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from conformance.check import run_monitor
    from model.registry import get

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mechanism", choices=["sr", "am", "pf"])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    spec = get(args.mechanism)
    runs = {"model": spec.simulate, **spec.mutants}
    for name in sorted(runs):
        for seed in range(1, args.seeds + 1):
            events = runs[name](seed)
            for r in run_monitor(spec.monitor(), events):
                print(f"{name} {seed} {r.verdict.value} violations={len(r.violations)} notes={len(r.notes)}")
                for v in r.violations:
                    print(f"  V {v.rule} {v.requirement} {v.entity} {','.join(v.event_ids)} :: {v.explanation}")
                for n in r.notes:
                    print(f"  N {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
