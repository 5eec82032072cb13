"""The edge verdict without a full copy of the folds (issue 33, "judges each edge from the source state's saved
fold"; session 15).

Every transition is judged by the mechanism's monitor: the source state's saved fold is fed the step's events
(`state.feed_folds`) and finished as if the trace ended there. `finish` changes a fold (deferred checks taken,
counts moved into the tally), and the state goes on past the edge, so a copy is finished, never the fold itself.
Session 13 copied the whole fold tree by a pickle round trip (`state.copy_folds`: on sr 13.6% of exploring,
session 15's profile /work/s15/D-before-*). Here each fold component is copied only as deep as its `finish`
writes (copy-on-write at finish, decided per class):

- the trace's folds (`conformance.engine.stream.TraceFolds`) and each group's (`conformance.engine.folds.
  GroupFolds`): new containers over the copied folds; the context list is shared (only `feed` appends to it);
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


def _fold_copy(fold: Any) -> Any | None:
    """The fold's own `finish_copy()`, or None when it has none (or declines: the caller copies everything)."""
    finish_copy = getattr(fold, "finish_copy", None)
    return finish_copy() if finish_copy is not None else None


def _group_copy(group: Any) -> Any | None:
    """A `GroupFolds` over copies of its folds (`finish` reads its other slots: scope, first, seen, strange)."""
    folds = []
    for name, mechanism, fold in group.folds:
        copied = _fold_copy(fold)
        if copied is None:
            return None
        folds.append((name, mechanism, copied))
    new = object.__new__(type(group))
    for slot in type(group).__slots__:
        setattr(new, slot, getattr(group, slot))
    new.folds = folds
    return new


def _trace_copy(folds: TraceFolds) -> TraceFolds | None:
    """A `TraceFolds` whose `finish()` gives what `folds`'s would, `folds` left as it is; None when a fold of it
    has no `finish_copy`."""
    core = _fold_copy(folds.core)
    trace = _group_copy(folds.trace) if folds.trace is not None else None
    if core is None or (folds.trace is not None and trace is None):
        return None
    entities = {}
    for key, group in folds.entities.items():
        entities[key] = _group_copy(group)
        if entities[key] is None:
            return None
    new = object.__new__(TraceFolds)
    new.context, new.core, new.trace, new.entity_runs, new.entities = (
        folds.context,
        core,
        trace,
        folds.entity_runs,
        entities,
    )
    return new


def finish_copies(traces: dict[str, Any]) -> dict[str, Any] | None:
    """Copies of every trace's folds for `finish`, each as deep as its finish writes; None when one of them cannot
    be copied so (the caller pickles the whole tree, `state.copy_folds`)."""
    out = {}
    for trace, folds in traces.items():
        copied = _trace_copy(folds) if type(folds) is TraceFolds else None
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
