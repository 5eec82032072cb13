"""The pf monitor as a fold (`traces.verdict`: start, feed, finish, save and restore; issue 19).

For the model and every mutant: a trace folded in two segments, with the state saved and restored between
them (`save_fold`/`restore_fold`), gives exactly the MonitorResult of one pass, at fixed cut points (the
first event, the last, and between) and at a cut Hypothesis picks. Twins: continuing from a state saved at
another point, or from a fold that dropped its state, gives a different result on a mutant's trace, so the
comparison can fail. Context: fed inline, given at start, or both gives the same result (each context
event is taken once, `ContextCursor`). A fold that stopped judging stays stopped across a save and restore.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.check import trace_contexts
from model.pf.monitor import PfFold, PFMonitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate
from traces.schema import Event, is_context_kind
from traces.verdict import MonitorResult, Tally, Verdict, fold_all, in_seq_order, restore_fold, save_fold

pytestmark = pytest.mark.model

RUNS: dict[str, Callable[[int], list[Event]]] = {"model": simulate, **MUTANTS}
SEEDS = (1, 2)


@cache
def _trace(name: str, seed: int) -> tuple[Sequence[Event], tuple[Event, ...]]:
    events = in_seq_order(RUNS[name](seed))
    return events, tuple(trace_contexts(events).get(events[0].trace_id, []))


def _in_two(events: Sequence[Event], context: Sequence[Event], cut: int, resume: int | None = None) -> MonitorResult:
    """Events [0, cut) folded, the state saved and restored, then events [resume, end) (resume = cut)."""
    fold = PFMonitor().start(context)
    for e in events[:cut]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[cut if resume is None else resume :]:
        fold.feed(e)
    return fold.finish()


def _plain(r: MonitorResult) -> tuple:
    """A result as values: its verdict, violations, notes and tally (a `Tally` compares by identity)."""
    return (r.verdict, r.violations, r.notes, None if r.tally is None else (r.tally.judged, r.tally.unjudged))


def _cuts(n: int) -> list[int]:
    return sorted({0, 1, n // 4, n // 2, 3 * n // 4, n - 1, n})


@pytest.mark.parametrize("name", sorted(RUNS))
def test_two_segments_give_the_one_pass_result(name: str) -> None:
    for seed in SEEDS:
        events, context = _trace(name, seed)
        whole = _plain(fold_all(PFMonitor(), events, context))
        assert whole == _plain(PFMonitor().check(list(reversed(events)), context))  # check orders its input
        for cut in _cuts(len(events)):
            assert _plain(_in_two(events, context, cut)) == whole, (name, seed, cut)


@given(name=st.sampled_from(sorted(RUNS)), where=st.floats(min_value=0.0, max_value=1.0))
def test_a_save_and_restore_anywhere_changes_nothing(name: str, where: float) -> None:
    events, context = _trace(name, 1)
    cut = round(where * len(events))
    assert _plain(_in_two(events, context, cut)) == _plain(fold_all(PFMonitor(), events, context))


def test_several_saves_in_one_pass() -> None:
    events, context = _trace("never-backfill", 1)
    fold = PFMonitor().start(context)
    for i, e in enumerate(events):
        if i % 500 == 0:
            fold = restore_fold(save_fold(fold))
        fold.feed(e)
    assert _plain(fold.finish()) == _plain(fold_all(PFMonitor(), events, context))


class _Forgetful(PfFold):
    """The twin of a state that is saved whole: a fold whose pickle keeps only its context."""

    def __reduce__(self) -> tuple[type, tuple[Sequence[Event]]]:
        return (type(self), (list(self.cursor.events),))


def test_twin_a_state_from_elsewhere_or_dropped_differs() -> None:
    events, context = _trace("answer-non-subset", 1)
    whole = fold_all(PFMonitor(), events, context)
    assert whole.verdict is Verdict.INVALID
    half = len(events) // 2
    assert _in_two(events, context, half // 2, resume=half) != whole  # saved earlier: events skipped
    assert _in_two(events, context, half, resume=half // 2) != whole  # saved later: events twice
    fold = _Forgetful(context)
    for e in events[:half]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[half:]:
        fold.feed(e)
    assert fold.finish() != whole


@pytest.mark.parametrize("name", ["model", "never-backfill", "delete-without-status", "ignore-backfill-timeout"])
def test_context_inline_at_start_or_both_is_taken_once(name: str) -> None:
    for seed in SEEDS:
        events, context = _trace(name, seed)
        assert context and all(any(c is e for e in events) for c in context)
        both = fold_all(PFMonitor(), events, context)
        inline = fold_all(PFMonitor(), events, ())
        at_start = fold_all(PFMonitor(), [e for e in events if not is_context_kind(e.kind)], context)
        assert _plain(both) == _plain(inline) == _plain(at_start), (name, seed)


def test_no_config_before_the_first_pf_event_stays_unknown() -> None:
    events, _ = _trace("model", 1)
    stripped = [e for e in events if e.kind != "PF_CONFIG"]
    first_pf = next(e for e in stripped if e.mechanism == "pf")
    expected = MonitorResult.of(
        (),
        [f"{first_pf.event_id}: no PF_CONFIG before the first pf event: the configuration to judge by is unknown"],
        tally=Tally(),
    )
    assert _plain(PFMonitor().check(stripped)) == _plain(expected)
    assert _plain(_in_two(stripped, (), len(stripped) // 2)) == _plain(expected)  # a stopped fold stays stopped


def test_a_stopped_fold_ignores_later_events() -> None:
    events, context = _trace("model", 1)
    at = next(i for i, e in enumerate(events) if e.kind == "REPL_SEND")
    broken = replace(events[at], attrs={})  # unreplayable: judging stops with a note
    fold = PFMonitor().start(context)
    for e in [*events[:at], broken]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[at + 1 :]:
        fold.feed(e)
    result = fold.finish()
    assert result.verdict is Verdict.UNKNOWN and result.notes[-1].startswith(f"{broken.event_id}: cannot replay")
    assert len(save_fold(fold)) < 4000  # nothing but the verdict is kept
