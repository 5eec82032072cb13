"""How the fingerprint's walker encodes an object of a class, decided once per class (issue 33; moved out of
`conformance.explore.fingerprint` in session 17, which re-exports `frozen_record` and `not_state`): its header token
and fields (`_shape`), the fields it declares are not state (`not_state`), and whether it is a value, encoded
wherever it occurs and never as a back reference (`_immutable`, `frozen_record`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

_FROZEN: dict[type, bool] = {}
# per class: its header token, the slot names of its MRO (most derived first), the fields it says are not state,
# and for a class with slots a getter of the others' values in sorted order, with their names
_Shape = tuple[str, tuple[str, ...], frozenset[str], Callable[[Any], tuple[Any, ...]] | None, tuple[str, ...]]
_SHAPES: dict[type, _Shape] = {}


def _names(slots: str | Iterable[str]) -> tuple[str, ...]:
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _shape(cls: type) -> _Shape:
    """How `Walker._object` encodes an object of `cls`: its header token, its slots, the fields left out
    (`not_state`), and for a slotted class the getter of its other slots' values in sorted order (the order the
    generic path puts them in when every slot is set and there is no `__dict__`) with their names."""
    slots = tuple(n for klass in cls.__mro__ for n in _names(getattr(klass, "__slots__", ())))
    skip = not_state(cls)
    order = tuple(sorted(set(slots) - skip - {"__dict__", "__weakref__"}))
    getter: Callable[[Any], tuple[Any, ...]] | None = None
    if len(order) > 1:
        getter = attrgetter(*order)
    elif order:
        one = attrgetter(order[0])
        getter = lambda obj: (one(obj),)  # noqa: E731
    found = _SHAPES[cls] = (f"O{cls.__module__}.{cls.__qualname__}", slots, skip, getter, order)
    return found


def not_state(cls: type) -> frozenset[str]:
    """The fields a class declares are not state (`__not_state__`, a tuple of names; session 16): left out of the
    fingerprint. Sound only for a field the model's behaviour does not depend on, such as a cache derived from the
    other fields (am's `World.cached_quorum` and `cached_view`). Each such declaration has its twins in
    `tests/explore/test_not_state.py`."""
    names = getattr(cls, "__not_state__", ())
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{cls.__module__}.{cls.__qualname__}.__not_state__ must be a tuple of field names")
    return frozenset(names)


def _immutable(cls: type) -> bool:
    """A tuple, a frozenset, a frozen dataclass or a class declaring `__frozen__ = True` (a record that is a
    `cdef class` in the compiled build, `model/pf/state.py`): encoded by value wherever it occurs, never as a back
    reference (one value may be one object or several, by the interpreter's interning or a copy's: issue 33)."""
    frozen = _FROZEN.get(cls)
    if frozen is None:
        frozen = _FROZEN[cls] = issubclass(cls, tuple | frozenset) or frozen_record(cls)
    return frozen


def frozen_record(cls: type) -> bool:
    """A frozen dataclass or a class declaring `__frozen__ = True` (a record whose fields are never assigned; what
    they hold is trusted, and checked where it is shared: `conformance.explore.sharing.check_frozen`)."""
    params = getattr(cls, "__dataclass_params__", None)
    return bool(params is not None and params.frozen) or getattr(cls, "__frozen__", False) is True
