"""`benchmarks/bench_explore.py --split` (issue 33, session 28): where the explore loop's CPU goes on a default bound.

On am's default bound the split times the model's steps and the judging (both non-zero: every edge steps the model
and is judged), counts the events fed to the folds, and its ceilings are consistent (the loop's own rate, then
the rate without the rest, then with judging alone, in increasing order; with the model's steps alone above the
rate without the rest). The methods it wraps are given back after
it, also when the exploration raises (twin: a bound whose exploration fails leaves no wrapper behind).
"""

from __future__ import annotations

import pytest

from benchmarks import bench_explore
from conformance.engine.growing import Incremental
from conformance.explore.bfs import Explorer
from conformance.harness.core import Session

pytestmark = pytest.mark.unit


def _originals() -> tuple:
    return (Session.apply, Explorer._violation, Incremental.feed)


def test_split_of_am_default_bound() -> None:
    before = _originals()
    (row,) = bench_explore.split("am")
    assert _originals() == before
    assert row["states"] > 0 and row["transitions"] >= row["states"] - 1
    assert row["model_share"] > 0 and row["judging_share"] > 0 and row["events_per_state"] > 0
    assert abs(row["model_share"] + row["judging_share"] + row["rest_share"] - 1) < 0.01
    assert row["states_per_cpu_s"] <= row["if_only_model_and_judging"] <= row["if_only_judging"]
    assert row["if_only_model_and_judging"] <= row["if_only_model"]  # session 29: the model's steps alone


def test_twin_a_failing_exploration_leaves_no_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _originals()

    def fails(self: Explorer, max_states: int | None = None) -> None:
        raise RuntimeError("the exploration fails")

    monkeypatch.setattr(Explorer, "run", fails)
    with pytest.raises(RuntimeError, match="the exploration fails"):
        bench_explore.split("am")
    assert _originals() == before
