"""The only state transitions of shadow redundancy, used by the generator and the monitor alike.

Seed 000: "How shadow messages are created" and "SMTP timeouts" (creation), "How shadow messages are
maintained" (discard status, heartbeats, promotion, Safety Net, expiry), "Message processing after an
outage" (lost databases, duplicates). `step(world, event)` folds one recorded event into the `World` and
returns the rules it breaks. Where a copy of a message may go is the table `TRANSITIONS` (issue 9, family
3): an event that moves a copy out of a state the table does not list for it is reported and changes
nothing. The guards of each allowed change (`creation.py`, `maintenance.py`) derive every duration from the
recorded configuration and every fact from earlier events. No I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from model.sr import creation, maintenance
from model.sr import events as ev
from model.sr.liveness import end_of_run, flush_due
from model.sr.rules import Breach, breach
from model.sr.world import (
    ABORTED,
    ABSENT,
    EXPIRED,
    FAILED,
    GONE,
    HOLDER,
    LOST,
    QUEUED,
    RECEIVING,
    REFUSED,
    RELEASED,
    SAFETYNET,
    SHADOW,
    Copy,
    Inst,
    World,
)
from traces.schema import Event

# event kind -> (states of the event node's copy it may start from, state it leaves, rule when forbidden);
# None as the target: the state is kept (the guard decides any finer change)
TRANSITIONS: dict[str, tuple[frozenset[str], str | None, str]] = {
    ev.RECEIVE: (frozenset({ABSENT}), RECEIVING, "primary-copy-transition"),
    ev.HAREDIRECT: (frozenset({RECEIVING}), None, "primary-copy-transition"),
    ev.HAREDIRECTFAIL: (frozenset({RECEIVING}), None, "primary-copy-transition"),
    ev.SHADOW_ACK: (frozenset({RECEIVING}), None, "primary-copy-transition"),
    ev.SESSION_TIMEOUT: (frozenset({RECEIVING}), None, "primary-copy-transition"),
    ev.ACCEPT: (frozenset({RECEIVING}), QUEUED, "primary-copy-transition"),
    ev.REJECT: (frozenset({RECEIVING}), REFUSED, "primary-copy-transition"),
    ev.DELIVER: (frozenset({QUEUED, SAFETYNET}), None, "primary-copy-transition"),
    ev.DUPLICATEDELIVER: (frozenset({QUEUED, SAFETYNET}), None, "primary-copy-transition"),
    ev.SEND: (frozenset({QUEUED, SAFETYNET}), None, "primary-copy-transition"),
    ev.FAIL: (frozenset({QUEUED}), FAILED, "primary-copy-transition"),
    ev.HARECEIVE: (frozenset({ABSENT}), SHADOW, "shadow-copy-transition"),
    ev.DISCARD_NOTIFY: (frozenset({SHADOW}), None, "shadow-copy-transition"),
    ev.HADISCARD: (frozenset({SHADOW}), RELEASED, "shadow-copy-transition"),
    ev.PROMOTE: (frozenset({SHADOW}), QUEUED, "shadow-copy-transition"),
    ev.SHADOW_EXPIRE: (frozenset({SHADOW}), EXPIRED, "shadow-copy-transition"),
    ev.SAFETYNET: (frozenset({QUEUED, RELEASED}), SAFETYNET, "safetynet-transition"),
    ev.RESUBMIT: (frozenset({SAFETYNET}), None, "safetynet-transition"),
    ev.SAFETYNET_EXPIRE: (frozenset({SAFETYNET}), GONE, "safetynet-transition"),
    ev.LOST: (frozenset({QUEUED, SHADOW, LOST}), LOST, "primary-copy-transition"),
    # the primary's discard queue (owed by the primary, not a copy on the event's node)
    ev.DISCARD_EXPIRE: (frozenset({QUEUED, SAFETYNET, FAILED, LOST, GONE}), None, "discard-queue-transition"),
}
# recorded faults change copies too: a crash ends the sender's session, a new transport database loses all
LIFECYCLE: dict[tuple[str, str], str] = {
    ("CRASH", RECEIVING): ABORTED,
    ("RESTART-new", RECEIVING): LOST,
    ("RESTART-new", QUEUED): LOST,
    ("RESTART-new", SHADOW): LOST,
    ("RESTART-new", RELEASED): GONE,
    ("RESTART-new", SAFETYNET): GONE,
}

Guard = Callable[[World, Inst, Event], list[Breach]]
GUARDS: dict[str, Guard] = {**creation.GUARDS, **maintenance.GUARDS}


NONE: tuple[Breach, ...] = ()  # what most events return: no new list per step
# the kinds `step` tells apart, bound once (no module attribute lookups per event)
_MECH, _SR_CONFIG, _XQUERYDISCARD, _SNAPSHOT = ev.MECH, ev.SR_CONFIG, ev.XQUERYDISCARD, ev.SNAPSHOT
_RECEIVE, _DISCARD_EXPIRE = ev.RECEIVE, ev.DISCARD_EXPIRE


def step(w: World, e: Event) -> Sequence[Breach]:
    """Fold one recorded event (any mechanism) into the world; return the rules it breaks (often `NONE`)."""
    due = w.due
    out: Sequence[Breach] = flush_due(w, e.ts_ms) if due and due[0][0] < e.ts_ms else NONE
    if e.mechanism != _MECH:
        if e.mechanism == "core":
            _lifecycle(w, e)
        return out
    kind = e.kind
    move = TRANSITIONS.get(kind)
    if move is not None and kind != _RECEIVE:  # most events: a copy of a known instance moves
        m = w.msgs.get(e.entity)
        inst = m.insts.get(e.attrs["inst"]) if m is not None else None
        if inst is None:
            return out  # an instance whose RECEIVE is not in the trace (the monitor notes it)
        found = _move(w, e, inst, move)
    elif kind == _RECEIVE:
        found = _move(w, e, creation.receive(w, e), move)  # type: ignore[arg-type]
    elif kind == _XQUERYDISCARD:
        found = maintenance.query(w, e)
    elif kind == _SNAPSHOT:
        found = end_of_run(w, e)
    elif kind == _SR_CONFIG:
        w.configure(kind, dict(e.attrs))
        return out
    else:  # a foreign kind changes nothing, but its `inst` is read as for any message event (unreadable: noted)
        m = w.msgs.get(e.entity)
        if m is not None:
            m.insts.get(e.attrs["inst"])
        return out
    if not out:
        return found
    return [*out, *found]


def _move(w: World, e: Event, inst: Inst, move: tuple[frozenset[str], str | None, str]) -> list[Breach]:
    """The copy on the event's node (the primary's, for DISCARD_EXPIRE) moves as `TRANSITIONS` allows."""
    allowed, target, rule = move
    kind = e.kind
    node = inst.primary if kind == _DISCARD_EXPIRE else e.node
    copy = inst.copies.get(node)
    now = copy.state if copy is not None else ABSENT
    if now not in allowed:
        why = f"{kind} on {node} changes a copy that is {now}; the protocol allows it only from {sorted(allowed)}"
        return [breach(HOLDER.get(now, rule), (e,), why)]
    out = GUARDS[kind](w, inst, e)
    if target is not None:
        if copy is None:  # (no guard makes or removes a copy: only this function makes one)
            w.place(node, inst, Copy(target, e.ts_ms))
        elif copy.state != target:
            copy.state, copy.since_ms = target, e.ts_ms
    return out


def _lifecycle(w: World, e: Event) -> None:
    """Kernel records: TRACE_START (configuration), CRASH, RESTART (same or new storage), PARTITION, HEAL."""
    if e.kind == "TRACE_START":
        w.configure(e.kind, dict(e.attrs))
    elif e.kind == "CRASH":
        w.up[e.node] = False
        _apply(w, e.node, "CRASH")
    elif e.kind == "RESTART":
        w.up[e.node], w.boot[e.node] = True, e.ts_ms
        for pair in [p for p in w.last_heartbeat if p[0] == e.node]:
            del w.last_heartbeat[pair]  # SR-I30: a restart starts the heartbeat schedule afresh, even within the ms
        if e.attrs.get("storage") == "new":
            w.epoch[e.node] = w.epoch.get(e.node, 0) + 1
            _apply(w, e.node, "RESTART-new")
            for pair in [p for p in w.owed if p[0] == e.node]:
                del w.owed[pair]  # the discard events lived in the lost transport database
    elif e.kind == "PARTITION":
        w.group = {n: i for i, g in enumerate(e.attrs.get("groups") or []) for n in str(g).split(",") if n}
    elif e.kind == "HEAL":
        w.group = {}


def _apply(w: World, node: str, what: str) -> None:
    """A CRASH or a RESTART on new storage: only the copies on `node` change (the node index `World.at`; the
    changes commute, so the index's order does not matter)."""
    for inst in (w.at.get(node) or {}).values():
        copy = inst.copies[node]
        if (what, copy.state) not in LIFECYCLE:
            continue
        if copy.state == SHADOW:
            w.unhold((node, inst.primary), (inst.msg, inst.inst))
        if what == "RESTART-new" and copy.state in (QUEUED, SHADOW):
            if node == inst.primary:
                inst.primary_lost = True
            else:
                inst.shadow_lost = True
        copy.state = LIFECYCLE[(what, copy.state)]
        if copy.state == ABORTED:
            inst.inbound_open = False
