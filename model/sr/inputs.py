"""The input faults of the shadow redundancy fold: what a partial or foreign trace can lack, in one place.

Issue 29: the fold (`monitor.SrFold`) turns only a `traces.verdict.InputFault` into an unknown note (the
event, what it lacks, and that its entity is not judged from there on); any other exception raised by the
rule code (`step.py`, `creation.py`, `maintenance.py`, `liveness.py`) is a bug of haconform and propagates
(the engines report it as an internal error, exit 3). The faults of an sr trace, each raised here:

1. an attribute the rules read that the event lacks (`ATTRS`, read where the event is judged: a RECEIVE, a
   copy's move once its instance is known, an XQUERYDISCARD; and the `inst` of any event of a known message);
2. an attribute held in a type the rules cannot use: an `inst`, `shadow` or `primary` that is a list or an
   object (it names an instance or a server), `forks`, `plan` or PARTITION `groups` that are not lists,
   a fork or a fork list entry that is not a string, an attempt number (`try`) that is not a number;
3. a fork whose name is none of the vocabulary's kinds (`mbx`, `ext:`, `hub:`, `dsn`, `journal`;
   `state.FORK_KINDS`), read where the rule needs its kind (a duplicate delivery, a Safety Net resubmission);
4. a recorded configuration that does not parse (TRACE_START `config`, SR_CONFIG `sr` / `topology`: not
   JSON, not objects, a topology entry without its site, settings the seed forbids: `state.ConfigError`).
   `World.configure` notes it and keeps the defaults; the trace goes on being judged.

The entities whose beginning the trace lacks (an event of a message whose RECEIVE is not in it, an event of a
server of another version) are not faults: the fold notes them and the rules count them as not judged.
Vocabulary: `model/sr/vocabulary.py` (types and meanings of every attribute).
"""

from __future__ import annotations

from typing import Any

from model.sr import events as ev
from model.sr.state import FORK_KINDS
from traces.schema import Event
from traces.verdict import InputFault, input_fault

# what a check reads: "key" (present, names something: not a list or an object), "str" (present, a string),
# "int" (present, an integer), "strs?" (when present, a list of strings), "list?" (when present, a list),
# "key?" (when present, names something)
_ATTRS: dict[str, tuple[tuple[str, str], ...]] = {
    ev.RECEIVE: (("inst", "key"), ("forks", "strs"), ("plan", "list?")),
    ev.HAREDIRECT: (("try", "int"), ("shadow", "key")),
    ev.HARECEIVE: (("forks", "strs?"),),
    ev.SHADOW_ACK: (("shadow", "any"),),
    ev.SESSION_TIMEOUT: (("session", "any"),),
    ev.REJECT: (("response", "any"),),
    ev.DELIVER: (("fork", "str"),),
    ev.DUPLICATEDELIVER: (("fork", "str"),),
    ev.SEND: (("fork", "str"),),
    ev.FAIL: (("forks", "strs?"),),
    ev.DISCARD_NOTIFY: (("fork", "str"),),
    ev.RESUBMIT: (("fork", "str"),),
    ev.PROMOTE: (("reason", "key?"),),
    ev.DISCARD_EXPIRE: (("shadow", "key?"),),
    ev.XQUERYDISCARD: (("primary", "key"), ("ok", "any")),
}
ATTRS = _ATTRS  # the table, for the documentation and the tests
_ABSENT = object()
# a check as the hot path runs it: (attribute, required, the types it may have or None for any, a list of
# strings); built once from `_ATTRS`. A value that names something (an instance, a server) is a JSON scalar.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_TYPES = {"any": None, "key": _SCALARS, "str": frozenset({str}), "int": frozenset({int, bool})}
_TYPES["list"] = _TYPES["strs"] = frozenset({list})
_CHECKS: dict[str, tuple[tuple[str, bool, frozenset[type] | None, bool], ...]] = {
    kind: tuple((name, c[-1] != "?", _TYPES[c.rstrip("?")], c.startswith("strs")) for name, c in checks)
    for kind, checks in _ATTRS.items()
}
_MEANING = {
    "key": "a name or a number",
    "str": "a string",
    "int": "an integer",
    "list": "a list",
    "strs": "a list of strings",
}


def unreadable(e: Event, what: str) -> InputFault:
    """The fault of one event: `<event> (<kind>): unreadable attributes (<what>)`."""
    return input_fault(f"unreadable attributes ({what})", e)


def readable(e: Event) -> None:
    """Raise the input fault of `e` when it lacks an attribute its rules read, or holds one in a type they
    cannot use (`ATTRS`; items 1 and 2 of the module docstring). One dict lookup for most events."""
    checks = _CHECKS.get(e.kind)
    if checks is None:
        return
    a = e.attrs
    for name, required, types, strs in checks:
        v = a.get(name, _ABSENT)
        if v is _ABSENT:
            if required:
                raise unreadable(e, f"no attribute {name!r}")
        elif (types is not None and type(v) not in types) or (strs and not all(type(x) is str for x in v)):
            check = dict(_ATTRS[e.kind])[name].rstrip("?")
            raise unreadable(e, f"{name}={v!r} is not {_MEANING[check]}")


def inst_of(e: Event) -> Any:
    """The `inst` of an event of a known message (item 1, 2): the instance it names."""
    n = e.attrs.get("inst", _ABSENT)
    if n is _ABSENT:
        raise unreadable(e, "no attribute 'inst'")
    if isinstance(n, (list, dict)):
        raise unreadable(e, f"inst={n!r} is not a name or a number")
    return n


def attempt_number(e: Event) -> int:
    """HAREDIRECTFAIL `try` (0 when not recorded): a number, or a string holding one (item 2)."""
    try:
        return int(e.attrs.get("try", 0))
    except (TypeError, ValueError, OverflowError):
        raise unreadable(e, f"try={e.attrs.get('try')!r} is not a number") from None


def fork_kind(e: Event, fork: str) -> str:
    """The kind of a fork named by `e` (item 3; `state.fork_kind` for the generator's own forks)."""
    found = FORK_KINDS.get(fork.split(":", 1)[0])
    if found is None:
        raise unreadable(e, f"fork {fork!r} is of no kind the vocabulary knows ({sorted(FORK_KINDS)})")
    return found


def groups_of(e: Event) -> list[Any]:
    """A PARTITION's `groups` (item 2): a list, or nothing."""
    groups = e.attrs.get("groups") or []
    if not isinstance(groups, list):
        raise unreadable(e, f"groups={groups!r} is not a list")
    return groups
