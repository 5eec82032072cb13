"""Session 14 (issue 33): the Spark plan judges each new state's fairness end once, after the shuffle, where the
state settles (`levels.settle`, `Job.settles_ends`), instead of once per task that meets the state before it
(session 13: about a quarter of the new states judged twice; sr-2s-1m-choices with 4 partitions 205 of 394).
The figures (states, transitions, per level, depth, verdict, shortest path, the end's resolution) are those of
the single-process explorer. Twins: the plan judging before the shuffle judges more ends than states (so the
count tells), and a partition that drops its pending ends misses a mutant found at a fairness end."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore import levels
from conformance.explore.bfs import Result, explore
from conformance.explore.levels import Job, run_levels
from conformance.explore.manifest import find, load
from conformance.harness.search import driver


def figures(res: Result) -> tuple[Any, ...]:
    f = res.found
    verdict = None if f is None else (f.kind, f.rule, f.requirement, f.explanation, f.steps, f.start, f.end)
    return res.states, res.transitions, res.per_level, res.depth, res.complete, verdict


def _counted(monkeypatch, job: Job, partitions: int = 4) -> tuple[Result, int]:
    """The plan's figures and how many fairness ends its levels judged (the roots' are judged by `level_zero`), on a
    fresh expander."""
    monkeypatch.setattr(levels, "_EXPANDERS", {})
    count = [0]
    real = levels.Expanding.end_of

    def end_of(self, node):
        count[0] += 1
        return real(self, node)

    monkeypatch.setattr(levels.Expanding, "end_of", end_of)
    return run_levels(job, partitions=partitions), count[0]


@pytest.mark.model
@pytest.mark.parametrize("name", ["sr-2s-1m-choices", "pf-2s-1f-replicas"])
def test_ends_after_the_shuffle_are_judged_once_per_state_with_the_same_figures(monkeypatch, name: str) -> None:
    b = find(name).bound
    assert Job(b).settles_ends()  # the end's choices branched: auto judges ends after the shuffle
    after, ends = _counted(monkeypatch, Job(b))
    assert figures(after) == figures(explore(b))
    assert ends == after.states - after.per_level[0]  # every new state's end once (the roots': `level_zero`)


@pytest.mark.model
def test_twin_ends_judged_before_the_shuffle_are_judged_more_often_than_states(monkeypatch) -> None:
    b = find("sr-2s-1m-choices").bound
    before, ends = _counted(monkeypatch, Job(b, ends_after_shuffle=False))
    assert figures(before) == figures(explore(b))
    assert ends > before.states - before.per_level[0]  # the duplicates across tasks: the count above catches them


@pytest.mark.model
def test_auto_judges_before_the_shuffle_where_an_end_costs_less_than_a_copy() -> None:
    assert not Job(find("sr-2s-1m-crash").bound).settles_ends()  # choices off: the end makes no choice of its own
    assert not Job(find("am-3s-1db-crash-partition").bound).settles_ends()  # am's end does nothing
    assert not Job(find("pf-2s-1f-replicas").bound, ends=False).settles_ends()


@pytest.mark.model
@pytest.mark.parametrize("partitions", [1, 3])
def test_a_mutant_found_at_an_end_after_the_shuffle_is_found_at_the_same_depth_by_the_same_path(
    monkeypatch, partitions: int
) -> None:
    b = find("sr-2s-1m-crash").bound
    got, _ = _counted(monkeypatch, Job(b, "no-duplicate-detection", ends_after_shuffle=True), partitions)
    assert got.found is not None and (got.found.kind, got.found.depth) == ("end", 3)
    assert figures(got) == figures(explore(b, "no-duplicate-detection"))


@pytest.mark.model
def test_twin_a_partition_that_drops_its_pending_ends_misses_the_mutant(monkeypatch) -> None:
    real = levels.settle

    def settle(visited, reduced, judge=None, last=False):
        return real(visited, reduced, (lambda node: None) if judge is not None else None, last)

    monkeypatch.setattr(levels, "settle", settle)
    b = find("sr-2s-1m-crash").bound
    got, _ = _counted(monkeypatch, Job(b, "no-duplicate-detection", ends_after_shuffle=True))
    assert got.found is None  # found at depth 3 when the pending ends are judged (above)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["sr", "pf"])
def test_every_mutant_is_found_by_the_plan_with_ends_after_the_shuffle_as_by_one_process(mechanism: str) -> None:
    """Each mutant in its mutant bound (its own rules armed, as the kill report): the level plan with its ends after
    the shuffle (pf: auto, its choices branched; sr: forced, `choices = false`) finds it at the same depth, by the
    same path and end resolution, as the single-process explorer (session 14: both about 5 min, shared)."""
    mb = load()[1][mechanism]
    differ = []
    for name, rules in sorted(driver(mechanism).mutants().items()):
        b, watch = mb.for_mutant(name), frozenset(rules)
        levels._EXPANDERS.clear()
        got = run_levels(Job(b, name, watch, ends_after_shuffle=True if mechanism == "sr" else None), partitions=3)
        if figures(got) != figures(explore(b, name, watch=watch)):
            differ.append(name)
    levels._EXPANDERS.clear()
    assert differ == []


@pytest.mark.unit
def test_a_pending_end_without_a_judge_is_an_error_not_a_state_without_an_end() -> None:
    cand = levels.Candidate((0, 1), None, None, 0, pending=True)
    with pytest.raises(ValueError, match="pending"):
        levels.settle(set(), [("ab" * 32, cand)])


@pytest.mark.spark
def test_spark_judges_pending_ends_where_states_settle_with_the_single_process_figures(spark) -> None:
    from spark_trace_check.explore import run_spark

    for name in ("sr-2s-1m-choices", "pf-2s-1f-replicas"):
        b = find(name).bound
        assert figures(run_spark(spark, Job(b), partitions=2)) == figures(explore(b)), name
    b = find("sr-2s-1m-crash").bound
    got = run_spark(spark, Job(b, "no-duplicate-detection", ends_after_shuffle=True), partitions=2)
    assert figures(got) == figures(explore(b, "no-duplicate-detection"))
