"""The only state transitions of the Active Manager model: one function per event kind, and the tables of
which transitions the seed allows for each tracked state.

Seed 002, section "Exchange Server Active Manager" (the PAM owns quorum and moves with it AM-005/AM-006,
only the PAM moves active designations AM-008, one active copy mounted or dismounted AM-009, the cluster
database holds each database's state AM-016) and "Best Copy Selection" (the mount request AM-025).

`apply(world, entity, kind, attrs)` is the fold, changing the world in place (issue 19): the generator
(`decisions.Tx.emit`) changes its world only by applying the event it records, and the monitor
(`replay.Replay`) rebuilds the same world by applying the recorded events, so the model and the checker
cannot drift. Decisions (what to record next, where mutants plant their bugs) live in `decisions.py` and
`actions.py`; the guards below say which recorded transitions
the seed allows, and the monitor reports the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: the world and its databases as C structs (`step.pxd`, session 26)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.am import events as ev
from model.am.faults import health_entry, strings
from model.am.state import (
    DISMOUNTED,
    MOUNTED,
    SERVICE_DOWN,
    CopyState,
    DbState,
    Health,
    World,
)
from spec.catalogue import require

require("AM-005", "AM-006", "AM-008", "AM-009", "AM-016", "AM-025", "AM-034")

Attrs = Mapping[str, Any]
_decode = ev.decode_group

# ---- one transition per event kind, each changing the world in place ----------------------------------


@cython.locals(w=World)
def view(w: World, entity: str, a: Attrs) -> None:
    """DAG_VIEW: membership, who is up, who reaches whom (quorum is derived from it, AM-I13)."""
    w.dag = entity
    _set_view(w, a)


@cython.locals(w=World)
def _set_view(w: World, a: Attrs) -> None:
    """The view DAG_VIEW and AM_DAG_CONFIG record; recorded again from equal lists (a batch that changed only
    health or PAM claims), it is the same view and keeps its derived quorum (`World.set_view`)."""
    source = (a["members"], a["up"], a["groups"])
    if source != w.view_source:
        strings("'members', 'up', 'groups'", *source)  # a foreign trace's view: an input fault (`faults`)
        w.set_view(tuple(source[0]), frozenset(source[1]), tuple([_decode(g) for g in source[2]]), source)


@cython.locals(w=World)
def pam_acquire(w: World, entity: str, a: Attrs) -> None:
    w.claims = w.claims | {a["server"]}


@cython.locals(w=World)
def pam_release(w: World, entity: str, a: Attrs) -> None:
    w.claims = w.claims - {a["server"]}


@cython.locals(w=World)
def health(w: World, entity: str, a: Attrs) -> None:
    """SERVER_HEALTH: a new (immutable) `Health` for the server: a snapshot holding the old one keeps it."""
    h = w.health.get(a["server"])
    comps = dict(h.components) if h is not None else {}
    comps[a["component"]] = (a["priority"], a["state"])
    w.health[a["server"]] = Health(comps)


@cython.locals(w=World)
def config(w: World, entity: str, a: Attrs) -> None:
    """AM_CONFIG: a server's AutoDatabaseMountDial (`server`, `dial`), or a copy's activation policy
    (`database`, `server`, `blocked`, `suspended`): configuration, so it reaches every monitor as context."""
    if ev.DIAL_ATTR in a:
        w.dials[a["server"]] = a[ev.DIAL_ATTR]
    db, s = a.get("database"), a["server"]
    if db is not None and db in w.dbs:
        copies = w.dbs[db].copies
        c = copies.get(s, CopyState(s))
        copies[s] = c.with_(**{k: bool(a[k]) for k in ("blocked", "suspended") if k in a})


@cython.locals(w=World)
def dag_attrs(w: World, changed: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
    """The DAG-level facts a database's monitor needs, as the attributes of AM_DAG_CONFIG: the view and the
    PAM claims in full, and the health entries (`server/component/priority/state`) changed since the
    previous AM_DAG_CONFIG."""
    return {
        "members": list(w.members),
        "up": sorted(w.up),
        "groups": [ev.encode_group(g) for g in w.groups],
        "claims": sorted(w.claims),
        "health": health_entries(w, changed),
    }


@cython.locals(w=World)
def health_entries(w: World, changed: Iterable[tuple[str, str]]) -> list[str]:
    """AM_DAG_CONFIG's health entries: each (server, component) changed, as `server/component/prio/state`."""
    health = []
    for s, c in sorted(set(changed)):
        prio, state = w.health[s].components[c]
        health.append(f"{s}/{c}/{prio}/{state}")
    return health


@cython.locals(w=World)
def dag_config(w: World, entity: str, a: Attrs) -> None:
    """AM_DAG_CONFIG: the recorded view and PAM claims replace the DAG-level facts; the health entries update
    theirs (a database's monitor folds these instead of the DAG events). Servers without an entry keep
    their (immutable) health as it is."""
    changed: dict[str, dict[str, tuple[str, str]]] = {}
    for item in a["health"]:
        s, c, p, st = health_entry(item)  # a malformed entry of a foreign trace: an input fault (`faults`)
        comps = changed.get(s)
        if comps is None:
            comps = changed[s] = dict(w.health[s].components) if s in w.health else {}
        comps[c] = (p, st)
    for s, comps in changed.items():
        w.health[s] = Health(comps)
    w.dag = entity
    _set_view(w, a)
    strings("'claims'", a["claims"])
    w.claims = frozenset(a["claims"])


@cython.locals(w=World)
def db_create(w: World, entity: str, a: Attrs) -> None:
    w.dbs[entity] = DbState(entity, a["dag"], {})


@cython.locals(w=World, d=DbState, old=CopyState)
def copy_state(w: World, entity: str, a: Attrs) -> None:
    """COPY_STATE: what the replication service reports of one copy. The activation policy (`blocked`,
    `suspended`) is configuration and comes from AM_CONFIG; the event only restates it."""
    d = w.dbs[entity]
    copies = d.copies
    s = a["server"]
    old = copies.get(s)
    if old is None:
        copies[s] = CopyState(s, a["status"], a["lli"], a["rq"], a["ci"], a["pref"])
    else:
        copies[s] = CopyState(
            s, a["status"], a["lli"], a["rq"], a["ci"], a["pref"], old.blocked, old.suspended, old.reachable
        )


@cython.locals(w=World, d=DbState)
def logs(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.lgen = a["lgen"]


@cython.locals(w=World, d=DbState)
def active_move(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.active = a["dst"]


@cython.locals(w=World, d=DbState)
def mount_start(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.mounting = a["server"]


@cython.locals(w=World, d=DbState)
def mount_fail(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.mounting = None


@cython.locals(w=World, d=DbState)
def mounted(w: World, entity: str, a: Attrs) -> None:
    d, s = w.dbs[entity], a["server"]
    d.active, d.on, d.mounting, d.last_mounted = s, d.on | {s}, None, s


@cython.locals(w=World, d=DbState)
def dismounted(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.on = d.on - {a["server"]}


@cython.locals(w=World, d=DbState)
def bcss_end(w: World, entity: str, a: Attrs) -> None:
    d = w.dbs[entity]
    d.stuck = a["outcome"] != "mounted"


STEPS: dict[str, Callable[[World, str, Attrs], None]] = {
    ev.DAG_VIEW: view,
    ev.PAM_ACQUIRE: pam_acquire,
    ev.PAM_RELEASE: pam_release,
    ev.SERVER_HEALTH: health,
    ev.AM_CONFIG: config,
    ev.AM_DAG_CONFIG: dag_config,
    ev.DB_CREATE: db_create,
    ev.COPY_STATE: copy_state,
    ev.LOGS: logs,
    ev.ACTIVE_MOVE: active_move,
    ev.MOUNT_START: mount_start,
    ev.MOUNT_FAIL: mount_fail,
    ev.MOUNTED: mounted,
    ev.DISMOUNTED: dismounted,
    ev.BCSS_END: bcss_end,
}


@cython.locals(w=World)
def apply(w: World, entity: str, kind: str, attrs: Attrs) -> World:
    """Apply one recorded event to `w` in place and return `w`; kinds that change no tracked state leave
    it as it is. A malformed event may raise with the world partly changed: the monitor stops there and
    judges nothing past it; the generator records only events it built itself."""
    fn = STEPS.get(kind)
    if fn is not None:
        fn(w, entity, attrs)
    return w


# ---- the allowed transitions of each tracked state (family: state changes outside the protocol) --------

# Mount state of one copy (AM-009, AM-025): (state, event) -> next state. Any other event on that copy's
# mount state is outside the protocol (a copy mounted without a mount request, a dismount of a copy that
# is not mounted, a mount request for a copy already mounting or mounted).
IDLE, MOUNTING, UP = "idle", "mounting", "mounted"
MOUNT_TABLE: dict[tuple[str, str], str] = {
    (IDLE, ev.MOUNT_START): MOUNTING,
    (MOUNTING, ev.MOUNTED): UP,
    (MOUNTING, ev.MOUNT_FAIL): IDLE,
    (UP, ev.DISMOUNTED): IDLE,
}

# PAM role of one DAG member (AM-005, AM-006, AM-007): (role, event, recorded reason) -> next role, with
# the guard the seed sets on it. A release for lost quorum must find the server outside the quorum; a move
# is an administrator's (AM-007) and another quorum member must take the role; acquiring needs quorum and
# no other PAM (checked by the rules single-pam and pam-owns-quorum).
SAM, PAM = "SAM", "PAM"
PAM_TABLE: dict[tuple[str, str, str | None], tuple[str, str]] = {
    (SAM, ev.PAM_ACQUIRE, None): (PAM, "in the quorum, no other PAM"),
    (PAM, ev.PAM_RELEASE, "lost_quorum"): (SAM, "the server is outside the quorum"),
    (PAM, ev.PAM_RELEASE, "move"): (SAM, "an administrator's move to another quorum member"),
}

# Copy status (AM-009, AM-016), by class: (from, to) -> the condition under which the replication service
# may report that change. "Mounted" follows mounts and dismounts only; "ServiceDown" follows the view.
PASSIVE = "passive"
STATUS_TABLE: dict[tuple[str, str], str] = {
    (PASSIVE, MOUNTED): "mounted",  # the copy a MOUNTED event has just mounted
    (MOUNTED, MOUNTED): "mounted",
    (MOUNTED, PASSIVE): "dismounted_up",  # after its DISMOUNTED, server up
    (MOUNTED, SERVICE_DOWN): "dismounted_down",  # after its DISMOUNTED, server down
    (PASSIVE, SERVICE_DOWN): "down",
    (SERVICE_DOWN, SERVICE_DOWN): "down",
    (SERVICE_DOWN, PASSIVE): "up",
    (PASSIVE, PASSIVE): "up",  # a passive (not mounted) copy's status changes only while its server runs
}


_CLASS = {MOUNTED: MOUNTED, SERVICE_DOWN: SERVICE_DOWN}  # a status's class (every other status: PASSIVE)


@cython.locals(d=DbState)
def mount_state(d: DbState, server: str) -> str:
    if server in d.on:
        return UP
    return MOUNTING if d.mounting == server else IDLE


@cython.locals(d=DbState)
def mount_fault(d: DbState, kind: str, server: str) -> str | None:
    """Why `kind` on `server`'s copy is outside MOUNT_TABLE, or None when it is allowed."""
    state = mount_state(d, server)
    if (state, kind) in MOUNT_TABLE:
        return None
    return f"{kind} on the copy on {server} while it is {state}; allowed from {state}: " + (
        ", ".join(k for (s, k) in MOUNT_TABLE if s == state) or "nothing"
    )


@cython.locals(w=World)
def pam_fault(w: World, kind: str, server: str, reason: str | None) -> str | None:
    """Why a PAM_ACQUIRE/PAM_RELEASE is outside PAM_TABLE, or None."""
    role = PAM if server in w.claims else SAM
    key = (role, kind, reason if kind == ev.PAM_RELEASE else None)
    if key not in PAM_TABLE:
        return f"{kind} ({reason or '-'}) for {server}, which is {role}: no such transition"
    if key[2] == "lost_quorum" and server in (w.quorum() or frozenset()):
        return (
            f"{server} releases the PAM role for lost quorum but is in the quorum "
            f"({ev.encode_group(w.quorum() or frozenset())})"
        )
    return None


@cython.locals(w=World, d=DbState)
def status_fault(w: World, d: DbState, server: str, new: str) -> str | None:
    """Why a reported status change of `server`'s copy is outside STATUS_TABLE, or None."""
    old = d.copies[server].status if server in d.copies else DISMOUNTED
    if old == new and new not in (MOUNTED, SERVICE_DOWN):
        return None  # no status change: another attribute changed
    cond = STATUS_TABLE.get((_CLASS.get(old, PASSIVE), _CLASS.get(new, PASSIVE)))  # the class of each
    up, on = server in w.up, server in d.on
    if cond == "up":  # the common case first; each condition is one row of STATUS_TABLE's column
        ok = up and not on
    elif cond == "mounted":
        ok = on
    elif cond == "dismounted_up":
        ok = not on and up
    elif cond == "dismounted_down":
        ok = not on and not up
    elif cond == "down":
        ok = not up and not on
    else:
        ok = False
    if ok:
        return None
    where = ("mounted" if on else "not mounted") + (", server up" if up else ", server down")
    return f"the copy on {server} goes from {old} to {new} ({where}); allowed only when {cond or 'never'}"
