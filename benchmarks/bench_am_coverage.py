"""Rule coverage of `haconform conform am` over repeated runs: for each rule, in how many of N conform runs
it was exercised and by how many of their runs (issue 24: coverage over all runs, every rule reached).

Each conform run is the CLI itself (`python -m conformance conform am --json`, default budget unless
`--budget`), against the reference model and against `examples/sut/am_node.py`. The search is derandomised,
so the runs differ in how far the time budget gets on a shared machine: the figures say whether every rule
is reached within the budget however busy the machine is.

    python benchmarks/bench_am_coverage.py --repeat 10 [--budget 40] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {"model": [], "am_node": ["--sut", f"{sys.executable} {ROOT / 'examples' / 'sut' / 'am_node.py'}"]}


def one(system: str, budget: float | None, tmp: Path) -> dict:
    cmd = [sys.executable, "-m", "conformance", "conform", "am", "--json", "--replay-out", str(tmp / "r.json")]
    cmd += SYSTEMS[system] + (["--budget", str(budget)] if budget else [])
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    out = json.loads(done.stdout)
    return {"exit": done.returncode, "runs": out["runs"], "rule_runs": out["coverage"]["rule_runs"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--budget", type=float, default=None, help="seconds per conform run (default: the profile's)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON")
    args = ap.parse_args()
    tmp = Path(subprocess.run(["mktemp", "-d"], capture_output=True, text=True, check=True).stdout.strip())
    results: dict[str, list[dict]] = {s: [] for s in SYSTEMS}
    for i in range(args.repeat):
        for system in SYSTEMS:
            r = one(system, args.budget, tmp)
            results[system].append(r)
            missed = sorted(k for k, v in r["rule_runs"].items() if not v)
            print(f"{system:<8} #{i + 1}: exit {r['exit']}, {r['runs']} runs, not exercised: {missed or 'none'}")
    for system, rs in results.items():
        rules = sorted(rs[0]["rule_runs"])
        print(f"\n{system}: {len(rs)} conform runs, runs each: {[r['runs'] for r in rs]}")
        print(f"  {'rule':<26} {'in conform runs':>15} {'runs exercising it: min/median/max':>36}")
        for rule in rules:
            counts = [r["rule_runs"].get(rule, 0) for r in rs]
            hit = sum(c > 0 for c in counts)
            spread = f"{min(counts)} / {statistics.median(counts)} / {max(counts)}"
            print(f"  {rule:<26} {hit:>9} of {len(rs):<3} {spread:>36}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
