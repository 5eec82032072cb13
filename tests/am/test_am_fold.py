"""The Active Manager monitor as a fold (issue 19): save and restore anywhere, context inline or at start.

Seed 002, all sections (the rules are those of `model/am/rules.py`). For the model and every mutant, on a
few seeds, each group the engines form (`conformance.check.group_for`, with `trace_contexts`) is judged
in one pass and in two segments with the fold's state saved (`traces.verdict.save_fold`) and restored
between them: the results must be the same, at every cut point tried (0 and the group's length
included). A Hypothesis property does the same at a random cut; its twin restores a state saved at
another point and must get another result on a mutant's trace. Context events fed inline, whether or
not also given at start, must give the result of the context given at start.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.check import group_for, trace_contexts
from model.am.monitor import AmFold, AmMonitor
from model.am.mutants import MUTANTS, SIMULATORS
from model.am.sim import simulate
from traces.schema import Event
from traces.verdict import Fold, MonitorResult, Verdict, fold_all, restore_fold, save_fold

pytestmark = pytest.mark.model

RUNS = ("model", *sorted(MUTANTS))
SEEDS = (1, 2, 3)


@cache
def groups(run: str, seed: int) -> tuple[tuple[tuple[Event, ...], tuple[Event, ...]], ...]:
    """Each group of one trace with its trace's context, as the engines give them."""
    events = simulate(seed) if run == "model" else SIMULATORS[run](seed)
    contexts = trace_contexts(events)
    return tuple((tuple(g), tuple(contexts.get(g[0].trace_id, []))) for g in group_for(AmMonitor(), events))


def in_two(group: Sequence[Event], context: Sequence[Event], cut: int, resume_at: int | None = None) -> MonitorResult:
    """Fold `group[:cut]`, save and restore the state, fold the rest from `resume_at` (default: `cut`)."""
    fold = AmMonitor().start(context)
    for e in group[:cut]:
        fold.feed(e)
    again = restore_fold(save_fold(fold))
    for e in group[cut if resume_at is None else resume_at :]:
        again.feed(e)
    return again.finish()


def cuts(n: int) -> list[int]:
    return sorted({0, 1, n // 3, n // 2, (2 * n) // 3, n - 1, n} & set(range(n + 1)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("run", RUNS)
def test_two_segments_with_a_saved_state_give_one_pass(run: str, seed: int) -> None:
    for group, context in groups(run, seed):
        one = fold_all(AmMonitor(), group, context)
        assert one == AmMonitor().check(group, context)
        for cut in cuts(len(group)):
            assert in_two(group, context, cut) == one, (run, seed, group[0].entity, cut)


def test_the_fold_is_a_fold_and_pickles_at_any_point() -> None:
    fold = AmMonitor().start()
    assert isinstance(fold, Fold) and isinstance(fold, AmFold)
    group, context = groups("model", 1)[0]
    fold = AmMonitor().start(context)
    for e in group:
        fold.feed(e)
        fold = restore_fold(save_fold(fold))  # saved and restored after every event
    assert fold.finish() == fold_all(AmMonitor(), group, context)


@settings(max_examples=60, deadline=None)
@given(run=st.sampled_from(RUNS), seed=st.sampled_from(SEEDS), which=st.integers(0, 10), at=st.floats(0, 1))
def test_property_any_cut_gives_one_pass(run: str, seed: int, which: int, at: float) -> None:
    all_groups = groups(run, seed)
    group, context = all_groups[which % len(all_groups)]
    cut = round(at * len(group))
    assert in_two(group, context, cut) == fold_all(AmMonitor(), group, context)


@pytest.mark.parametrize("run", sorted(MUTANTS))
def test_twin_a_state_saved_at_another_point_changes_a_mutant_verdict(run: str) -> None:
    """The twin: resuming from the state saved at the start (not where the rest begins) misses what the first
    segment found, so the comparison above would catch a save or restore that lost state."""
    for seed in SEEDS:
        for group, context in groups(run, seed):
            one = fold_all(AmMonitor(), group, context)
            if one.verdict is not Verdict.INVALID:
                continue
            first = min(i for i, e in enumerate(group) if e.event_id in one.violations[0].event_ids)
            assert in_two(group, context, 0, resume_at=first + 1) != one
            assert in_two(group, context, first + 1) == one
            return
    pytest.fail(f"{run}: no invalid group on seeds {SEEDS}")


def merged(group: Sequence[Event], context: Sequence[Event]) -> list[Event]:
    """The group with its trace's `am` context events inline, in sequence order, each event once."""
    seen = {e.seq for e in group}
    return sorted([*group, *(c for c in context if c.mechanism == "am" and c.seq not in seen)], key=lambda e: e.seq)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("run", RUNS)
def test_context_inline_or_at_start_gives_the_same_result(run: str, seed: int) -> None:
    for group, context in groups(run, seed):
        at_start = fold_all(AmMonitor(), group, context)
        inline = merged(group, context)
        assert fold_all(AmMonitor(), inline, context) == at_start  # given at start and fed inline too
        assert fold_all(AmMonitor(), [context[0], *inline], ()) == at_start  # inline only (TRACE_START first)
        half = len(group) // 2
        late = [c for c in context if c.seq > group[half].seq or c.kind == "TRACE_START"]
        assert fold_all(AmMonitor(), merged(group, context), late) == at_start  # part known at start


def test_no_dag_facts_is_decided_at_finish_whatever_the_cut() -> None:
    """A database group whose context records no DAG facts is unknown (tests/handbuilt/am `no_dag_facts`):
    the flags that decide it are state like any other, saved and restored with the fold."""
    from tests.handbuilt.am.cases import CASES

    events = CASES["no_dag_facts"][1]().events
    contexts = trace_contexts(events)
    verdicts = set()
    for group in group_for(AmMonitor(), events):
        context = contexts.get(group[0].trace_id, [])
        one = fold_all(AmMonitor(), group, context)
        verdicts.add(one.verdict)
        for cut in cuts(len(group)):
            assert in_two(group, context, cut) == one
    assert verdicts == {Verdict.VALID, Verdict.UNKNOWN}  # the DAG's group, and the database's
    assert AmMonitor().check(events).verdict is Verdict.VALID  # the whole trace folds the DAG events


def test_a_malformed_event_stops_the_fold_the_same_whatever_the_cut() -> None:
    """A COPY_STATE without its server stops the replay there: violations before it, a note saying where."""
    import dataclasses

    group, context = groups("model", 1)[1]
    i = next(i for i, e in enumerate(group) if e.kind == "COPY_STATE" and i > len(group) // 2)
    broken = [*group[:i], dataclasses.replace(group[i], attrs={"status": "Healthy"}), *group[i + 1 :]]
    one = fold_all(AmMonitor(), broken, context)
    assert one.verdict is Verdict.UNKNOWN and one.notes[-1].startswith(
        f"am monitor stopped at COPY_STATE seq {group[i].seq}"
    )
    for cut in cuts(len(broken)):
        assert in_two(broken, context, cut) == one
