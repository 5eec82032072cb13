"""Verdicts, violations, rules, and the fold protocol every trace monitor implements.

These types sit below the mechanisms (traces <- spec <- kernel <- mechanisms <- registry <- engine), so a
mechanism package never imports the engine to say what it found. Verdicts are three-valued, as in Jepsen's
Elle: valid, invalid, or unknown when a trace is too incomplete to judge. Every violation names its rule,
the requirement ID it enforces, the events involved and one sentence saying why.

A monitor judges by folding: `start(context)` gives a `Fold` holding mutable state for one group (one
trace, or one entity of a trace), `feed(event)` takes the group's events one at a time in sequence order,
and `finish()` gives the verdict. A fold never sorts, copies or holds its input beyond what its state
needs, and it can be saved and restored (`save_fold`, `restore_fold`): checking a group in two segments
with a saved state between them gives the verdict of one pass.

Context: a fold gets the trace's context events (TRACE_START and `*_CONFIG`, `traces.schema.is_context_kind`)
known when it starts, in sequence order, and may be fed later context events inline, in order with the
group's own events (a streaming engine that meets them as it reads). `ContextCursor` merges the two: a
context event is taken once, before the first event with a higher sequence number, whichever way it came.
"""

from __future__ import annotations

import itertools
import pickle
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:  # the compiled build: Cython's decorators type locals as C types
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from traces.schema import CONTEXT_START, CONTEXT_SUFFIX, Event

RuleKind = Literal["always", "eventually", "sometimes"]
Scope = Literal["entity", "trace"]


class InputFault(Exception):
    """A documented fault of the trace being judged, not of the checker: the one exception a fold turns into an
    unknown note (issue 29). Raised by rule code where a partial or foreign trace leaves it without what it
    needs: an entity whose opening event the trace does not show, an attribute the vocabulary requires that the
    event lacks or holds in the wrong type, a configuration that does not parse, a reference to a server or an
    object the recorded context never introduced. Every other exception raised in rule code is a bug in
    haconform: it propagates, and the engines report it as an internal error (exit 3), never as "could not be
    judged". `input_fault` converts the lookups that meet such a trace into this type at the one place each is
    made."""


def input_fault(what: str, e: Event | None = None) -> InputFault:
    """An `InputFault` naming the event (when known) and what it lacks."""
    return InputFault(f"{e.event_id} ({e.kind}): {what}" if e is not None else what)


@dataclass(frozen=True, slots=True, eq=False)
class Rule:
    """One row of a mechanism's rules table (`model/<mechanism>/rules.py`), used as an object at every call
    site (`rules.SHADOW_BEFORE_ACK.violated(...)`), so a rule that is not in a table cannot be named.

    `always`: a safety rule checked at every step; `eventually`: a liveness rule judged at the end of a run
    under the fairness the mechanism's README states; `sometimes`: a reachability check (a run that never
    reaches it is suspicious, never a violation). `params` names the catalogue parameters (IDs such as
    `SR-P13`) whose recorded values bound the rule, so that every parameter that bounds observable
    behaviour can be traced to the rule that checks it. `mechanism` is the value its violations carry.

    Identity is the object (`eq=False`): two tables never share a row. A rule pickles by reference
    (`__reduce__`: its table's module and its name), so a saved fold holds no copy of the table.
    """

    name: str
    requirement: str
    kind: RuleKind
    statement: str
    params: tuple[str, ...] = ()
    mechanism: str = "core"
    table: str = ""  # the module holding the table (`model.sr.rules`): where a pickled reference is resolved

    def violated(
        self,
        evs: Sequence[Event],
        why: str,
        *,
        at: Event | None = None,
        entity: str | None = None,
        **data: Any,
    ) -> Violation:
        """A violation of this rule: the events involved (`evs`), the sentence saying why, and the structured
        values it compared (`data`: the values, the bound, the alternatives the seeds allow; JSON-able). The
        trace and entity are those of `at` (the event being judged) or else of the first event; `entity`
        overrides the entity (a violation that belongs to another entity than the judged event's)."""
        first = at if at is not None else evs[0]
        return Violation(
            self.name,
            self.requirement,
            first.trace_id,
            entity or first.entity,
            tuple(e.event_id for e in evs),
            why,
            self.mechanism,
            data,
        )

    def __reduce__(self) -> tuple:
        if not self.table:
            return (Rule, (self.name, self.requirement, self.kind, self.statement, self.params, self.mechanism))
        return (_rule_by_name, (self.table, self.name))


def _rule_by_name(table: str, name: str) -> Rule:
    """The rule a pickled reference names (`Rule.__reduce__`). Remembered per (table, name) while the table's
    module is the one in `sys.modules` (issue 33, session 17: an explored state's fold refers to its rules, and
    each copy of it looked the table up again: 4-5 us of a 160 us copy of am's)."""
    known = _BY_NAME.get((table, name))
    if known is not None and sys.modules.get(table) is known[0]:
        return known[1]
    import importlib

    module = importlib.import_module(table)
    for rule in rules_in(module):
        if rule.name == name:
            _BY_NAME[(table, name)] = (module, rule)
            return rule
    raise LookupError(f"{table} has no rule {name!r}")


_BY_NAME: dict[tuple[str, str], tuple[Any, Rule]] = {}  # `_rule_by_name`'s: (table, name) -> (its module, the rule)


def rules_in(module: Any) -> tuple[Rule, ...]:
    """Every `Rule` a rules module defines as a module attribute, in definition order (`RULES`, a tuple or a
    name -> rule mapping, when the module has one; else each attribute that is a Rule)."""
    table = getattr(module, "RULES", None)
    if isinstance(table, Mapping):
        return tuple(table.values())
    if isinstance(table, tuple):
        return table
    return tuple(v for v in vars(module).values() if isinstance(v, Rule))


def table(module_name: str, mechanism: str, rows: Iterable[Rule]) -> dict[str, Rule]:
    """A rules table: name -> rule, each row stamped with its mechanism and table module (`Rule.table`), names
    unique. Used by each `model/<mechanism>/rules.py` to build `RULES` from its rule constants."""
    out: dict[str, Rule] = {}
    for r in rows:
        if r.name in out:
            raise ValueError(f"{module_name}: rule {r.name!r} defined twice")
        object.__setattr__(r, "mechanism", mechanism)
        object.__setattr__(r, "table", module_name)
        out[r.name] = r
    return out


class Tally:
    """What one fold judged, per rule (issue 29): `judged[name]` counts the instances a rule evaluated (an
    acknowledgement judged against its shadow, a BCSS run judged for order), `unjudged[name]` the instances it
    met but could not judge, with the first reason. Violated instances are counted from the violations
    themselves; held = judged - violated. Rule code calls `judge(rule)` where it evaluates an instance,
    whatever the outcome, and `skip(rule, reason)` where an instance arose that the trace does not let it
    judge. Plain dicts keyed by rule name: cheap on the hot path, picklable, merged by `merge`."""

    __slots__ = ("judged", "unjudged")

    def __init__(self) -> None:
        self.judged: dict[str, int] = {}
        self.unjudged: dict[str, list] = {}  # name -> [count, first reason]

    @cython.locals(judged=dict)  # its `get` a C call (issue 32, session 16): once per instance judged
    def judge(self, rule: Rule, n: int = 1) -> None:
        judged = self.judged
        name = rule.name
        judged[name] = judged.get(name, 0) + n

    def skip(self, rule: Rule, reason: str, n: int = 1) -> None:
        entry = self.unjudged.get(rule.name)
        if entry is None:
            self.unjudged[rule.name] = [n, reason]
        else:
            entry[0] += n

    def merge(self, other: Tally) -> None:
        for name, n in other.judged.items():
            self.judged[name] = self.judged.get(name, 0) + n
        for name, (n, reason) in other.unjudged.items():
            entry = self.unjudged.get(name)
            if entry is None:
                self.unjudged[name] = [n, reason]
            else:
                entry[0] += n

    def copy(self) -> Tally:
        """An independent copy, of this class (issue 33, session 15: a fold's `finish_copy` finishes one, the
        original going on): every count its own, the reasons shared (strings). A subclass's further slots must
        hold dicts of counts (`model.sr.world.SrTally.moves`), copied as dicts; anything else is refused."""
        new = object.__new__(type(self))
        new.judged = dict(self.judged)
        new.unjudged = {name: list(entry) for name, entry in self.unjudged.items()}
        for cls in type(self).__mro__[:-2]:  # the subclasses' own slots (Tally's and object's are done)
            for name in cls.__dict__.get("__slots__", ()):
                value = getattr(self, name)
                if type(value) is not dict or any(type(n) is not int for n in value.values()):
                    raise TypeError(f"Tally.copy: {cls.__name__}.{name} is not a dict of counts")
                setattr(new, name, dict(value))
        return new

    def __bool__(self) -> bool:
        return bool(self.judged or self.unjudged)

    def __eq__(self, other: object) -> bool:  # a fold saved and restored gives the tally of one pass
        if not isinstance(other, Tally):
            return NotImplemented
        return self.judged == other.judged and self.unjudged == other.unjudged

    __hash__ = None  # type: ignore[assignment]  (mutable)


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Violation:
    """The one violation type (issue 29): the rule and requirement, where (trace, entity), the events involved,
    the sentence saying why, and `data`: the structured values the rule compared (values, bound, allowed
    alternatives), JSON-able, for a report to lay out rather than reword."""

    rule: str
    requirement: str
    trace_id: str
    entity: str
    event_ids: tuple[str, ...]
    explanation: str
    mechanism: str = "core"
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "requirement": self.requirement,
            "mechanism": self.mechanism,
            "trace_id": self.trace_id,
            "entity": self.entity,
            "event_ids": list(self.event_ids),
            "explanation": self.explanation,
        }
        if self.data:
            out["data"] = dict(self.data)
        return out

    def __str__(self) -> str:
        ids = ", ".join(self.event_ids[:5]) + (" ..." if len(self.event_ids) > 5 else "")
        return f"[{self.requirement} {self.rule}] {self.trace_id}/{self.entity}: {self.explanation} (events: {ids})"


@dataclass(frozen=True, slots=True)
class MonitorResult:
    verdict: Verdict
    violations: tuple[Violation, ...] = ()
    notes: tuple[str, ...] = field(default=())  # why a verdict is unknown, or other remarks
    tally: Tally | None = None  # what each rule judged (None: a monitor that does not count yet)

    @staticmethod
    def of(violations: Iterable[Violation], unknown: Iterable[str] = (), tally: Tally | None = None) -> MonitorResult:
        vs, notes = tuple(violations), tuple(unknown)
        if vs:
            return MonitorResult(Verdict.INVALID, vs, notes, tally)
        return MonitorResult(Verdict.UNKNOWN if notes else Verdict.VALID, (), notes, tally)


@runtime_checkable
class Fold(Protocol):
    """One group's judgement in progress: mutable state, fed one event at a time, picklable."""

    def feed(self, e: Event) -> None: ...

    def finish(self) -> MonitorResult: ...


@runtime_checkable
class Monitor(Protocol):
    """Replays recorded events through a mechanism's transition rules, as a fold.

    `scope == "entity"`: a fold receives the events of one (trace_id, mechanism, entity), in sequence order.
    `scope == "trace"`: it receives every event of one trace (all mechanisms, core included). Either way the
    context is the recorded configuration every duration a rule compares must come from, never the event
    being judged. `check` is `start`, `feed` of every event, `finish` (`fold_all`).
    """

    mechanism: str
    scope: Scope

    def start(self, context: Sequence[Event] = ()) -> Fold: ...

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult: ...


def in_seq_order(events: Sequence[Event]) -> Sequence[Event]:
    """`events` as given when already in sequence order (the engines' guarantee), else a sorted copy: a
    convenience for callers holding a list (tests, the harness), never used on a stream."""
    seqs = [e.seq for e in events]
    return events if all(a < b for a, b in itertools.pairwise(seqs)) else sorted(events, key=_seq)


def _seq(e: Event) -> int:
    return e.seq


def restored(cls: type, values: tuple) -> Any:
    """An object of class `cls` with its fields (`cls.__fields__`) set to `values`, `__init__` not run: how the
    classes that are `cdef class`es in the compiled build unpickle (`TraceRulesFold.__reduce__`, `AmFold`'s), the
    same on either path (session 16; here since session 25, with the folds of `model` using it too). Folds saved
    before name it as `conformance.engine.core_fold.restored`, which still resolves to it."""
    new = cls.__new__(cls)
    for name, value in zip(cls.__fields__, values, strict=True):  # type: ignore[attr-defined]
        setattr(new, name, value)
    return new


def reduced(obj: Any) -> tuple[Any, tuple[type, tuple]]:
    """`obj`'s pickle reduction as its class and its fields' values (`type(obj).__fields__`, in order), loaded by
    `restored`: the `__reduce__` of the records and folds that are `cdef class`es in the compiled build and list their
    fields (am's fold and replay state, sr's fold and world), the same on either path."""
    return restored, (type(obj), tuple([getattr(obj, n) for n in type(obj).__fields__]))


def fold_all(monitor: Monitor, events: Iterable[Event], context: Sequence[Event] = ()) -> MonitorResult:
    """One group judged in one pass: start, feed every event in the order given, finish."""
    fold = monitor.start(context)
    for e in events:
        fold.feed(e)
    return fold.finish()


def save_fold(fold: Fold) -> bytes:
    """A fold's whole state as bytes (pickle, highest protocol): `restore_fold` continues it exactly."""
    return pickle.dumps(fold, protocol=pickle.HIGHEST_PROTOCOL)


def restore_fold(blob: bytes) -> Fold:
    """The fold `save_fold` saved. Only ever given bytes this program wrote (a state directory it owns)."""
    fold = pickle.loads(blob)
    if not isinstance(fold, Fold):
        raise TypeError(f"saved state holds a {type(fold).__name__}, not a monitor fold")
    return fold


class ContextCursor:
    """The trace's context events in sequence order, taken once each, merged with a group's own events.

    `start` holds the context known when the fold started; `due(seq)` yields the ones not yet taken with a
    sequence number below `seq` (in order); `taken(e)` is true for a context event fed inline that was
    already taken from the start list (or fed before), so it is not applied twice. State: the list given at
    start (no copy) and an index, plus the highest context seq taken. The list may grow while the fold
    runs (a streaming engine appends each context event as it reads it): never cache its length or its end.

    A `cdef class` in the compiled build (`verdict.pxd`; issue 32, session 26): a fold whose cursor field is typed
    with it reads `index` and `events` per event without an attribute lookup. Pickled as its class and fields
    (`__reduce__`, through `restored`), so a fold saved by one path continues in the other.
    """

    __fields__ = ("events", "index", "last")
    __slots__ = __fields__

    def __init__(self, context: Sequence[Event] = ()) -> None:
        self.events = context
        self.index = 0
        self.last = -1

    def __reduce__(self) -> tuple:
        return restored, (type(self), (self.events, self.index, self.last))

    def due(self, seq: int) -> Iterator[Event]:
        events = self.events
        while self.index < len(events) and events[self.index].seq < seq:
            e = events[self.index]
            self.index += 1
            if e.seq > self.last:
                self.last = e.seq
                yield e

    def rest(self) -> Iterator[Event]:
        """Every context event not yet taken (at the end of the group)."""
        events = self.events
        while self.index < len(events):
            e = events[self.index]
            self.index += 1
            if e.seq > self.last:
                self.last = e.seq
                yield e

    def taken(self, e: Event) -> bool:
        """For an event fed inline: true when it is a context event already taken; else it is marked taken."""
        kind = e.kind
        if not (kind.endswith(CONTEXT_SUFFIX) or kind == CONTEXT_START):  # is_context_kind, inline: per event
            return False
        if e.seq <= self.last:
            return True
        self.last = e.seq
        return False
