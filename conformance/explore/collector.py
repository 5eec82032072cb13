"""The cyclic garbage collector while a search runs (issue 33, explorer speed).

A search allocates and drops a copy of the model's state for nearly every edge. Since session 19 those copies are
released when done with (`conformance.explore.state.release`), so reference counting frees them and the cyclic
collector finds next to nothing; what it still did was trace every young object each 700 allocations.
`few_collections` raises that first threshold for the search's duration. Measured on sr-3s-2m-2f-d5's level plan,
compiled: the collector 9.6% of the CPU before the release, 4.3% with the release alone, 0.13% with the threshold
too; the plan from 44.9 to 40.2 CPU s (benchmarks/README.md, "Session 19"). The older generations' thresholds stay
as they are, and so do the caller's settings after the search.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 10_000  # allocations between two collections of the youngest generation (CPython's default: 700)


@contextmanager
def few_collections(young: int = YOUNG) -> Iterator[None]:
    """Collect the youngest generation every `young` allocations (never less often than the caller had it)."""
    before = gc.get_threshold()
    gc.set_threshold(max(young, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
