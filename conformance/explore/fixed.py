"""The fixed table of an exploration: what every state of it holds as the very same object, pickled as a
reference and never copied (issue 33, "The explorer expands by copying"; session 14).

Every state of one exploration holds the configuration it was built with (sr's `SrConfig`, `Timing`, the
`Topology`; pf's `Params`, `Ctx`, `Decisions`; am's `Options`, `Layout`), and its monitor's fold holds the
trace's first events. They are part of the bound, not of the state: a step never changes them. Before session
14 each copy of a state pickled them again (sr: about a fifth of a blob) and each fingerprint walked them again.

The table is built from the first root of an exploration, as frozen (`Explorer.freeze`), so the objects of that
root, and of every state copied from it, are the table's own. It holds, in the order a pickle of the state meets
them:

- every frozen dataclass (a configuration, a value) and (session 15) every object of a class declaring
  `__frozen__ = True` (pf's records, `model/pf/state.py`; its class must refuse an assignment,
  `sharing.check_frozen`): its fields never change; what a field holds (a dict of SrConfig's) is trusted not to
  change, and checked;
- every `traces.schema.Event`: immutable by contract (its docstring), already shared by the edge verdict's copy
  of the folds (session 13);
- every object of a class that declares itself fixed (`__fixed__ = True`: the kernel's `Topology`, sr's
  `Policy`): trusted, and checked;
- (session 24) the state words of the root's kernel generators that have not drawn (`KernelRandom.words`: the
  seed's Mersenne Twister state, 2.5 KB, a quarter to a third of every blob, though an exploration whose choices
  are scripted never draws): a generator in those words is pickled as a reference and thawed as a new generator
  holding the table's (immutable) `bytes` (`_fixed_random`); one that drew, or holds other words, is pickled
  whole, as before. The words are part of the tag.

A blob refers to a table object as `(tag, index)`, by a reducer of its class in the pickler's dispatch table (a
`Pickler.persistent_id` would be one Python call per pickled object, atoms included: only the candidates' classes
pay here). `tag` is the digest of the table's canonical encoding: the same bound builds the same table in every
process (a Spark task builds its own from the same first root, `Explorer.prime`), so a blob thaws in any process
holding a table of that tag, and fails, naming the tag, in one that holds none.

What a table object holds must not be reachable from the rest of the state too: a copy would refer to the table's
object and hold its own copy of the inner one, two objects where the original had one (the fingerprint sees the
difference, and a change through one would not show through the other). `tests/explore/test_fixed_table.py`
compares every edge's fingerprint with and without the table on three default bounds; it refused am's boot facts
(`ModelSystem.initial`, whose attribute dicts other parts of the state come to hold), tried in session 14. Since
session 15 the build checks it (`sharing.apart`): a candidate holding a mutable object the rest of the state
reaches too is left out (`left_out`), and so is a candidate holding one left out. It left out three of am's first
events, whose attribute lists `ModelSystem` keeps.

The fingerprint puts a value of the table (a frozen record whose encoding holds nothing mutable, so no back
reference) as its tokens remembered per renaming: the same tokens as walking it, so every fingerprint is
unchanged, and a replayed state, which holds its own equal objects, has the fingerprint of its copy. `verify`
re-encodes the table at the end of a search: an object a step changed (one wrongly declared fixed) is an
internal error naming it; `end_of_search` is that check for any process that explored against the table (a
Spark worker too).
"""

from __future__ import annotations

import hashlib
import pickle
import types
from collections.abc import Callable, Mapping
from typing import Any

from conformance.explore.fingerprint import Walker, frozen_record
from conformance.explore.sharing import apart, check_frozen
from model.kernel.sim import KernelRandom
from traces.schema import Event

Words = tuple[int, bytes, "float | None"]  # a kernel generator's state while nothing drew (`KernelRandom.words`)
_TABLES: dict[str, FixedTable] = {}  # this process's tables by tag (the last few: see `FixedTable.register`)
_KEEP = 8


class FixedTable:
    """The objects every state of one exploration shares (see the module docstring), by index."""

    def __init__(self, objects: list[Any], salt: str = "", words: list[Words] | None = None) -> None:
        self.objects = objects
        self.ids = {id(o): i for i, o in enumerate(objects)}
        self.digests = [_encoding(o) for o in objects]
        self.words = words or []  # the root's generators' state words while nothing drew (session 24)
        shown = [f"R{v}:{g!r}:{hashlib.blake2b(raw, digest_size=16).hexdigest()}" for v, raw, g in self.words]
        text = "\x00".join([salt, *self.digests, *shown])  # salt: the model (two mutants' lambdas may encode alike)
        self.tag = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        self._tokens: dict[tuple[tuple[str, str], ...], dict[int, list[str]]] = {}  # per renaming
        self._dispatch: tuple[int, dict[Any, Any]] | None = None
        self._seeds: tuple[Any, list[dict[int, list[str]]]] = (None, [])
        self.left_out: list[Any] = []  # candidates holding a mutable object the rest of the state holds (`of`)

    @classmethod
    def of(cls, parts: Any, base: Mapping[Any, Callable[[Any], Any]], salt: str = "") -> FixedTable:
        """The table of the state `parts` (what `state.freeze` pickles), registered in this process: its candidates
        in the order a pickle of it meets them (`base`: the pickler's dispatch table, `state._dispatch()`; `salt`
        names the model, mutant included, in the tag)."""
        found: list[Any] = []
        ids: set[int] = set()
        words: list[Words] = []

        class Collecting(pickle.Pickler):
            def reducer_override(self, obj: Any) -> Any:
                if type(obj) is types.FunctionType:  # not pickled here (a mutant's lambda in pf's `Decisions`)
                    return tuple, ()
                if type(obj) is KernelRandom and KernelRandom in base:  # its words as the pickle takes them
                    base[KernelRandom](obj)  # (`state._reduce_random` keeps them on the generator)
                    if obj.words is not None and obj.words not in words:
                        words.append(obj.words)
                if id(obj) not in ids and fixed_candidate(obj):
                    ids.add(id(obj))
                    found.append(obj)
                return NotImplemented

        pickler = Collecting(_Sink(), PROTOCOL)
        pickler.dispatch_table = dict(base)
        pickler.dump(parts)
        for o in found:  # session 15: a class wrongly declared frozen is an internal error naming it
            check_frozen(o)
        kept, left = apart(found, [parts])  # nor one holding what the rest of the state holds too (session 15)
        made = cls(kept, salt, words)
        made.left_out = left
        made.register()
        return made

    def register(self) -> None:
        """Make this table the one blobs of its tag thaw against in this process (the last `_KEEP` tags kept)."""
        _TABLES[self.tag] = self
        while len(_TABLES) > _KEEP:
            del _TABLES[next(iter(_TABLES))]

    def ensure(self) -> None:
        """Registered again if it was dropped (a process that met more than `_KEEP` tables since)."""
        if self.tag not in _TABLES:
            self.register()

    def dispatch(self, base: dict[Any, Callable[[Any], Any]], scanned: int) -> dict[Any, Callable[[Any], Any]]:
        """`base` with each table class's reducer referring to the table's objects (rebuilt when `scanned`, the
        count of modules `base` was made from, changes); the table registered again if it was dropped."""
        self.ensure()
        if self._dispatch is not None and self._dispatch[0] == scanned:
            return self._dispatch[1]
        table = dict(base)
        for klass in {type(o) for o in self.objects}:
            table[klass] = self._reducer(base.get(klass))
        if self.words and KernelRandom in base:
            table[KernelRandom] = self._random_reducer(base[KernelRandom])
        self._dispatch = (scanned, table)
        return table

    def _random_reducer(self, reduce: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """A kernel generator that has not drawn, in a state of the table's words (the same bytes, or equal ones),
        as a reference to them: a new generator each thaw, holding the table's words (`_fixed_random`). Each state
        pickled them as 2.5 KB (a quarter to a third of a blob) though a scripted exploration never draws."""
        tag, words = self.tag, self.words

        def by_reference(rng: KernelRandom) -> Any:
            made = reduce(rng) if rng.words is None else None  # (which keeps its words: a fresh root's generator)
            kept = rng.words
            if kept is not None:
                version, raw, gauss = kept
                for i, (v, r, g) in enumerate(words):
                    if (raw is r or raw == r) and version == v and gauss == g:  # the whole state: equal, the same
                        return _fixed_random, (tag, i)
            return made if made is not None else reduce(rng)

        return by_reference

    def _reducer(self, reduce: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
        ids, tag = self.ids, self.tag

        def by_reference(obj: Any) -> Any:
            i = ids.get(id(obj))
            if i is not None and self.objects[i] is obj:
                return _fixed, (tag, i)
            return reduce(obj) if reduce is not None else obj.__reduce_ex__(PROTOCOL)

        return by_reference

    def tokens(self, rename: Mapping[str, str] | None) -> dict[int, list[str]]:
        """The tokens of each value of the table (immutable by construction: frozen and holding nothing mutable)
        under `rename`, by id, as a `Walker` with that renaming puts them: seeds for `Walker.values`."""
        key = tuple(sorted((rename or {}).items()))
        found = self._tokens.get(key)
        if found is None:
            found = self._tokens[key] = {}
            pattern = Walker(rename)._pattern
            for o in self.objects:
                if _pure_value(o):
                    sub = Walker(rename, pattern)
                    sub.walk(o)
                    found[id(o)] = sub.tokens
        return found

    def seeds(self, renames: list[dict[str, str]]) -> list[dict[int, list[str]]]:
        """`tokens` per renaming of `renames` (the identity alone when there is none), remembered for the list."""
        if self._seeds[0] is not renames:
            self._seeds = (renames, [self.tokens(r) for r in renames or [{}]])
        return self._seeds[1]

    def verify(self, where: str) -> None:
        """Every object of the table encodes as when the table was built: one that changed was wrongly fixed."""
        for i, (o, was) in enumerate(zip(self.objects, self.digests, strict=True)):
            if _encoding(o) != was:
                raise RuntimeError(
                    f"{where}: the fixed table's object {i} (a {type(o).__module__}.{type(o).__qualname__}) was "
                    "changed by a step: it is not fixed (conformance.explore.fixed), and every state sharing it "
                    "was changed with it"
                )


PROTOCOL = 5


def end_of_search(table: FixedTable | None, where: str) -> None:
    """The check at the end of a search, in every process that explored against `table` (the single-process
    explorer's `run`; a Spark worker after its tasks): an object of it a step changed is an internal error."""
    if table is not None:
        table.verify(where)


class _Sink:
    """A pickle's output thrown away (the collecting pickle only walks the state)."""

    def write(self, data: Any) -> int:
        return len(data)


def _fixed(tag: str, i: int) -> Any:
    """The table object a blob refers to (a module-level function: the pickle names it)."""
    return _table(tag).objects[i]


def _table(tag: str) -> FixedTable:
    table = _TABLES.get(tag)
    if table is None:
        raise RuntimeError(
            f"a state refers to the fixed table {tag}, which this process has not built (conformance.explore."
            "fixed: the explorer builds it from its first root before thawing any state)"
        )
    return table


def _fixed_random(tag: str, i: int) -> KernelRandom:
    """A new kernel generator in the state of the table's words `i`, not set until it draws (`KernelRandom.thawed`):
    each state its own generator, all holding the one (immutable) `bytes` of the table."""
    return KernelRandom.thawed(*_table(tag).words[i])


def fixed_candidate(obj: Any) -> bool:
    """An object every state may share: an `Event`, an object of a class declaring `__fixed__`, or a frozen record
    (a frozen dataclass, a configuration, or a class declaring `__frozen__`, pf's records: session 15; what it holds
    is trusted not to change, and checked by `verify`)."""
    cls = type(obj)
    if cls is Event or getattr(cls, "__fixed__", False) is True:
        return True
    return frozen_record(cls)


def _pure_value(obj: Any) -> bool:
    if not frozen_record(type(obj)):
        return False
    w = Walker()
    w.walk(obj)
    return not w.seen


def _encoding(obj: Any) -> str:
    w = Walker()
    w.walk(obj)
    return w.digest()
