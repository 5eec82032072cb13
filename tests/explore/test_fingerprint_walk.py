"""The fingerprint's canonical encoding is pinned (session 11): the walker was rewritten for speed (each class's
encoding decided once) and must give the tokens of session 10's walker, so that every state count and path stays
what `spec/explore.toml` pins. The digests below are those session 10's walker gave for `sample()`; the twins: a
changed slot, a tuple for a list, a missing timer each give another digest."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from conformance.explore.fingerprint import Walker, fingerprint
from model.kernel.sim import Simulator

SWAP = {"MBX01": "MBX02", "MBX02": "MBX01"}
# session 10's walker (conformance/explore/fingerprint.py at a61a1cf) on `sample()`, re-taken when the simulator
# gained `branching` (the choice labels a bound branches on): both walkers give these on today's objects
PINNED = "b7facb4a9125085f468a0f7f9763e3d4"
PINNED_SWAPPED = "e9e748f87bdc064a750d8ead8622bd66"  # the same, MBX01 and MBX02 renamed


@dataclass(frozen=True)
class Point:
    x: int
    y: str


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a: object, b: object) -> None:
        self.a, self.b = a, b


class Plain:
    def __init__(self, **kw: object) -> None:
        self.__dict__.update(kw)


for _cls in (Point, Slotted, Plain):  # the digests name each class by module: not by where pytest imports this
    _cls.__module__ = "pinned"


def sample(timer: bool = True, slot: object = None, seq: type = list) -> list[object]:
    """Every kind of value the walker encodes, sharing and back references included."""
    shared: list[int] = [1]
    sim = Simulator(7, trace_id="t", mechanism="sr")
    sim.add_node("MBX01")
    if timer:
        sim.after(5, sim.add_node, "MBX02", node="MBX01")
    p = Point(1, "MBX01-db0")
    return [
        None,
        True,
        3,
        2.5,
        1j,
        b"x",
        "MBX01",
        int,
        seq([shared, shared, (p, p)]),
        {"k": {1, 2}, "f": frozenset({"MBX02"})},
        random.Random(3),
        Slotted(shared if slot is None else slot, Plain(x=p, y=[])),
        Plain(),
        sim,
        sim.add_node,
        len,
    ]


@pytest.mark.unit
def test_the_walker_gives_session_10s_digests() -> None:
    assert fingerprint([sample()]) == PINNED
    assert fingerprint([sample()], SWAP) == PINNED_SWAPPED


@pytest.mark.unit
@pytest.mark.parametrize("change", ["slot", "seq", "timer"])
def test_twin_a_changed_state_is_another_digest(change: str) -> None:
    changed = {"slot": {"slot": 2}, "seq": {"seq": tuple}, "timer": {"timer": False}}[change]
    assert fingerprint([sample(**changed)]) != PINNED


@dataclass(frozen=True)
class Holder:
    parts: list[int]
    name: str


Holder.__module__ = "pinned"


class _Uncached(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: object, value: object) -> None:  # the walker as before session 13: no value put again
        pass


def _tokens(roots: list[object], walker: type[Walker] = Walker, cached: bool = True) -> list[str]:
    w = walker()
    if not cached:
        w.values = _Uncached()
    for root in roots:
        w.walk(root)
    return w.tokens


def _values() -> list[object]:
    """Frozen values met twice: one a value through and through, one holding a list first met inside it."""
    shared = [1, 2]
    cfg, holder = Point(4, "MBX02"), Holder(shared, "h")
    return [Plain(a=cfg, b=holder), Plain(a=cfg, b=holder), shared, (holder, cfg)]


@pytest.mark.unit
def test_a_value_met_again_is_put_as_encoding_it_again_would() -> None:
    """Session 13: a frozen value's tokens are put again where it occurs again in one walk, unless its encoding
    first met a mutable object (then its second encoding differs: a back reference). Twin: without that guard, the
    holder's list is put in full twice and the encoding differs from the uncached walker's."""
    assert _tokens(_values()) == _tokens(_values(), cached=False)
    assert _tokens(sample()) == _tokens(sample(), cached=False)

    class Unguarded(Walker):
        def _pure(self, mutable: int) -> bool:
            return True

    assert _tokens(_values(), Unguarded) != _tokens(_values(), cached=False)
