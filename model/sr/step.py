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
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`step.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.sr import creation, heartbeats, maintenance, partial
from model.sr import events as ev
from model.sr import rules as R
from model.sr.inputs import CHECKS, groups_of, inst_of, readable
from model.sr.liveness import end_of_run, flush_due
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
from traces.event import Event
from traces.verdict import Rule, Tally, Violation

# event kind -> (states of the event node's copy it may start from, state it leaves, rule when forbidden);
# None as the target: the state is kept (the guard decides any finer change)
TRANSITIONS: dict[str, tuple[frozenset[str], str | None, Rule]] = {
    ev.RECEIVE: (frozenset({ABSENT}), RECEIVING, R.PRIMARY_COPY_TRANSITION),
    ev.HAREDIRECT: (frozenset({RECEIVING}), None, R.PRIMARY_COPY_TRANSITION),
    ev.HAREDIRECTFAIL: (frozenset({RECEIVING}), None, R.PRIMARY_COPY_TRANSITION),
    ev.SHADOW_ACK: (frozenset({RECEIVING}), None, R.PRIMARY_COPY_TRANSITION),
    ev.SESSION_TIMEOUT: (frozenset({RECEIVING}), None, R.PRIMARY_COPY_TRANSITION),
    ev.ACCEPT: (frozenset({RECEIVING}), QUEUED, R.PRIMARY_COPY_TRANSITION),
    ev.REJECT: (frozenset({RECEIVING}), REFUSED, R.PRIMARY_COPY_TRANSITION),
    ev.DELIVER: (frozenset({QUEUED, SAFETYNET}), None, R.PRIMARY_COPY_TRANSITION),
    ev.DUPLICATEDELIVER: (frozenset({QUEUED, SAFETYNET}), None, R.PRIMARY_COPY_TRANSITION),
    ev.SEND: (frozenset({QUEUED, SAFETYNET}), None, R.PRIMARY_COPY_TRANSITION),
    ev.FAIL: (frozenset({QUEUED}), FAILED, R.PRIMARY_COPY_TRANSITION),
    ev.HARECEIVE: (frozenset({ABSENT}), SHADOW, R.SHADOW_COPY_TRANSITION),
    ev.DISCARD_NOTIFY: (frozenset({SHADOW}), None, R.SHADOW_COPY_TRANSITION),
    ev.HADISCARD: (frozenset({SHADOW}), RELEASED, R.SHADOW_COPY_TRANSITION),
    ev.PROMOTE: (frozenset({SHADOW}), QUEUED, R.SHADOW_COPY_TRANSITION),
    ev.SHADOW_EXPIRE: (frozenset({SHADOW}), EXPIRED, R.SHADOW_COPY_TRANSITION),
    ev.SAFETYNET: (frozenset({QUEUED, RELEASED}), SAFETYNET, R.SAFETYNET_TRANSITION),
    ev.RESUBMIT: (frozenset({SAFETYNET}), None, R.SAFETYNET_TRANSITION),
    ev.SAFETYNET_EXPIRE: (frozenset({SAFETYNET}), GONE, R.SAFETYNET_TRANSITION),
    ev.LOST: (frozenset({QUEUED, SHADOW, LOST}), LOST, R.PRIMARY_COPY_TRANSITION),
    # the primary's discard queue (owed by the primary, not a copy on the event's node)
    ev.DISCARD_EXPIRE: (frozenset({QUEUED, SAFETYNET, FAILED, LOST, GONE}), None, R.DISCARD_QUEUE_TRANSITION),
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

Guard = Callable[[World, Inst, Event], list[Violation]]
GUARDS: dict[str, Guard] = {**creation.GUARDS, **maintenance.GUARDS}
# event kind -> the rules each of its events judged by `_move` is an instance of (its row's transition rule, and
# the rules its guard compares whatever the attributes: `creation.EVERY`, `maintenance.EVERY`), counted once per
# event in `World.tally.moves` and added to the tally by `tally_of` (one dict increment per event on the hot path)
EVERY: dict[str, tuple[Rule, ...]] = {
    kind: (rule, *creation.EVERY.get(kind, ()), *maintenance.EVERY.get(kind, ()))
    for kind, (_, _, rule) in TRANSITIONS.items()
}


@cython.locals(w=World)
def tally_of(w: World) -> Tally:
    """What each rule judged in `w`: the tally its rule code kept, with the instances `World.tally.moves` counts."""
    out = Tally()
    out.merge(w.tally)
    for kind, n in w.tally.moves.items():
        for rule in EVERY[kind]:
            out.judge(rule, n)
    return out


NONE: tuple[Violation, ...] = ()  # what most events return: no new list per step
# the kinds `step` tells apart, bound once (no module attribute lookups per event)
_MECH, _SR_CONFIG, _XQUERYDISCARD, _SNAPSHOT = ev.MECH, ev.SR_CONFIG, ev.XQUERYDISCARD, ev.SNAPSHOT
_RECEIVE, _DISCARD_EXPIRE = ev.RECEIVE, ev.DISCARD_EXPIRE


@cython.locals(w=World, e=Event)
def step(w: World, e: Event) -> Sequence[Violation]:
    """Fold one recorded event (any mechanism) into the world; return the rules it breaks (often `NONE`)."""
    due, db_due = w.due, w.db_due
    out: Sequence[Violation] = (
        flush_due(w, e.ts_ms) if (due and due[0][0] < e.ts_ms) or (db_due and db_due[0][0] < e.ts_ms) else NONE
    )
    if e.mechanism != _MECH:
        if e.mechanism == "core":
            _lifecycle(w, e)
        return out
    kind = e.kind
    move = TRANSITIONS.get(kind)
    if move is not None and kind != _RECEIVE:  # most events: a copy of a known instance moves
        m = w.msgs.get(e.entity)
        if m is None:
            inst = None
        else:
            try:  # the one lookup of `inst` (an input fault when missing or naming nothing: `inputs.inst_of`)
                inst = m.insts.get(e.attrs["inst"])
            except (KeyError, TypeError):
                inst = m.insts.get(inst_of(e))
        # an instance whose RECEIVE is not in the trace (the monitor notes it) is partial: `partial.orphan`
        found = partial.orphan(w, e, move[2]) if inst is None else _move(w, e, inst, move)
    elif kind == _RECEIVE:
        readable(e)
        found = _move(w, e, creation.receive(w, e), move)  # type: ignore[arg-type]
    elif kind == _XQUERYDISCARD:
        readable(e)
        found = heartbeats.query(w, e)
    elif kind == _SNAPSHOT:
        found = end_of_run(w, e)
    elif kind == _SR_CONFIG:
        w.configure(kind, dict(e.attrs))
        return out
    else:  # a foreign kind changes nothing, but its `inst` is read as for any message event (unreadable: noted)
        m = w.msgs.get(e.entity)
        if m is not None:
            inst_of(e)
        return out
    if not out:
        return found
    return [*out, *found]


@cython.locals(w=World, e=Event)
def _move(w: World, e: Event, inst: Inst, move: tuple[frozenset[str], str | None, Rule]) -> list[Violation]:
    """The copy on the event's node (the primary's, for DISCARD_EXPIRE) moves as `TRANSITIONS` allows."""
    allowed, target, rule = move
    kind = e.kind
    node = inst.primary if kind == _DISCARD_EXPIRE else e.node
    copy = inst.copies.get(node)
    now = copy.state if copy is not None else ABSENT
    if now not in allowed:
        holder = HOLDER.get(now, rule)
        w.tally.judge(holder)
        why = f"{kind} on {node} changes a copy that is {now}; the protocol allows it only from {sorted(allowed)}"
        return [holder.violated((e,), why, observed=now, expected=sorted(allowed))]
    if kind != _RECEIVE:  # (a RECEIVE was read before its instance was made)
        check = CHECKS.get(kind)  # `inputs.readable`, inline
        if check is not None:
            check(e)
    out = GUARDS[kind](w, inst, e)
    moves = w.tally.moves  # an instance of each rule of `EVERY[kind]` judged (`tally_of`)
    moves[kind] = moves.get(kind, 0) + 1
    if target is not None:
        if copy is None:  # (no guard makes or removes a copy: only this function makes one)
            w.place(node, inst, Copy(target, e.ts_ms))
        elif copy.state != target:
            copy.state, copy.since_ms = target, e.ts_ms
    return out


@cython.locals(w=World)
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
            for pair in [p for p in w.handed if p[0] == e.node]:
                del w.handed[pair]
            w.owed_at_boot.pop(e.node, None)
        else:
            w.owed_at_boot[e.node] = frozenset((p[1], *k) for p, q in w.owed.items() if p[0] == e.node for k in q)
    elif e.kind == "PARTITION":
        w.group = {n: i for i, g in enumerate(groups_of(e)) for n in str(g).split(",") if n}
    elif e.kind == "HEAL":
        w.group = {}


@cython.locals(w=World)
def _apply(w: World, node: str, what: str) -> None:
    """A CRASH or a RESTART on new storage: only the copies on `node` change (the node index `World.at`; the
    changes commute, so the index's order does not matter). A new transport database also leaves in
    `World.destroyed[node]` the copies it destroyed, with their state before (what the harness records as LOST)."""
    destroyed = []
    for inst in (w.at.get(node) or {}).values():
        copy = inst.copies[node]
        if (what, copy.state) not in LIFECYCLE:
            continue
        if what == "RESTART-new" and copy.state in (QUEUED, SHADOW):
            destroyed.append(((inst.msg, inst.inst), copy.state))
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
    if what == "RESTART-new":
        w.destroyed[node] = destroyed
