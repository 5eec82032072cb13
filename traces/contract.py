"""The vocabulary as a checked contract (issue 30): a trace is checked against the vocabulary tables
(`model/<mechanism>/vocabulary.py`, `model/kernel/vocabulary.py`) for every kind, its recorder (a `Role`
predicate over the event and the trace before it), every attribute's presence (required or optional), type,
format and allowed values, and every ordering rule of the tables (`Order` predicates over the whole trace).

Each breach is a `Finding` naming the mechanism, kind and attribute (the recorder is named `node`, the entity
`entity`, an ordering its rule), so a drift between what the simulators record and what the docs say fails a
test with the kind and attribute named (`tests/unit/test_vocabulary_contract.py`). The helpers below build the
roles, formats and orderings the tables use.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from traces.schema import Event
from traces.vocabulary import Format, Order, Role, Vocabulary


@dataclass(frozen=True, order=True)
class Finding:
    """One breach of the contract, naming the kind and the attribute (or `node`, `entity`, `order`)."""

    mechanism: str
    kind: str
    attr: str
    what: str
    seq: int = -1

    def __str__(self) -> str:
        return f"{self.mechanism} {self.kind}.{self.attr}: {self.what} (seq {self.seq})"


class History:
    """The trace before the event being checked: its earlier events, indexed by (kind, entity) and kind."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.by_kind_entity: dict[tuple[str, str], list[Event]] = defaultdict(list)
        self.by_kind: dict[str, list[Event]] = defaultdict(list)

    def add(self, e: Event) -> None:
        self.events.append(e)
        self.by_kind_entity[(e.kind, e.entity)].append(e)
        self.by_kind[e.kind].append(e)

    def of(self, kind: str, entity: str) -> list[Event]:
        return self.by_kind_entity.get((kind, entity), [])

    def last(self, kind: str) -> Event | None:
        found = self.by_kind.get(kind)
        return found[-1] if found else None


# ---- types, formats, roles ------------------------------------------------------------------------------

_SCALAR: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def type_holds(type_: str, value: Any) -> bool:
    """Whether `value` has the documented type (`string`, `integer`, `boolean`, `list of strings`, `list of
    integers`, each possibly `... or null`)."""
    base, _, null = type_.partition(" or ")
    if value is None:
        return null == "null"
    if base.startswith("list of "):
        item = _SCALAR[base.removeprefix("list of ").removesuffix("s")]
        return isinstance(value, list) and all(item(v) for v in value)
    return _SCALAR[base](value)


def pattern(text: str, regex: str, *, strict: bool = True) -> Format:
    """A format given by a regular expression the whole string must match; `strict` False: the simulators' form
    of a value the checker only compares (any string is accepted from a system)."""
    compiled = re.compile(regex)
    return Format(text, lambda v: isinstance(v, str) and compiled.fullmatch(v) is not None, strict)


def json_object(text: str, keys: Iterable[str] | None = None) -> Format:
    """A string holding a JSON object; with `keys`, only those keys (any subset)."""
    allowed = None if keys is None else frozenset(keys)

    def holds(v: Any) -> bool:
        try:
            obj = json.loads(v)
        except (TypeError, ValueError):
            return False
        return isinstance(obj, dict) and (allowed is None or set(obj) <= allowed)

    return Format(text, holds)


SIM = Role("`sim` (or `harness`, the conformance harness)", lambda e, h: e.node in ("sim", "harness"))


def named_by(attr_name: str, text: str, *, strict: bool = True) -> Role:
    """The node the event's attribute `attr_name` names."""
    return Role(text, lambda e, h: e.node == e.attrs.get(attr_name), strict)


def the_entity(text: str) -> Role:
    return Role(text, lambda e, h: e.node == e.entity)


# ---- orderings --------------------------------------------------------------------------------------------

Key = Callable[[Event], Any]
Pred = Callable[[Event], bool]
Hit = tuple[str, str, str, int]  # (kind, attribute, what, seq)


def _any(e: Event) -> bool:
    return True


def before(
    text: str,
    first: frozenset[str] | set[str],
    then: frozenset[str] | set[str],
    key_first: Key,
    key_then: Key,
    *,
    instant: bool = True,
    required: bool = False,
    when: Pred = _any,
    when_first: Pred = _any,
) -> Order:
    """An ordering: an event of `then` (satisfying `when`) comes after the events of `first` (satisfying
    `when_first`) with the same key: at the same instant (`instant`), or anywhere in the trace. With
    `required`, such a preceding event must exist (the `then` event is caused by it)."""

    def check(events: list[Event], strict: bool = True) -> Iterator[Hit]:
        seen: dict[Any, list[Event]] = defaultdict(list)
        for e in events:
            if e.kind in first and when_first(e):
                seen[(e.ts_ms, key_first(e)) if instant else key_first(e)].append(e)
        for e in events:
            if e.kind not in then or not when(e):
                continue
            found = seen.get((e.ts_ms, key_then(e)) if instant else key_then(e), [])
            if any(f.seq > e.seq for f in found) and not any(f.seq < e.seq for f in found):
                later = min(f for f in found if f.seq > e.seq)
                yield e.kind, "order", f"recorded before its {later.kind} (seq {later.seq}): {text}", e.seq
            elif required and strict and not any(f.seq < e.seq for f in found):
                yield e.kind, "order", f"no {'/'.join(sorted(first))} precedes it: {text}", e.seq

    return Order(text, check)


def last_of(text: str, last: str, key: Key, scope: Pred = _any) -> Order:
    """Nothing with the same key (among events satisfying `scope`) after the event of kind `last`."""

    def check(events: list[Event], strict: bool = True) -> Iterator[Hit]:
        ends: dict[Any, int] = {}
        for e in events:
            if e.kind == last:
                ends.setdefault(key(e), e.seq)
        for e in events:
            end = ends.get(key(e)) if e.kind != last and scope(e) else None
            if end is not None and e.seq > end:
                yield e.kind, "order", f"recorded after the {last} (seq {end}): {text}", e.seq

    return Order(text, check)


def custom(text: str, check: Callable[[list[Event]], Iterable[Hit]], *, lenient: bool = True) -> Order:
    """An ordering by its own check; `lenient` False: it demands events a system's trace may leave out, so it
    binds the simulators only."""
    return Order(text, lambda events, strict=True: check(events), lenient)


# ---- the check --------------------------------------------------------------------------------------------


def _check_event(
    e: Event, vocab: Vocabulary, hist: History, needed: frozenset[tuple[str, str]] | None
) -> Iterator[Finding]:
    """One event against its kind's row; `needed` None: every row as the simulators keep it (strict), else only
    what the checker demands: the presence, type, format and values of the attributes it needs."""
    doc = vocab.get(e.kind)
    mech = vocab.mechanism
    if doc is None:
        yield Finding(mech, e.kind, "", "kind not in the vocabulary", e.seq)
        return
    if doc.role is not None and (needed is None or doc.role.strict) and not doc.role.holds(e, hist):
        yield Finding(mech, e.kind, "node", f"recorded by {e.node!r}, not {doc.recorder}", e.seq)
    if doc.entity_fmt is not None and (needed is None or doc.entity_fmt.strict) and not doc.entity_fmt.holds(e.entity):
        yield Finding(mech, e.kind, "entity", f"{e.entity!r} is not {doc.entity_fmt.text}", e.seq)
    for name in sorted(set(e.attrs) - doc.attr_names()):
        yield Finding(mech, e.kind, name, "attribute not in the vocabulary", e.seq)
    for a in doc.attrs:
        strict = needed is None
        if not strict and (e.kind, a.name) not in needed:  # type: ignore[operator]
            continue  # recorded or optional: compared by the rules when present, never needed
        if a.name not in e.attrs:
            if not a.optional:
                yield Finding(mech, e.kind, a.name, "required attribute missing", e.seq)
            continue
        v = e.attrs[a.name]
        if not type_holds(a.type, v):
            yield Finding(mech, e.kind, a.name, f"{v!r} is not of type {a.type}", e.seq)
            continue
        items = v if isinstance(v, list) else [] if v is None else [v]
        for item in items:
            if a.values and item not in a.values:
                yield Finding(mech, e.kind, a.name, f"{item!r} is not one of {list(a.values)}", e.seq)
            elif a.fmt is not None and (strict or a.fmt.strict) and not a.fmt.holds(item):
                yield Finding(mech, e.kind, a.name, f"{item!r} is not in the format {a.fmt.text}", e.seq)


def check_trace(events: list[Event], vocabs: Iterable[Vocabulary], *, strict: bool = True) -> list[Finding]:
    """Every breach of the vocabulary tables by one trace (events in seq order), sorted by seq. `strict`: as the
    simulators must keep them (every recorded attribute, every format, every ordering); otherwise only what the
    checker demands of any system's trace (the attributes it needs, their strict formats and values, the
    recorders, and the orderings of events the trace holds: an ordering that demands a preceding event is not
    applied when the trace lacks it)."""
    by_mech = {v.mechanism: v for v in vocabs}
    needed = {m: None if strict else v.needed() for m, v in by_mech.items()}
    hist = History()
    out: list[Finding] = []
    for e in events:
        vocab = by_mech.get(e.mechanism)
        if vocab is None:
            out.append(Finding(e.mechanism, e.kind, "", "mechanism has no vocabulary", e.seq))
        else:
            out += _check_event(e, vocab, hist, needed[e.mechanism])
        hist.add(e)
    for vocab in by_mech.values():
        for order in vocab.ordering:
            if strict or order.lenient:
                out += [Finding(vocab.mechanism, k, a, w, s) for k, a, w, s in order.check(events, strict)]
    return sorted(out, key=lambda f: (f.seq, f.mechanism, f.kind, f.attr, f.what))
