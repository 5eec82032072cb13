"""Coverage per rule of `haconform conform` against a reference system, over several runs (issue 18).

Runs `python -m conformance conform MECHANISM --sut SUT --json` RUNS times (default budget: the quick profile's)
and prints, for every rule of the mechanism, in how many runs it was exercised, then the runs' verdicts, run
counts and the rules exercised per run. The search is derandomised, so runs differ only by how many examples the
budget allows on a loaded machine; that is the variation a CI job sees.

    python scripts/coverage_per_rule.py sr --runs 10                 # examples/sut/sr_node.py
    python scripts/coverage_per_rule.py pf --runs 10 --json out.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(mechanism: str, sut: str, budget: float | None) -> dict:
    cmd = [sys.executable, "-m", "conformance", "conform", mechanism, "--sut", sut, "--json"]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {"verdict": f"exit {done.returncode}", "error": done.stderr[-500:], "coverage": {"rules": {}}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mechanism", choices=("sr", "am", "pf"))
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--sut", help="default: python3 examples/sut/<mechanism>_node.py")
    p.add_argument("--budget", type=float, help="seconds per run (default: the quick profile's)")
    p.add_argument("--json", help="also write the per-run results here")
    args = p.parse_args(argv)
    sut = args.sut or f"{sys.executable} examples/sut/{args.mechanism}_node.py"
    runs = []
    for i in range(args.runs):
        r = one_run(args.mechanism, sut, args.budget)
        cov = r.get("coverage", {})
        runs.append(r)
        print(f"run {i + 1}: {r.get('verdict')} runs={r.get('runs')} exercised={len(cov.get('exercised', []))} "
              f"of {len(cov.get('rules', {}))}", file=sys.stderr, flush=True)  # fmt: skip
    rules = sorted({rule for r in runs for rule in r.get("coverage", {}).get("rules", {})})
    print(f"{args.mechanism}: coverage per rule over {len(runs)} runs of `conform {args.mechanism} --sut {sut}`")
    for rule in rules:
        hits = sum(bool(r.get("coverage", {}).get("rules", {}).get(rule)) for r in runs)
        print(f"  {hits:2d}/{len(runs)}  {rule}")
    never = [rule for rule in rules if not any(r.get("coverage", {}).get("rules", {}).get(rule) for r in runs)]
    every = sum(all(r.get("coverage", {}).get("rules", {}).get(rule) for r in runs) for rule in rules)
    print(f"  rules exercised in every run: {every} of {len(rules)}; never: {', '.join(never) or 'none'}")
    print(f"  verdicts: {sorted({str(r.get('verdict')) for r in runs})}; examples per run: "
          f"{[r.get('runs') for r in runs]}")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
