"""The input faults of the shadow redundancy fold: what a partial or foreign trace can lack, in one place.

The fold (`monitor.SrFold`) turns only a `traces.verdict.InputFault` into an unknown note (the
event, what it lacks, and that its entity is not judged from there on); any other exception raised by the
rule code (`step.py`, `creation.py`, `maintenance.py`, `liveness.py`) is a bug of haconform and propagates
(the engines report it as an internal error, exit 3). The faults of an sr trace, each raised here:

1. an attribute the rules read that the event lacks (`ATTRS`, read where the event is judged: a RECEIVE, a
   copy's move once its instance is known, an XQUERYDISCARD; and the `inst` of any event of a known message);
2. an attribute held in a type the rules cannot use: an `inst` that is a list or an object (it names an
   instance), a server (`shadow`, `primary`) or a fork that is not a string, `forks`, `plan` or PARTITION
   `groups` that are not lists, a fork list entry that is not a string, an attempt number (`try`) that is
   not a number;
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

from collections.abc import Callable
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
    ev.HAREDIRECT: (("try", "int"), ("shadow", "str")),
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
    ev.XQUERYDISCARD: (("primary", "str"), ("ok", "any")),
}
ATTRS = _ATTRS  # the table, for the documentation and the tests
_ABSENT = object()  # an attribute not recorded (its type, `object`, is allowed only for an optional one)
_SCALARS = frozenset({str, int, float, bool, type(None)})  # what names something (an instance, a server)
_ALLOWED: dict[str, frozenset[type]] = {
    "any": _SCALARS | {list, dict},
    "key": _SCALARS,
    "str": frozenset({str}),
    "int": frozenset({int, bool}),
    "list": frozenset({list}),
    "strs": frozenset({list}),  # and every item a string
}
_STR = frozenset({str})
_MEANING = {
    "key": "a name or a number",
    "str": "a string",
    "int": "an integer",
    "list": "a list",
    "strs": "a list of strings",
}

Check = Callable[[Event], None]


def unreadable(e: Event, what: str) -> InputFault:
    """The fault of one event: `<event> (<kind>): unreadable attributes (<what>)`."""
    return input_fault(f"unreadable attributes ({what})", e)


def _fault(e: Event) -> None:
    """The slow path of a check that failed: raise the fault naming the first attribute at fault."""
    a = e.attrs
    for name, c in _ATTRS[e.kind]:
        v = a.get(name, _ABSENT)
        if v is _ABSENT:
            if c[-1] != "?":
                raise unreadable(e, f"no attribute {name!r}")
            continue
        check = c.rstrip("?")
        if type(v) not in _ALLOWED[check] or (check == "strs" and not all(type(x) is str for x in v)):
            raise unreadable(e, f"{name}={v!r} is not {_MEANING[check]}")


def _checker(checks: tuple[tuple[str, str], ...]) -> Check:
    """One kind's check as the hot path runs it: the type of each attribute (`_ABSENT`'s when not recorded)
    looked up in the set of types allowed, the items of a list of strings, and `_fault` when one fails."""
    pairs = tuple((name, _ALLOWED[c.rstrip("?")] | ({object} if c[-1] == "?" else set())) for name, c in checks)
    lists = tuple(name for name, c in checks if c.startswith("strs"))
    if len(pairs) == 1 and not lists:
        ((name, allowed),) = pairs

        def one(e: Event) -> None:
            if type(e.attrs.get(name, _ABSENT)) not in allowed:
                _fault(e)

        return one
    if len(pairs) == 2 and not lists:
        (name1, allowed1), (name2, allowed2) = pairs

        def two(e: Event) -> None:
            a = e.attrs
            if type(a.get(name1, _ABSENT)) not in allowed1 or type(a.get(name2, _ABSENT)) not in allowed2:
                _fault(e)

        return two

    def many(e: Event) -> None:
        a = e.attrs
        for name, allowed in pairs:
            if type(a.get(name, _ABSENT)) not in allowed:
                _fault(e)
        for name in lists:
            v = a.get(name)
            if v and not {*map(type, v)} <= _STR:  # (a list, checked above: its items' types)
                _fault(e)

    return many


# event kind -> its check (`readable`): built once from `_ATTRS`
CHECKS: dict[str, Check] = {kind: _checker(checks) for kind, checks in _ATTRS.items()}


def readable(e: Event) -> None:
    """Raise the input fault of `e` when it lacks an attribute its rules read, or holds one in a type they
    cannot use (`ATTRS`; items 1 and 2 of the module docstring). `step._move` runs `CHECKS` itself."""
    check = CHECKS.get(e.kind)
    if check is not None:
        check(e)


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
