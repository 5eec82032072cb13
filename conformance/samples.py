"""`haconform samples`: regenerate the shipped sample corpus (`traces/samples/`, described in `traces.corpus`).

Clean traces of every mechanism model at `CLEAN_SEEDS`, and one trace per mutant, taken at the first seed of
`MUTANT_SEEDS` whose trace the pure-Python checker judges invalid; `mutants/INDEX.json` records the seed and
the rules each file breaks. It runs the checker (`conformance.check`), so it sits above it, not in `traces`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from conformance.check import check_events
from model.registry import mechanisms
from traces.corpus import CLEAN_SEEDS, MUTANT_SEEDS, SAMPLES_DIR, rename_trace
from traces.io import write_events
from traces.schema import Event


def first_invalid(run: Callable[[int], list[Event]], name: str) -> tuple[int, list[Event], list[str]] | None:
    """The first seed whose mutant trace breaks some rule, with the trace and the rules broken."""
    for seed in MUTANT_SEEDS:
        events = rename_trace(run(seed), name)
        broken = sorted({f"{v.requirement} {v.rule}" for v in check_events(events)})
        if broken:
            return seed, events, broken
    return None


def regenerate(out: Path = SAMPLES_DIR) -> list[Path]:
    for sub in ("clean", "mutants"):
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)
    written: list[Path] = []
    index: dict[str, dict[str, object]] = {}
    for name, spec in mechanisms().items():
        for seed in CLEAN_SEEDS:
            ext = "parquet" if seed == CLEAN_SEEDS[-1] else "jsonl"
            path = out / "clean" / f"{name}-s{seed}.{ext}"
            write_events(path, spec.simulate(seed))
            written.append(path)
        for mutant, run in sorted(spec.mutants.items()):
            found = first_invalid(run, mutant)
            if found is None:
                index[f"{name}--{mutant}"] = {"seed": None, "breaks": [], "note": "no seed in range shows it"}
                continue
            seed, events, broken = found
            path = out / "mutants" / f"{name}--{mutant}.jsonl"
            write_events(path, events)
            written.append(path)
            index[path.name] = {"seed": seed, "breaks": broken}
    (out / "mutants" / "INDEX.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return written
