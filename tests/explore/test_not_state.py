"""Fields a class declares are not state (`__not_state__`, `conformance.explore.fingerprint.not_state`; issue 33,
session 16): the fingerprint leaves them out. Sound only where the model's behaviour does not depend on them: am's
`World.cached_quorum` and `cached_view` are derived from the view (`set_view` drops them), so a world whose caches
were dropped is the same state, has the same successors, and recomputes what they held.

Session 22: am's boot facts (`ModelSystem.initial`, the trace's first events: history, never read once the system is
built) are declared too. Walked, they kept each root's states apart (which server the boot elected PAM) and, by the
dicts and lists the world shares with them (`World.view_source`), states of one root: am-3s-1db-crash-partition had
359 states, now 147 (120 from one root). `test_states_merged_without_the_boot_facts_have_the_same_edges` checks, on
every state of that bound, that the states the explorer now merges do the same under every step: the same events
recorded, the same children, the same verdicts. Its twin declares a field that is state (the PAM claims) and the same
check finds merged states that differ.

Twins: a field that is state (the PAM claims) changed alone is another state; a fingerprint that ignores
`__not_state__` tells the caches apart (and the boot facts' sharing apart); a declaration that is not a tuple of
names is refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from conformance.explore import fingerprint as fp_module
from conformance.explore import shapes
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.explore.roots import level_zero
from conformance.explore.spaces import Book
from conformance.explore.state import Node, freeze
from conformance.harness.core import Session
from model.am.protocol import ModelSystem
from model.am.state import _UNSET, World
from model.kernel.choice import next_resolution
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
    blind: dict[type, Any] = {}  # both modules' one cache, so no shape computed blind outlives the test
    monkeypatch.setattr(fp_module, "_SHAPES", blind)
    monkeypatch.setattr(shapes, "_SHAPES", blind)
    monkeypatch.setattr(shapes, "not_state", lambda cls: frozenset())  # session 17: `_shape` lives there
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@contextmanager
def _declared(cls: type, names: tuple[str, ...]) -> Iterator[None]:
    """`cls.__not_state__` set to `names` for the block (the walker's per-class shapes forgotten around it)."""
    old = cls.__dict__.get("__not_state__", _MISSING)
    cls.__not_state__ = names  # type: ignore[attr-defined]
    shapes._SHAPES.pop(cls, None)
    try:
        yield
    finally:
        if old is _MISSING:
            del cls.__not_state__  # type: ignore[attr-defined]
        else:
            cls.__not_state__ = old  # type: ignore[attr-defined]
        shapes._SHAPES.pop(cls, None)


_MISSING = object()


@pytest.mark.model
def test_an_equal_copy_of_the_boot_view_is_the_same_state() -> None:
    """The root's view lists are the boot facts' own; equal lists that are other objects are the same state now that
    neither the boot facts nor the view's source lists (a cache compared by value) are state (session 22). Twin:
    with both walked, the sharing tells them apart (as before session 22)."""
    ex, node = _state(0)
    one, two = ex.restore(node), ex.restore(node)
    w = two.system.world
    boot = {id(v) for _, _, attrs in two.system.initial for v in attrs.values() if isinstance(v, list)}
    assert w.view_source is not None and all(id(x) in boot for x in w.view_source), "the root's view is the boot's"
    w.view_source = tuple(list(x) for x in w.view_source)  # equal lists, other objects
    assert w.view_source == one.system.world.view_source
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    with _declared(ModelSystem, ()), _declared(World, ("cached_quorum", "cached_view")):
        assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


def _merged(ex: Explorer, distinct: Callable[[Session, Book], str]) -> dict[str, list[Node]]:
    """Every state of `ex`'s bound, told apart by `distinct` (a finer fingerprint), grouped by the explorer's own
    fingerprint: each group's nodes are states the explorer merges."""
    groups: dict[str, dict[str, Node]] = defaultdict(dict)
    frontier = [n for _, n in level_zero(ex, False)[0]]
    seen: set[str] = set()
    for depth in range(ex.bound.depth + 1):
        nxt = []
        for node in frontier:
            node.live = None
            s = ex.restore(node)
            fine = distinct(s, node.book)
            if fine in seen:
                continue
            seen.add(fine)
            groups[ex.fingerprint(s, node.book)][fine] = node
            if depth < ex.bound.depth:
                nxt += [child for _, _, child, _ in ex.successors(node) if child is not None]
        frontier = nxt
    return {k: list(v.values()) for k, v in groups.items()}


def _edges(ex: Explorer, node: Node) -> list[tuple[Any, ...]]:
    """What `node`'s state does under each of the bound's actions and each resolution of its choices, sorted: the
    step, the events it records (their node, entity, kind and attributes: what a trace shows), the child's
    fingerprint and the violated rule. Merged states must agree on it, step by step."""
    out = []
    acts = ex.space.actions(ex.restore(node), node.book, ex.bound)  # am: the actions do not run the state forward
    for act in acts:
        script: list[int] | None = []
        while script is not None:
            s = ex.restore(node)
            before = len(s.events())
            step, made = ex.apply(s, act, script)
            script = next_resolution(made)
            shown = tuple((e.node, e.entity, e.kind, repr(sorted(e.attrs.items()))) for e in s.events()[before:])
            found = ex.judge(s, (), False)
            out.append((repr(step), shown, ex.fingerprint(s, act.book), None if found is None else found.rule))
    return sorted(out)


def _disagreements(ex: Explorer, merged: dict[str, list[Node]]) -> tuple[int, int]:
    """(pairs of merged states compared, pairs whose edges differ)."""
    pairs = bad = 0
    for nodes in merged.values():
        first = _edges(ex, nodes[0])
        for other in nodes[1:]:
            pairs += 1
            bad += _edges(ex, other) != first
    return pairs, bad


@pytest.mark.model
def test_states_merged_without_the_boot_facts_have_the_same_edges() -> None:
    """Every state of am-3s-1db-crash-partition told apart by the fingerprint that walks the boot facts (the 359
    states pinned before session 22), grouped by the explorer's: each group's states have the same edges (the
    children's fingerprints and the verdicts). The boot facts split each state by its root (which server the boot
    elected PAM), though the three roots' states meet (147 states)."""
    ex = Explorer(find(AM).bound)

    def walked(s: Session, book: Book) -> str:
        with _declared(ModelSystem, ()):
            return ex.fingerprint(s, book)

    merged = _merged(ex, walked)
    assert sum(len(v) for v in merged.values()) == 359 and len(merged) == 147
    pairs, bad = _disagreements(ex, merged)
    assert pairs == 359 - 147 and bad == 0


@pytest.mark.model
def test_a_state_field_declared_not_state_merges_states_whose_edges_differ() -> None:
    """Twin of the test above: the same check catches an unsound declaration (the PAM claims, which the model's
    elections read) by merged states whose edges differ."""
    ex = Explorer(find(AM).bound)
    sound = World.__not_state__

    def walked(s: Session, book: Book) -> str:
        with _declared(World, sound):
            return ex.fingerprint(s, book)

    with _declared(World, (*sound, "claims")):
        merged = _merged(ex, walked)
        pairs, bad = _disagreements(ex, merged)
    assert pairs > 0 and bad > 0


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
