"""The public folder monitor's timing obligations (family 2 of issue 9) and its convergence check.

Seed 001, "Replication Process" and "Default Replication Event Schedule": the replication thread runs the
hierarchy event every ReplicationSendFolderTree, the content event every ReplicationSendAlways, the backfill
check every ReplicationTimeout, and the status thread at ReplicationStatusThreadOffset past every
ReplicationStatusThreadPeriod (PF-023, PF-030, BF-007); seed 003, "Example Replication Cycles": the next
maintenance cycle removes a delete-now replica (BF-034, BF-I13), and a delete-pending replica keeps asking
for status (BF-029, BF-I12). Each obligation has a deadline computed from the recorded configuration and
the events seen; a store that is down owes nothing, and a store that comes back starts its timers afresh
(its first run comes within one interval of the restart). Any event later than a deadline still owed is a
violation. Mixed into `monitor.Replay`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model.pf import decide as D
from model.pf import properties as P
from model.pf import step as S
from model.pf.cnset import CNSet
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Params
from spec.catalogue import require
from traces.schema import Event

if TYPE_CHECKING:
    from model.pf.monitor import Replay as _Base
else:
    _Base = object

require("PF-023", "PF-030", "BF-007", "BF-029", "BF-034", "PF-035")


def first_thread_run(at_or_after: int, p: Params) -> int:
    return at_or_after if S.is_thread_time(at_or_after, p) else S.next_thread_time(at_or_after, p)


class Deadlines(_Base):
    def init_deadlines(self) -> None:
        self.up: dict[str, bool] = {}
        self.up_since: dict[str, int] = {}
        self.owed_from: dict[tuple[str, str], int] = {}  # unsent local changes since
        self.last_request: dict[tuple[str, str], int] = {}  # delete-pending: last status request (or entry)
        self.dead_since: dict[tuple[str, str], int] = {}  # delete now since
        self.state_at_send: dict[str, str] = {}
        self.restoring: dict[str, str] = {}
        self.flagged: set[tuple[str, str, str, int]] = set()
        self.due_seen: dict[tuple[str, str, int, int], int] = {}  # when an entry was first seen due

    def note_due(self, ev: Event) -> None:
        """After an event changed a replica: entries that became due (a time-out shortened into the past,
        BF-I09) are acted on at the next backfill check after now, not after their nominal due time."""
        rep = self.reps.get((ev.node, ev.entity))
        if rep is None:
            return
        for e in rep.backfill:
            if e.due_ms <= ev.ts_ms:
                self.due_seen.setdefault((ev.node, ev.entity, e.base_ms, e.attempt), ev.ts_ms)

    def mount(self, ev: Event) -> None:
        self.up[ev.node] = True
        self.up_since.setdefault(ev.node, ev.ts_ms)

    def lifecycle(self, ev: Event) -> None:
        if ev.kind == "CRASH":
            self.up[ev.node] = False
        else:
            self.up[ev.node] = True
            self.up_since[ev.node] = ev.ts_ms
            if ev.attrs.get("storage") == "new":
                self.restoring.pop(ev.node, None)

    def obligations(self, store: str, fid: str, now: int) -> list[tuple[str, int, str]]:
        """(rule, deadline, what is owed) for one replica at time `now`."""
        rep = self.reps[(store, fid)]
        p = self.ctx(store).params
        since = self.up_since.get(store, now)
        out: list[tuple[str, int, str]] = []
        key = (store, fid)
        if rep.state == ACTIVE and rep.unsent:
            if not D.others(rep):
                self.owed_from[key] = now  # nobody to send to yet (PF-I13): the wait starts when someone is
            else:
                interval = p.hierarchy_interval_ms if fid == HIERARCHY else p.content_interval_ms
                start = max(self.owed_from.get(key, now), since)
                out.append(("broadcast-interval", start + interval, f"broadcast of {rep.unsent}"))
        if rep.state == ACTIVE and rep.expiry_ms is not None:
            out.append(
                (
                    "status-thread-late",
                    first_thread_run(max(rep.expiry_ms, since + 1), p),
                    f"the status message due at expiry {rep.expiry_ms}",
                )
            )
        for e in rep.backfill:
            became = self.due_seen.get((store, fid, e.base_ms, e.attempt), e.due_ms)
            out.append(
                (
                    "backfill-check-late",
                    max(e.due_ms, became, since) + p.backfill_check_ms,
                    f"the backfill check of {e.cns}, due {e.due_ms}",
                )
            )
        if rep.state == DELETE_PENDING and fid != HIERARCHY:
            if not D.others(rep):
                self.last_request[key] = now
            else:
                start = max(self.last_request.get(key, now), since)
                out.append(("delete-pending-requests", start + p.content_interval_ms, "a repeated status request"))
        if rep.state == DELETE_NOW and key in self.dead_since:
            out.append(
                (
                    "maintenance-removal",
                    max(self.dead_since[key], since) + p.hierarchy_interval_ms,
                    "removal at the next maintenance cycle",
                )
            )
        return out

    def due(self, ev: Event) -> None:
        """Before judging `ev`: every obligation whose deadline passed before `ev` happened is a violation."""
        now = ev.ts_ms
        for store, fid in list(self.reps):
            if not self.up.get(store, True):
                continue
            for rule, deadline, what in self.obligations(store, fid, now):
                if now > deadline and (rule, store, fid, deadline) not in self.flagged:
                    self.flagged.add((rule, store, fid, deadline))
                    late = now - deadline
                    self.flag(
                        rule,
                        ev,
                        f"{store} still owes {what} for {fid}, due by {deadline} "
                        f"({late} ms ago, store up since {self.up_since.get(store)})",
                        entity=fid,
                    )

    # --- convergence (PF-035) -------------------------------------------------------------------------
    def convergence(self) -> None:
        for fid, ends in sorted(self.ends.items()):
            self.converged(fid, ends)

    def converged(self, fid: str, ends: list[Event]) -> None:
        assert self.cfg is not None
        last = ends[-1]
        for e in ends:
            rep = self.reps.get((e.node, fid))
            if rep is None:
                self.flag("restated-state", e, f"END for {fid}, which it holds no replica of")
                continue
            stated = (CNSet.decode(e.attrs["cnset"]), e.attrs.get("state", rep.state))
            self.flag(
                "restated-state",
                e,
                stated != (rep.cnset, rep.state)
                and f"END states {stated[0]} {stated[1]}; the replayed replica holds {rep.cnset} {rep.state}",
            )
        if self.cfg.latency_max_ms is None:
            self.notes.append(f"{last.event_id}: no mail latency bound recorded: convergence cannot be judged")
            return
        bound = P.convergence_bound_ms(self.cfg.params, self.cfg.latency_max_ms)
        stated_bound = int(last.attrs.get("bound_ms", bound))
        self.flag(
            "restated-state",
            last,
            stated_bound != bound and f"END states bound {stated_bound}; the recorded configuration gives {bound}",
        )
        if last.ts_ms - int(last.attrs["quiesce_ms"]) < bound:
            return
        active = {s: r.cnset for (s, f), r in self.reps.items() if f == fid and r.state == ACTIVE}
        self.flag("convergence", last, P.converged(active), *ends[:-1])
