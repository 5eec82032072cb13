"""The input faults of the public folder monitor, in one place (issue 29): what a partial or foreign trace can
lack, and how each is reported. The fold (`monitor.PfFold.feed`) catches `traces.verdict.InputFault` and
nothing else: any other exception raised while judging is a bug in haconform and propagates (the engines
report it as an internal error, exit 3), never "could not be judged".

Raised as `InputFault` (judging of the trace stops, verdict unknown, with the note "<event>: cannot replay
<KIND> (<what>)", or "cannot read" for a context event), each at the one place the lookup is made:
1. an attribute a handler reads that the event lacks, or holds in the wrong type (`ATTRS`, `check_attrs`:
   the attributes of `vocabulary.py` each handler reads unconditionally, and the optional ones it parses);
2. a change number or CNSet text that does not parse (`cn`, `cnset`), an integer that is none (`as_int`);
3. a REPL_SEND whose attributes do not make a message (`message`);
4. a configuration (PF_CONFIG, NET_CONFIG) or restated parameters that do not parse (`config`, `params`).

Reported as notes without stopping (the event is not judged, and the rules it would have judged are
skipped in the fold's tally with the reason), by the handlers themselves:
5. no PF_CONFIG before the first pf event (`monitor.feed`: judging stops, nothing to judge by);
6. an event of a store before it mounted its store (REPLICA_CREATE of 1-1);
7. an event of a replica whose REPLICA_CREATE the trace does not show (`handlers.unseen`), a message sent
   for a folder without a replica in the trace, a message received that the trace never shows sent, a
   restore from a backup not in the trace, a hierarchy replica list before its store mounted;
8. at the END: no latency bound recorded, no quiescent phase stated, a trace ending before the convergence
   bound (`convergence.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from model.pf.cnset import CN, CNSet
from model.pf.config import RunConfig
from model.pf.events import msg_from_attrs
from model.pf.state import Change, Msg, Params
from traces.schema import Event
from traces.verdict import InputFault, input_fault

__all__ = ["ATTRS", "InputFault", "as_int", "check_attrs", "cn", "cnset", "config", "message", "params"]

STRINGS = "list"  # a list of strings
ANY = "any"  # present, of any type (the handler coerces it or only compares it)

# kind -> (attribute, type, required): what the handler of the kind reads; an optional attribute is checked
# only when present. Types as in `vocabulary.py`: str, int, STRINGS; ANY where the handler coerces.
ATTRS: dict[str, tuple[tuple[str, object, bool], ...]] = {
    "CHANGE": (
        ("cn", str, True),
        ("op", str, True),
        ("mid", ANY, True),
        ("size_kb", int, True),
        ("target", str, True),
        ("detail", str, True),
        ("stamp", ANY, True),
    ),
    "REPL_SEND": (
        ("msg", str, True),
        ("code", ANY, True),
        ("recipients", STRINGS, True),
        ("cnset", STRINGS, True),
        ("cns", STRINGS, True),
        ("request", STRINGS, True),
        ("requires_response", ANY, True),
        ("reply_to", str, True),
        ("reason", str, True),
    ),
    "REPL_RECV": (("msg", str, True),),
    "BACKFILL_FILE": (("cns", STRINGS, True), ("due_ms", ANY, True), ("local", ANY, True)),
    "BACKFILL": (("requests", STRINGS, True),),
    "REPLICA_CREATE": (
        ("origin", str, True),
        ("costs", STRINGS, False),
        ("versions", STRINGS, False),
        ("preferred", STRINGS, False),
    ),
    "REPLICA_VIEW": (("replicas", STRINGS, True),),
    "DELETE_NOW": (("cnset", STRINGS, False),),
    "BACKUP": (("backup", str, True),),
    "RESTORE": (("backup", str, True), ("origin", str, True)),
    "CLIENT_ACCESS": (("outcome", str, True), ("target", str, True)),
    "END": (("cnset", STRINGS, True),),
}


_ABSENT = object()


# kind -> (the attributes it requires, the (attribute, type) pairs to check when present): from `ATTRS`
_COMPILED = {
    kind: (tuple(n for n, _, req in need if req), tuple((n, t) for n, t, _ in need if t is not ANY))
    for kind, need in ATTRS.items()
}


def check_attrs(ev: Event) -> None:
    """Fault 1: the event has every attribute its handler reads, each of the type it reads."""
    spec = _COMPILED.get(ev.kind)
    if spec is None:
        return
    required, typed = spec
    a = ev.attrs
    for name in required:  # (a tuple: no keys view per event)
        if name not in a:
            missing = next(n for n, _, req in ATTRS[ev.kind] if req and n not in a)
            raise input_fault(f"attribute {missing!r} missing")
    for name, kind in typed:  # a list of strings: a list or tuple of exact `str`s
        value = a.get(name, _ABSENT)
        if value is _ABSENT:
            continue
        if kind is STRINGS:
            if type(value) is list or type(value) is tuple:
                for item in value:
                    if type(item) is not str:
                        break
                else:
                    continue
        elif isinstance(value, kind):  # type: ignore[arg-type]
            continue
        what = "list of strings" if kind is STRINGS else kind.__name__  # type: ignore[union-attr]
        raise input_fault(f"attribute {name!r} is not a {what}")


def cn(text: str) -> CN:
    """Fault 2: a change number (`originator:n`)."""
    try:
        return CN.parse(text)
    except ValueError:
        raise input_fault(f"change number {text!r} does not parse") from None


def cnset(items: Sequence[str] | None) -> CNSet:
    """Fault 2: a CNSet's text form (`originator:lo-hi,...`)."""
    try:
        return CNSet.decode(items)
    except ValueError:
        raise input_fault(f"CNSet {list(items or ())} does not parse") from None


def as_int(value: object, what: str) -> int:
    """Fault 2: an integer attribute (or its decimal text)."""
    try:
        return int(value)  # type: ignore[call-overload]
    except (ValueError, TypeError):
        raise input_fault(f"{what} {value!r} is not an integer") from None


def message(sender: str, fid: str, attrs: dict, changes: dict[str, Change], carried: list[str]) -> Msg:
    """Fault 3: the message a REPL_SEND records (its list attributes already checked by `check_attrs`)."""
    try:
        return msg_from_attrs(sender, fid, attrs, changes, carried)
    except (ValueError, TypeError):
        raise input_fault(f"message {attrs.get('msg')!r}: code or CNSet does not parse") from None


def config(ev: Event, before: RunConfig | None) -> RunConfig:
    """Fault 4: the configuration in force after a context event (PF_CONFIG, NET_CONFIG)."""
    try:
        found = RunConfig.of(ev, before)
    except (ValueError, TypeError) as exc:
        raise input_fault(f"{ev.kind} does not parse: {exc}") from None
    usable(found.params, ev.kind)
    return found


def params(text: object) -> Params:
    """Fault 4: restated parameters (JSON of `Params` fields). A text found usable is remembered (every
    REPLICA_CREATE restates its store's: issue 32, session 16); one that is not is checked again each time."""
    found = _USABLE.get(text) if type(text) is str else None
    if found is not None:
        return found
    try:
        found = Params.from_json(text or None)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise input_fault(f"parameters {text!r} do not parse") from None
    usable(found, "the restated parameters")
    if type(text) is str:
        if len(_USABLE) >= 256:
            _USABLE.clear()
        _USABLE[text] = found
    return found


_USABLE: dict[str, Params] = {}  # restated parameters' text -> its parameters, found usable (a bounded cache)


def usable(p: Params, where: str) -> None:
    """Fault 4: the timings and limits integers, none negative, and the status period (the schedule's modulus,
    `step.is_thread_time`) positive: a period of 0 has no next run (found by conform's random answers, issue
    36: a ZeroDivisionError, exit 3, before)."""
    for name in p.__slots__:
        value = getattr(p, name)
        if not name.endswith(("_ms", "_limit", "_kb")):
            continue
        if type(value) is not int:
            raise input_fault(f"{where}: parameter {name} = {value!r} is not an integer")
        floor = 1 if name == "status_period_ms" else 0
        if value < floor:
            raise input_fault(f"{where}: parameter {name} = {value} is below {floor}")
