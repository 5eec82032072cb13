"""The shadow redundancy monitor as a fold (issue 19): segments, save and restore, context, retirement.

Seed 000, all sections: whatever rules a trace breaks, the fold judges it the same in one pass, in two
segments with its state saved and restored between them (`traces.verdict.save_fold`), and with its context
given at start or inline; settled messages are retired (`model/sr/monitor.py`) without changing a verdict.
"""

from __future__ import annotations

import sys
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model.kernel.sim import MINUTE
from model.sr.monitor import SrFold, SrMonitor
from model.sr.mutants import MUTANTS
from model.sr.sim import Workload, simulate
from traces.schema import Event, is_context_kind
from traces.verdict import MonitorResult, Verdict, fold_all, restore_fold, save_fold

pytestmark = pytest.mark.model

SEEDS = (1, 2)
NAMES = ("model", *sorted(MUTANTS))


@cache
def trace(name: str, seed: int, hold_ms: int | None = None) -> tuple[Event, ...]:
    """A simulated trace of the model or a mutant; `hold_ms`: a short SafetyNetHoldTime (copies settle)."""
    run = simulate if name == "model" else MUTANTS[name].simulate
    return tuple(run(seed) if hold_ms is None else run(seed, safety_net_hold_ms=hold_ms))


def context_of(events: tuple[Event, ...]) -> list[Event]:
    return [e for e in events if is_context_kind(e.kind)]


def in_two(events: tuple[Event, ...], cut: int, context: list[Event] | None = None) -> MonitorResult:
    """Fold `events[:cut]`, save, restore, fold the rest: the verdict of one pass if saving loses nothing."""
    fold = SrMonitor().start(context_of(events) if context is None else context)
    for e in events[:cut]:
        fold.feed(e)
    fold = restore_fold(save_fold(fold))
    for e in events[cut:]:
        fold.feed(e)
    return fold.finish()


def one_pass(events: tuple[Event, ...]) -> MonitorResult:
    return SrMonitor().check(events, context_of(events))


def seen(r: MonitorResult) -> tuple:
    """What a result says, the per-rule tally included (issue 29: a `Tally` has no equality of its own)."""
    assert r.tally is not None
    return r.verdict, r.violations, r.notes, r.tally.judged, r.tally.unjudged


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_two_segments_give_one_pass(name: str, seed: int) -> None:
    events = trace(name, seed)
    whole = one_pass(events)
    n = len(events)
    for cut in sorted({0, 1, 2, n // 3, n // 2, n - 1, n}):
        assert seen(in_two(events, cut)) == seen(whole), f"{name} seed {seed}: cut at {cut} of {n}"


@pytest.mark.parametrize("name", ["model", "discards-in-memory", "never-promote", "double-send", "premature-discard"])
def test_two_segments_with_retired_messages(name: str) -> None:
    """Cuts in runs where messages settle and are retired before the cut (and some revived after it)."""
    events = trace(name, 4, 10 * MINUTE)
    whole = one_pass(events)
    n = len(events)
    for cut in (n // 3, n // 2, 2 * n // 3):
        assert seen(in_two(events, cut)) == seen(whole), f"{name}: cut at {cut} of {n}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), seed=st.sampled_from(SEEDS), at=st.floats(0.0, 1.0))
def test_any_cut_gives_one_pass(name: str, seed: int, at: float) -> None:
    events = trace(name, seed)
    assert seen(in_two(events, round(at * len(events)))) == seen(one_pass(events))


@pytest.mark.parametrize("name", ["premature-discard", "early-promotion", "double-send"])
def test_twin_state_from_another_point_fails(name: str) -> None:
    """The twin: continuing from a state saved at another point than the cut must not give one pass's result
    (else the segment test above could pass with a save that loses everything)."""
    events = trace(name, 1)
    whole = one_pass(events)
    fold = SrMonitor().start(context_of(events))
    blob = save_fold(fold)  # saved before anything was fed
    for e in events[: len(events) // 2]:
        fold.feed(e)
    twin = restore_fold(blob)
    for e in events[len(events) // 2 :]:
        twin.feed(e)
    assert seen(twin.finish()) != seen(whole)
    assert whole.verdict is Verdict.INVALID


@pytest.mark.parametrize("name", ["model", "ack-before-shadow", "never-promote"])
def test_context_inline_or_at_start(name: str) -> None:
    events = trace(name, 2)
    context = context_of(events)
    inline = fold_all(SrMonitor(), events, ())  # context met only inline
    given_twice = fold_all(SrMonitor(), events, context)  # at start and inline: taken once
    at_start = fold_all(SrMonitor(), [e for e in events if not is_context_kind(e.kind)], context)
    assert seen(inline) == seen(given_twice)
    assert at_start.violations == inline.violations and at_start.notes == inline.notes


def clean_run(n: int = 300) -> tuple[Event, ...]:
    """Many messages, no faults, a short SafetyNetHoldTime: copies leave Safety Net within the run."""
    return tuple(simulate(3, workload=Workload(n_messages=n, faults=False), safety_net_hold_ms=10 * MINUTE))


def test_settled_messages_are_retired() -> None:
    events = clean_run()
    fold = SrMonitor().start(context_of(events))
    peak = 0
    for e in events:
        fold.feed(e)
        peak = max(peak, fold.live())
    result = fold.finish()
    assert isinstance(fold, SrFold) and result.verdict is Verdict.VALID, result
    total = len(fold.receives)
    assert total >= 300 and fold.live() <= total // 10, (fold.live(), total)
    assert peak <= total // 2, (peak, total)
    assert restore_fold(save_fold(fold)).live() == fold.live()


@pytest.mark.parametrize("name", NAMES)
def test_retiring_changes_no_verdict(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs where messages settle early (short Safety Net hold), judged with and without retirement."""
    events = trace(name, 4, 10 * MINUTE)
    fold = SrMonitor().start(context_of(events))
    for e in events:
        fold.feed(e)
    with_retiring = fold.finish()
    assert isinstance(fold, SrFold)
    if name == "model":
        assert fold.retired, "nothing settled: the comparison would prove nothing"
    monkeypatch.setattr(sys.modules["model.sr.monitor"], "settled", lambda m: False)
    assert seen(one_pass(events)) == seen(with_retiring)
