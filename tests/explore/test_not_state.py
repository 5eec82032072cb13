"""Fields a class declares are not state (`__not_state__`, `conformance.explore.fingerprint.not_state`; issue 33,
session 16): the fingerprint leaves them out. Sound only where the model's behaviour does not depend on them:

- am's `World.cached_quorum`, `cached_view` and `view_source` are derived from the view (`set_view` drops them): a
  world whose caches were dropped is the same state, and recomputes what they held;
- am's `ModelSystem.initial` (the boot's recorded facts) is history: nothing reads it after the harness recorded it,
  so a state holding other boot facts has the same successors. It is a function of the root, so am's space puts the
  root's construction choices (`Session.start`) in the fingerprint instead (`Space.start`): two roots stay apart.

Twins: a field that is state (the PAM claims, a server's dial) changed alone is another state with other successors;
a fingerprint that ignores `__not_state__` tells the caches apart; am's space without the construction choices merges
two roots' states; a declaration that is not a tuple of names is refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conformance.explore import fingerprint as fp_module
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.explore.state import Node, freeze
from conformance.harness.core import Session
from model.am.state import _UNSET

AM = "am-3s-1db-crash-partition"


def _state(depth: int) -> tuple[Explorer, Node]:
    """An explorer of `AM` and a node at `depth` along the first new successors."""
    ex = Explorer(find(AM).bound)
    node = ex.root()
    for _ in range(depth):
        node = next(e[2] for e in ex.successors(node) if e[2] is not None)
        node.live = None
    return ex, node


def _successors(ex: Explorer, node: Node, s: Session) -> list[tuple[str, Any]]:
    """Each edge's fingerprint and verdict out of the state `s` (at `node`'s place in the search)."""
    here = Node(node.key, node.steps, node.book, freeze(s, fixed=ex.fixed), None, node.start)
    return [(fp, found) for fp, _, _, found in ex.successors(here)]


@pytest.mark.model
def test_the_worlds_caches_are_not_state() -> None:
    ex, node = _state(2)
    one, two = ex.restore(node), ex.restore(node)
    w = two.system.world
    assert w.cached_quorum is not _UNSET and w.view_source is not None, "the caches are filled on this path"
    w.cached_quorum = w.cached_view = _UNSET
    w.view_source = None
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    assert w.quorum() == one.system.world.cached_quorum  # derived: recomputed as it was
    assert w.view_key() == one.system.world.view_key()
    assert _successors(ex, node, two) == _successors(ex, node, one)
    # twin: the PAM claims are state
    w.claims = w.claims ^ {"MBX2"}
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.model
def test_twin_a_fingerprint_without_not_state_tells_the_caches_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    ex, node = _state(2)
    one, two = ex.restore(node), ex.restore(node)
    two.system.world.cached_quorum = _UNSET
    monkeypatch.setattr(fp_module, "_SHAPES", {})
    monkeypatch.setattr(fp_module, "not_state", lambda cls: frozenset())
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.model
def test_the_boot_facts_are_history() -> None:
    ex, node = _state(2)
    one, two = ex.restore(node), ex.restore(node)
    assert two.system.initial, "the boot facts are kept"
    two.system.initial = []
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    assert _successors(ex, node, two) == _successors(ex, node, one)
    # twin: a server's dial is state, with other successors
    dials = two.system.world.dials
    first = sorted(dials)[0]
    dials[first] = "Lossless" if dials[first] != "Lossless" else "BestAvailability"
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)
    assert _successors(ex, node, two) != _successors(ex, node, one)


@pytest.mark.model
def test_the_roots_construction_choices_keep_two_roots_apart() -> None:
    """The boot facts tell the roots apart (whose PAM holder differs): with them left out, the construction
    choices do. Twin: am's space without them gives two roots' states one fingerprint."""
    ex, node = _state(1)
    one, two = ex.restore(node), ex.restore(node)
    two.start = (*one.start, 1) if not one.start else (one.start[0] + 1, *one.start[1:])
    assert ex.space.start
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)
    ex.space = dataclasses.replace(ex.space, start=False)
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)


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
