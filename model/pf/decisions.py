"""The decisions of public folder replication and backfill: pure choices, where mutants plant bugs.

Seeds 001 ("Packing and Unpacking", "Replication Message Types", "Deleting a Replica", "Hierarchy
Replication") and 003 ("Backfill Requests and Backfill Messages"). Each function answers one question
(does this batch fit, does this request get an answer, which sources, is the deletion confirmed, which
replica list do these hierarchy changes give) and changes no state; `step.py` applies the answers. The
generator uses the answers of `DECISIONS` (or of a mutant's replacement); the monitor accepts every answer
the seeds allow (`choice_allowed` for ties among backfill sources).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the records' locals as C structs (the `.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from model.pf.cnset import CN, CNSet
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, Change, Ctx, Entry, Params, Replica, Row
from spec.catalogue import require

require("PF-010", "PF-011", "PF-021", "PF-025", "BF-005", "BF-008", "BF-011", "BF-012", "BF-013", "BF-032")


# --- packing (PF-010, PF-011, PF-I09) -------------------------------------------------------------
@cython.locals(c=Change)
def fits(batch: Sequence[Change], hierarchy: bool, p: Params) -> bool:
    """Whether a batch respects the limits; a single change always fits (an oversized post goes alone)."""
    if len(batch) <= 1:
        return True
    size = 0
    for c in batch:  # (loops, not generators: one call per message the monitor judges)
        size += c.size_kb
    if size > p.message_size_limit_kb:
        return False
    if not hierarchy:
        return len(batch) <= p.message_count_limit
    deletes = 0
    folders = set()
    for c in batch:
        if c.op == "delete":
            deletes += 1
        else:
            folders.add(c.target)
    return deletes <= p.deleted_folder_limit and len(folders) <= p.folder_count_limit


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


# --- status (PF-021, PF-I05, BF-I14) ----------------------------------------------------------------
def should_answer(requester: CNSet, own: CNSet, requires_response: bool) -> bool:
    """Strict subset rule (PF-021); a delete-pending replica's request is always answered (PF-I05)."""
    return requires_response or requester < own


def may_answer(state: str, requires_response: bool) -> bool:
    """Only an active replica answers a delete-pending replica's request (BF-I14)."""
    return state == ACTIVE if requires_response else state != DELETE_NOW


def requires_response(sender_state: str) -> bool:
    """A status request requires a response exactly when its sender's replica is delete pending (seed 001,
    "Deleting a Replica", step 3; PF-I05): the flag is derived from the sender's state, never trusted."""
    return sender_state == DELETE_PENDING


# --- backfill time-outs (BF-005, BF-008, BF-I02, BF-I09, BF-I10) -------------------------------------
@cython.locals(rep=Replica)
def is_local(rep: Replica, cns: CNSet, ctx: Ctx) -> bool:
    """Content is local when a store of the own routing group is known to hold some of it (BF-I09)."""
    store, costs = rep.store, ctx.costs
    for s, row in rep.rows.items():  # noqa: SIM110 (a loop: no generator per call on the monitor's hot path)
        if s != store and costs.get(s) == 0 and row.cnset.intersects(cns):
            return True
    return False


def retry_delay(requests_sent: int, local: bool, p: Params) -> int:
    """Wait after the n-th request: first retry after the first, later retries after the others."""
    if requests_sent <= 1:
        return p.first_retry_local_ms if local else p.first_retry_remote_ms
    return p.later_retry_local_ms if local else p.later_retry_remote_ms


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


@cython.locals(rep=Replica)
def file_entry(rep: Replica, missing: CNSet, sender: str, now: int, ctx: Ctx) -> Entry:
    """The backfill array entry for changes found missing on a message from `sender` (BF-003)."""
    local = is_local(rep, missing, ctx)
    cause = "new_replica" if rep.new_replica else "gap"
    if rep.view.get(sender) == DELETE_PENDING:
        cause = "delete_pending"
    return Entry(missing, now + entry_delay(0, local, cause, ctx.params), 0, local, base_ms=now, cause=cause)


@cython.locals(e=Entry)
def entry_due(e: Entry, now: int) -> bool:
    return e.due_ms <= now


# --- backfill sources (BF-011..BF-014, BF-I08) -------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Candidate:
    server: str
    down: bool
    preferred: bool
    cost: int
    version: int
    count: int
    cnset: CNSet

    def seed_key(self) -> tuple[object, ...]:
        """The five sort keys of seed 003, in order (BF-011); candidates equal on it are tied."""
        return (self.down, not self.preferred, self.cost, -self.version, -self.count)

    def key(self) -> tuple[object, ...]:
        """The seed's keys, then the server name: the model's own tie-break (one allowed order of many)."""
        return (*self.seed_key(), self.server)


@cython.locals(rep=Replica, row=Row)
def candidates(rep: Replica, missing: CNSet, ctx: Ctx) -> list[Candidate]:
    """Every other replica of the folder (a delete-pending one counts, BF-010) with its sort keys."""
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


def choice_allowed(missing: CNSet, cands: Sequence[Candidate], chosen: Sequence[tuple[str, CNSet]]) -> str | None:
    """Whether `chosen` is the walk of BF-I08 for SOME order of the candidates consistent with the seed's
    five keys: candidates tied on every key may come in any order (the server name is only the model's
    tie-break). None if allowed, else why not. The recorded list may name the servers in any order (the
    requests go out together, BF-013)."""
    by_server = {c.server: c for c in cands if c.count > 0}
    unknown = [s for s, _ in chosen if s not in by_server]
    if unknown:
        return f"{unknown} hold none of the missing changes or are not replicas"
    if len({s for s, _ in chosen}) != len(chosen):
        return "a server is asked twice"
    classes: dict[tuple[object, ...], list[Candidate]] = {}
    for c in by_server.values():
        classes.setdefault(c.seed_key(), []).append(c)
    picked = {s: cns for s, cns in chosen}
    left = missing
    for key in sorted(classes):
        members = classes[key]
        mine = [c for c in members if c.server in picked]
        # within a tie class the walk may take the picked members in any order; find one that reproduces
        # exactly the recorded assignments (a small class: try the members by greedy consistency)
        order = _tie_order(mine, picked, left)
        if order is None:
            return f"no order of the tied servers {sorted(c.server for c in members)} assigns {_show(chosen)}"
        for c in order:
            left = left - picked[c.server]
        rest = [c for c in members if c.server not in picked and c.cnset & left]
        if rest and left:
            return (
                f"{rest[0].server} sorts before later servers by the five keys and holds {rest[0].cnset & left} "
                f"still missing, but this check sent it no request for them"
            )
        if not left:
            later = [s for s in picked if by_server[s].seed_key() > key]
            return None if not later else f"{later} asked although earlier servers covered every missing change"
    holder = next((c.server for c in by_server.values() if c.cnset & left), None)
    return None if holder is None else f"{left} left unrequested although {holder} holds some of it"


def _tie_order(mine: list[Candidate], picked: Mapping[str, CNSet], left: CNSet) -> list[Candidate] | None:
    order: list[Candidate] = []
    remaining = list(mine)
    while remaining:
        for c in remaining:  # (a loop, not `next` over a generator: one per backfill request judged)
            if picked[c.server] == (c.cnset & left) and picked[c.server]:
                nxt = c
                break
        else:
            return None
        order.append(nxt)
        remaining.remove(nxt)
        left = left - picked[nxt.server]
    return order


def _show(chosen: Iterable[tuple[str, CNSet]]) -> list[tuple[str, str]]:
    return [(s, str(c)) for s, c in chosen]


# --- deleting a replica (BF-032, BF-I06) ------------------------------------------------------------
@cython.locals(rep=Replica)
def delete_ready(rep: Replica, p: Params) -> bool:
    """Delete now only once status from the other active replicas (all of them by default, BF-I06; one
    if so configured) shows a CNSet containing everything this replica holds (BF-032)."""
    store, statuses, cnset = rep.store, rep.statuses, rep.cnset  # (read before the comprehensions, as above)
    others = [s for s, st in sorted(rep.view.items()) if st == ACTIVE and s != store]
    ok = [s for s in others if s in statuses and statuses[s] >= cnset]
    if p.delete_requires_all:
        return bool(others) and len(ok) == len(others)
    return bool(ok)


@cython.locals(rep=Replica)
def others(rep: Replica) -> tuple[str, ...]:
    """The other replicas a message about this folder goes to (PF-008, PF-016)."""
    store = rep.store  # (a list, not a generator: one per message sent)
    return tuple([s for s, st in sorted(rep.view.items()) if s != store and st in (ACTIVE, DELETE_PENDING)])


@cython.locals(rep=Replica)
def has_others(rep: Replica) -> bool:
    """Whether `others(rep)` names anyone (a replica with nobody to send to owes no broadcast yet, PF-I13)."""
    store = rep.store
    for s, st in rep.view.items():  # noqa: SIM110 (a loop: no generator per call on the monitor's hot path)
        if s != store and st in (ACTIVE, DELETE_PENDING):
            return True
    return False


# --- the replica list (PF-025, PF-I14) --------------------------------------------------------------
# What the hierarchy changes about one folder say so far: for each server the (time made, change number)
# and state of its latest replica change; None once a change deleted the folder (absorbing).
ViewAcc = dict[str, tuple[tuple[int, CN], str]] | None


@cython.locals(c=Change)
def view_step(acc: ViewAcc, c: Change) -> ViewAcc:
    """One hierarchy change about a folder folded into its accumulator (updated in place, and returned):
    each (folder, server) entry takes the state of its latest change by (time made, change number)
    (PF-I14); a deleted folder has no replicas (PF-025: deleting a folder is a hierarchy change)."""
    if acc is None or c.op == "delete":
        return None
    if c.op != "replica":
        return acc
    server, _, state = c.detail.rpartition(":")
    key = (c.stamp, c.cn)
    old = acc.get(server)
    if old is None or key > old[0]:
        acc[server] = (key, state)
    return acc


def view_of(acc: ViewAcc) -> dict[str, str]:
    """The replica list an accumulator gives: its servers in name order, a removed one left out."""
    if acc is None:
        return {}
    return {s: st for s, (_, st) in sorted(acc.items()) if st != "removed"}


def fold_view(changes: Iterable[Change]) -> dict[str, str]:
    """A folder's replica list from the hierarchy changes a store holds about it (PF-I14, PF-025): the
    fold of `view_step` from nothing (order-insensitive: the latest change per server wins, and a delete
    absorbs everything)."""
    acc: ViewAcc = {}
    for c in changes:
        acc = view_step(acc, c)
    return view_of(acc)


@dataclass(frozen=True)
class Decisions:
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


DECISIONS = Decisions()
