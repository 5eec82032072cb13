"""A repeated event ID (TR-002) breaks the harness's incremental fold without a set of every ID fed (issue 33,
session 17: `conformance.engine.growing.Incremental` kept one, history that grew with an explored state's depth and
was a tenth of am's copied objects).

- `own_id`: an ID of the form `<trace>:<seq>` or `<trace>-<seq>` names exactly one (trace, seq) (Hypothesis, over
  traces holding both separators): so a repeated own ID is a seq repeated within a trace, which the order check
  refuses.
- Every way two events can share an ID (own or not, in either order, in one trace or two) makes `exact()` false, so
  the caller judges the prefix whole and reports TR-002; the events the model and its harnesses record keep no ID
  at all (`ids` stays empty), sr, am and pf.
- The explorer still stops on a harness that repeats an ID (an internal error: a state keeps only its fold).

Twins: an `Incremental` that skips the ID checks (as if the set were dropped with nothing in its place) misses every
kind of repeat, and the explorer then goes on over the repeated ID; `spells_own` without its seq bound breaks
folds that repeat nothing (the slow path: slower, the same verdict, but not what the model's traces need).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.engine import growing
from conformance.engine.event_ids import own_id, spells_own
from conformance.engine.growing import Incremental
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load
from conformance.explore.result import Result
from conformance.harness.am import AmDriver
from model.registry import get
from traces.event import Event

_TRACE = st.text(alphabet="ab:-1", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(_TRACE, st.integers(0, 120), _TRACE, st.integers(0, 120), st.sampled_from(":-"), st.sampled_from(":-"))
def test_an_own_id_names_one_trace_and_seq(t1: str, s1: int, t2: str, s2: int, c1: str, c2: str) -> None:
    a, b = f"{t1}{c1}{s1}", f"{t2}{c2}{s2}"
    assert own_id(a, t1, s1) and own_id(b, t2, s2)
    if a == b:
        assert (t1, s1) == (t2, s2)


def test_ids_that_do_not_name_their_event_are_not_own() -> None:
    assert not own_id("t:5", "t", 4)
    assert not own_id("t:05", "t", 5)
    assert not own_id("u:5", "t", 5)
    assert not own_id("t+5", "t", 5)
    assert not own_id("t", "t", 5)
    assert not own_id("t:True", "t", True)  # a bool is no seq of an own ID


def _event(trace: str, seq: int, eid: str) -> Event:
    return Event(
        trace_id=trace, seq=seq, event_id=eid, ts_ms=seq, node="n", mechanism="core", entity=trace, kind="X", attrs={}
    )


# each case: events sharing one ID (or a seq), in feeding order
REPEATS = {
    "own, same trace and seq": [_event("t", 0, "t:0"), _event("t", 0, "t:0")],
    "other, twice": [_event("t", 0, "x"), _event("u", 0, "x")],
    "other, then own": [_event("u", 0, "t:3"), _event("t", 3, "t:3")],
    "own, then other": [_event("t", 3, "t-3"), _event("u", 0, "t-3")],
    "own, then other of the same trace": [_event("t", 3, "t:3"), _event("t", 4, "t:3")],
    "other, twice, in one trace": [_event("t", 0, "x"), _event("t", 1, "x")],
}


def missed(cls: type[Incremental]) -> list[str]:
    """The cases of `REPEATS` whose repeat `cls` does not break on."""
    out = []
    for name, events in REPEATS.items():
        inc = cls([])
        for e in events:
            inc.feed(e)
        if inc.exact():
            out.append(name)
    return out


class NoIdCheck(Incremental):
    """Twin: the order check alone (the ID set dropped, nothing in its place)."""

    def feed(self, e: Event) -> None:
        if self.broken:
            return
        if e.seq <= self.last.get(e.trace_id, -1):
            self.broken = True
            return
        self.last[e.trace_id] = e.seq
        self.router.feed(e)


def test_every_repeated_id_breaks_the_fold() -> None:
    assert missed(Incremental) == []


def test_twin_without_the_id_checks_misses_repeats() -> None:
    assert set(missed(NoIdCheck)) == set(REPEATS) - {"own, same trace and seq"}


def test_distinct_ids_do_not_break_it() -> None:
    inc = Incremental([])
    for e in [
        _event("t", 0, "t:0"),
        _event("t", 2, "t-2"),
        _event("u", 0, "t:7"),
        _event("u", 1, "x"),
        _event("t", 7, "t:7b"),
    ]:
        inc.feed(e)
    assert inc.exact()
    assert inc.ids == {"t:7", "x", "t:7b"}


def test_spells_own_bounds_the_seq_by_the_trace_fed() -> None:
    last = {"t": 4, "a:b": 2}
    assert spells_own("t:4", last) and spells_own("t-0", last) and spells_own("a:b:2", last)
    assert not spells_own("t:5", last)  # later than t's last seq: no event fed had it
    assert not spells_own("u:1", last)  # a trace not fed
    assert not spells_own("t:04", last) and not spells_own("t:x", last) and not spells_own("t", last)


def test_twin_spells_own_without_the_seq_bound_breaks_folds_that_repeat_nothing(monkeypatch) -> None:
    monkeypatch.setattr(growing, "spells_own", lambda eid, last: eid.rpartition(":")[0] in last)
    inc = Incremental([])
    for e in [_event("t", 0, "t:0"), _event("u", 0, "t:9")]:
        inc.feed(e)
    assert not inc.exact()


@pytest.mark.parametrize("mech", ["sr", "am", "pf"])
def test_the_models_traces_keep_no_id(mech: str) -> None:
    events = get(mech).simulate(1)
    inc = Incremental([])
    for e in events:
        inc.feed(e)
    assert inc.exact() and not inc.ids


AM = "am-3s-1db-crash-partition"
BOOT_EVENTS = 27  # the am harness's events at the root of AM (TRACE_START and the boot facts)


def _explore_am(max_states: int = 40) -> Result:
    entry = next(e for e in load()[0] if e.bound.name == AM)
    return Explorer(entry.bound).run(max_states=max_states)


def test_explored_am_states_keep_no_id() -> None:
    entry = next(e for e in load()[0] if e.bound.name == AM)
    ex = Explorer(entry.bound)
    node = ex.root()
    for _ in range(3):
        node = next(child for _, _, child, _ in ex.successors(node) if child is not None)
        inc = ex.restore(node).incremental  # the copy a blob holds (the live one's fold is finished in place)
        assert inc is not None and inc.exact() and inc.ids == set()


def _repeating_emit(monkeypatch, seq: int) -> None:
    """The am harness recording the event of seq `seq` of its first trace with the ID of the one before it."""
    emit = AmDriver._emit

    def twice(self, s, node, mech, entity, kind, attrs):
        emit(self, s, node, mech, entity, kind, attrs)
        e = s.outs[-1]
        if e.seq == seq and e.trace_id.endswith("-1"):
            s.outs[-1] = replace(e, event_id=f"{e.trace_id}-{seq - 1}")

    monkeypatch.setattr(AmDriver, "_emit", twice)


def test_a_repeat_in_the_boot_is_found_as_tr_002(monkeypatch) -> None:
    _repeating_emit(monkeypatch, 9)
    res = _explore_am()
    assert res.found is not None and res.found.requirement == "TR-002" and res.found.steps == []


def test_a_repeat_after_a_step_stops_the_explorer(monkeypatch) -> None:
    """The step's events are judged by the fold of the events before them (`state.forget_fed`): a repeat of one of
    those is an internal error, as an event out of seq order is (`state.check_fold`)."""
    _repeating_emit(monkeypatch, BOOT_EVENTS)
    with pytest.raises(RuntimeError, match="repeated event ID"):
        _explore_am()


@pytest.mark.parametrize("seq", [9, BOOT_EVENTS])
def test_twin_without_the_id_checks_explores_past_the_repeat(monkeypatch, seq: int) -> None:
    _repeating_emit(monkeypatch, seq)
    monkeypatch.setattr(Incremental, "feed", NoIdCheck.feed)
    res = _explore_am()
    assert res.found is None and res.states == 40
