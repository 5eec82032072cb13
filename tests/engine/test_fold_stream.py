"""The streaming engine and the folds: the verdict never depends on how the events were fed.

- A trace streamed into its folds as it is read (`conformance.engine.stream.Router`) gets the verdict the
  whole-trace path (`conformance.check.verdict`: groups sorted by key and seq) gives, for the model and
  mutants of every mechanism. Twin: dropping one event the monitor judges changes the verdict.
- Save and restore: the folds of a trace pickled at a cut and continued give one pass's verdict (every
  mechanism, Hypothesis at a random cut). Twin: a state saved at another cut gives a different verdict.
- The harness's incremental judge (`Incremental`) gives, for every prefix, the verdict of the prefix judged
  whole; a record out of seq order is not judged incrementally (`exact()` is false).
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.check import verdict
from conformance.engine.growing import Incremental
from conformance.engine.stream import Router
from model.registry import get, mechanisms
from traces.verdict import MonitorResult

pytestmark = pytest.mark.model

CASES = [
    ("sr", "model", 1),
    ("sr", "ack-before-shadow", 2),
    ("am", "model", 1),
    ("am", "ignore-blocked", 3),
    ("pf", "model", 1),
    ("pf", "answer-non-subset", 1),
    ("net", "recv-without-send", 1),
]


def _events(mech: str, run: str, seed: int):
    spec = get(mech)
    return (spec.simulate if run == "model" else spec.mutants[run])(seed)


def _runs():
    return [(n, s.monitor()) for n, s in mechanisms().items() if s.monitor is not None]


def _key(result: MonitorResult) -> tuple:
    return (
        sorted((v.rule, v.entity, v.event_ids, v.explanation) for v in result.violations),
        sorted(result.notes),
    )


def _stream(events, cut: int | None = None) -> MonitorResult:
    """Every event through a Router (pickled and restored at `cut`), finished like `Incremental.verdict`."""
    inc = Incremental(_runs())
    for i, e in enumerate(events):
        if i == cut:
            inc = pickle.loads(pickle.dumps(inc))
        inc.feed(e)
    assert inc.exact()
    return inc.verdict()


_CACHE: dict = {}


def _case(mech: str, run: str, seed: int):
    if (mech, run, seed) not in _CACHE:
        events = _events(mech, run, seed)
        _CACHE[(mech, run, seed)] = (events, verdict(events))
    return _CACHE[(mech, run, seed)]


@pytest.mark.parametrize(("mech", "run", "seed"), CASES)
def test_streamed_verdict_is_the_whole_trace_verdict(mech, run, seed):
    events, whole = _case(mech, run, seed)
    assert _key(_stream(events)) == _key(whole)
    if run != "model":
        assert whole.violations, "the mutant's trace must be invalid for this test to mean anything"


@pytest.mark.parametrize(("mech", "run", "seed"), [c for c in CASES if c[1] != "model"])
def test_twin_a_dropped_event_changes_the_verdict(mech, run, seed):
    events, whole = _case(mech, run, seed)
    involved = {i for v in whole.violations for i in v.event_ids}
    dropped = [e for e in events if e.event_id not in involved]
    assert _key(_stream(dropped)) != _key(whole)


@pytest.mark.parametrize(("mech", "run", "seed"), CASES)
def test_save_and_restore_at_fixed_cuts(mech, run, seed):
    events, whole = _case(mech, run, seed)
    for cut in (0, 1, len(events) // 3, len(events) - 1, len(events)):
        assert _key(_stream(events, cut)) == _key(whole), f"cut at {cut}"


@settings(max_examples=10, deadline=None)
@given(case=st.sampled_from(CASES), where=st.floats(0, 1))
def test_save_and_restore_at_a_random_cut(case, where):
    events, whole = _case(*case)
    assert _key(_stream(events, int(where * len(events)))) == _key(whole)


def test_twin_a_state_saved_elsewhere_gives_another_verdict():
    events, whole = _case("sr", "ack-before-shadow", 2)
    early = Incremental(_runs())
    late = Incremental(_runs())
    for e in events:
        late.feed(e)
    for e in events[: len(events) // 2]:
        early.feed(e)
    assert _key(early.verdict()) != _key(late.verdict()) == _key(whole)


@pytest.mark.parametrize(("mech", "run", "seed"), [("sr", "ack-before-shadow", 2), ("pf", "answer-non-subset", 1)])
def test_incremental_prefixes_match_whole_prefixes(mech, run, seed):
    events, _ = _case(mech, run, seed)
    runs = _runs()
    inc = Incremental(runs)
    step = max(1, len(events) // 6)
    for i, e in enumerate(events, start=1):
        inc.feed(e)
        if i % step == 0 or i == len(events):
            assert _key(inc.verdict()) == _key(verdict(events[:i])), f"prefix of {i} events"


def test_twin_out_of_order_record_is_not_judged_incrementally():
    events, _ = _case("sr", "model", 1)
    inc = Incremental(_runs())
    for e in [events[0], events[2], events[1]]:
        inc.feed(e)
    assert not inc.exact()


def test_router_holds_a_trace_out_of_order_and_judges_it_whole():
    events, _ = _case("net", "recv-without-send", 1)
    swapped = [events[0], events[2], events[1], *events[3:]]
    router = Router(_runs(), streamed=set())
    for e in swapped:
        router.feed(e)
    found, _ = router.finish(lambda evs, unknown: [v.to_json() for v in verdict(evs).violations])
    assert any(v["rule"] == "seq-strictly-increasing" for v in found)
