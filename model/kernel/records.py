"""The fold records' shared bases (issue 32, "half the cost per event"): plain classes that behave as
dataclasses, so that the compiled build can declare them `cdef class`es (C fields; `__init__`, `__eq__` and
`_values` compiled), which Cython refuses for a slotted dataclass.

Session 14 wrote them for pf's records (`model/pf/state.py`); session 15 moved them here for am's and sr's
(`model/am/state.py`, `model/am/bcss.py`). A record lists its fields in order in `__fields__` (its
`__slots__` in the pure path), writes its `__init__` out and gives its fields as a tuple in `_values`.
`Record`: a mutable record (equal when of one class with equal fields, not hashable); `Value`: a frozen one
(hashable by its fields; assigning or deleting a field is a frozen dataclass's error; `__frozen__`: the
explorer's fingerprint encodes it by value, `conformance.explore.fingerprint`). `__repr__` is a dataclass's
`Class(field=value, ...)`; `__reduce__` gives the class and its fields, so a pickle made by one path loads
in the other. A frozen record's `__init__` sets its fields in the pure path with `fill` (as a frozen
dataclass's `__init__` does, by `object.__setattr__`), in the compiled build directly (`compiled(probe)`
with a function of the record's own module says which path that module runs).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

_set = object.__setattr__


def compiled(probe: Any) -> bool:
    """Whether `probe`, a module-level function of the caller's module, was compiled (Cython's function type):
    so whether that module runs the compiled build (`model.kernel.sim.COMPILED_FUNCTION`: not imported, a check
    loads no simulator)."""
    return type(probe).__name__ == "cython_function_or_method"


def fill(record: Any, values: tuple) -> None:
    """A frozen record's fields set in the pure path (as a frozen dataclass's `__init__` sets them). A pure record
    over the compiled `Value` (its module edited since the build, so loaded pure, beside compiled bases:
    `traces.fastpath`) refuses `object.__setattr__` (the base has a setter of its own): its fields are then set
    through their slots' descriptors, which is what `object.__setattr__` does for a slotted class."""
    names = type(record).__fields__
    try:
        for name, value in zip(names, values, strict=True):
            _set(record, name, value)
    except TypeError:  # "can't apply this __setattr__": a pure subclass of the compiled base
        slots = _slots(type(record))
        for name, value in zip(names, values, strict=True):
            slots[name].__set__(record, value)


def _slots(cls: type) -> dict[str, Any]:
    """Each slot's descriptor of `cls` by name, from its class and bases (the nearest first)."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name in getattr(klass, "__slots__", ()):
            if name in klass.__dict__:
                found[name] = klass.__dict__[name]
    return found


class Record:
    """What the records share, a dataclass's methods: equal when of one class with equal fields, `repr`
    `Class(field=value, ...)`, pickled as the class and its fields (`_values`, in `__fields__`'s order).
    Mutable, so not hashable (a subclass may define `__hash__`, restating `__eq__`: see `Value`)."""

    __slots__ = ()
    __fields__: tuple[str, ...] = ()  # each record's fields, in order

    def _values(self) -> tuple:
        raise NotImplementedError  # each record gives its fields

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if type(other) is type(self) else NotImplemented  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return type(self), self._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__fields__)
        return f"{type(self).__qualname__}({fields})"

    def but(self, **changes: Any) -> Any:
        """This record with `changes`, its other fields shared, not copied (what `dataclasses.replace` did)."""
        return type(self)(**{**dict(zip(self.__fields__, self._values(), strict=True)), **changes})


class Value(Record):
    """A frozen record: hashes by its fields; assigning or deleting a field is a frozen dataclass's error."""

    __slots__ = ()
    __frozen__ = True  # immutable: encoded by value (`conformance.explore.fingerprint`)

    def __eq__(self, other: object) -> bool:  # restated: a compiled subclass defining `__hash__` loses it
        return Record.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
