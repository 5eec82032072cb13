"""Change numbers and change number sets (CNSets) as compact range sets per originating store.

Seed 001, "Change Numbers": every update gets a change number; a CNSet is a set of change numbers and
every replication message carries the sender's complete CNSet of the folder (PF-012, PF-013). A change
number is modelled as (originator, counter) where the originator is a store instance `server#epoch`
(interpretation PF-I07: a store restored from backup continues as a new originator instance, so it never
reissues a change number). A `CNSet` keeps, per originator, sorted disjoint inclusive ranges of counters.
Its text form `srv01#0:1-5,7` is what the trace records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import FrozenInstanceError, dataclass

Range = tuple[int, int]


@dataclass(frozen=True, slots=True, order=True)
class CN:
    """One change number: the originating store instance and its counter (1, 2, ...)."""

    origin: str
    n: int

    def __str__(self) -> str:
        return f"{self.origin}:{self.n}"

    @staticmethod
    def parse(text: str) -> CN:
        origin, _, n = text.rpartition(":")
        return CN(origin, int(n))


def _normalise(ranges: Iterable[Range]) -> tuple[Range, ...]:
    """Sort and merge overlapping or adjacent ranges."""
    if type(ranges) is list and len(ranges) == 1:
        lo, hi = ranges[0]
        return ((lo, hi),) if lo <= hi else ()
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if lo > hi:
            continue
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def _minus(a: tuple[Range, ...], b: tuple[Range, ...]) -> tuple[Range, ...]:
    if len(a) == 1 and len(b) == 1:  # the common case: one run of counters from each side
        (lo, hi), (blo, bhi) = a[0], b[0]
        if bhi < lo or blo > hi:
            return a
        if blo <= lo:
            return () if bhi >= hi else ((bhi + 1, hi),)
        return ((lo, blo - 1),) if bhi >= hi else ((lo, blo - 1), (bhi + 1, hi))
    out: list[Range] = []
    for lo, hi in a:
        cur = lo
        for blo, bhi in b:
            if bhi < cur or blo > hi:
                continue
            if blo > cur:
                out.append((cur, blo - 1))
            cur = max(cur, bhi + 1)
            if cur > hi:
                break
        if cur <= hi:
            out.append((cur, hi))
    return tuple(out)


def _meet(a: tuple[Range, ...], b: tuple[Range, ...]) -> tuple[Range, ...]:
    """The counters in both (each side sorted, disjoint and non-adjacent: so is the result)."""
    out: list[Range] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = a[i]
        blo, bhi = b[j]
        top = hi if hi < bhi else bhi
        bottom = lo if lo > blo else blo
        if bottom <= top:
            out.append((bottom, top))
        if hi < bhi:
            i += 1
        else:
            j += 1
    return tuple(out)


def _size(ranges: tuple[Range, ...]) -> int:
    return sum(hi - lo + 1 for lo, hi in ranges)


# The merge walks of `CNSet`'s operators over two `parts` (each sorted by originator, its ranges sorted,
# disjoint and non-adjacent), as module functions: the compiled build types their arguments and indices
# (`cnset.pxd`, issue 32); the counters stay Python ints, so both paths compute the same values.
def _minus_parts(mine: tuple, theirs: tuple) -> tuple | None:
    """The parts of `mine` minus `theirs`, or None when nothing was taken away."""
    parts = []
    changed = False
    j, n = 0, len(theirs)
    for part in mine:
        origin, ranges = part
        while j < n and theirs[j][0] < origin:
            j += 1
        if j < n and theirs[j][0] == origin:
            t = theirs[j][1]
            left = () if t == ranges else _minus(ranges, t)
            if left != ranges:
                changed = True
                if left:
                    parts.append((origin, left))
                continue
        parts.append(part)
    return tuple(parts) if changed else None


def _meet_parts(mine: tuple, theirs: tuple) -> tuple:
    """The parts of the change numbers in both."""
    parts = []
    j, n = 0, len(theirs)
    for origin, ranges in mine:
        while j < n and theirs[j][0] < origin:
            j += 1
        if j < n and theirs[j][0] == origin:
            both = _meet(ranges, theirs[j][1])
            if both:
                parts.append((origin, both))
    return tuple(parts)


def _subset(mine: tuple, theirs: tuple) -> bool:
    """Whether every change number of `mine` is in `theirs`: a range is covered only when one range of
    `theirs` holds it whole."""
    j, n = 0, len(theirs)
    for origin, ranges in mine:
        while j < n and theirs[j][0] < origin:
            j += 1
        if j == n or theirs[j][0] != origin:
            return False
        t = theirs[j][1]
        if t == ranges:
            continue
        k, m = 0, len(t)
        for lo, hi in ranges:
            while k < m and t[k][1] < lo:
                k += 1
            if k == m or t[k][0] > lo or t[k][1] < hi:
                return False
    return True


def _probe() -> None:
    """Says which path this module runs: its type is Cython's when compiled."""


_COMPILED = type(_probe).__name__ == "cython_function_or_method"  # (`model.kernel.sim.COMPILED_FUNCTION`)


class CNSet:
    """An immutable set of change numbers; `parts` is sorted by originator, ranges merged.

    A plain class, not a dataclass (issue 32, session 14): the compiled build declares it a `cdef class`
    (`cnset.pxd`), as `model.pf.state`'s records; `__init__`, `__eq__`, `__hash__`, `__repr__` are a frozen
    dataclass's, `__reduce__` gives the class and `parts` (a pickle of one path loads in the other)."""

    __fields__ = ("parts",)
    __slots__ = __fields__
    __frozen__ = True  # immutable: encoded by value (`conformance.explore.fingerprint`)

    def __init__(self, parts: tuple[tuple[str, tuple[Range, ...]], ...] = ()) -> None:
        if _COMPILED:
            self.parts = parts
        else:
            object.__setattr__(self, "parts", parts)

    def __eq__(self, other: object) -> bool:
        return self.parts == other.parts if type(other) is CNSet else NotImplemented  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return self.parts != other.parts if type(other) is CNSet else NotImplemented  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((self.parts,))

    def __reduce__(self) -> tuple:
        return CNSet, (self.parts,)

    def __repr__(self) -> str:
        return f"CNSet(parts={self.parts!r})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    @staticmethod
    def of(cns: Iterable[CN]) -> CNSet:
        by: dict[str, list[list[int]]] = {}  # origin -> runs of counters, each extended while they go up by one
        for cn in cns:
            n = cn.n
            runs = by.get(cn.origin)
            if runs is None:
                by[cn.origin] = [[n, n]]
            elif runs[-1][1] + 1 == n:
                runs[-1][1] = n
            else:
                runs.append([n, n])
        return CNSet._build(by)  # type: ignore[arg-type]

    @staticmethod
    def _build(by: dict[str, Iterable[Range]]) -> CNSet:
        parts = []
        for origin in sorted(by):
            ranges = _normalise(by[origin])
            if ranges:
                parts.append((origin, ranges))
        return CNSet(tuple(parts))

    def _map(self) -> dict[str, tuple[Range, ...]]:
        return dict(self.parts)

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __len__(self) -> int:
        return sum(_size(r) for _, r in self.parts)

    def __iter__(self) -> Iterator[CN]:
        for origin, ranges in self.parts:
            for lo, hi in ranges:
                for n in range(lo, hi + 1):
                    yield CN(origin, n)

    def texts(self) -> list[str]:
        """`[str(cn) for cn in self]`, in that order, without making the `CN`s (one list per hierarchy message
        received: issue 32, session 16)."""
        out = []
        for origin, ranges in self.parts:
            for lo, hi in ranges:
                for n in range(lo, hi + 1):
                    out.append(f"{origin}:{n}")
        return out

    def __contains__(self, cn: object) -> bool:
        if not isinstance(cn, CN):
            return False
        ranges = self._map().get(cn.origin, ())
        return any(lo <= cn.n <= hi for lo, hi in ranges)

    def add(self, cn: CN) -> CNSet:
        for i, (origin, ranges) in enumerate(self.parts):
            if origin == cn.origin and ranges[-1][1] < cn.n:  # past the last range: extend it or add one
                lo, hi = ranges[-1]
                grown = (*ranges[:-1], (lo, cn.n)) if hi + 1 == cn.n else (*ranges, (cn.n, cn.n))
                return CNSet((*self.parts[:i], (origin, grown), *self.parts[i + 1 :]))
        return self | CNSet.of([cn])

    def __or__(self, other: CNSet) -> CNSet:
        if not other.parts or other is self:
            return self
        if not self.parts:
            return other
        mine = dict(self.parts)
        changed = False
        for origin, ranges in other.parts:
            cur = mine.get(origin)
            if cur is None:
                mine[origin] = ranges
            elif cur != ranges:
                merged = _normalise((*cur, *ranges))
                if merged == cur:
                    continue
                mine[origin] = merged
            else:
                continue
            changed = True
        return CNSet(tuple(sorted(mine.items()))) if changed else self

    def __sub__(self, other: CNSet) -> CNSet:
        mine, theirs = self.parts, other.parts
        if not mine or not theirs:
            return self
        if other is self or mine == theirs:
            return EMPTY
        left = _minus_parts(mine, theirs)
        return self if left is None else CNSet(left)

    def __and__(self, other: CNSet) -> CNSet:
        mine, theirs = self.parts, other.parts
        if not mine or not theirs:
            return EMPTY
        if other is self or mine == theirs:
            return self
        parts_t = _meet_parts(mine, theirs)
        if not parts_t:
            return EMPTY
        return self if parts_t == mine else CNSet(parts_t)

    def intersects(self, other: CNSet) -> bool:
        """Whether `self & other` is not empty (without building it)."""
        theirs = dict(other.parts) if other.parts else None
        if theirs is None:
            return False
        for origin, ranges in self.parts:
            t = theirs.get(origin)
            if t is not None:
                for lo, hi in ranges:
                    for blo, bhi in t:
                        if blo <= hi and bhi >= lo:
                            return True
        return False

    def issubset(self, other: CNSet) -> bool:
        mine, theirs = self.parts, other.parts
        if not mine or mine is theirs or mine == theirs:
            return True
        return _subset(mine, theirs)

    def __le__(self, other: CNSet) -> bool:
        return self.issubset(other)

    def __lt__(self, other: CNSet) -> bool:
        """Strict subset (seed 001, status request messages)."""
        return self.parts != other.parts and self.issubset(other)  # (the text forms are canonical)

    def __ge__(self, other: CNSet) -> bool:
        return other.issubset(self)

    def __gt__(self, other: CNSet) -> bool:
        return other < self

    def encode(self) -> list[str]:
        """Text form, one string per originator: `origin:1-5,7`."""
        return [
            f"{origin}:" + ",".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
            for origin, ranges in self.parts
        ]

    @staticmethod
    def decode(items: Iterable[str] | None) -> CNSet:
        """The CNSet of a text form (the recorded lists repeat: the last ones decoded are remembered)."""
        if not items:
            return EMPTY
        key = tuple(items)
        found = _DECODED.get(key)
        if found is None:
            if len(_DECODED) >= 4096:
                _DECODED.clear()
            found = _DECODED[key] = CNSet._decode(key)
        return found

    @staticmethod
    def _decode(items: Iterable[str]) -> CNSet:
        by: dict[str, list[Range]] = {}
        for item in items or ():
            origin, _, text = item.rpartition(":")
            for piece in text.split(","):
                lo, _, hi = piece.partition("-")
                by.setdefault(origin, []).append((int(lo), int(hi or lo)))
        return CNSet._build(by)

    def __str__(self) -> str:
        return "{" + " ".join(self.encode()) + "}"


EMPTY = CNSet()
_DECODED: dict[tuple[str, ...], CNSet] = {}  # text form -> CNSet (a cache of a pure function, bounded)
