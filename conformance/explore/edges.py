"""The edge verdict without a full copy of the folds (issue 33, "judges each edge from the source state's saved
fold"; session 15).

Every transition is judged by the mechanism's monitor: the source state's saved fold is fed the step's events
(`state.feed_folds`) and finished as if the trace ended there. `finish` changes a fold (deferred checks taken,
counts moved into the tally), and the state goes on past the edge, so a copy is finished, never the fold itself.
Session 13 copied the whole fold tree by a pickle round trip (`state.copy_folds`: on sr 13.6% of exploring,
session 15's profile /work/s15/D-before-*). Here each fold component is copied only as deep as its `finish`
writes (copy-on-write at finish, decided per class):

- the trace's folds (`conformance.engine.stream.TraceFolds`) and each group's (`conformance.engine.folds.
  GroupFolds`): new containers over the copied folds, made by their own `finish_copy` (session 17: `cdef class`es
  in the compiled build, which `object.__new__` cannot make); the context list is shared (only `feed` appends to
  it);
- the core rules' fold: `TraceRulesFold.finish_copy` (its tally and three counts are what `finish` writes);
- a monitor's fold that declares `finish_copy()` (sr: `model.sr.monitor.SrFold.finish_copy`, its violations,
  the world's deferred checks and tally copied, the rest of the world shared).

A fold without `finish_copy` (pf, am, the buffered monitors), or one whose `finish_copy` returns None (sr with
context events left for `finish` to feed), sends the whole tree through `state.copy_folds`, as before. What a
`finish_copy` shares must be what its `finish` only reads: tests/explore/test_edge_copy.py checks, on every edge
of sr's default bounds, that the verdict is the reference's and that the source state's folds are byte-identical
(pickled) after it; its twin shares a component `finish` writes (the world's tally, its deferred checks) and is
caught.
"""

from __future__ import annotations

from typing import Any

from conformance.engine.stream import TraceFolds, result_of
from conformance.explore.state import copy_folds, feed_folds
from conformance.harness.core import Session
from conformance.harness.failure import judging


def finish_copies(traces: dict[str, Any]) -> dict[str, Any] | None:
    """Copies of every trace's folds for `finish`, each as deep as its finish writes; None when one of them cannot
    be copied so (the caller pickles the whole tree, `state.copy_folds`)."""
    out = {}
    for trace, folds in traces.items():
        copied = folds.finish_copy() if type(folds) is TraceFolds else None
        if copied is None:
            return None
        out[trace] = copied
    return out


def edge_verdict(s: Session) -> tuple[list[Any], list[str]]:
    """`s.judge(final=True)`, the folds going on, without `Incremental.verdict`'s copy: the folds fed the events
    recorded since, and copies of them (`finish_copies`, else `copy_folds`) finished (rule code's errors raised as
    internal ones). A session whose folds `Session.judge` would rebuild or judge by the slow path (none yet, out of
    seq order) is judged by it as it is."""
    feed_folds(s)
    inc, (n, last) = s.incremental, s.fed
    events = s.events()
    if inc is None or not inc.exact() or n != len(events) or (events and events[-1] is not last):
        return s.judge(final=True)
    held = inc.router.traces
    traces = finish_copies(held)
    if traces is None:
        traces = copy_folds(held)
    result = judging(f"the {s.driver.name} monitor", lambda: result_of(traces[t].finish() for t in sorted(traces)))
    s.judged = len(events)
    return list(result.violations), list(result.notes)
