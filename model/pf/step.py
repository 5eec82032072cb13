"""The transitions of public folder replication and backfill: the only state updates, shared by the
generator (`node.py`) and the monitor (`monitor.py`, a fold over these functions). Seeds 001, 003, 004.

Every function takes a `Replica` (one store's rows for one folder, PF-032) plus inputs, updates it in place
and returns it, with what to do (messages are described, not sent); a caller that needs the state before
reads it first, and a backup keeps a copy (`Replica.copy`). No I/O, no clock, no randomness. The
choices they depend on come from `decisions.py` through a `Decisions` bundle (a mutant swaps one).
`REPLICA_TRANSITIONS` is the table of allowed replica-state changes (BF-021, BF-029, BF-034, BF-023): the
monitor rejects any other change of a replica's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the records' locals as C structs (the `.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace

from model.pf import decisions as D
from model.pf.cnset import CN, EMPTY, CNSet
from model.pf.decisions import DECISIONS, Candidate, ViewAcc, entry_delay, is_local, view_of, view_step
from model.pf.events import BACKFILL_REQ, DATA_CODES, STATUS, STATUS_REQ
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Change, Ctx, Entry, Params, Replica, Row
from spec.catalogue import require

require("PF-012", "PF-014", "PF-025", "PF-028", "PF-029", "PF-030", "BF-001", "BF-004", "BF-006", "BF-014", "BF-029")

ABSENT = "absent"  # no replica of the folder on the store

# (state before, event kind) -> state after, and the condition the seeds set on the route. The monitor
# checks every replica-state change of a trace against this table; any other change is a violation.
REPLICA_TRANSITIONS: dict[tuple[str, str], tuple[str, str]] = {
    (ABSENT, "REPLICA_CREATE"): (ACTIVE, "the store's replica list (from hierarchy changes it holds) shows it active"),
    (ACTIVE, "DELETE_PENDING"): (DELETE_PENDING, "the store's replica list shows it delete pending"),
    (DELETE_PENDING, "DELETE_NOW"): (DELETE_NOW, "status from the other active replicas confirms (BF-032)"),
    (DELETE_NOW, "REPLICA_REMOVED"): (ABSENT, "the maintenance cycle after delete now (BF-034)"),
    (ACTIVE, "REPLICA_REMOVED"): (ABSENT, "the folder is deleted, or the hierarchy shows the replica removed"),
    (DELETE_PENDING, "REPLICA_REMOVED"): (ABSENT, "the folder is deleted, or the hierarchy shows it removed"),
    (ACTIVE, "RESTORE"): (ACTIVE, "restored from a backup (BF-023)"),
    (DELETE_PENDING, "RESTORE"): (DELETE_PENDING, "restored from a backup"),
    (DELETE_NOW, "RESTORE"): (DELETE_NOW, "restored from a backup"),
}


def transition(before: str, kind: str) -> str | None:
    """The state after `kind` from `before`, or None when the table has no such route."""
    row = REPLICA_TRANSITIONS.get((before, kind))
    return row[0] if row else None


# --- local changes and broadcasts (PF-012, PF-023, PF-029) ------------------------------------------
@cython.locals(rep=Replica)
def local_change(rep: Replica, cn: CN, now: int, p: Params) -> Replica:
    """A local update: the change number joins the CNSet and the unsent set; the status expiry is
    (re)set when it is anchored on local changes (PF-029, PF-I02)."""
    if p.status_anchor == "last_local_change":
        rep.expiry_ms = now + p.status_timeout_ms
    rep.cnset = rep.cnset.add(cn)
    rep.unsent = rep.unsent.add(cn)
    return rep


def take_unsent(rep: Replica, now: int, p: Params) -> tuple[Replica, CNSet]:
    """A replication event: the local changes not yet broadcast are taken for packing (PF-023)."""
    unsent = rep.unsent
    if not unsent:
        return rep, EMPTY
    return broadcast_sent(rep, unsent, now, p), unsent


@cython.locals(rep=Replica)
def broadcast_sent(rep: Replica, carried: CNSet, now: int, p: Params) -> Replica:
    """A regular broadcast carried `carried`: they are no longer unsent; the status expiry restarts when it
    is anchored on broadcasts (PF-I02). The generator applies it to all unsent at once (`take_unsent`), the
    monitor once per recorded message (one broadcast may be packed into several)."""
    if p.status_anchor == "last_broadcast":
        rep.expiry_ms = now + p.status_timeout_ms
    rep.unsent = rep.unsent - carried
    return rep


# --- status (PF-029, PF-030) --------------------------------------------------------------------------
def is_thread_time(now: int, p: Params) -> bool:
    return (now - p.status_offset_ms) % p.status_period_ms == 0


def next_thread_time(now: int, p: Params) -> int:
    """The next run of the status thread strictly after `now` (00:15 and 12:15 GMT by default)."""
    k = (now - p.status_offset_ms) // p.status_period_ms + 1
    return p.status_offset_ms + k * p.status_period_ms


@cython.locals(rep=Replica)
def status_due(rep: Replica, now: int) -> bool:
    return rep.expiry_ms is not None and rep.expiry_ms <= now and rep.state == ACTIVE


@cython.locals(rep=Replica)
def status_sent(rep: Replica) -> Replica:
    rep.expiry_ms = None
    return rep


# --- receiving (PF-014, PF-028, BF-001, BF-004) -----------------------------------------------------
class Reaction:
    """What receiving one message did, for the caller to act on (`receive` makes one per message). A plain slotted
    class (issue 32, session 16): a dataclass's generated `__init__` is interpreted even in the compiled build.
    `push`: content a delete-pending replica sends the status sender (BF-031)."""

    __slots__ = ("answer_status", "applied", "backfill_reply", "delete_ready", "filed", "push")

    def __init__(self, *values: object) -> None:  # applied, filed, answer_status, backfill_reply, push, delete_ready
        self.applied, self.filed, self.answer_status, self.backfill_reply, self.push, self.delete_ready = values


@cython.locals(rep=Replica, row=Row, e=Entry)
def receive(
    rep: Replica,
    msg_code: int,
    sender: str,
    sender_cnset: CNSet,
    carried: CNSet,
    request: CNSet,
    requires_response: bool,
    now: int,
    ctx: Ctx,
    rules: D.Decisions | None = None,
    sent_ms: int | None = None,
) -> tuple[Replica, Reaction]:
    """Apply one received replication message to the receiver's replica of the folder: new changes, the
    sender's row of the state table (its CNSet, average transmission time), backfill entries."""
    r = rules or DECISIONS
    applied = carried - rep.cnset if msg_code in DATA_CODES and carried else EMPTY
    if applied:
        rep.cnset = cnset = rep.cnset | applied
    else:
        cnset = rep.cnset
    row = rep.row_for(sender)
    if sent_ms is not None:
        transit = row.avg_transit_ms
        row.avg_transit_ms = now - sent_ms if transit < 0 else (7 * transit + now - sent_ms) // 8
    row.cnset, row.down, row.last_heard_ms = sender_cnset, False, now
    if rep.backfill:  # entries keep only what is still missing (the tuple replaced only when one changed)
        entries = []
        pruned = False
        for e in rep.backfill:
            left = e.cns - cnset
            if left is not e.cns:
                pruned = True
                if left:
                    entries.append(e.but(cns=left))
            else:
                entries.append(e)
        if pruned:
            rep.backfill = tuple(entries)
    relocalise(rep, ctx)
    filed = None
    missing = sender_cnset - cnset
    if missing and rep.backfill:
        missing = missing - rep.pending()
    if missing and rep.state == ACTIVE:
        filed = r.file_entry(rep, missing, sender, now, ctx)
        rep.backfill = (*rep.backfill, filed)
    answer = (
        msg_code == STATUS_REQ
        and r.may_answer(rep.state, requires_response)
        and r.should_answer(sender_cnset, rep.cnset, requires_response)
    )
    reply = request & rep.cnset if msg_code == BACKFILL_REQ else None
    push, ready = EMPTY, False
    if msg_code == STATUS and rep.state == DELETE_PENDING:
        rep.statuses[sender] = sender_cnset
        push = rep.cnset - sender_cnset if rep.view.get(sender) == ACTIVE else EMPTY
        ready = r.delete_ready(rep, ctx.params)
    return rep, Reaction(applied, filed, answer, reply, push, ready)


# --- backfill array (BF-003..BF-009, BF-I02, BF-I04, BF-I09, BF-I10) -------------------------------
@cython.locals(rep=Replica, e=Entry)
def relocalise(rep: Replica, ctx: Ctx) -> Replica:
    """An entry filed as remote becomes local once a store of the own routing group is known to hold
    some of its changes; its wait shortens to the local value from the same start (BF-I09)."""
    for e in rep.backfill:
        if not e.local:
            break
    else:
        return rep  # nothing to relocalise (no entry, or every one local already)
    entries = []
    changed = False
    for e in rep.backfill:
        if not e.local and is_local(rep, e.cns, ctx):
            due = min(e.due_ms, e.base_ms + entry_delay(e.attempt, True, e.cause, ctx.params))
            e = e.but(local=True, due_ms=due)
            changed = True
        entries.append(e)
    if changed:
        rep.backfill = tuple(entries)
    return rep


@cython.locals(rep=Replica, e=Entry)
def backfill_tick(
    rep: Replica,
    now: int,
    ctx: Ctx,
    rules: D.Decisions | None = None,
    chosen: Mapping[int, list[tuple[str, CNSet]]] | None = None,
    log: list[tuple[int, Entry, list[Candidate]]] | None = None,
    unavailable: Collection[str] = (),
) -> tuple[Replica, list[tuple[str, CNSet]]]:
    """A backfill check (every ReplicationTimeout): each entry whose time-out expired sends requests to
    the selected sources at once and waits the next rung of the ladder (BF-005, BF-006, BF-013, BF-014).
    `chosen` (entry index -> requests) applies a choice made elsewhere (the monitor applies the recorded
    one) instead of the decision's own; `log` receives each due entry with the candidates it was chosen from.
    `unavailable` names the servers down or unavailable to this store other than by the BF-I07 mark (crashed,
    or across a partition: BF-I16); they sort with the marked ones, last (seed 003, key 1)."""
    r = rules or DECISIONS
    rows = rep.rows
    entries: list[Entry] = []
    requests: list[tuple[str, CNSet]] = []
    for i, e in enumerate(rep.backfill):
        if not r.entry_due(e, now):
            entries.append(e)
            continue
        for s in e.asked:  # unanswered since the last request: marked down (BF-014, BF-I07)
            if rows.get(s, Row()).last_heard_ms < e.asked_ms:
                rep.row_for(s).down = True
        cands = D.candidates(rep, e.cns, ctx)
        if unavailable:
            cands = [replace(c, down=True) if c.server in unavailable and not c.down else c for c in cands]
        if log is not None:
            log.append((i, e, cands))
        picked = list(chosen.get(i, [])) if chosen is not None else r.select_sources(e.cns, cands)
        local = is_local(rep, e.cns, ctx)
        sent = e.attempt + (1 if picked else 0)
        for s, _ in picked:
            rep.row_for(s).last_backfill_ms = now
        wait = entry_delay(max(sent, 1), local, e.cause, ctx.params)
        asked = tuple(s for s, _ in picked)
        entries.append(e.but(due_ms=now + wait, attempt=sent, local=local, asked=asked, asked_ms=now, base_ms=now))
        requests.extend(picked)
    rep.backfill = tuple(entries)
    rep.new_replica = rep.new_replica and not requests
    return rep, requests


def due_entries(rep: Replica, now: int, rules: D.Decisions | None = None) -> list[tuple[int, Entry]]:
    """The entries a backfill check at `now` acts on, with their index."""
    r = rules or DECISIONS
    return [(i, e) for i, e in enumerate(rep.backfill) if r.entry_due(e, now)]


# --- the replica lifecycle (BF-021, BF-029..BF-034) -------------------------------------------------
def enter_delete_pending(rep: Replica) -> Replica:
    rep.state, rep.statuses, rep.backfill, rep.expiry_ms = DELETE_PENDING, {}, (), None
    return rep


def delete_now(rep: Replica) -> Replica:
    rep.state = DELETE_NOW
    return rep


def new_replica(fid: str, store: str, origin: str, view: Mapping[str, str], *, new: bool) -> Replica:
    return Replica(fid=fid, store=store, origin=origin, view=dict(view), new_replica=new and fid != HIERARCHY)


def set_view(rep: Replica, view: Mapping[str, str]) -> Replica:
    rep.view = dict(view)
    return rep


# --- the replica lists a store holds (PF-025, PF-I14) --------------------------------------------------
class HeldHierarchy:
    """The replica lists one store derives from the hierarchy changes it holds (seed 001, "Hierarchy
    Replication", "Adding a Replica", "Deleting a Replica"): per target folder, the fold of those changes
    (`decisions.view_step`, in place), so the state is the latest replica change per server (bounded by the
    servers, not by the history) and holding a change costs the same at any point of a run. The one fold
    shared by the generator (`node.Store`) and the monitor (`monitor.PfFold`, one per store); `copy` is
    what a backup keeps (BF-023)."""

    __slots__ = ("acc",)

    def __init__(self, acc: dict[str, ViewAcc] | None = None) -> None:
        self.acc: dict[str, ViewAcc] = {} if acc is None else acc

    def hold(self, changes: Iterable[Change]) -> list[str]:
        """Fold `changes` in; the folders (never 1-1 itself) whose changes they were, in name order."""
        acc = self.acc
        targets = set()
        for c in changes:
            t = c.target
            acc[t] = view_step(acc.get(t, {}), c)
            targets.add(t)
        targets.discard(HIERARCHY)
        return sorted(targets)

    def view(self, target: str) -> dict[str, str]:
        """The replica list of `target` (empty when no change about it is held, or it was deleted)."""
        return view_of(self.acc.get(target, {}))

    def targets(self) -> list[str]:
        return list(self.acc)

    def copy(self) -> HeldHierarchy:
        return HeldHierarchy({t: None if a is None else dict(a) for t, a in self.acc.items()})
