"""What the fingerprint must tell apart and what it must not (issue 33, session 15, "one pass"): a state that differs
only in a fold record (pf's `__frozen__` records) or only in its timer queue is another state; an equal state built
along another path (equal values that are other objects, dicts rebuilt in the same order) is the same state.

Twins: a walker that encodes a frozen record by its class alone, or the simulator without its queue, gives the two
states one fingerprint (so the first two tests catch a fingerprint that omits them); two lists that are one object
are not two equal lists.

Why the fingerprint is not the hash of the frozen blob (session 15): a pickle is not canonical. It writes an object
met again as a reference to its first copy (strings, tuples and frozen records included, so an equal value that is
another object gives other bytes), a set in its iteration order (which depends on how it was built and, for strings,
on the process's hash seed: a Spark worker's differs), cancelled timers and the insertion counter, and the trace
recorded so far. `test_the_frozen_bytes_are_not_canonical` shows each on one state."""

from __future__ import annotations

import heapq
import pickle
from typing import Any

import pytest

from conformance.explore.bfs import Explorer
from conformance.explore.fingerprint import Walker
from conformance.explore.manifest import find
from conformance.explore.spaces import Book
from conformance.explore.state import Node, freeze
from conformance.harness.core import Session
from model.pf.cnset import CNSet

SR = "sr-2s-1m-crash"
PF = "pf-2s-1f-replicas"


class _BlindRecords(Walker):
    """Twin: a frozen record (a class declaring `__frozen__`) encoded by its class alone."""

    def _object(self, obj: Any) -> None:
        if getattr(type(obj), "__frozen__", False) is True:
            self.put(f"O{type(obj).__qualname__}")
            return
        super()._object(obj)


class _BlindQueue(Walker):
    """Twin: the simulator encoded without its queue of timers."""

    def _simulator(self, sim: Any) -> None:
        self.put("SIM")


def _digest(ex: Explorer, s: Session, book: Book, walker: type[Walker] = Walker) -> str:
    w = walker()
    for root in ex.space.roots(s, book):
        w.walk(root)
    return w.digest()


def _state(name: str, depth: int) -> tuple[Explorer, Node]:
    """An explorer and a node at `depth` along the first new successors."""
    ex = Explorer(find(name).bound)
    node = ex.root()
    for _ in range(depth):
        node = next(e[2] for e in ex.successors(node) if e[2] is not None)
        node.live = None
    return ex, node


def _replica(s: Session) -> Any:
    return next(r for store in s.system.stores.values() for r in store.replicas.values())


@pytest.mark.model
def test_a_fold_record_changed_alone_is_another_state() -> None:
    ex, node = _state(PF, 1)
    same, other = ex.restore(node), ex.restore(node)
    assert ex.fingerprint(same, node.book) == ex.fingerprint(other, node.book)
    replica = _replica(other)
    assert type(replica.cnset) is CNSet
    replica.cnset = replica.cnset | CNSet((("SOMEONE-ELSE", ((7, 7),)),))
    assert ex.fingerprint(same, node.book) != ex.fingerprint(other, node.book)
    assert _digest(ex, same, node.book) != _digest(ex, other, node.book)
    # twin: a fingerprint blind to the records' fields merges them
    assert _digest(ex, same, node.book, _BlindRecords) == _digest(ex, other, node.book, _BlindRecords)


@pytest.mark.model
def test_a_timer_changed_alone_is_another_state() -> None:
    ex, node = _state(SR, 1)
    same, other = ex.restore(node), ex.restore(node)
    sim = other.system.sim
    live = [i for i in sim._queue if not i.cancelled and sim._live(i)]
    assert live, "the state holds a pending timer"
    live[-1][0] += 1  # one timer due a millisecond later
    heapq.heapify(sim._queue)
    assert ex.fingerprint(same, node.book) != ex.fingerprint(other, node.book)
    # twin: a fingerprint blind to the queue merges them
    assert _digest(ex, same, node.book, _BlindQueue) == _digest(ex, other, node.book, _BlindQueue)


def _rebuilt_apart(s: Session) -> None:
    """The same pf state as if built along another path: each replica's change set an equal value that is another
    object, the store's replica dict a new dict of the same order, a cancelled timer added."""
    for store in s.system.stores.values():
        for replica in store.replicas.values():
            replica.cnset = pickle.loads(pickle.dumps(replica.cnset))
        store.replicas = {k: v for k, v in store.replicas.items()}
    handle = s.system.sim.after(5, s.system.sim.add_node, "nobody")
    s.system.sim.cancel(handle)


@pytest.mark.model
def test_an_equal_state_built_apart_has_the_same_fingerprint() -> None:
    ex, node = _state(PF, 1)
    one, two = ex.restore(node), ex.restore(node)
    _rebuilt_apart(two)
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    # twin: a dict that is reinserted in another order is another state (a model iterates its dicts)
    store = next(iter(two.system.stores.values()))
    assert len(store.data) > 1
    first = next(iter(store.data))
    store.data[first] = store.data.pop(first)
    assert ex.fingerprint(one, node.book) != ex.fingerprint(two, node.book)


@pytest.mark.unit
def test_twin_shared_lists_are_not_equal_lists() -> None:
    from conformance.explore.fingerprint import fingerprint

    shared: list[int] = [1]
    assert fingerprint([[shared, shared]]) != fingerprint([[[1], [1]]])
    assert fingerprint([[(1, "a"), (1, "a")]]) == fingerprint([[tuple([1, "a"]), tuple([1, "ab"[0]])]])


@pytest.mark.model
def test_the_frozen_bytes_are_not_canonical() -> None:
    """The reason the fingerprint is its own walk and not a digest of `freeze`'s bytes: an equal state built apart
    (above) freezes to other bytes; so do two equal sets built in another order."""
    ex, node = _state(PF, 1)
    one, two = ex.restore(node), ex.restore(node)
    assert freeze(one, fixed=ex.fixed) == freeze(two, fixed=ex.fixed)
    _rebuilt_apart(two)
    assert ex.fingerprint(one, node.book) == ex.fingerprint(two, node.book)
    assert freeze(one, fixed=ex.fixed) != freeze(two, fixed=ex.fixed)
    a, b = {1, 9}, {9, 1}  # one hash slot: iteration order is insertion order
    assert a == b and pickle.dumps(a) != pickle.dumps(b)
    from conformance.explore.fingerprint import fingerprint

    assert fingerprint([a]) == fingerprint([b])
