"""Guards of what the states of an exploration share instead of copying (issue 33, session 15).

Two things are shared, not copied: the fixed table's objects (`conformance.explore.fixed`, by every state and its
copies) and, in the edge verdict's copy of the folds, the frozen records (`conformance.explore.state.copy_folds`).
Sharing is sound only for what no step changes. Two mistakes would make it unsound, and each is checked where the
sharing is set up, not left to an edge-by-edge comparison:

- **A class wrongly declared frozen** (`__frozen__ = True` on a class whose fields can be assigned): `check_frozen`
  tries to assign one field its own value (a no-op where it is allowed). A frozen dataclass, a pf record in the
  pure path (`model/pf/state.py`, `_Value.__setattr__`) and a compiled record (a `readonly` field) refuse; a class
  that lets it be assigned is an internal error naming it, once per class.
- **A table object holding a mutable object that the rest of the state reaches too** (a configuration's dict that a
  server also holds): a copy would refer to the table's object and hold its own copy of the inner one, two objects
  where the original had one. `shared_inside` walks the object graph (`gc.get_referents`, as a pickle reaches it:
  not into functions, classes or modules, a bound method only to its object) from the state, stopping at the table's
  objects, and from inside each table object: a mutable object met on both sides names the table object. The
  table's build leaves such an object out (`apart`): it is copied with the state, as before session 14. Found so
  on am (session 15): the first events' attribute lists are the lists `ModelSystem` keeps of its boot facts (the
  `World` holds one too), so three `AM_DAG_CONFIG`/`DAG_VIEW`/`DB_CREATE` events are copied, not shared.

What a table object holds that a step changes later is caught at the end of the search (`FixedTable.verify`,
through `conformance.explore.fixed.end_of_search`, which a Spark worker calls too).
"""

from __future__ import annotations

import dataclasses
import gc
import types
from collections.abc import Iterable
from typing import Any

from conformance.explore.fingerprint import frozen_record
from model.kernel.sim import COMPILED_FUNCTION

_ASSIGNABLE: dict[type, str] = {}  # a frozen class -> '' (it refuses an assignment) or why it is not frozen
_VALUES = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset, range)
_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType, types.FrameType)


def check_frozen(obj: Any) -> None:
    """An internal error if `obj`'s class declares itself frozen (`frozen_record`) but lets a field be assigned."""
    cls = type(obj)
    why = _ASSIGNABLE.get(cls)
    if why is None:
        if not frozen_record(cls):
            return
        why = _ASSIGNABLE[cls] = _assignable(obj)
    if why:
        raise RuntimeError(why)


def _field_names(obj: Any) -> list[str]:
    cls = type(obj)
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    names = list(getattr(cls, "__fields__", ()) or ())
    for klass in cls.__mro__:
        slots = getattr(klass, "__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names + list(getattr(obj, "__dict__", {}))


def _assignable(obj: Any) -> str:
    cls = type(obj)
    for name in _field_names(obj):
        if not hasattr(obj, name):
            continue
        try:
            setattr(obj, name, getattr(obj, name))  # its own value: nothing changes where it is allowed
        except (AttributeError, TypeError):  # a frozen dataclass's FrozenInstanceError is an AttributeError
            return ""
        return (
            f"{cls.__module__}.{cls.__qualname__} declares itself frozen (`__frozen__`) but lets its field {name!r} "
            "be assigned: it is mutable, and the explorer would share one object between states "
            "(conformance.explore.sharing)"
        )
    return ""


def _mutables(roots: Iterable[Any], stop: set[int]) -> dict[int, Any]:
    """The mutable objects reachable from `roots`, by id, not through an object whose id is in `stop`."""
    found: dict[int, Any] = {}
    met: set[int] = set()
    todo = list(roots)
    while todo:
        obj = todo.pop()
        key = id(obj)
        if key in met or key in stop:
            continue
        met.add(key)
        cls = type(obj)
        if isinstance(obj, _OPAQUE) or cls.__name__ == COMPILED_FUNCTION:
            continue  # pickled by reference: a function's globals are not the state
        if cls is types.MethodType:
            todo.append(obj.__self__)
            continue
        if not isinstance(obj, _VALUES) and not frozen_record(cls):
            found[key] = obj
        todo.extend(x for x in gc.get_referents(obj) if not isinstance(x, type))
    return found


def shared_inside(objects: list[Any], roots: Iterable[Any]) -> list[tuple[int, Any]]:
    """Each table object (index, by `objects`' order) holding a mutable object that `roots` (the state) also reach
    without passing through a table object, with that inner object."""
    table = {id(o) for o in objects}
    outside = _mutables(roots, table)
    out = []
    for i, obj in enumerate(objects):
        inner = _mutables((x for x in gc.get_referents(obj) if not isinstance(x, type)), table)
        both = [outside[k] for k in inner if k in outside]
        if both:
            out.append((i, both[0]))
    return out


def apart(objects: list[Any], roots: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """`objects` split into those that may be shared (none holds a mutable object that `roots` also reach other
    than through them) and those left out, in order. Leaving one out is repeated until none is found: a table
    object that holds one left out (its copy would then be another object than the one the table's refers to)
    is left out in turn."""
    kept, left = list(objects), []
    roots = list(roots)
    while True:
        bad = {i for i, _ in shared_inside(kept, roots)}
        if not bad:
            return kept, left
        left += [o for i, o in enumerate(kept) if i in bad]
        kept = [o for i, o in enumerate(kept) if i not in bad]
