"""The shipped sample corpus: where it lives, its seeds, and the renaming of a mutant's trace.

`haconform samples` rewrites it (`conformance.samples`, above the checker it runs); the output depends
only on the models and the seeds, so a regeneration that changes files means a model changed. `clean/`
must check clean. Each file in `mutants/` holds one run of a mutant under its own trace ID
(`<trace>~<mutant>`, so that a corpus can mix them), taken at the first seed from `MUTANT_SEEDS` whose
trace the pure-Python checker judges invalid; `mutants/INDEX.json` records the seed and the rules each
file breaks.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

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
