"""The input faults of the Active Manager monitor (issue 29): what a partial or foreign trace can lack.

Rule code raises `traces.verdict.InputFault` where it meets one of these, and `monitor.AmFold` turns only
that exception into an unknown note ("am monitor stopped at <event>: <what>"); any other exception in rule
code is a bug of haconform and propagates (the engines report an internal error, exit 3). The faults:

1. An event lacking an attribute its kind's check or transition reads (`REQUIRED`), or holding it in a
   type other than the vocabulary's (`model/am/vocabulary.py`): `check_attrs`, before the event is judged;
   the items of a list, where the list is used (`strings`: a new view, a view compared, the PAM claims).
2. A recorded value a rule reads as a structure, in another form: a health entry that is not
   `server/component/priority/state` (`health_entry`, `step.dag_config`), a priority or component state
   outside the vocabulary (`health`), a responder FAILURE that names no component (`replay.on_failure`).
3. A copy event naming a server that holds no copy of the database (`copy_of`): a server the database's
   DB_CREATE and COPY_STATE events never introduced.
4. A dial value for which the recorded thresholds give no number (`bcss.Options.threshold`).
5. An unusable configuration: TRACE_START `config` that is not JSON, an unknown BCSS option or a malformed
   threshold list (`monitor.Config`): the one note, nothing judged.
Not faults but unjudged, counted in the notes: an event of a database whose DB_CREATE the trace does not
show (`monitor.AmFold._unseen`), and a database group with no DAG facts in its context.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`faults.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.am import events as ev
from model.am.state import PRIORITY_RANK, STATE_RANK, CopyState, DbState
from model.am.vocabulary import VOCABULARY
from spec.catalogue import cite
from traces.event import Event
from traces.verdict import InputFault

cite("AM-016", "AM-024", "AM-034")

# The types a rule needs: a name (a string or null: compared, hashed), an integer (compared with < and >), a
# list of strings (sorted, made a set), or any value (only its truth or equality is read).
NAME, INT, LIST, ANY = "a string or null", "an integer", "a list of strings", ""
STR = "a string"  # a NAME the vocabulary types "string": null is not admitted (`_need`)
Need = tuple[tuple[str, str], ...]

# kind -> the attributes its check (`replay.Replay.on_<kind>`, `monitor_bcss`) and transition (`step.STEPS`)
# read without a default, each with the type the rule needs (the vocabulary's, `model/am/vocabulary.py`)
_VIEW: Need = (("members", LIST), ("up", LIST), ("groups", LIST))
_SERVER: Need = (("server", NAME),)
REQUIRED: dict[str, Need] = {
    ev.DAG_VIEW: _VIEW,
    ev.AM_DAG_CONFIG: (*_VIEW, ("claims", LIST), ("health", LIST)),  # a database group's: folded, not checked
    ev.PAM_ACQUIRE: _SERVER,
    ev.PAM_RELEASE: _SERVER,
    ev.SERVER_HEALTH: (*_SERVER, ("component", NAME), ("priority", NAME), ("state", NAME)),
    ev.AM_CONFIG: _SERVER,
    ev.MAINTENANCE: _SERVER,
    ev.DB_CREATE: (("dag", NAME),),
    ev.COPY_STATE: (*_SERVER, ("status", NAME), ("lli", INT), ("rq", INT), ("ci", ANY), ("pref", INT)),
    ev.LOGS: (("lgen", INT),),
    ev.FAILURE: (*_SERVER, ("what", NAME), ("component", NAME)),
    ev.FAILOVER_REQUEST: (*_SERVER, ("pam", NAME)),
    ev.SWITCHOVER: (("lossless", ANY),),
    ev.BCSS_START: (("pam", NAME), ("trigger", NAME)),
    ev.ACLL_START: _SERVER,
    ev.ACLL_END: (*_SERVER, ("lli", INT), ("ok", ANY)),
    ev.ACTIVE_MOVE: (("dst", NAME), ("by", NAME)),
    ev.MOUNT_START: (*_SERVER, ("by", NAME)),
    ev.MOUNT_FAIL: _SERVER,
    ev.MOUNTED: _SERVER,
    ev.DISMOUNTED: _SERVER,
    ev.BCSS_END: (("outcome", NAME),),
    ev.LOCATION_QUERY: (*_SERVER, ("answer", NAME)),
}
# kind -> the attributes a rule reads only when present, with the type it then needs
OPTIONAL: dict[str, Need] = {
    ev.PAM_ACQUIRE: (("quorum", LIST),),
    ev.AM_CONFIG: ((ev.DIAL_ATTR, NAME), ("database", NAME)),
    ev.BCSS_START: (("order", LIST),),
}


# the exact types each need admits (values come from JSON): one set lookup per attribute on the hot path
_EXACT: dict[str, frozenset[type]] = {
    STR: frozenset({str}),
    NAME: frozenset({str, type(None)}),
    INT: frozenset({int, bool}),
    LIST: frozenset({list, tuple}),
    ANY: frozenset({str, int, bool, float, type(None), list, tuple, dict}),
}


class _Absent:
    """The value of an attribute a rule needs and the event lacks (its type is admitted by no need)."""


_ABSENT = _Absent()


def _need(kind: str, key: str, need: str) -> str:
    """A required name is a string, not null, where the vocabulary types it "string" (a MOUNTED of server
    null would put None among the mounted copies: found by conform's random answers, issue 36)."""
    doc = VOCABULARY.get(kind)
    typed = next((a.type for a in doc.attrs if a.name == key), None) if doc is not None else None
    return STR if need == NAME and typed == "string" else need


def _spec(kind: str) -> tuple[tuple[str, Any, frozenset[type]], ...]:
    """A kind's attributes, each with its value when absent (required: `_ABSENT`, admitted by no need;
    optional: None, admitted) and the exact types it admits."""
    req = tuple((k, _ABSENT, _EXACT[_need(kind, k, n)]) for k, n in REQUIRED.get(kind, ()))
    return (*req, *((k, None, _EXACT[n] | {type(None)}) for k, n in OPTIONAL.get(kind, ())))


_SPECS = {kind: _spec(kind) for kind in {*REQUIRED, *OPTIONAL}}


@cython.locals(e=Event)
def check_attrs(e: Event) -> None:
    """Faults 1 and 2: the attributes `e`'s kind is judged on are there, in the types the rules need. On the
    path of every event: one lookup and one set membership per attribute; the items of a list are checked
    where the list is used (`strings`)."""
    kind, a = e.kind, e.attrs
    for key, absent, admitted in _SPECS.get(kind, ()):
        if type(a.get(key, absent)) not in admitted:
            _which(kind, a)
    if kind == _SERVER_HEALTH:
        health(a["priority"], a["state"])


def _which(kind: str, a: Any) -> None:
    """The fault `check_attrs` found: the first attribute missing or of a type its need does not admit."""
    for key, need in REQUIRED.get(kind, ()):
        if key not in a:
            raise InputFault(f"attribute {key!r} missing (the checks of {kind} read it)")
        need = _need(kind, key, need)
        if type(a[key]) not in _EXACT[need]:
            raise InputFault(f"attribute {key!r} is {a[key]!r}, not {need or 'a JSON value'}")
    for key, need in OPTIONAL.get(kind, ()):
        if a.get(key) is not None and type(a[key]) not in _EXACT[need]:
            raise InputFault(f"attribute {key!r} is {a[key]!r}, not {need}")
    raise AssertionError(f"check_attrs found a fault in {kind} that _which does not name")  # a bug of ours


_SERVER_HEALTH = ev.SERVER_HEALTH  # bound once: `check_attrs` compares every event with it (issue 32)
DAG_FACTS: Need = REQUIRED[ev.AM_DAG_CONFIG]  # what the DAG's own group compares an AM_DAG_CONFIG with


@cython.locals(e=Event)
def check_present(e: Event, need: Need) -> None:
    """Fault 1 for the attributes a rule reads with a default: those present (and not null) are of the type it
    needs (the DAG's group compares AM_DAG_CONFIG's lists, an absent one as empty)."""
    a = e.attrs
    for key, n in need:
        value = a.get(key)
        if value is not None and type(value) not in _EXACT[n]:
            raise InputFault(f"attribute {key!r} is {value!r}, not {n}")


def strings(what: str, *lists: Sequence[Any]) -> None:
    """Fault 1 for lists a rule sorts, splits or makes sets of (`what` names them): their items are strings.
    Checked where the lists are used (a new view, `step._set_view`; a view compared, `monitor_dag`; the PAM
    claims, `step.dag_config`), not on every event (`check_attrs` checks that each is a list)."""
    try:
        for items in lists:
            "".join(items)  # the cheapest test that every item is a string: a type test, around no rule code
    except TypeError:
        raise InputFault(f"attribute {what} is {[list(x) for x in lists]!r}, not {LIST}") from None


def health_entry(item: Any) -> list[str]:
    """Fault 2: an AM_DAG_CONFIG health entry, `server/component/priority/state` (`step.dag_config`)."""
    parts = str(item).split("/")
    if len(parts) != 4:
        raise InputFault(f"health entry {item!r} is not server/component/priority/state")
    health(parts[2], parts[3])
    return parts


def health(priority: Any, state: Any) -> None:
    """Fault 2: a recorded priority and component state are the vocabulary's (the health tiers rank them)."""
    if priority not in PRIORITY_RANK or state not in STATE_RANK:
        raise InputFault(f"health {priority!r}/{state!r} is not a priority and a state of the vocabulary")


@cython.locals(e=Event)
def copy_of(d: DbState, server: str, e: Event) -> CopyState:
    """Fault 3: the copy of `d` on `server`, which the trace must have introduced before `e` names it."""
    c = d.copies.get(server)
    if c is None:
        raise InputFault(f"{server} holds no copy of {d.name} in the trace so far")
    return c


__all__ = ["DAG_FACTS", "OPTIONAL", "REQUIRED", "check_attrs", "check_present", "copy_of", "health_entry", "strings"]
