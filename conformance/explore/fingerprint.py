"""A canonical, deterministic fingerprint of a model system's state (issue 22; TLC's state fingerprints,
stateright's `unique_state_count`).

The explorer copies states (`conformance.explore.state`, issue 33) and identifies each by a fingerprint:
`fingerprint(roots)` walks the object graph from `roots` and hashes a canonical encoding of it, the same for
a copied state and the same state replayed:

- scalars by type and value; lists and tuples in order; dicts in insertion order (a model iterates them, so
  the order is behaviour); sets by their sorted encodings (no model may depend on set order: hash
  randomisation would make it nondeterministic);
- objects by class and fields (`__dict__` and `__slots__`); a function or lambda by its qualified name and the
  values its closure captured (so a pending timer `lambda: self._expire(node, key)` is the timer, not an
  address); a bound method by its function and its object; a `random.Random` by its state;
- a shared or cyclic mutable object once, later as a back reference by first-visit number (deterministic
  order); an immutable value (a tuple, a frozenset, a frozen dataclass) by value wherever it occurs, never as a
  back reference: whether two equal values are one object is the interpreter's business (the empty tuple is
  one object) and differs between a copied and a replayed state (issue 33);
- what the rules judged (a `traces.verdict.Tally`: history, not state), by its type only;
- the kernel's `Simulator` without its recorder (the trace is history, not state), its step counter and its
  insertion counter; its queue as the live timers sorted by (time, insertion order), without the insertion
  numbers: future pops keep the same relative order, and any later timer sorts after every one of them. A
  timer that was cancelled or belongs to a dead incarnation never fires and is left out.

`rename` (symmetry reduction, `conformance.explore.bfs`): a mapping of server names applied to every
string (whole names, also inside `MBX01-db0`-like strings) before it is hashed.
"""

from __future__ import annotations

import hashlib
import random
import re
import types
from array import array
from collections.abc import Iterable, Mapping
from typing import Any

from model.kernel.recorder import Recorder
from model.kernel.sim import Simulator, TimerHandle
from traces.verdict import Tally

_SIM_SKIP = frozenset({"recorder", "steps", "_order", "_queue"})
_ATOMS = (type(None), bool, int, float, complex, bytes)


class Walker:
    """One canonical encoding: `walk(obj)` appends tokens to a blake2b digest."""

    def __init__(self, rename: Mapping[str, str] | None = None) -> None:
        self.h = hashlib.blake2b(digest_size=16)
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps walked objects alive, so ids stay unique during one walk
        self.rename = dict(rename or {})
        self._pattern = (
            re.compile("|".join(sorted(map(re.escape, self.rename), key=len, reverse=True))) if rename else None
        )

    def put(self, token: str) -> None:
        self.h.update(token.encode("utf-8", "surrogatepass"))
        self.h.update(b"\x00")

    def text(self, s: str) -> str:
        if self._pattern is None:
            return s
        return self._pattern.sub(lambda m: self.rename[m.group(0)], s)

    def walk(self, obj: Any) -> None:
        if isinstance(obj, str):
            self.put("s" + self.text(obj))
            return
        if isinstance(obj, _ATOMS):
            self.put(f"{type(obj).__name__}:{obj!r}")
            return
        if isinstance(obj, type):
            self.put(f"T{obj.__module__}.{obj.__qualname__}")
            return
        if _immutable(obj):  # a value: how often it is shared is not state (a copy shares it otherwise)
            self._compound(obj)
            return
        ref = self.seen.get(id(obj))
        if ref is not None:
            self.put(f"@{ref}")
            return
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        self._compound(obj)

    def _compound(self, obj: Any) -> None:
        if isinstance(obj, list | tuple):
            self.put(f"{'L' if isinstance(obj, list) else 'U'}{len(obj)}")
            for x in obj:
                self.walk(x)
        elif isinstance(obj, dict):
            self.put(f"D{len(obj)}")
            for k, v in obj.items():
                self.walk(k)
                self.walk(v)
        elif isinstance(obj, set | frozenset):
            parts = sorted(self._alone(x) for x in obj)
            self.put(f"S{len(parts)}:" + ",".join(parts))
        elif isinstance(obj, random.Random):
            version, words, gauss = obj.getstate()  # 625 32-bit words: hashed as bytes, not as their repr
            digest = hashlib.blake2b(array("I", words).tobytes(), digest_size=16).hexdigest()
            self.put(f"R{version}:{gauss!r}:{digest}")
        elif isinstance(obj, types.FunctionType):
            self._function(obj)
        elif isinstance(obj, types.MethodType):
            self.put("M" + obj.__func__.__qualname__)
            self.walk(obj.__self__)
        elif isinstance(obj, types.BuiltinFunctionType | types.ModuleType):
            self.put(f"B{getattr(obj, '__qualname__', obj.__name__)}")
        elif isinstance(obj, Recorder):
            self.put("recorder")
        elif isinstance(obj, Tally):  # what each rule judged: history, like the recorder (issue 29)
            self.put("tally")
        elif isinstance(obj, Simulator):
            self._simulator(obj)
        elif isinstance(obj, TimerHandle):
            self.put("H")
            self._item(obj.item)
        else:
            self._object(obj)

    def _alone(self, x: Any) -> str:
        """A set element encoded on its own (elements are hashable values: no shared structure to keep)."""
        sub = Walker(self.rename)
        sub.walk(x)
        return sub.h.hexdigest()

    def _function(self, fn: types.FunctionType) -> None:
        self.put(f"F{fn.__module__}.{fn.__qualname__}")
        self.walk(fn.__defaults__)
        for cell in fn.__closure__ or ():
            try:
                self.walk(cell.cell_contents)
            except ValueError:  # an empty cell
                self.put("empty")

    def _item(self, item: Any) -> None:
        self.put(f"I{item.time_ms}:{item.node}:{item.cancelled}")
        self.walk(item.fn)
        self.walk(item.args)

    def _simulator(self, sim: Simulator) -> None:
        self.put("SIM")
        for k, v in sorted(vars(sim).items()):
            if k not in _SIM_SKIP:
                self.put(k)
                self.walk(v)
        live = sorted((i for i in sim._queue if not i.cancelled and sim._live(i)), key=lambda i: (i.time_ms, i.order))
        self.put(f"Q{len(live)}")
        for item in live:
            self._item(item)

    def _object(self, obj: Any) -> None:
        cls = type(obj)
        self.put(f"O{cls.__module__}.{cls.__qualname__}")
        fields = dict(getattr(obj, "__dict__", {}))
        slots = _SLOTS.get(cls)
        if slots is None:
            slots = _SLOTS[cls] = tuple(n for klass in cls.__mro__ for n in _names(getattr(klass, "__slots__", ())))
        for name in slots:
            if name not in fields and hasattr(obj, name):
                fields[name] = getattr(obj, name)
        if not fields and hasattr(obj, "__reduce_ex__") and not hasattr(obj, "__dict__"):
            self.put(repr(obj))
            return
        for k in sorted(fields):
            self.put(k)
            self.walk(fields[k])


_FROZEN: dict[type, bool] = {}
_SLOTS: dict[type, tuple[str, ...]] = {}  # per class, the slot names of its MRO (most derived first)


def _names(slots: str | Iterable[str]) -> tuple[str, ...]:
    return (slots,) if isinstance(slots, str) else tuple(slots)


def _immutable(obj: Any) -> bool:
    """A tuple, a frozenset or a frozen dataclass: encoded by value wherever it occurs, never as a back reference
    (one value may be one object or several, by the interpreter's interning or a copy's: issue 33)."""
    cls = type(obj)
    frozen = _FROZEN.get(cls)
    if frozen is None:
        params = getattr(cls, "__dataclass_params__", None)
        frozen = _FROZEN[cls] = issubclass(cls, tuple | frozenset) or bool(params is not None and params.frozen)
    return frozen


def fingerprint(roots: Iterable[Any], rename: Mapping[str, str] | None = None) -> str:
    """The state's fingerprint: a 128-bit hex digest of the canonical encoding of `roots`."""
    w = Walker(rename)
    for root in roots:
        w.walk(root)
    return w.h.hexdigest()
