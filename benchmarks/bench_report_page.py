"""The HTML report of the full sample corpus in headless Chromium: page size, height and load time (issue 31).

The corpus is `traces/samples` (clean runs, every mutant, the audit samples' skipped files), checked as the
README's main job does (`haconform check traces/samples --engine python --out DIR`); the page is built from
that report directory twice: as it is now and as it was before issue 31 (`render_html(report, drawn=-1)`:
every card inline, none grouped, input files open). Each page is loaded `--repeat` times in headless Chromium
(`conformance.audit.headless.LOAD_PROBE`: ms from navigation start to the end of the page's own script with a
layout forced; the page's height in px at 1280 px wide; the cards and timelines in the DOM). Prints one line
per page with the median and every run. A figure, never an assertion: the machine is shared.

    python benchmarks/bench_report_page.py                 # checks the corpus into a temporary directory
    python benchmarks/bench_report_page.py --report out/full --repeat 5 --pages main.html  # main's page too
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from conformance.audit.headless import LOAD_PROBE, probe
from conformance.audit.html import load_report, render_html
from conformance.cli import main as cli
from traces.corpus import SAMPLES_DIR


def corpus_report(where: Path) -> Path:
    out = where / "check"
    status = cli(["check", str(SAMPLES_DIR), "--engine", "python", "--out", str(out)])
    assert status == 1, f"the sample corpus checks INVALID (exit 1), got exit {status}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report", help="a check report directory of the corpus (default: check it now)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pages", nargs="*", default=[], help="HTML files to measure as well (e.g. main's page)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        out = Path(args.report) if args.report else corpus_report(where)
        began = time.monotonic()
        report = load_report(out)
        built = time.monotonic() - began
        pages = {"now": render_html(report), "before (drawn=-1)": render_html(report, drawn=-1)}
        pages |= {p: Path(p).read_text(encoding="utf-8") for p in args.pages}
        print(f"report data gathered in {built:.1f} s from {out}")
        for name, page in pages.items():
            runs = [probe(page, where, f"p{i}", LOAD_PROBE) for i in range(args.repeat)]
            ms = [r["ms"] for r in runs]
            r = runs[0]
            print(
                f"{name}: {len(page.encode()) / 1e6:.2f} MB, height {r['height']} px, {r['cards']} cards in the DOM, "
                f"{r['timelines']} timelines; load {statistics.median(ms):.0f} ms median "
                f"(runs: {', '.join(f'{m:.0f}' for m in ms)})"
            )


if __name__ == "__main__":
    main()
