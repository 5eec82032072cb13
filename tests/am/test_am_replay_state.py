"""The am replay's state as a record (issue 32, session 25, "half the cost per event"): `model.am.replay_state.
ReplayState` holds every field of `model.am.replay.Replay` in `FIELDS` (its `__slots__` in the pure path; C fields of
a `cdef class` in the compiled build, `replay_state.pxd`, which the parts' methods typed
`@cython.locals(self=ReplayState)` read directly). The parts (`DagChecks`, `RunRecords`, `BcssChecks`) and `Replay`
declare no slots and have no `__dict__`, so a field not listed cannot be set at all.

- `unit`: a replay that judged a trace (the model's and every mutant's) has no `__dict__`; setting a field not listed
  raises; twin: a part declaring no `__slots__` gets a `__dict__`, and the check finds it. A fold pickled half way
  (`traces.verdict.save_fold`) continues to the verdict and tally of one pass, with the fingerprint it had; twin: a
  `ReplayState.__reduce__` that drops one field's value (the world) gives another.
The crossing between the compiled and pure paths is `tests/engine/test_fast_folds.py`'s (an am mutant's trace).
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.check import trace_contexts
from conformance.explore.fingerprint import fingerprint
from model.am.monitor import AmMonitor
from model.am.replay import Replay
from model.am.replay_state import FIELDS, ReplayState
from model.am.state import empty_world
from model.registry import get
from traces.schema import Event
from traces.verdict import in_seq_order, restore_fold, save_fold


def _trace(name: str = "model", seed: int = 1) -> tuple[list[Event], list[Event]]:
    mech = get("am")
    run = mech.simulate if name == "model" else mech.mutants[name]
    events = list(in_seq_order(run(seed)))
    return events, trace_contexts(events).get(events[0].trace_id, [])


def _verdict(result: Any) -> tuple:
    assert result.tally is not None
    return (result.verdict, [repr(v) for v in result.violations], result.notes, result.tally.judged,
            result.tally.unjudged)  # fmt: skip


def _folded(events: list[Event], context: list[Event], upto: int | None = None) -> Any:
    fold = AmMonitor().start(context)
    for e in events[:upto]:
        fold.feed(e)
    return fold


@pytest.mark.unit
@pytest.mark.parametrize("name", ["model", *sorted(get("am").mutants)])
def test_a_replay_holds_only_its_listed_fields(name: str) -> None:
    events, context = _trace(name)
    fold = _folded(events, context)
    fold.finish()
    replay = fold.replay
    assert isinstance(replay, ReplayState) and not hasattr(replay, "__dict__"), name
    assert len(set(FIELDS)) == len(FIELDS) and ReplayState.__slots__ == FIELDS
    with pytest.raises(AttributeError):
        replay.forgotten = {}  # type: ignore[attr-defined]


@pytest.mark.unit
def test_twin_a_part_without_slots_gets_a_dict_and_is_found() -> None:
    class Careless(Replay):  # no `__slots__ = ()`: instances get a `__dict__`
        pass

    replay = Careless(AmMonitor().start([]).replay.opts)
    replay.forgotten = {}  # type: ignore[attr-defined]
    assert hasattr(replay, "__dict__") and "forgotten" in vars(replay)


@pytest.mark.unit
def test_a_pickled_fold_continues_exactly_and_a_dropped_field_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    events, context = _trace("model")
    whole = _verdict(AmMonitor().check(events, context))
    cut = len(events) // 2

    def continued() -> tuple[bool, tuple]:
        fold = _folded(events, context, cut)
        again = restore_fold(save_fold(fold))
        assert type(again.replay) is Replay
        same = fingerprint([again]) == fingerprint([fold])
        for e in events[cut:]:
            again.feed(e)
        return same, _verdict(again.finish())

    assert continued() == (True, whole)
    keep = ReplayState.__reduce__

    def dropping(self: Any) -> tuple:  # twin: the world folded before the cut is lost (an empty one in its place)
        fn, (cls, values) = keep(self)
        return fn, (cls, tuple(empty_world(self.opts) if n == "w" else v for n, v in zip(FIELDS, values, strict=True)))

    monkeypatch.setattr(ReplayState, "__reduce__", dropping)
    same, verdict = continued()
    assert not same and verdict != whole
