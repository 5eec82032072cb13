"""The shipped sample corpus: clean traces of every mechanism model and one trace per mutant.

`haconform samples` rewrites it; the output depends only on the models and the seeds below, so a
regeneration that changes files means a model changed. `clean/` must check clean; each file in
`mutants/` carries the violation its name announces.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from traces.io import write_events

CLEAN_SEEDS = (1, 2, 3)
MUTANT_SEED = 1
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"


def regenerate(out: Path = SAMPLES_DIR) -> list[Path]:
    from model.registry import mechanisms

    for sub in ("clean", "mutants"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)
    written = []
    for name, spec in mechanisms().items():
        for seed in CLEAN_SEEDS:
            ext = "parquet" if seed == CLEAN_SEEDS[-1] else "jsonl"
            path = out / "clean" / f"{name}-s{seed}.{ext}"
            write_events(path, spec.simulate(seed))
            written.append(path)
        for mutant, run in sorted(spec.mutants.items()):
            path = out / "mutants" / f"{name}--{mutant}-s{MUTANT_SEED}.jsonl"
            write_events(path, run(MUTANT_SEED))
            written.append(path)
    return written
