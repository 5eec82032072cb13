"""The shipped sample corpus: clean traces of every mechanism model and one trace per mutant.

`haconform samples` rewrites it; the output depends only on the models and the seeds, so a regeneration
that changes files means a model changed. `clean/` must check clean. Each file in `mutants/` holds one
run of a mutant under its own trace ID (`<trace>~<mutant>`, so that a corpus can mix them), taken at the
first seed from `MUTANT_SEEDS` whose trace the pure-Python checker judges invalid; `mutants/INDEX.json`
records the seed and the rules each file breaks.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from traces.io import write_events
from traces.schema import Event

CLEAN_SEEDS = (1, 2, 3)
MUTANT_SEEDS = tuple(range(1, 21))
SAMPLES_DIR = Path(__file__).resolve().parent / "samples"


def rename_trace(events: list[Event], suffix: str) -> list[Event]:
    """The same events under trace ID `<trace>~<suffix>` (event IDs and trace-named entities follow)."""
    out = []
    for e in events:
        trace = e.trace_id if e.trace_id.endswith("~" + suffix) else f"{e.trace_id}~{suffix}"
        out.append(
            dataclasses.replace(
                e,
                trace_id=trace,
                event_id=trace + e.event_id[len(e.trace_id) :] if e.event_id.startswith(e.trace_id) else e.event_id,
                entity=trace if e.entity == e.trace_id else e.entity,
            )
        )
    return out


def first_invalid(run: Callable[[int], list[Event]], name: str) -> tuple[int, list[Event], list[str]] | None:
    """The first seed whose mutant trace breaks some rule, with the trace and the rules broken."""
    from conformance.check import check_events

    for seed in MUTANT_SEEDS:
        events = rename_trace(run(seed), name)
        broken = sorted({f"{v.requirement} {v.rule}" for v in check_events(events)})
        if broken:
            return seed, events, broken
    return None


def regenerate(out: Path = SAMPLES_DIR) -> list[Path]:
    from model.registry import mechanisms

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
