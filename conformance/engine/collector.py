"""The cyclic garbage collector during a check: paused, and run at known points instead.

A check builds millions of short-lived objects (an event, its attrs) that reference counting frees at
once, beside fold state that lives for the whole run. Python's generational collector counts allocations,
not garbage: at 10^6 events it ran 34 full collections, each walking every live object of the folds, for
a third of the run's time (benchmarks/README.md, session 5), and found nothing to collect. The engines
pause it for the run and collect once every `every` events they read (a group's worth), so cycles that do
arise (a fold dropped with a bound-method cache on itself) are freed at a bounded delay. After each
collection the survivors are frozen (`gc.freeze`: the collector no longer walks them, reference counting
still frees them), so a collection walks only what was built since the last one; on leaving they are
unfrozen and the collector's earlier state restored.

A process that froze objects of its own before the run keeps them frozen: the Spark worker daemon freezes the
engine it preloads before it forks its workers (`spark_trace_check.worker_daemon`), and pyspark collects after
every task a reused worker runs. Unfreezing there (session 15 and before) put those objects back under every
later collection of every worker: each task's collection walked them all and wrote to their pages, which then
stopped being shared with the daemon. In such a process the run's collections are not followed by a freeze
(there is no partial unfreeze), so they walk the run's live objects, one collection per `every` events.
"""

from __future__ import annotations

import gc
from types import TracebackType

EVERY = 500_000  # events read between two collections (the single-process engine's group size)


class PausedCollector:
    """`with PausedCollector() as c: ... c.read(n) ...`: the collector is off inside, and runs every `every`
    events counted by `read`; its earlier state is restored on leaving."""

    __slots__ = ("count", "every", "freezes", "was_on")

    def __init__(self, every: int = EVERY) -> None:
        self.every, self.count, self.was_on, self.freezes = every, 0, False, False

    def __enter__(self) -> PausedCollector:
        self.was_on = gc.isenabled()
        self.freezes = gc.get_freeze_count() == 0  # nothing frozen before: this run may freeze and unfreeze
        gc.disable()
        return self

    def read(self, n: int) -> None:
        self.count += n
        if self.count >= self.every:
            self.count = 0
            gc.collect()
            if self.freezes:
                gc.freeze()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.freezes:
            gc.unfreeze()
        if self.was_on:
            gc.enable()
