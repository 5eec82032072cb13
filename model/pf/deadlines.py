"""The public folder monitor's timing obligations (family 2 of issue 9) and its convergence check.

Seed 001, "Replication Process" and "Default Replication Event Schedule": the replication thread runs the
hierarchy event every ReplicationSendFolderTree, the content event every ReplicationSendAlways, the backfill
check every ReplicationTimeout, and the status thread at ReplicationStatusThreadOffset past every
ReplicationStatusThreadPeriod (PF-023, PF-030, BF-007); seed 003, "Example Replication Cycles": the next
maintenance cycle removes a delete-now replica (BF-034, BF-I13), and a delete-pending replica keeps asking
for status (BF-029, BF-I12). Each obligation has a deadline computed from the recorded configuration and
the events seen; a store that is down owes nothing, and a store that comes back starts its timers afresh
(its first run comes within one interval of the restart). Any event later than a deadline still owed is a
violation, the store's own CRASH included (what it owed before it went down was late by then: issue 30).
Mixed into `monitor.PfFold`; the convergence check (PF-035) is in `convergence.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the records' locals as C structs (the `.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

import heapq

from model.pf.decisions import has_others
from model.pf.foldstate import FoldState
from model.pf.rules import (
    BACKFILL_CHECK_LATE,
    BROADCAST_INTERVAL,
    DELETE_PENDING_REQUESTS,
    MAINTENANCE_REMOVAL,
    STATUS_THREAD_LATE,
)
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Entry, Params, Replica
from model.pf.step import is_thread_time, next_thread_time
from spec.catalogue import require
from traces.schema import Event
from traces.verdict import Rule

require("PF-023", "PF-030", "BF-007", "BF-029", "BF-034")


def first_thread_run(at_or_after: int, p: Params) -> int:
    return at_or_after if is_thread_time(at_or_after, p) else next_thread_time(at_or_after, p)


# What an obligation owes, as data (formatted only when flagged, so the fold stays picklable): a kind and
# the values it names, taken when the obligation was derived.
Owed = tuple[str, object, object]
Obligation = tuple[Rule, int, Owed]  # (rule, deadline, what is owed)


def owed_text(what: Owed) -> str:
    kind, x, y = what
    if kind == "broadcast":
        return f"broadcast of {x}"
    if kind == "status":
        return f"the status message due at expiry {x}"
    if kind == "backfill":
        return f"the backfill check of {x}, due {y}"
    if kind == "requests":
        return "a repeated status request"
    if kind == "announce":
        return f"the hierarchy change announcing its replica of {x} removed"
    return "removal at the next maintenance cycle"


class Deadlines(FoldState):
    def init_deadlines(self) -> None:
        # The obligations of a replica change only when its inputs do: the replica, its store's up state,
        # the wait anchors below, or the configuration. `dirty` holds the replicas whose inputs changed
        # since the last `due`; their obligations are re-derived there and the ones that do not depend on
        # the time of the judged event go into a heap by deadline (so `due` costs O(log n) per change, not
        # a pass over every replica per event). Replicas whose obligations do depend on it (a wait that
        # starts "now" for want of an anchor, see `derive`) are `volatile` and re-derived at every `due`,
        # as before; an anchor that moves with every event while nobody is there to send to is `following`.
        self.dirty: set[tuple[str, str]] = set()
        self.dirty_stores: set[str] = set()
        self.volatile: set[tuple[str, str]] = set()
        self.following: dict[tuple[str, str], tuple[dict, ...]] = {}  # anchors that follow the judged event
        # (deadline, replica, version, index, rule): what is owed is `indexed[replica][index]`, the latest
        # derivation, which replaces the one indexed without a new version while its deadlines stay the same
        self.heap: list[tuple[int, tuple[str, str], int, int, Rule]] = []
        self.indexed: dict[tuple[str, str], list[Obligation]] = {}  # the obligations in the heap, per replica
        self.version: dict[tuple[str, str], int] = {}
        self.count: dict[tuple[str, str], int] = {}  # current heap entries per replica
        self.live = 0  # heap entries of current versions
        self.cfg_seen: object = None
        self.up: dict[str, bool] = {}
        self.up_since: dict[str, int] = {}
        # the wait anchors; every write to them, and to `reps`, marks the replica dirty (`put`, `anchor`)
        self.owed_from: dict[tuple[str, str], int] = {}  # unsent local changes since
        self.last_request: dict[tuple[str, str], int] = {}  # delete-pending: last request (or entry)
        self.dead_since: dict[tuple[str, str], int] = {}  # delete now since
        # store -> folder -> delete now since: the 1-1 change announcing the removal is owed (BF-034); an obligation
        # of the store's hierarchy replica, since the folder's replica is gone once the maintenance cycle removed it
        self.announce_owed: dict[str, dict[str, int]] = {}
        self.restoring: dict[str, str] = {}
        self.flagged: set[tuple[Rule, str, str, int]] = set()
        # the obligations each indexed replica owes now, (rule, deadline): one judged instance each when it
        # is found late (`due`) or no longer owed at a re-derivation (discharged in time, `index`)
        self.owed: dict[tuple[str, str], list[tuple[Rule, int]]] = {}
        self.last_ms = 0  # the time of the last event judged (`finish` re-derives at it)
        # when an entry was first seen due
        self.due_seen: dict[tuple[str, str, int, int], int] = {}

    @cython.locals(self=FoldState, rep=Replica, e=Entry)
    def note_due(self, ev: Event) -> None:
        """After an event changed a replica: entries that became due (a time-out shortened into the past,
        BF-I09) are acted on at the next backfill check after now, not after their nominal due time."""
        rep = self.reps.get((ev.node, ev.entity))
        if rep is None:
            return
        now = ev.ts_ms
        for e in rep.backfill:
            if e.due_ms <= now:
                seen = (ev.node, ev.entity, e.base_ms, e.attempt)
                if seen not in self.due_seen:
                    self.due_seen[seen] = now
                    self.dirty.add((ev.node, ev.entity))

    @cython.locals(self=FoldState)
    def put(self, key: tuple[str, str], rep: Replica) -> None:
        """A replica's new state: its obligations are re-derived at the next event."""
        self.reps[key] = rep
        self.dirty.add(key)

    @cython.locals(self=FoldState)
    def drop(self, key: tuple[str, str]) -> None:
        """A replica gone (removed, or absent from the backup restored)."""
        self.reps.pop(key, None)
        self.dirty.add(key)

    @cython.locals(self=FoldState)
    def anchor(self, anchors: dict[tuple[str, str], int], key: tuple[str, str], at: int | None) -> None:
        """Set (or, with None, clear) a wait anchor of one replica: its obligations are re-derived."""
        if at is None:
            anchors.pop(key, None)
        else:
            anchors[key] = at
        self.dirty.add(key)

    @cython.locals(self=FoldState)
    def mount(self, ev: Event) -> None:
        self.dirty_stores.add(ev.node)
        self.up[ev.node] = True
        self.up_since.setdefault(ev.node, ev.ts_ms)

    @cython.locals(self=FoldState)
    def lifecycle(self, ev: Event) -> None:
        self.dirty_stores.add(ev.node)
        if ev.kind == "CRASH":
            self.up[ev.node] = False
        else:
            self.up[ev.node] = True
            self.up_since[ev.node] = ev.ts_ms
            if ev.attrs.get("storage") == "new":
                self.restoring.pop(ev.node, None)

    @cython.locals(self=FoldState, rep=Replica, e=Entry)
    def derive(self, store: str, fid: str, now: int) -> tuple[list[Obligation], bool, tuple[dict, ...]]:
        """The obligations of one replica at `now`; whether they depend on `now` (a wait that starts at the
        judged event: no anchor recorded yet); the anchors that follow `now` while nobody is there to send
        to (set here and by `due` at every later event until the replica's inputs change)."""
        rep = self.reps[(store, fid)]
        p = self.ctx(store).params
        volatile = store not in self.up_since
        since = self.up_since.get(store, now)
        out: list[Obligation] = []
        key = (store, fid)
        follows: tuple[dict, ...] = ()
        if rep.state == ACTIVE and rep.unsent:
            if not has_others(rep):
                # nobody to send to yet (PF-I13): the wait starts when someone is. Not marked dirty: the
                # anchor changes no obligation until the replica changes (which re-derives it).
                self.owed_from[key] = now
                follows = (self.owed_from,)
            else:
                interval = p.hierarchy_interval_ms if fid == HIERARCHY else p.content_interval_ms
                volatile = volatile or key not in self.owed_from
                start = max(self.owed_from.get(key, now), since)
                out.append((BROADCAST_INTERVAL, start + interval, ("broadcast", rep.unsent, None)))
        if rep.state == ACTIVE and rep.expiry_ms is not None:
            out.append(
                (
                    STATUS_THREAD_LATE,
                    first_thread_run(max(rep.expiry_ms, since + 1), p),
                    ("status", rep.expiry_ms, None),
                )
            )
        for e in rep.backfill:
            became = self.due_seen.get((store, fid, e.base_ms, e.attempt), e.due_ms)
            out.append(
                (
                    BACKFILL_CHECK_LATE,
                    max(e.due_ms, became, since) + p.backfill_check_ms,
                    ("backfill", e.cns, e.due_ms),
                )
            )
        if rep.state == DELETE_PENDING and fid != HIERARCHY:
            if not has_others(rep):
                self.last_request[key] = now
                follows = (*follows, self.last_request)
            else:
                volatile = volatile or key not in self.last_request
                start = max(self.last_request.get(key, now), since)
                out.append((DELETE_PENDING_REQUESTS, start + p.content_interval_ms, ("requests", None, None)))
        if fid == HIERARCHY and store in self.announce_owed:
            out.extend(self.announcements(store, since, p))
        if rep.state == DELETE_NOW and key in self.dead_since:
            out.append(
                (
                    MAINTENANCE_REMOVAL,
                    max(self.dead_since[key], since) + p.hierarchy_interval_ms,
                    ("removal", None, None),
                )
            )
        return out, volatile, follows

    @cython.locals(self=FoldState)
    def owe_announcement(self, store: str, fid: str, at: int | None) -> None:
        """From its delete now at `at` (None: no longer, a restore undid it) the store owes the 1-1 change
        announcing its replica of `fid` removed (seed 003 "Example Replication Cycles" steps 8 and 9, BF-034)."""
        owed = self.announce_owed.setdefault(store, {})
        if at is None:
            owed.pop(fid, None)
        else:
            owed[fid] = at
        if not owed:
            del self.announce_owed[store]
        self.dirty.add((store, HIERARCHY))

    def announcements(self, store: str, since: int, p: Params) -> list[Obligation]:
        """The removals `store` still owes announcing, each by the next maintenance cycle after its delete now (the
        hierarchy interval, BF-I13); one is discharged once the store's own replica list no longer names it (its
        "removed" change folded in, or the folder deleted)."""
        owed = self.announce_owed[store]
        for fid in [f for f in owed if self.view(store, f).get(store) is None]:
            del owed[fid]
        if not owed:
            del self.announce_owed[store]
        out: list[Obligation] = []
        for fid, at in sorted(owed.items()):
            out.append((MAINTENANCE_REMOVAL, max(at, since) + p.hierarchy_interval_ms, ("announce", fid, None)))
        return out

    @cython.locals(self=FoldState)
    def due(self, ev: Event) -> None:
        """Before judging `ev`: every obligation whose deadline passed before `ev` happened is a violation.

        Same verdicts, in the same order (the replicas' order, then each one's obligations), as deriving
        every replica's obligations at every event; here from the heap plus the volatile replicas."""
        now = self.last_ms = ev.ts_ms
        judged = self.rederive(now) if self.dirty or self.dirty_stores or self.cfg is not self.cfg_seen else None
        if self.following:
            for key, anchors in self.following.items():
                for anchor in anchors:
                    anchor[key] = now
        if self.volatile:
            if judged is None:
                judged = {}
            for key in self.volatile - judged.keys():
                judged[key] = self.derive(key[0], key[1], now)[0]
        heap = self.heap
        if judged:
            late = [(key, i, ob) for key, obs in judged.items() for i, ob in enumerate(obs) if now > ob[1]]
            if not late and (not heap or heap[0][0] >= now):
                return
        elif not heap or heap[0][0] >= now:
            return  # the common case: nothing re-derived, nothing in the heap due before `now`
        else:
            late = []
        version, count = self.version, self.count
        while heap and heap[0][0] < now:
            deadline, key, v, i, rule = heapq.heappop(heap)
            if version.get(key) == v:
                self.live -= 1
                count[key] -= 1
                late.append((key, i, (rule, deadline, self.indexed[key][i][2])))
        if len(late) > 1:
            order = {k: n for n, k in enumerate(self.reps)}
            late.sort(key=lambda item: (order[item[0]], item[1]))
        for (store, fid), _, (rule, deadline, what) in late:
            if (rule, store, fid, deadline) not in self.flagged:
                self.flagged.add((rule, store, fid, deadline))
                self.late(ev, rule, store, fid, deadline, what)

    def late(self, ev: Event, rule: Rule, store: str, fid: str, deadline: int, what: Owed) -> None:
        """An obligation still owed after its deadline, at `ev` (judged, violated)."""
        now = ev.ts_ms
        self.flag(
            rule,
            ev,
            f"still owes {owed_text(what)} for {fid}, due by {deadline} "
            f"({now - deadline} ms ago, store up since {self.up_since.get(store)}; seen at {ev.node}'s {ev.kind})",
            entity=fid,
            party=store,
            data={
                "store": store,
                "owed": owed_text(what),
                "deadline_ms": deadline,
                "observed_ms": now,
                "late_ms": now - deadline,
                "up_since_ms": self.up_since.get(store),
                "parameters": list(rule.params),
            },
        )

    @cython.locals(self=FoldState)
    def rederive(self, now: int) -> dict[tuple[str, str], list[Obligation]]:
        """Index the obligations of the replicas whose inputs changed; return those of the ones found
        volatile (derived at `now`, to be judged by the caller)."""
        if self.cfg is not self.cfg_seen:
            self.cfg_seen = self.cfg
            self.dirty.update(self.reps)
        if self.dirty_stores:
            stores = self.dirty_stores  # (a local: a generator cannot close over the typed `self`)
            self.dirty.update(k for k in self.reps if k[0] in stores)
            self.dirty_stores.clear()
        judged: dict[tuple[str, str], list[Obligation]] = {}
        if not self.dirty:
            return judged
        todo = list(self.dirty)
        self.dirty.clear()  # the same set object: `put`, `drop`, `anchor` and the handlers add to it
        for key in todo:
            found = self.index(key, now)
            if found is not None:
                judged[key] = found
        if len(self.heap) > 64 + 4 * self.live:  # drop the entries of superseded versions
            self.heap = [h for h in self.heap if self.version.get(h[1]) == h[2]]
            heapq.heapify(self.heap)
        return judged

    @cython.locals(self=FoldState)
    def index(self, key: tuple[str, str], now: int) -> list[Obligation] | None:
        """Re-derive one replica: a new version of its heap entries, or its obligations when volatile.

        Tally: an obligation it owed before and no longer owes was discharged before its deadline (a late one
        was flagged by `due` first, and is not counted again): one judged instance of its rule, as is one whose
        deadline moved (a new configuration, a restore). The removal of a delete-now replica discharges its
        maintenance-removal obligation (BF-034); any other obligation of a replica that went away, or of a
        store that went down, is cancelled, no instance (a store that is down owes nothing)."""
        self.following.pop(key, None)
        up = self.up.get(key[0], True)
        if key in self.reps and up:
            obligations, volatile, follows = self.derive(key[0], key[1], now)
            if follows:
                self.following[key] = follows
            was = None if volatile else self.indexed.get(key)
            if was is not None and len(was) == len(obligations):
                for i in range(len(obligations)):  # (indices: no zip object per re-derivation)
                    ob, old = obligations[i], was[i]
                    if ob[1] != old[1] or ob[0] is not old[0]:
                        break
                else:  # the same deadlines: its heap entries stand, what they owe is read from `indexed`
                    self.indexed[key] = obligations
                    return None
        self.version[key] = v = self.version.get(key, 0) + 1
        self.live -= self.count.pop(key, 0)
        self.volatile.discard(key)
        self.indexed.pop(key, None)
        before = self.owed.pop(key, None)
        if key not in self.reps or not up:
            if before and key not in self.reps and up:  # removed: what it owed was that
                self.discharged(key, [ob for ob in before if ob[0] is MAINTENANCE_REMOVAL], [])
            return None
        owed = [(rule, deadline) for rule, deadline, _ in obligations]
        if before and before != owed:  # (the common case: the same obligations, nothing discharged)
            self.discharged(key, before, owed)
        if volatile:
            self.volatile.add(key)
            return obligations
        heap = self.heap
        for i, (rule, deadline, _) in enumerate(obligations):
            heapq.heappush(heap, (deadline, key, v, i, rule))
        if owed:
            self.owed[key] = owed
        self.indexed[key] = obligations
        self.count[key] = len(obligations)
        self.live += len(obligations)
        return None

    @cython.locals(self=FoldState)
    def discharged(self, key: tuple[str, str], before: list[tuple[Rule, int]], now: list[tuple[Rule, int]]) -> None:
        """Judge the obligations of `before` that `now` no longer holds and were not found late."""
        still = set(now)
        store, fid = key
        for rule, deadline in before:
            if (rule, deadline) not in still and (rule, store, fid, deadline) not in self.flagged:
                self.tally.judge(rule)

    def owed_at_end(self) -> None:
        """At the end of the trace: the replicas changed by the last events re-derived (what they discharged is
        judged), and every obligation still owed, not yet due, is an instance the trace ends too soon to judge."""
        self.rederive(self.last_ms)
        for (store, fid), owed in self.owed.items():
            for rule, deadline in owed:
                if (rule, store, fid, deadline) not in self.flagged:
                    self.tally.skip(rule, "still owed when the trace ends, before its deadline")
