"""Session 23 (issue 33, "On Spark"): a level's frontier regrouped by its states' ancestors before it is expanded
(`Job.regroup`, off by default; `levels.kin_bucket`, `levels.kin_up`), so a child that two states of one
ancestor's paths make (commuting steps) is made, frozen and its fairness end judged in one task, once. The figures
(states, transitions, per level, depth, verdict, shortest path) are those of the single-process explorer whatever
the grouping. Twins: a regrouping that loses a frontier row changes the figures (so the comparison tells), and the
plan without regrouping judges more ends on the same bound (so the count tells)."""

from __future__ import annotations

import pytest

from conformance.explore import levels
from conformance.explore.bfs import explore
from conformance.explore.levels import Job, kin_bucket, kin_up, packing, regrouped
from conformance.explore.manifest import find
from tests.explore.test_spark_ends import _counted, figures


@pytest.mark.unit
def test_kin_up_goes_as_far_up_as_the_levels_spread_the_frontier() -> None:
    job = Job(find("sr-2s-1m-crash").bound, regroup=3)
    assert kin_up(job, [1, 5, 50, 285, 1828, 10367, 52937], 2) == 3  # level 3's 285 ancestors >= 64 x 2
    assert kin_up(job, [1, 5, 50, 285, 1828], 2) == 1  # levels 1 and 2 hold too few: level 3's 285
    assert kin_up(job, [1, 5, 50, 285], 2) == 0  # no level above holds 128
    assert kin_up(job, [1, 5, 50, 285, 1828, 10367], 2) == 2  # level 2's 50 are too few: level 3's
    assert kin_up(job, [1, 5, 50, 285, 1828, 10367], 8) == 1  # 8 partitions want 512 ancestors: level 4's


@pytest.mark.unit
def test_the_frontier_is_not_regrouped_unless_asked() -> None:
    assert Job(find("sr-2s-1m-crash").bound).regroup == 0
    assert kin_up(Job(find("sr-2s-1m-crash").bound), [1, 500, 5000, 50000], 2) == 0


@pytest.mark.unit
def test_packing_puts_the_largest_group_first_into_the_least_loaded_partition() -> None:
    where = packing({1: 50, 2: 40, 3: 30, 4: 20, 5: 10}, 2)
    loads = [sum(n for g, n in {1: 50, 2: 40, 3: 30, 4: 20, 5: 10}.items() if where[g] == p) for p in range(2)]
    assert sorted(loads) == [70, 80] and where[1] != where[2]
    assert set(packing({7: 1}, 4).values()) == {0}


@pytest.mark.unit
def test_regrouped_keeps_every_row_and_puts_an_ancestors_states_together() -> None:
    rows = [(f"fp{a}{b}{c}", (0, (a,), (b,), (c,)), b"") for a in range(4) for b in range(3) for c in range(2)]
    tasks = regrouped([rows[:10], rows[10:]], 3, 2)
    assert sorted(r for t in tasks for r in t) == sorted(rows)
    home = {r[0]: i for i, t in enumerate(tasks) for r in t}
    for r in rows:  # every state below one level-1 ancestor is in one task
        assert all(home[q[0]] == home[r[0]] for q in rows if q[1][:2] == r[1][:2])
    assert sorted(len(t) for t in tasks) == [6, 6, 12]  # 4 groups of 6 packed into 3 tasks
    assert kin_bucket(rows[0][1], 2) == kin_bucket(rows[1][1], 2)  # siblings' and cousins' ancestor is the same key


@pytest.mark.model
@pytest.mark.parametrize("up", [1, 2, 3])
@pytest.mark.parametrize("name,mutant", [("sr-2s-1m-crash", None), ("sr-2s-1m-crash", "no-duplicate-detection")])
def test_a_regrouped_plan_has_the_single_process_figures(monkeypatch, name: str, mutant: str | None, up: int) -> None:
    monkeypatch.setattr(levels, "KIN_GROUPS", 1)  # regroup at the default bounds' small levels too
    b = find(name).bound
    got, _ = _counted(monkeypatch, Job(b, mutant, regroup=up), partitions=3)
    assert figures(got) == figures(explore(b, mutant))
    assert (got.found is not None) == (mutant is not None)  # the mutant is found at a fairness end, at depth 3


@pytest.mark.model
def test_a_regrouped_plan_judges_fewer_ends_and_the_plan_without_judges_more(monkeypatch) -> None:
    monkeypatch.setattr(levels, "KIN_GROUPS", 1)
    b = find("sr-2s-1m-partition").bound  # 534 new states; at 4 partitions 637 ends not regrouped, 583 regrouped
    plain, plain_ends = _counted(monkeypatch, Job(b, regroup=0, ends_after_shuffle=False), partitions=4)
    kin, kin_ends = _counted(monkeypatch, Job(b, regroup=3, ends_after_shuffle=False), partitions=4)
    assert figures(plain) == figures(kin) == figures(explore(b))
    new = kin.states - kin.per_level[0]
    assert new <= kin_ends < plain_ends  # the duplicates across tasks: regrouping keeps most of them in one task


@pytest.mark.model
def test_twin_a_regrouping_that_loses_a_row_changes_the_figures(monkeypatch) -> None:
    monkeypatch.setattr(levels, "KIN_GROUPS", 1)

    def lossy(tasks, partitions, up):
        out = regrouped(tasks, partitions, up)
        biggest = max(out, key=len)
        biggest.pop()
        return out

    monkeypatch.setattr(levels, "regrouped", lossy)
    b = find("sr-2s-1m-crash").bound
    got, _ = _counted(monkeypatch, Job(b, regroup=2), partitions=3)
    assert figures(got) != figures(explore(b))


@pytest.mark.spark
def test_spark_regroups_the_frontier_with_the_single_process_figures(monkeypatch, spark) -> None:
    from spark_trace_check.explore import run_spark

    monkeypatch.setattr(levels, "KIN_GROUPS", 1)  # `kin_up` runs in the driver: this process
    b = find("sr-2s-1m-crash").bound
    for mutant in (None, "no-duplicate-detection"):
        got = run_spark(spark, Job(b, mutant, regroup=2), partitions=2)
        assert figures(got) == figures(explore(b, mutant)), mutant
