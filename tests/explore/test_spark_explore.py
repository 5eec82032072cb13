"""Exploration on Spark (issue 33): the level-synchronous plan (`conformance.explore.levels`, and
`spark_trace_check.explore` on `local[2]`) gives the single-process explorer's figures: states, transitions,
states per level, depth, completeness, verdict and shortest path, on every default manifest bound, for mutants
found at depth 2 to 4 (on an edge and at a fairness end), and where `max_states` stops the search mid-level.
Twin: a partition function that changes between levels (the visited sets no longer meet their candidates)
gives other counts, and the manifest comparison says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.explore.bfs import Result, explore
from conformance.explore.cli import choose_engine
from conformance.explore.levels import Buckets, Job, run_levels
from conformance.explore.manifest import compare, find, load

FAST = [e for e in load()[0] if not e.slow]
AM = "am-3s-1db-crash-partition"
# (bound, mutant, kind of the violation, depth): mutants found past depth 1 at a default bound, and one found from
# a root other than the first (session 13: am's `sam-activates`, depth 2 from the seeded PAM holder, 1 from root 1)
DEEP = [
    ("sr-2s-1m-crash", "early-promotion", "always", 4),
    ("sr-2s-1m-crash", "no-duplicate-detection", "end", 3),
    (AM, "sam-activates", "always", 1),
]


def figures(res: Result) -> tuple[Any, ...]:
    f = res.found
    verdict = None if f is None else (f.kind, f.rule, f.requirement, f.explanation, f.steps, f.start)
    return res.states, res.transitions, res.per_level, res.depth, res.complete, verdict


class Salted(Buckets):
    """A partition function that is not a function of the key alone: it moves every key each level."""

    def next_level(self) -> None:
        self.salt += 1


# --- the plan in one process ------------------------------------------------------------------------------------
@pytest.mark.model
@pytest.mark.parametrize("entry", FAST, ids=[e.bound.name for e in FAST])
def test_levels_give_the_single_process_figures(entry) -> None:
    got = run_levels(Job(entry.bound), entry.max_states, partitions=3)
    assert figures(got) == figures(explore(entry.bound, max_states=entry.max_states))
    assert compare(entry, got) == []


@pytest.mark.model
@pytest.mark.parametrize(("bound", "mutant", "kind", "depth"), DEEP)
def test_levels_find_a_mutant_at_the_same_depth_by_the_same_path(bound: str, mutant: str, kind: str, depth: int):
    b = find(bound).bound
    got = run_levels(Job(b, mutant), partitions=3)
    assert got.found is not None and (got.found.kind, got.found.depth) == (kind, depth)
    assert figures(got) == figures(explore(b, mutant))


@pytest.mark.model
@pytest.mark.parametrize("max_states", [1, 2, 8, 9, 30, -1, 0])
def test_levels_stop_at_max_states_where_the_single_process_stops(max_states: int) -> None:
    entry = find(AM)  # -1, 0: one state short of the bound's pinned count, and the count itself
    limit = max_states if max_states > 0 else entry.states + max_states
    b = entry.bound
    assert figures(run_levels(Job(b), limit)) == figures(explore(b, max_states=limit))


@pytest.mark.model
def test_twin_a_partition_function_that_moves_keys_between_levels_counts_states_twice() -> None:
    entry = find(AM)  # the visited sets per partition alone decide (no states skipped before the shuffle)
    got = run_levels(Job(entry.bound, skip_known=False), partitions=2, buckets=Salted())
    assert got.states > entry.states
    assert any("distinct states" in d for d in compare(entry, got))


# --- at scale (issue 33, "Larger pinned bounds"): the last level keeps no states; progress says bytes -----------
def _spy_settle(monkeypatch, force_last: bool = False) -> list[list[bool]]:
    """Record, per call of `levels.settle`, which new states kept no node (`force_last`: every level expanded as if
    it were the bound's last)."""
    from conformance.explore import levels

    real_settle, real_expand, calls = levels.settle, levels.expand_all, []

    def expand_all(ex, rows, ends, last, before=(), pending=False):
        return real_expand(ex, rows, ends, last or force_last, before, pending)

    def settle(visited, reduced, judge=None, last=False):
        out = real_settle(visited, reduced, judge, last)
        calls.append([n.node is None for n in out.new])
        return out

    monkeypatch.setattr(levels, "settle", settle)
    monkeypatch.setattr(levels, "expand_all", expand_all)
    return calls


@pytest.mark.model
def test_the_last_level_keeps_no_state_and_loses_nothing(monkeypatch) -> None:
    calls = _spy_settle(monkeypatch)
    entry = find(AM)
    got = run_levels(Job(entry.bound), partitions=2)
    assert figures(got) == figures(explore(entry.bound))
    last, earlier = calls[-2:], calls[:-2]  # two partitions a level
    assert all(all(n) for n in last) and sum(map(len, last)) == got.per_level[-1]
    assert not any(any(nones) for nones in earlier)  # earlier levels keep every node


@pytest.mark.model
def test_twin_a_level_that_drops_its_states_before_the_last_cannot_go_on(monkeypatch) -> None:
    _spy_settle(monkeypatch, force_last=True)
    with pytest.raises(AttributeError):  # the next level has no node to expand
        run_levels(Job(find(AM).bound), partitions=2)


def _restores(monkeypatch, bound, thaw_for_end: bool = False) -> tuple[int, int]:
    """States restored from a blob by the level plan and by the single-process explorer (`thaw_for_end`: the
    plan judges each fairness end on a copy restored from the blob, as after the shuffle before session 12)."""
    from conformance.explore import levels

    monkeypatch.setattr(levels, "_EXPANDERS", {})  # a fresh expander: its copies count this run only
    if thaw_for_end:
        real = levels.Expanding.end_of

        def thawing(self, node):
            node.live = None
            return real(self, node)

        monkeypatch.setattr(levels.Expanding, "end_of", thawing)
    job = Job(bound, ends_after_shuffle=False)  # session 14: the plan that judges ends before the shuffle
    got = run_levels(job, partitions=3)
    one = explore(bound)
    assert figures(got) == figures(one)
    done = job.expander().ex.result  # a child of the last level has no blob: restored by a replay (session 13)
    return done.copies + done.replays, one.copies + one.replays


@pytest.mark.model
@pytest.mark.parametrize("name", ["sr-2s-1m-crash", AM, "pf-2s-1f-replicas"])
def test_the_plan_judges_each_fairness_end_on_the_live_state_restoring_no_more_than_one_process(
    monkeypatch, name: str
) -> None:
    """Session 12: a new state's end is judged before the shuffle, on the session its edge made: the plan restores
    exactly the states the single-process explorer restores (to expand them), none to judge an end."""
    plan, one = _restores(monkeypatch, find(name).bound)
    assert plan == one


@pytest.mark.model
def test_twin_ends_judged_on_a_thawed_copy_restore_once_more_per_new_state(monkeypatch) -> None:
    entry = find("sr-2s-1m-crash")
    plan, one = _restores(monkeypatch, entry.bound, thaw_for_end=True)
    assert plan >= one + entry.states  # every state's end (the root's too) on a copy: the count catches it


def _ends(monkeypatch, bound, skip_known: bool, before: set[str] | None = None) -> tuple[Result, int]:
    """The plan's figures and how many fairness ends it judged (`before`: the states its tasks are told were
    visited before every level, instead of the driver's set)."""
    from conformance.explore import levels

    count = [0]
    real_end, real_known = levels.Expanding.end_of, levels.Known

    def end_of(self, node):
        count[0] += 1
        return real_end(self, node)

    monkeypatch.setattr(levels.Expanding, "end_of", end_of)
    if before is not None:
        monkeypatch.setattr(levels, "Known", lambda _: real_known(before))
    job = Job(bound, skip_known=skip_known, ends_after_shuffle=False)  # ends per task, before the shuffle
    return run_levels(job, partitions=3), count[0]


@pytest.mark.model
@pytest.mark.parametrize("name", ["sr-2s-1m-partition", AM, "pf-2s-1f-replicas"])  # bounds that revisit states
def test_skipping_states_visited_before_the_level_changes_no_figure_and_judges_fewer_ends(
    monkeypatch, name: str
) -> None:
    """Session 13: a level's tasks are told every state visited before it (`levels.Known`); an edge into one is
    judged in place, its child neither frozen nor its end judged, as the single-process explorer does (sr-2s-1m-crash
    never reaches a state of an earlier level again: the same ends there, fewer freezes)."""
    b = find(name).bound
    skipping, ends = _ends(monkeypatch, b, True)
    plain, all_ends = _ends(monkeypatch, b, False)
    assert figures(skipping) == figures(plain) == figures(explore(b))
    assert skipping.states <= ends < all_ends


@pytest.mark.model
def test_twin_a_filter_that_claims_states_not_yet_visited_loses_them(monkeypatch) -> None:
    b = find("sr-2s-1m-crash").bound
    every: set[str] = set()
    from conformance.explore import levels

    real_settle = levels.settle

    def settle(visited, reduced, judge=None, last=False):
        out = real_settle(visited, reduced, judge, last)
        every.update(visited)
        return out

    monkeypatch.setattr(levels, "settle", settle)
    run_levels(Job(b), partitions=3)
    wrong, _ = _ends(monkeypatch, b, True, before=every)  # every state of the bound, as if already visited
    assert wrong.states < find("sr-2s-1m-crash").states and compare(find("sr-2s-1m-crash"), wrong)


@pytest.mark.model
def test_progress_reports_each_level_s_new_states_and_their_bytes() -> None:
    entry, seen = find(AM), []
    got = run_levels(
        Job(entry.bound), partitions=2, progress=lambda lv, res, new, s, nbytes: seen.append((new, nbytes))
    )
    assert [n for n, _ in seen] == got.per_level[1:]
    assert all(b > 1000 * n for n, b in seen[:-1])  # a blob of a few KB per new state to expand
    assert seen[-1][0] > 0 and seen[-1][1] == 0  # session 21: the last level's states are never frozen
    compressed = []
    run_levels(Job(entry.bound, compress=True), partitions=2, progress=lambda *a: compressed.append(a[4]))
    assert all(c < b for c, (_, b) in zip(compressed[:-1], seen, strict=False))  # LZ4: fewer bytes, same states
    assert compressed[-1] == 0


@pytest.mark.unit
def test_auto_chooses_as_check_does() -> None:
    assert choose_engine(None, 64, "spark://h:7077").engine == "spark"
    assert choose_engine(None, 64, None).engine == "python"  # not pinned: size unknown before exploring
    assert choose_engine(10**9, 1, None).engine == "python"  # one core: Spark cannot outrun one process
    assert choose_engine(120, 64, None, 4).engine == "python"
    assert choose_engine(10**6, 64, None, 8).engine == "spark"
    assert choose_engine(10**6, 2, None, 8).engine == "spark"
    # twin: one state below the crossover, one process
    text = choose_engine(10**6, 2, None, 8).reason
    limit = int(text.split("at least ")[1].split(" ")[0].replace(",", ""))
    assert choose_engine(limit - 1, 2, None, 8).engine == "python"
    assert choose_engine(limit, 2, None, 8).engine == "spark"


# --- on Spark local[2] ------------------------------------------------------------------------------------------
@pytest.mark.spark
def test_spark_gives_the_single_process_figures_on_every_default_bound(spark) -> None:
    from spark_trace_check.explore import run_spark

    for entry in FAST:
        got = run_spark(spark, Job(entry.bound), entry.max_states, partitions=2)
        assert figures(got) == figures(explore(entry.bound, max_states=entry.max_states)), entry.bound.name
        assert compare(entry, got) == []


@pytest.mark.spark
def test_spark_finds_a_mutant_at_the_same_depth_by_the_same_path_and_stops_where_bfs_stops(spark) -> None:
    from spark_trace_check.explore import run_spark

    b = find(AM).bound
    got = run_spark(spark, Job(b, "sam-activates"), partitions=2)
    # depth 1 from root 1 (session 13: one root per first PAM holder; depth 2 from the seeded construction)
    assert got.found is not None and got.found.depth == 1 and got.found.start == (1,)
    assert figures(got) == figures(explore(b, "sam-activates"))
    assert figures(run_spark(spark, Job(b), 30, partitions=2)) == figures(explore(b, max_states=30))


@pytest.mark.spark
def test_spark_with_compressed_frontier_gives_the_same_figures(spark) -> None:
    from spark_trace_check.explore import run_spark

    entry = find(AM)
    got = run_spark(spark, Job(entry.bound, compress=True), partitions=2)
    assert figures(got) == figures(explore(entry.bound)) and compare(entry, got) == []


@pytest.mark.spark
def test_twin_on_spark_a_partition_function_that_moves_keys_gives_other_counts(spark) -> None:
    import sys

    from pyspark import cloudpickle

    from spark_trace_check.explore import run_spark

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this test module
    entry = find(AM)
    got = run_spark(spark, Job(entry.bound, skip_known=False), partitions=2, buckets=Salted())
    assert got.states > entry.states and compare(entry, got)


@pytest.mark.spark
def test_cli_engine_spark_exit_codes_and_replay_file(spark, tmp_path: Path, capsys) -> None:
    argv = ["explore", "am", "--bound", AM, "--engine", "spark", "--partitions", "2"]
    assert main([*argv, "--check"]) == 0
    out, states = capsys.readouterr(), find(AM).states
    assert f"{states} distinct states" in out.out and f"level 4: {states} states" in out.err
    replay = tmp_path / "r.json"
    assert main([*argv, "--mutant", "sam-activates", "--replay-out", str(replay)]) == 1
    single = explore(find(AM).bound, "sam-activates").found
    assert single is not None and json.loads(replay.read_text())["steps"] == single.steps


# --- at scale (issue 33, "Larger pinned bounds"; session 11): slow, Spark local[2] ------------------------------
SCALE = "sr-3s-2m-2f-d6"  # the largest bound run on Spark local[2] (benchmarks/README.md, sessions 11 and 12)


@pytest.mark.slow
@pytest.mark.spark
def test_spark_at_scale_gives_the_pinned_count(spark) -> None:
    """About 10^5 states (90,003): 20-25 minutes on the shared 2-core machine (CPU seconds in benchmarks/README.md)."""
    from spark_trace_check.explore import run_spark

    entry = find(SCALE)
    assert entry.slow and entry.states is not None and entry.states >= 90_000
    got = run_spark(spark, Job(entry.bound), entry.max_states, partitions=16)
    assert compare(entry, got) == []


# the pinned bounds of 5 x 10^5 states or more (issue 33; `test_explore.SPARK_SCALE`: not run in one process):
# sr-3s-2m-2f-d9 (session 14, 1,892,342 states, about 34 minutes and 11-12 GB on two quiet cores), and from session 20
# sr-3s-2m-2f-nopart-d9 (1,327,195 states, 22 minutes, 8.4 GB) and am-3s-2db-4f-pam-d4 (947,028, 25 minutes, 2.6 GB;
# session 21: 18 minutes), and from session 21 am-3s-3db-4f-d4 (1,292,298, 36 minutes, 3.0 GB); session 22 counted
# each am state once (`ModelSystem.__not_state__`): am-3s-2db-4f-pam-d4 re-pinned (529,573, 10 minutes) and
# am-3s-3db-4f-d4 (733,362, 17 minutes), and
# pinned pf-2s-1f-3f-d8 (1,291,399 states, 32 minutes, 6.6 GB) and am-3s-3db-all-d4 (1,320,032, 34 minutes, 4.6 GB;
# both measured with 2 partitions); session 23: am-3s-3db-10k-d4 (1,094,664, 25 minutes, 4.3 GB) and
# pf-2s-1f-3f-nr-d8 (1,191,197, 28 minutes, 6.5 GB; both with 2 partitions)
LARGE = [e.bound.name for e in load()[0] if e.pinned and e.states is not None and e.states >= 5 * 10**5]


@pytest.mark.unit
def test_each_mechanism_lists_a_million_state_bound() -> None:
    """Pinned (a run gave its count) or listed for a run to pin (`pinned = false`: never judged); all slow."""
    entries = load()[0]
    listed = {e.bound.mechanism for e in entries if e.slow and (e.bound.name in LARGE or not e.pinned)}  # pf: unpinned
    assert listed == {"sr", "am", "pf"}
    assert {"sr-3s-2m-2f-d9", "sr-3s-2m-2f-nopart-d9"} <= {n for n in LARGE if find(n).states >= 10**6}
    assert {find(n).bound.mechanism for n in LARGE if find(n).states >= 10**6} == {"sr", "am", "pf"}


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("name", LARGE)
def test_spark_each_large_bound_gives_the_pinned_count(tmp_path, name: str) -> None:
    """Run as measured, in a process of its own (an 8 GB driver, the frontier compressed; a 4 GB driver lost its
    context at level 8 of sr-3s-2m-2f-d9): the benchmark's command of benchmarks/README.md ("Session 14: the 10^6
    bound", "Session 20"), its row compared with the manifest."""
    root = Path(__file__).resolve().parents[2]
    entry, rows = find(name), tmp_path / "rows.jsonl"
    assert entry.slow and entry.states is not None and entry.states >= 5 * 10**5
    bench = [sys.executable, str(root / "benchmarks" / "bench_explore_spark.py"), name, "--spark-only"]
    flags = ["--partitions", "16", "--compress", "--conf", "spark.driver.memory=8g", "--out", str(rows)]
    subprocess.run([*bench, *flags], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(root)}, check=True)
    row = json.loads(rows.read_text().splitlines()[-1])
    assert (row["states"], row["depth"], row["result"]) == (entry.states, entry.depth, entry.result)
