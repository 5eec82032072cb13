"""A blob's globals (its classes and reducers) are resolved once per exploration (`conformance.explore.state.thaw`,
issue 33, session 17: the unpickler's own lookup was 12-15% of a copy of am's state), and afresh by the next one.

- A state thawed so is the state `pickle.loads` gives: the same fingerprint and the same blob frozen again.
- A reducer rebound between two explorations (as a test may do) is the one the next exploration's copies call.

Twin: an explorer that does not forget the globals resolved by the last one still calls the old reducer: caught.
"""

from __future__ import annotations

import pickle
from typing import Any

from conformance.explore import bfs, state
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import load
from conformance.explore.state import Node, Session, freeze

AM = "am-3s-1db-crash-partition"


def _explorer() -> Explorer:
    return Explorer(next(e for e in load()[0] if e.bound.name == AM).bound)


def _node(ex: Explorer) -> Node:
    node = ex.root()
    for _ in range(2):
        node = next(child for _, _, child, _ in ex.successors(node) if child is not None)
    return node


def test_a_thawed_state_is_the_state_pickle_loads_gives() -> None:
    ex = _explorer()
    node = _node(ex)
    assert node.blob is not None
    ours = ex.restore(node)
    system, st, outs, incremental, fed, judged, notes = pickle.loads(node.blob)
    plain = Session(ex.driver, system, ex.setup)
    plain.state, plain.outs, plain.incremental, plain.fed, plain.judged, plain.notes = (
        st,
        outs,
        incremental,
        fed,
        judged,
        notes,
    )
    assert ex.fingerprint(ours, node.book) == ex.fingerprint(plain, node.book)
    assert freeze(ours, fixed=ex.fixed) == freeze(plain, fixed=ex.fixed)


def _calls_after_rebinding(monkeypatch) -> list[Any]:
    """Explore, rebind the reducer of the frozen records (`state._rebuild`), start another explorer and copy one of
    its states: the rebound reducer's calls."""
    _node(_explorer())
    calls: list[Any] = []
    rebuild = state._rebuild

    def counted(cls: type, values: tuple[Any, ...]) -> Any:
        calls.append(cls)
        return rebuild(cls, values)

    counted.__module__, counted.__qualname__ = state.__name__, "_rebuild"  # pickled by the name it is bound to
    monkeypatch.setattr(state, "_rebuild", counted)
    ex = _explorer()
    ex.restore(_node(ex))
    return calls


def test_the_next_exploration_resolves_the_globals_afresh(monkeypatch) -> None:
    assert _calls_after_rebinding(monkeypatch)


def test_twin_globals_remembered_across_explorations_call_the_old_reducer(monkeypatch) -> None:
    monkeypatch.setattr(bfs, "forget_globals", lambda: None)
    assert not _calls_after_rebinding(monkeypatch)
