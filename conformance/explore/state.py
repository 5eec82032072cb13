"""An explorer state as data: copied by a pickle round trip, never replayed (issue 33, "The explorer expands by
copying").

A state is the harness `Session` after a path (the model system with its kernel queue of timer records and its
recorder, the driver's bookkeeping, the monitor's incremental fold and how far it was fed) plus the explorer's
`Book`. `freeze` turns it into a compact blob (one `pickle.dumps`), `thaw` into a fresh, independent session
(one `pickle.loads`): time proportional to the state's size, the same cost whatever the path's length. A pickle
round trip was measured against `copy.deepcopy` on the default bounds' states (am, depth 2: 0.77 ms against
2.0 ms; benchmarks/README.md, "Session 10: exploration"): the blob is also what the frontier holds, so one
`dumps` per new state serves both.

What is not in the blob: the exploration's fixed table (session 14, `conformance.explore.fixed`: configurations,
the topology, the first events, referred to by index), the mechanism's driver and the setup (shared by every
state of one exploration), the steps (the `Node` keeps them: the counterexample must be a complete replay file),
the answers, and (session 11, `forget_fed`) the events already fed to the monitor's fold: the rules need only the
fold, so the state keeps the events recorded since (none, once its edge is judged) and the recorder numbers on
from its `base`. A search that reads the whole trace (a witness goal) keeps them.

A state whose kernel queue holds a closure (a model whose timers are not yet records: `model.kernel.sim`,
`closure_in`) cannot be copied: a copy would share the closure's captured objects with the original. `freeze`
refuses it with `NotCopyable`, naming the timer; the explorer then restores states by replaying their paths,
as before issue 33 (`conformance.explore.bfs`, `Result.restore`).

The pickle is protocol 5 with one reducer per frozen slotted dataclass of the project (session 11): their class
and field values, instead of `dataclasses`' state functions that call `fields()` for every object (measured: am's
copies 8% faster to load, 16% to dump); a class with a `__reduce__` of its own (a `Rule`: a reference) keeps it.

Choice points are imposed on a step by `conformance.harness.choosing.scripted` (the replay of a path does the same).
"""

from __future__ import annotations

import copyreg
import dataclasses
import io
import pickle
import random
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import lz4.block

from conformance.explore.fingerprint import frozen_record
from conformance.explore.fixed import FixedTable
from conformance.explore.sharing import check_frozen
from conformance.explore.spaces import Book
from conformance.harness.core import Driver, Session
from conformance.harness.failure import judging
from model.kernel.sim import KernelRandom, Simulator, closure_in
from traces.schema import Event

PROTOCOL = pickle.HIGHEST_PROTOCOL
_LZ4 = b"L"  # a compressed blob's first byte (a pickle of protocol 2 or later starts with 0x80)


class NotCopyable(TypeError):
    """A state that cannot be copied (a closure in the kernel's queue): says which timer."""


@dataclass
class Node:
    """One state of the search: its path key (per step, the action's index and the choices' indices, so BFS order
    is the lexicographic order of keys, after the order of the roots), its path as replay steps, its book and
    depth, and the state as a blob (`None`: restored by replaying `steps`, from its root's construction choices
    `start`). `live` is the session itself while it is at hand (not pickled)."""

    key: tuple[tuple[int, ...], ...]
    steps: tuple[dict[str, Any], ...]
    book: Book
    blob: bytes | None
    live: Session | None = field(default=None, repr=False, compare=False)
    start: tuple[int, ...] = ()  # its root's construction choices (`conformance.explore.roots`, session 13)

    @property
    def depth(self) -> int:
        return len(self.key)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "live": None}


def simulators(system: Any) -> list[Simulator]:
    """The kernel simulators a model system runs on (none for Active Manager, whose protocol is synchronous)."""
    return [v for v in vars(system).values() if isinstance(v, Simulator)] if hasattr(system, "__dict__") else []


def release(s: Session) -> None:
    """A session the explorer is done with: each kernel simulator's timers and lifecycle hooks dropped. A live
    system is a graph with cycles (the simulator's queue holds the model's bound methods, the model holds the
    simulator), so without this each dead copy waits for the cyclic collector, which found it only after tracing
    the copy's objects once or twice (session 19: 9.7% of sr's level plan in collections, sr-3s-2m-2f-d5); with
    the queue emptied and the system's objects that hold a simulator (this copy's own: a simulator is never
    shared between copies) emptied too, reference counting frees the copy as soon as its last reference goes.
    Only for a session nothing will step or judge again: its system is gone."""
    sims = simulators(s.system)
    for sim in sims:
        sim._queue.clear()
        sim._lifecycle.clear()
    if not sims:
        return
    for v in list(vars(s.system).values()):  # the model's objects that hold a simulator are this copy's own
        held = vars(v).values() if hasattr(v, "__dict__") and not isinstance(v, type) else ()
        if any(x is sim for x in held for sim in sims):
            vars(v).clear()
    vars(s.system).clear()


def closures(system: Any) -> list[str]:
    """Why each live timer of the system's kernel queue is not a record (empty: the state can be copied)."""
    out = []
    for sim in simulators(system):
        for item in sim._queue:
            if not item.cancelled and (why := closure_in(item.fn)):
                out.append(f"timer due at {item.time_ms} on {item.node or 'no node'}: {why}")
    return out


def feed_folds(s: Session) -> None:
    """Feed the session's folds the events recorded since they were last fed, without a verdict (session 11: a new
    state frozen before its edge is judged in place then holds folds fed through its step, so each of its own
    edges feeds only its step's events). As `Session.judge` feeds them, rule code's errors raised as internal
    ones; a fold it would rebuild (none yet, or a record that is not the one it was fed) is left to it."""
    inc, (n, last) = s.incremental, s.fed
    events = s.events()
    if inc is None or len(events) < n or (n and events[n - 1] is not last) or len(events) == n:
        return
    judging(f"the {s.driver.name} monitor", lambda: [inc.feed(e) for e in events[n:]])
    s.fed = (len(events), events[-1])


def check_fold(inc: Any, where: str) -> None:
    """A fold that judged a state without its fed events must have stayed exact (`forget_fed`): one that did not
    judged a trace without its prefix, an internal error (the model recorded an event out of seq order, or repeated
    an event ID: `conformance.engine.growing.Incremental`)."""
    if inc is not None and not inc.exact():
        raise RuntimeError(
            f"{where}: the model recorded an event out of seq order or with a repeated event ID: a state keeps only "
            "the fold of the events before it (state.forget_fed), which must then be exact"
        )


def forget_fed(s: Session) -> int:
    """Drop the events the session's fold was already fed from where they are kept (the kernel's recorder or
    the driver's `outs`), so a copy holds the fold, not the trace (session 11). The fold goes on from the next
    event recorded: `fed` becomes (0, None) with the fold kept (`Session.judge` feeds `events()[0:]`). Nothing is
    dropped (0) unless exactly one list holds the whole trace as `events()` reads it, with the fed prefix, and
    the fold is exact (a fold that is not falls back to judging the whole prefix, which must then be there)."""
    n, last = s.fed
    inc = s.incremental
    if not n or inc is None or not inc.exact():
        return 0
    events = s.events()
    holders: list[Any] = [sim.recorder for sim in simulators(s.system)]
    lists = [r.events for r in holders] + [s.outs]
    whole = [i for i, xs in enumerate(lists) if len(xs) == len(events) and len(xs) >= n and xs[n - 1] is last]
    if len(whole) != 1 or any(xs for i, xs in enumerate(lists) if i != whole[0]):
        return 0
    i = whole[0]
    if i < len(holders):
        holders[i].forget(n)
    else:
        del s.outs[:n]
    s.fed, s.judged = (0, None), max(0, s.judged - n)
    return n


# Frozen dataclasses with slots pickle through `dataclasses`' own `__getstate__`/`__setstate__`, which call
# `fields()` for every object (session 11: 18% of exploring am). A copy of the state pickles them instead as
# their class and field values, rebuilt by `_rebuild` (the same fields, set the way their `__setstate__` does).
_PACKAGES = ("model.", "traces.", "conformance.", "spec.")
_FIELDS: dict[type, tuple[str, ...]] = {}
_RECORDS: set[type] = set()  # classes declaring `__frozen__` that pickle by their own `__reduce__` (pf's records)
_table: dict[Any, Callable[[Any], Any]] = {}
_scanned = 0  # how many modules `_dispatch` looked at


def _frozen_slotted(cls: Any) -> bool:
    """A frozen dataclass with slots that pickles by `dataclasses`' state functions (not one with a `__reduce__`
    of its own, as `traces.verdict.Rule`, pickled as a reference to its table)."""
    return (
        isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and "__slots__" in cls.__dict__
        and getattr(getattr(cls, "__setstate__", None), "__qualname__", "") == "_dataclass_setstate"
        and getattr(getattr(cls, "__getstate__", None), "__qualname__", "") == "_dataclass_getstate"
        and cls.__reduce__ is object.__reduce__
        and cls.__reduce_ex__ is object.__reduce_ex__
    )


def _reducer(cls: type) -> Callable[[Any], Any]:
    names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    get = attrgetter(*names) if len(names) > 1 else (lambda obj: (getattr(obj, names[0]),))
    return lambda obj: (_rebuild, (cls, get(obj)))


def _rebuild(cls: type, values: tuple[Any, ...]) -> Any:
    """A frozen slotted dataclass from its fields' values (as `dataclasses`' `__setstate__` sets them)."""
    names = _FIELDS.get(cls)
    if names is None:  # a process that thaws without having frozen (a Spark worker)
        _reducer(cls)
        names = _FIELDS[cls]
    obj = object.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


def _reduce_random(rng: random.Random) -> tuple[Callable[..., random.Random], tuple[Any, ...]]:
    """A `random.Random` as its state's 625 words in one `bytes` (session 13): its own `__reduce__` gives them as
    625 ints, and rebuilds it through `__init__`, which first seeds it from the OS before `setstate`. The kernel's
    `KernelRandom` (session 14) as the words it keeps while nothing drew (none: made here, and kept)."""
    words = getattr(rng, "words", None)
    if words is None:
        version, state, gauss = rng.getstate()
        words = (version, array("I", state).tobytes(), gauss)
        if type(rng) is KernelRandom:
            rng.words = words
    return _rebuild_random, (type(rng), *words)


def _rebuild_random(cls: type[random.Random], version: int, words: bytes, gauss: float | None) -> random.Random:
    if cls is KernelRandom:  # its words set at its first draw, if any
        return KernelRandom.thawed(version, words, gauss)
    rng = cls.__new__(cls)
    rng.setstate((version, tuple(array("I", words)), gauss))
    return rng


def _dispatch() -> dict[Any, Callable[[Any], Any]]:
    """The pickler's reducers: copyreg's, and one per frozen slotted dataclass of the project's modules loaded."""
    global _scanned
    if len(sys.modules) != _scanned:
        _scanned = len(sys.modules)
        if not _table:
            _table.update(copyreg.dispatch_table)
            _table[random.Random] = _table[KernelRandom] = _reduce_random
        for name, mod in list(sys.modules.items()):
            if name.startswith(_PACKAGES) and mod is not None:
                for cls in list(vars(mod).values()):
                    if isinstance(cls, type) and cls not in _table:
                        if _frozen_slotted(cls):
                            _table[cls] = _reducer(cls)
                        elif frozen_record(cls):  # a record with its own `__reduce__` (pf's: session 15)
                            _RECORDS.add(cls)
    return _table


def parts_of(s: Session) -> tuple[Any, ...]:
    """What a blob holds of the session (see the module docstring)."""
    return (s.system, s.state, s.outs, s.incremental, s.fed, s.judged, s.notes)


def fixed_table(s: Session, model: str) -> FixedTable | None:
    """The fixed table of the state `s` holds, registered in this process (`conformance.explore.fixed`; `model`:
    the mechanism, mutant and bound, in its tag); None when the state cannot be copied (`freeze` says why)."""
    if closures(s.system):
        return None
    try:
        return FixedTable.of(parts_of(s), _dispatch(), model)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None


def freeze(s: Session, compress: bool = False, fixed: FixedTable | None = None) -> bytes:
    """The session's state as one blob (see the module docstring for what it holds); `compress`: an LZ4 block
    (session 20: 0.75-0.87 of the bytes for 7-12 us a state; zlib level 1, before, kept 0.65-0.77 for 120-160 us,
    a tenth of am's cost per state on Spark; `thaw` tells the two apart by their first byte);
    `fixed`: the exploration's fixed table, whose objects the blob refers to (`conformance.explore.fixed`)."""
    bad = closures(s.system)
    if bad:
        raise NotCopyable(
            f"the {s.driver.name} model's state cannot be copied: its kernel queue holds a closure "
            f"({bad[0]}; {len(bad)} such timers): a copy would share the closure's objects with the original"
        )
    parts = parts_of(s)
    try:
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, PROTOCOL)
        table = _dispatch()
        pickler.dispatch_table = table if fixed is None else fixed.dispatch(table, _scanned)
        pickler.dump(parts)
        blob = buf.getvalue()
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise NotCopyable(f"the {s.driver.name} model's state cannot be copied: {exc}") from exc
    return _LZ4 + lz4.block.compress(blob) if compress else blob


# What a blob's globals (its classes and reducers) resolve to, for one exploration (session 17): a copy of am's
# state names about 30, and the unpickler's own `find_class` (a module lookup and a split of the name for each) was
# 12-15% of `pickle.loads`. Forgotten when an explorer starts (`forget_globals`, `bfs.Explorer`): an exploration
# never rebinds a class or a function of a module, a test between two explorations may.
_GLOBALS: dict[tuple[str, str], Any] = {}


class _Thawer(pickle.Unpickler):
    """`pickle.loads` with its globals remembered (`_GLOBALS`)."""

    def find_class(self, module: str, name: str) -> Any:
        found = _GLOBALS.get((module, name))
        if found is None:
            found = _GLOBALS[(module, name)] = super().find_class(module, name)
        return found


def forget_globals() -> None:
    """A new exploration resolves its blobs' globals afresh (`_GLOBALS`)."""
    _GLOBALS.clear()


def plain(blob: bytes) -> bytes:
    """A blob as `thaw` reads it: a compressed one (`freeze(..., compress=True)`) decompressed, else itself. Session
    20: a source's blob is decompressed once for all its edges (`Explorer.successors`), not once per edge."""
    return lz4.block.decompress(blob[1:]) if blob[:1] == _LZ4 else blob


def thaw(blob: bytes, driver: Driver, setup: dict[str, Any]) -> Session:
    """A fresh session holding an independent copy of the state `freeze` made `blob` of."""
    blob = plain(blob)
    system, state, outs, incremental, fed, judged, notes = _Thawer(io.BytesIO(blob)).load()
    s = Session(driver, system, setup)
    s.state, s.outs, s.incremental, s.fed, s.judged, s.notes = state, outs, incremental, fed, judged, notes
    return s


# The edge verdict (issue 33, session 13): `Session.judge` finishes a copy of the folds that `Incremental.verdict`
# makes by a plain pickle round trip, its events by value through `dataclasses`' state functions (measured on sr:
# 15% of exploring). An edge's copy pickles them instead with the reducers above, and each `Event` (immutable by
# contract, `traces.schema.Event`) as a reference to the original: a fold's finish reads events, never changes one.
# Session 15: so are the records declaring `__frozen__` (pf's fold records, `_share_record`), as frozen dataclasses.
_EVENTS: list[Event] = []  # the events one fold copy shares with its original (only during `copy_folds`)
_COPY_TABLE: list[Any] = [0, {}]  # (`_scanned` when built, the table)


def _share(e: Event) -> tuple[Callable[[int], Event], tuple[int]]:
    _EVENTS.append(e)
    return _shared, (len(_EVENTS) - 1,)


def _share_value(obj: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A frozen dataclass shared when it is a value through and through (hashable: no list, dict or set in it,
    which a finish could change through it), else copied by its fields as `freeze` copies it."""
    try:
        hash(obj)
    except TypeError:
        return _table[type(obj)](obj)
    return _share(obj)


def _share_record(obj: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """A record declaring `__frozen__` (pf's, session 15) shared as a frozen dataclass is (`_share_value`): when its
    class refuses an assignment (`sharing.check_frozen`, else an internal error) and it hashes by value (nothing
    mutable in it); else copied by its own `__reduce__`."""
    check_frozen(obj)
    if type(obj).__hash__ is not object.__hash__:
        try:
            hash(obj)
        except TypeError:
            pass
        else:
            return _share(obj)
    return obj.__reduce_ex__(PROTOCOL)  # type: ignore[no-any-return]


def _shared(i: int) -> Event:
    """The event a fold copy refers to (a module-level function: the pickle names it, not a copy of the list)."""
    return _EVENTS[i]


def copy_folds(traces: Any) -> Any:
    """An independent copy of the folds `traces` (an `Incremental`'s `router.traces`) sharing their events."""
    table = _dispatch()
    if _COPY_TABLE[0] != _scanned or not _COPY_TABLE[1]:
        frozen = {cls: _share_value for cls in table if cls in _FIELDS}
        records = dict.fromkeys(_RECORDS, _share_record)
        _COPY_TABLE[:] = [_scanned, {**table, **frozen, **records, Event: _share, frozenset: _share}]
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, PROTOCOL)
    pickler.dispatch_table = _COPY_TABLE[1]
    try:
        pickler.dump(traces)
        buf.seek(0)
        return _Thawer(buf).load()
    finally:
        _EVENTS.clear()
