"""One trace event (`traces.schema.Event`, re-exported there): a plain class that behaves as the slotted dataclass
it was, so that the compiled build can declare it a `cdef class` (`traces/event.pxd`; issue 32, session 16).

Its readers compiled with their locals typed `Event` (`@cython.locals(e=Event)`, the `.pxd` beside each reader
cimporting it) read `e.kind`, `e.attrs` or `e.seq` as a C struct field, not by a generic attribute lookup (about a
fifth of the compiled check's samples were such lookups, most of them on events). The pure path
(`traces.fastpath`, `HACONFORM_PURE=1`) runs this source as Python: the same class, the same behaviour.

What it keeps of the dataclass (tests/unit/test_event.py): the fields and their order, `__init__` (positional,
keyword, `attrs=None` or nothing as an empty dict), equality (same class, equal fields in order), no hash, no
order, the `repr` `Event(trace_id=..., ...)`, `dataclasses.replace`, `dataclasses.fields` and `asdict` (through
`__dataclass_fields__`, the fields of `_Shape`, a dataclass of the same fields). It pickles as its class and its
fields (`__reduce__`), so a pickle made by one path loads in the other (Spark ships events); a pickle of the
slotted dataclass (saved folds made before session 16: `copyreg.__newobj__`, then `(None, {field: value})`) still
loads (`__setstate__`; tests/engine/test_fast_event.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 2  # the version this checker writes and judges (`traces.schema`, traces/README.md)


@dataclass(slots=True)
class _Shape:
    """The fields of `Event` as a dataclass declares them (its `__dataclass_fields__` is `Event`'s)."""

    trace_id: str
    seq: int
    event_id: str
    ts_ms: int
    node: str
    mechanism: str
    entity: str
    kind: str
    attrs: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION


class Event:
    """One trace event, treated as immutable: no field and no part of `attrs` is changed after construction
    (`dataclasses.replace` makes a changed copy). Not frozen: building one is once per event read.

    Fields, in order: `trace_id`, `seq`, `event_id`, `ts_ms`, `node`, `mechanism`, `entity`, `kind`, `attrs` (a
    dict; `None` or nothing: an empty one), `schema_version` (`traces/README.md` documents each).
    Unhashable and unordered, as the dataclass (tests/unit/test_event.py)."""

    __fields__ = tuple(_Shape.__dataclass_fields__)  # the fields in order, declared once (`_Shape`)
    __slots__ = __fields__
    __match_args__ = __fields__
    __dataclass_fields__ = _Shape.__dataclass_fields__  # `dataclasses.replace`, `fields` and `asdict` read it

    def __init__(
        self,
        trace_id: str,
        seq: int,
        event_id: str,
        ts_ms: int,
        node: str,
        mechanism: str,
        entity: str,
        kind: str,
        attrs: dict[str, Any] | None = None,
        schema_version: int = SCHEMA_VERSION,
    ) -> None:
        self.trace_id = trace_id
        self.seq = seq
        self.event_id = event_id
        self.ts_ms = ts_ms
        self.node = node
        self.mechanism = mechanism
        self.entity = entity
        self.kind = kind
        self.attrs = {} if attrs is None else attrs
        self.schema_version = schema_version

    def _values(self) -> tuple:
        return (self.trace_id, self.seq, self.event_id, self.ts_ms, self.node, self.mechanism, self.entity,
                self.kind, self.attrs, self.schema_version)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return type(self), self._values()

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        """A pickle of the slotted dataclass (before session 16): its state is `(None, {field: value})`."""
        slots = state[1]
        for name in self.__fields__:
            setattr(self, name, slots[name])

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self.__fields__, self._values(), strict=True))
        return f"{type(self).__qualname__}({fields})"

    def to_row(self) -> dict[str, Any]:
        """The JSON Lines row, keys in schema order."""
        return {
            "schema_version": self.schema_version,
            "trace_id": self.trace_id,
            "seq": self.seq,
            "event_id": self.event_id,
            "ts_ms": self.ts_ms,
            "node": self.node,
            "mechanism": self.mechanism,
            "entity": self.entity,
            "kind": self.kind,
            "attrs": self.attrs,
        }

    def to_json(self) -> str:
        row = self.to_row()
        row["attrs"] = dict(sorted(self.attrs.items()))
        return json.dumps(row, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Event:
        attrs = row["attrs"]
        if isinstance(attrs, str):
            attrs = json.loads(attrs)
        return cls(
            trace_id=row["trace_id"],
            seq=int(row["seq"]),
            event_id=row["event_id"],
            ts_ms=int(row["ts_ms"]),
            node=row["node"],
            mechanism=row["mechanism"],
            entity=row["entity"],
            kind=row["kind"],
            attrs=dict(attrs),
            schema_version=int(row["schema_version"]),
        )
