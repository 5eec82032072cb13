"""Fields a class declares are not state (`__not_state__`, `conformance.explore.fingerprint.not_state`; issue 33,
session 16): the fingerprint leaves them out. Sound only where the model's behaviour does not depend on them: am's
`World.cached_quorum` and `cached_view` are derived from the view (`set_view` drops them), so a world whose caches
were dropped is the same state, has the same successors, and recomputes what they held.

Not declared, though the boot facts (`ModelSystem.initial`) are history and `World.view_source` a cache: which of the
recorded lists the view came from (the boot's, shared with the boot facts, or an equal list recorded later) tells
explored states apart by sharing, and leaving either out merges such states (am-3s-1db-admin: 4,892 states, not the
pinned 4,984; benchmarks/README.md, "Session 16: am's fingerprint"). `test_the_view_source_still_tells_states_apart`
pins that.

Twins: a field that is state (the PAM claims) changed alone is another state; a fingerprint that ignores
`__not_state__` tells the caches apart; a declaration that is not a tuple of names is refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore import fingerprint as fp_module
from conformance.explore import shapes
from conformance.explore.bfs import Explorer
from conformance.explore.state import Node, freeze
from conformance.harness.core import Session
from model.am.state import _UNSET
from tests.explore.test_fingerprint_canonical import _state as first_path

AM = "am-3s-1db-crash-partition"


def _state(depth: int) -> tuple[Explorer, Node]:
    """An explorer of `AM` and a node at `depth` along the first new successors."""
    return first_path(AM, depth)


def _successors(ex: Explorer, node: Node, s: Session) -> list[tuple[str, Any]]:
    """Each edge's fingerprint and verdict out of the state `s` (at `node`'s place in the search)."""
    here = Node(node.key, node.steps, node.book, freeze(s, fixed=ex.fixed), None, node.start)
    return [(fp, found) for fp, _, _, found in ex.successors(here)]


@pytest.mark.model
def test_the_worlds_caches_are_not_state() -> None:
    ex, node = _state(2)
    one, two = ex.restore(node), ex.restore(node)
    w = two.system.world
    assert w.cached_quorum is not _UNSET, "the quorum is cached on this path"
    w.view_key()  # the view key cached too
    w.cached_quorum = w.cached_view = _UNSET
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    assert w.quorum() == one.system.world.cached_quorum  # derived: recomputed as it was
    assert w.view_key() == one.system.world.view_key()
    w.cached_quorum = w.cached_view = _UNSET
    assert _successors(ex, node, two) == _successors(ex, node, one)
    # twin: the PAM claims are state
    w.claims = w.claims ^ {"MBX2"}
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.model
def test_twin_a_fingerprint_without_not_state_tells_the_caches_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    ex, node = _state(2)
    one, two = ex.restore(node), ex.restore(node)
    two.system.world.cached_quorum = _UNSET
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    monkeypatch.setattr(fp_module, "_SHAPES", {})
    monkeypatch.setattr(shapes, "not_state", lambda cls: frozenset())  # session 17: `_shape` lives there
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.model
def test_the_view_source_still_tells_states_apart() -> None:
    """An equal copy of the view's recorded lists instead of the boot's own (which the boot facts hold too) is
    another state, by sharing: so `view_source` and `ModelSystem.initial` stay in the fingerprint, and the pinned
    counts with them."""
    ex, node = _state(0)
    one, two = ex.restore(node), ex.restore(node)
    w = two.system.world
    boot = {id(v) for _, _, attrs in two.system.initial for v in attrs.values() if isinstance(v, list)}
    assert w.view_source is not None and all(id(x) in boot for x in w.view_source), "the root's view is the boot's"
    w.view_source = tuple(list(x) for x in w.view_source)  # equal lists, other objects
    assert w.view_source == one.system.world.view_source
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.unit
def test_a_declaration_that_is_not_a_tuple_of_names_is_refused() -> None:
    class Bad:
        __not_state__ = "initial"

    class Good:
        __not_state__ = ("initial",)

    with pytest.raises(TypeError, match=r"Bad\.__not_state__"):
        fp_module.not_state(Bad)
    assert fp_module.not_state(Good) == frozenset({"initial"})
    a, b = Good(), Good()
    a.x, b.x, a.initial, b.initial = 1, 1, [1], [2]  # type: ignore[attr-defined]
    assert fp_module.fingerprint([a]) == fp_module.fingerprint([b])
    b.x = 2  # type: ignore[attr-defined]
    assert fp_module.fingerprint([a]) != fp_module.fingerprint([b])
