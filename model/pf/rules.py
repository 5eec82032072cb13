"""Pure transition rules of public folder replication and backfill (seeds 001, 003, 004).

Every function takes a frozen `Replica` (one store's rows for one folder) plus inputs and returns a new
`Replica` and what to do (messages to send are described, not sent). No I/O, no clock, no randomness:
the simulator (`sim.py`, `node.py`) and the trace monitor (`monitor.py`) both call these, so the model and
the checker cannot drift. `RULES` bundles the functions a mutant may replace (`mutants.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from model.pf.cnset import CN, EMPTY, CNSet
from model.pf.events import BACKFILL_REQ, DATA_CODES, STATUS, STATUS_REQ
from model.pf.state import (
    ACTIVE,
    DELETE_NOW,
    DELETE_PENDING,
    HIERARCHY,
    Change,
    Ctx,
    Entry,
    Params,
    Replica,
    Row,
)
from spec.catalogue import require

require(
    "PF-012",
    "PF-014",
    "PF-021",
    "PF-028",
    "PF-029",
    "PF-030",
    "PF-011",
    "PF-010",
    "BF-001",
    "BF-004",
    "BF-005",
    "BF-006",
    "BF-008",
    "BF-011",
    "BF-012",
    "BF-013",
    "BF-014",
    "BF-029",
    "BF-031",
    "BF-032",
)


# --- local changes and broadcasts (PF-012, PF-023, PF-029) ------------------------------------------
def local_change(rep: Replica, cn: CN, now: int, p: Params) -> Replica:
    """A local update: the change number joins the CNSet and the unsent set; the status expiry is
    (re)set when it is anchored on local changes (PF-029, PF-I02)."""
    expiry = now + p.status_timeout_ms if p.status_anchor == "last_local_change" else rep.expiry_ms
    return replace(rep, cnset=rep.cnset.add(cn), unsent=rep.unsent.add(cn), expiry_ms=expiry)


def take_unsent(rep: Replica, now: int, p: Params) -> tuple[Replica, CNSet]:
    """A replication event: the local changes not yet broadcast are taken for packing (PF-023)."""
    if not rep.unsent:
        return rep, EMPTY
    expiry = now + p.status_timeout_ms if p.status_anchor == "last_broadcast" else rep.expiry_ms
    return replace(rep, unsent=EMPTY, expiry_ms=expiry), rep.unsent


def pack(changes: Sequence[Change], hierarchy: bool, p: Params) -> list[tuple[Change, ...]]:
    """Split changes (in change-number order) into messages within the packing limits (PF-011, PF-I09).
    Callers pack one folder at a time, so content of two folders never shares a message (PF-010)."""
    out: list[tuple[Change, ...]] = []
    batch: list[Change] = []
    for c in sorted(changes, key=lambda c: c.cn):
        if batch and not fits([*batch, c], hierarchy, p):
            out.append(tuple(batch))
            batch = []
        batch.append(c)
    if batch:
        out.append(tuple(batch))
    return out


def fits(batch: Sequence[Change], hierarchy: bool, p: Params) -> bool:
    """Whether a batch respects the limits; a single change always fits (an oversized post goes alone)."""
    if len(batch) <= 1:
        return True
    if sum(c.size_kb for c in batch) > p.message_size_limit_kb:
        return False
    if not hierarchy:
        return len(batch) <= p.message_count_limit
    deletes = sum(1 for c in batch if c.op == "delete")
    folders = {c.target for c in batch if c.op != "delete"}
    return deletes <= p.deleted_folder_limit and len(folders) <= p.folder_count_limit


# --- status (PF-021, PF-029, PF-030) ------------------------------------------------------------------
def should_answer(requester: CNSet, own: CNSet, requires_response: bool) -> bool:
    """Strict subset rule (PF-021); a delete-pending replica's request is always answered (PF-I05)."""
    return requires_response or requester < own


def may_answer(state: str, requires_response: bool) -> bool:
    """Only an active replica answers a delete-pending replica's request (BF-I14)."""
    return state == ACTIVE if requires_response else state != DELETE_NOW


def is_thread_time(now: int, p: Params) -> bool:
    return (now - p.status_offset_ms) % p.status_period_ms == 0


def next_thread_time(now: int, p: Params) -> int:
    """The next run of the status thread strictly after `now` (00:15 and 12:15 GMT by default)."""
    k = (now - p.status_offset_ms) // p.status_period_ms + 1
    return p.status_offset_ms + k * p.status_period_ms


def status_due(rep: Replica, now: int) -> bool:
    return rep.expiry_ms is not None and rep.expiry_ms <= now and rep.state == ACTIVE


def status_sent(rep: Replica) -> Replica:
    return replace(rep, expiry_ms=None)


# --- receiving (PF-014, PF-028, BF-001, BF-004) -----------------------------------------------------
@dataclass(frozen=True, slots=True)
class Reaction:
    applied: CNSet = EMPTY
    filed: Entry | None = None
    answer_status: bool = False
    backfill_reply: CNSet | None = None
    push: CNSet = EMPTY  # content a delete-pending replica sends the status sender (BF-031)
    delete_ready: bool = False


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
    rules: Rules | None = None,
    sent_ms: int | None = None,
) -> tuple[Replica, Reaction]:
    """Apply one received replication message to the receiver's replica of the folder: new changes, the
    sender's row of the state table (its CNSet, average transmission time), backfill entries."""
    r = rules or RULES
    applied = carried - rep.cnset if msg_code in DATA_CODES else EMPTY
    cnset = rep.cnset | applied
    rows = dict(rep.rows)
    row = rep.row(sender)
    transit = row.avg_transit_ms
    if sent_ms is not None:
        transit = now - sent_ms if transit < 0 else (7 * transit + now - sent_ms) // 8
    rows[sender] = replace(row, cnset=sender_cnset, down=False, last_heard_ms=now, avg_transit_ms=transit)
    entries = tuple(replace(e, cns=e.cns - cnset) for e in rep.backfill)
    rep = relocalise(replace(rep, cnset=cnset, rows=rows, backfill=tuple(e for e in entries if e.cns)), ctx)
    filed = None
    missing = sender_cnset - rep.cnset - rep.pending()
    if missing and rep.state == ACTIVE:
        filed = r.file_entry(rep, missing, sender, now, ctx)
        rep = replace(rep, backfill=(*rep.backfill, filed))
    answer = (
        msg_code == STATUS_REQ
        and r.may_answer(rep.state, requires_response)
        and r.should_answer(sender_cnset, rep.cnset, requires_response)
    )
    reply = request & rep.cnset if msg_code == BACKFILL_REQ else None
    push, ready = EMPTY, False
    if msg_code == STATUS and rep.state == DELETE_PENDING:
        rep = replace(rep, statuses={**rep.statuses, sender: sender_cnset})
        push = rep.cnset - sender_cnset if rep.view.get(sender) == ACTIVE else EMPTY
        ready = r.delete_ready(rep, ctx.params)
    return rep, Reaction(applied, filed, answer, reply, push, ready)


# --- backfill array (BF-003..BF-009, BF-I02, BF-I04, BF-I09, BF-I10) -------------------------------
def is_local(rep: Replica, cns: CNSet, ctx: Ctx) -> bool:
    """Content is local when a store of the own routing group is known to hold some of it (BF-I09)."""
    return any(ctx.costs.get(s) == 0 and (row.cnset & cns) for s, row in rep.rows.items() if s != rep.store)


def file_entry(rep: Replica, missing: CNSet, sender: str, now: int, ctx: Ctx) -> Entry:
    local = is_local(rep, missing, ctx)
    cause = "new_replica" if rep.new_replica else "gap"
    if rep.view.get(sender) == DELETE_PENDING:
        cause = "delete_pending"
    return Entry(missing, now + entry_delay(0, local, cause, ctx.params), 0, local, base_ms=now, cause=cause)


def entry_delay(requests_sent: int, local: bool, cause: str, p: Params) -> int:
    """The wait of an entry: the initial time-out before the first request (15 minutes for a new replica
    whose data are local, BF-008; the delete-pending delay, BF-I02), then the retry ladder (BF-005)."""
    if requests_sent == 0:
        if cause == "delete_pending":
            return p.delete_pending_delay_ms
        if cause == "new_replica" and local:
            return p.new_replica_delay_ms
        return p.initial_local_ms if local else p.initial_remote_ms
    return retry_delay(requests_sent, local, p)


def relocalise(rep: Replica, ctx: Ctx) -> Replica:
    """An entry filed as remote becomes local once a store of the own routing group is known to hold
    some of its changes; its wait shortens to the local value from the same start (BF-I09)."""
    entries = []
    for e in rep.backfill:
        if not e.local and is_local(rep, e.cns, ctx):
            due = min(e.due_ms, e.base_ms + entry_delay(e.attempt, True, e.cause, ctx.params))
            e = replace(e, local=True, due_ms=due)
        entries.append(e)
    return replace(rep, backfill=tuple(entries))


def retry_delay(requests_sent: int, local: bool, p: Params) -> int:
    """Wait after the n-th request: first retry after the first, later retries after the others."""
    if requests_sent <= 1:
        return p.first_retry_local_ms if local else p.first_retry_remote_ms
    return p.later_retry_local_ms if local else p.later_retry_remote_ms


@dataclass(frozen=True, slots=True)
class Candidate:
    server: str
    down: bool
    preferred: bool
    cost: int
    version: int
    count: int
    cnset: CNSet

    def key(self) -> tuple[object, ...]:
        """The five sort keys of seed 003 in order (BF-011), then the name for a total order."""
        return (self.down, not self.preferred, self.cost, -self.version, -self.count, self.server)


def candidates(rep: Replica, missing: CNSet, ctx: Ctx) -> list[Candidate]:
    out = []
    for s, state in sorted(rep.view.items()):
        if s == rep.store or state not in (ACTIVE, DELETE_PENDING):
            continue
        row = rep.row(s)
        cost = ctx.costs.get(s)
        out.append(
            Candidate(
                s,
                row.down,
                s in ctx.preferred,
                10**9 if cost is None else cost,
                ctx.versions.get(s, 0),
                len(row.cnset & missing),
                row.cnset,
            )
        )
    return out


def select_sources(missing: CNSet, cands: Sequence[Candidate]) -> list[tuple[str, CNSet]]:
    """Sort by the five keys, drop servers without any needed change, and walk the list until every
    missing change is assigned to one server (BF-011, BF-012, BF-013, BF-I08)."""
    out: list[tuple[str, CNSet]] = []
    left = missing
    for c in sorted((c for c in cands if c.count > 0), key=Candidate.key):
        take = c.cnset & left
        if take:
            out.append((c.server, take))
            left = left - take
        if not left:
            break
    return out


def backfill_tick(
    rep: Replica, now: int, ctx: Ctx, rules: Rules | None = None
) -> tuple[Replica, list[tuple[str, CNSet]]]:
    """A backfill check (every ReplicationTimeout): each entry whose time-out expired sends requests to
    the selected sources at once and waits the next rung of the ladder (BF-005, BF-006, BF-013, BF-014)."""
    r = rules or RULES
    rows = dict(rep.rows)
    entries: list[Entry] = []
    requests: list[tuple[str, CNSet]] = []
    for e in rep.backfill:
        if not r.entry_due(e, now):
            entries.append(e)
            continue
        for s in e.asked:  # unanswered since the last request: marked down (BF-014, BF-I07)
            if rows.get(s, Row()).last_heard_ms < e.asked_ms:
                rows[s] = replace(rows.get(s, Row()), down=True)
        probe = replace(rep, rows=rows)
        chosen = r.select_sources(e.cns, candidates(probe, e.cns, ctx))
        local = is_local(probe, e.cns, ctx)
        sent = e.attempt + (1 if chosen else 0)
        for s, _ in chosen:
            rows[s] = replace(rows.get(s, Row()), last_backfill_ms=now)
        wait = entry_delay(max(sent, 1), local, e.cause, ctx.params)
        asked = tuple(s for s, _ in chosen)
        entries.append(replace(e, due_ms=now + wait, attempt=sent, local=local, asked=asked, asked_ms=now, base_ms=now))
        requests.extend(chosen)
    new_flag = rep.new_replica and not requests
    return replace(rep, rows=rows, backfill=tuple(entries), new_replica=new_flag), requests


def entry_due(e: Entry, now: int) -> bool:
    return e.due_ms <= now


# --- deleting a replica (BF-029..BF-033, BF-I06) ----------------------------------------------------
def enter_delete_pending(rep: Replica) -> Replica:
    return replace(rep, state=DELETE_PENDING, statuses={}, backfill=(), expiry_ms=None)


def delete_ready(rep: Replica, p: Params) -> bool:
    """Delete now only once status from another active replica (all of them, if so configured) shows a
    CNSet containing everything this replica holds (BF-032)."""
    others = [s for s, st in sorted(rep.view.items()) if st == ACTIVE and s != rep.store]
    ok = [s for s in others if s in rep.statuses and rep.statuses[s] >= rep.cnset]
    if p.delete_requires_all:
        return bool(others) and len(ok) == len(others)
    return bool(ok)


def delete_now(rep: Replica) -> Replica:
    return replace(rep, state=DELETE_NOW)


def others(rep: Replica) -> tuple[str, ...]:
    """The other replicas a message about this folder goes to (PF-008, PF-016)."""
    return tuple(s for s, st in sorted(rep.view.items()) if s != rep.store and st in (ACTIVE, DELETE_PENDING))


def new_replica(fid: str, store: str, origin: str, view: Mapping[str, str], *, new: bool) -> Replica:
    return Replica(fid=fid, store=store, origin=origin, view=dict(view), new_replica=new and fid != HIERARCHY)


@dataclass(frozen=True)
class Rules:
    """The replaceable decision points; a mutant swaps exactly one of them."""

    should_answer: Callable[[CNSet, CNSet, bool], bool] = should_answer
    may_answer: Callable[[str, bool], bool] = may_answer
    file_entry: Callable[..., Entry] = file_entry
    entry_due: Callable[[Entry, int], bool] = entry_due
    select_sources: Callable[[CNSet, Sequence[Candidate]], list[tuple[str, CNSet]]] = select_sources
    delete_ready: Callable[[Replica, Params], bool] = delete_ready
    pack: Callable[[Sequence[Change], bool, Params], list[tuple[Change, ...]]] = pack
    others: Callable[[Replica], tuple[str, ...]] = others
    extras: dict[str, object] = field(default_factory=dict)


RULES = Rules()
