"""The public folder trace monitor: replays one folder's events through the same rules as the model.

Scope "entity": the checker hands it every `pf` event of one folder (all stores) in sequence order. It
rebuilds each store's replica of the folder (`Replica`) from REPLICA_CREATE, REPLICA_VIEW, CHANGE,
REPL_SEND/REPL_RECV, BACKFILL, STATUS_EXPIRED, DELETE_PENDING/DELETE_NOW, BACKUP/RESTORE, calling the
functions of `rules.py`, and checks the properties of `properties.py` at each step. Seeds 001 and 003.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from conformance.monitor import MonitorResult, Violation
from model.pf import properties as P
from model.pf import rules as R
from model.pf.cnset import CN, CNSet
from model.pf.events import (
    BACKFILL_RESP_CONTENT,
    BACKFILL_RESP_HIER,
    CONTENT_REPL,
    DATA_CODES,
    HIER_REPL,
    MECH,
    msg_from_attrs,
)
from model.pf.state import ACTIVE, HIERARCHY, Change, Ctx, Msg, Replica
from traces.schema import Event

HIER_CODES = (HIER_REPL, BACKFILL_RESP_HIER)
CONTENT_CODES = (CONTENT_REPL, BACKFILL_RESP_CONTENT)


def _view(items: list[str]) -> dict[str, str]:
    return {k: v for k, _, v in (i.partition("=") for i in items)}


class _Replay:
    def __init__(self, events: Sequence[Event]) -> None:
        self.events = [e for e in events if e.mechanism == MECH]
        self.fid = self.events[0].entity if self.events else ""
        self.replicating: bool | None = None
        self.changes: dict[str, Change] = {}
        self.sends: dict[str, tuple[Msg, Event]] = {}
        self.reps: dict[str, Replica] = {}
        self.ctxs: dict[str, Ctx] = {}
        self.views: dict[str, dict[str, str]] = {}
        self.backups: dict[tuple[str, str], Replica] = {}
        self.pending_since: dict[str, int] = {}  # store -> seq of its DELETE_PENDING
        self.restored: dict[str, int] = {}  # store -> seq of its last RESTORE
        self.ends: list[Event] = []
        self.violations: list[Violation] = []
        self.notes: list[str] = []

    def flag(self, rule: str, ev: Event, why: str | None, *more: Event) -> None:
        if why:
            req = P.PROPERTIES[rule].requirement
            ids = (*(m.event_id for m in more), ev.event_id)
            self.violations.append(Violation(rule, req, ev.trace_id, ev.entity, ids, f"{ev.node}: {why}", MECH))

    def run(self) -> MonitorResult:
        handlers: dict[str, Callable[[Event], None]] = {
            "FOLDER_CREATE": self.folder_create,
            "REPLICA_CREATE": self.replica_create,
            "REPLICA_VIEW": self.replica_view,
            "CHANGE": self.change,
            "REPL_SEND": self.send,
            "REPL_RECV": self.recv,
            "BACKFILL": self.backfill,
            "STATUS_EXPIRED": self.status_expired,
            "DELETE_PENDING": self.delete_pending,
            "DELETE_NOW": self.delete_now,
            "REPLICA_REMOVED": self.removed,
            "BACKUP": self.backup,
            "RESTORE": self.restore,
            "CLIENT_ACCESS": self.client_access,
            "END": self.ends.append,
        }
        for ev in self.events:
            handler = handlers.get(ev.kind)
            if handler is None:
                continue
            try:
                handler(ev)
            except (KeyError, ValueError, TypeError, AttributeError) as exc:  # a partial or foreign trace
                self.notes.append(f"{ev.event_id}: cannot replay {ev.kind} ({type(exc).__name__}: {exc})")
                return MonitorResult.of(self.violations, self.notes)
        self.convergence()
        return MonitorResult.of(self.violations, self.notes)

    # --- state ---------------------------------------------------------------------------------------
    def folder_create(self, ev: Event) -> None:
        self.replicating = bool(ev.attrs.get("replicating", True))

    def replica_create(self, ev: Event) -> None:
        a = ev.attrs
        self.ctxs[ev.node] = Ctx.decode(ev.node, a["costs"], a["versions"], a["preferred"], a["params"])
        self.reps[ev.node] = R.new_replica(self.fid, ev.node, a["origin"], self.views.get(ev.node, {}), new=a["new"])

    def replica_view(self, ev: Event) -> None:
        view = _view(ev.attrs["replicas"])
        self.views[ev.node] = view
        if ev.node in self.reps:
            self.reps[ev.node] = replace(self.reps[ev.node], view=view)

    def change(self, ev: Event) -> None:
        a = ev.attrs
        c = Change(CN.parse(a["cn"]), a["op"], a["mid"], a["size_kb"], a["target"], a["detail"], a["stamp"])
        self.changes[a["cn"]] = c
        if ev.node in self.reps:
            self.reps[ev.node] = R.local_change(self.reps[ev.node], c.cn, ev.ts_ms, self.ctxs[ev.node].params)

    # --- messages --------------------------------------------------------------------------------------
    def send(self, ev: Event) -> None:
        a, rep = ev.attrs, self.reps.get(ev.node)
        if self.replicating is False:
            self.flag("non-replicating-folder", ev, f"sent a {a['type']} message for a folder that never replicates")
        foreign = [c for c in a["cns"] if c not in self.changes]
        self.flag("packing-separation", ev, foreign and f"the message carries updates {foreign} of another folder")
        carried = [c for c in a["cns"] if c in self.changes]
        msg = msg_from_attrs(ev.node, self.fid, {**a, "cns": carried}, self.changes)
        self.sends[msg.msg_id] = (msg, ev)
        wrong_kind = (msg.code in HIER_CODES) != (self.fid == HIERARCHY) and msg.code in (
            *HIER_CODES,
            *CONTENT_CODES,
        )
        self.flag(
            "packing-separation",
            ev,
            wrong_kind and f"a {a['type']} message of code {msg.code:#x} for {self.fid}",
        )
        if rep is None:
            self.notes.append(f"{ev.event_id}: {ev.node} sends for {self.fid} without a replica in the trace")
            return
        p = self.ctxs[ev.node].params
        if msg.code in DATA_CODES:
            self.flag("packing-limits", ev, P.packing_limits(msg.changes, self.fid == HIERARCHY, p))
        self.flag("cnset-carried", ev, P.cnset_carried(msg.cnset, rep.cnset))
        if msg.reason in ("broadcast", "expiry", "status_request", "push"):
            self.flag("content-to-replicas-only", ev, P.content_to_replicas(msg.recipients, R.others(rep)))
        if msg.reason == "broadcast":
            self.flag(
                "no-empty-broadcast", ev, not msg.changes and f"a regular {a['type']} broadcast carries no update"
            )
            expiry = ev.ts_ms + p.status_timeout_ms if p.status_anchor == "last_broadcast" else rep.expiry_ms
            self.reps[ev.node] = replace(rep, unsent=rep.unsent - msg.carried, expiry_ms=expiry)
        elif msg.reply_to:
            self.reply(ev, msg, rep)

    def reply(self, ev: Event, msg: Msg, rep: Replica) -> None:
        req_pair = self.sends.get(msg.reply_to)
        if req_pair is None:
            self.notes.append(f"{ev.event_id}: reply to unknown message {msg.reply_to}")
            return
        req, req_ev = req_pair
        if msg.reason == "status_reply":
            self.flag(
                "status-strict-subset",
                ev,
                P.status_answer(req.cnset, rep.cnset, req.requires_response),
                req_ev,
            )
        if msg.reason == "backfill_response":
            wrong = msg.recipients != (req.sender,) or not msg.carried <= req.request
            self.flag(
                "backfill-response-addressing",
                ev,
                wrong
                and (
                    f"response to {list(msg.recipients)} carrying {msg.carried} for a request "
                    f"by {req.sender} of {req.request}"
                ),
                req_ev,
            )

    def recv(self, ev: Event) -> None:
        pair, rep = self.sends.get(ev.attrs["msg"]), self.reps.get(ev.node)
        if pair is None:
            self.notes.append(f"{ev.event_id}: received message {ev.attrs['msg']} was never recorded as sent")
            return
        if rep is None:
            return
        m = pair[0]
        self.reps[ev.node], _ = R.receive(
            rep,
            m.code,
            m.sender,
            m.cnset,
            m.carried,
            m.request,
            m.requires_response,
            ev.ts_ms,
            self.ctxs[ev.node],
            sent_ms=pair[1].ts_ms,
        )

    # --- timers ----------------------------------------------------------------------------------------
    def backfill(self, ev: Event) -> None:
        rep = self.reps.get(ev.node)
        if rep is None:
            return
        recorded = [
            (s, CNSet.decode(c.split("|") if c else [])) for s, _, c in (r.partition("=") for r in ev.attrs["requests"])
        ]
        asked = CNSet()
        for _, cns in recorded:
            asked = asked | cns
        self.flag("backfill-without-gap", ev, (asked & rep.cnset) and f"requests {asked & rep.cnset}, already held")
        due = CNSet()
        for e in rep.backfill:
            if R.entry_due(e, ev.ts_ms):
                due = due | e.cns
        early = asked - due
        new_rep, expected = R.backfill_tick(rep, ev.ts_ms, self.ctxs[ev.node])
        if early:
            pending = [(e.due_ms, str(e.cns)) for e in rep.backfill]
            self.flag("backfill-before-timeout", ev, f"requests {early} before its time-out (entries: {pending})")
        elif [(s, c) for s, c in recorded] != expected:
            self.flag(
                "backfill-source-order",
                ev,
                f"asked {[(s, str(c)) for s, c in recorded]} but the five "
                f"sort keys select {[(s, str(c)) for s, c in expected]}",
            )
        self.reps[ev.node] = new_rep

    def status_expired(self, ev: Event) -> None:
        rep = self.reps.get(ev.node)
        if rep is None:
            return
        p = self.ctxs[ev.node].params
        if not (R.status_due(rep, ev.ts_ms) and R.is_thread_time(ev.ts_ms, p)):
            self.flag(
                "status-expiry",
                ev,
                f"status broadcast at {ev.ts_ms} with expiry {rep.expiry_ms} (not due, or not a status thread run)",
            )
        self.reps[ev.node] = R.status_sent(rep)

    # --- the replica lifecycle --------------------------------------------------------------------------
    def delete_pending(self, ev: Event) -> None:
        self.pending_since[ev.node] = ev.seq
        if ev.node in self.reps:
            self.reps[ev.node] = R.enter_delete_pending(self.reps[ev.node])

    def delete_now(self, ev: Event) -> None:
        rep = self.reps.get(ev.node)
        if rep is None:
            return
        p = self.ctxs[ev.node].params
        self.flag(
            "delete-now-after-status",
            ev,
            P.delete_after_status(rep.statuses, rep.view, rep.cnset, ev.node, p),
        )
        others = {s: r.cnset for s, r in self.reps.items() if s != ev.node and r.state == ACTIVE}
        since = self.pending_since.get(ev.node, -1)
        confirmed_then_restored = {s: c for s, c in rep.statuses.items() if self.restored.get(s, -1) > since}
        self.flag("no-content-loss", ev, P.no_content_loss(rep.cnset, others, confirmed_then_restored))
        self.reps[ev.node] = R.delete_now(rep)

    def removed(self, ev: Event) -> None:
        self.reps.pop(ev.node, None)

    def backup(self, ev: Event) -> None:
        if ev.node in self.reps:
            self.backups[(ev.node, ev.attrs["backup"])] = self.reps[ev.node]

    def restore(self, ev: Event) -> None:
        self.restored[ev.node] = ev.seq
        snap = self.backups.get((ev.node, ev.attrs["backup"]))
        if not ev.attrs["present"]:
            self.reps.pop(ev.node, None)
        elif snap is None:
            self.notes.append(f"{ev.event_id}: restore of {ev.node} from a backup not in the trace")
            self.reps.pop(ev.node, None)
        else:
            self.reps[ev.node] = replace(snap, origin=ev.attrs["origin"])

    def client_access(self, ev: Event) -> None:
        outcome, target = ev.attrs["outcome"], ev.attrs["target"]
        if outcome == "redirect" and self.views.get(ev.node, {}).get(target) != ACTIVE:
            self.flag(
                "redirect-to-active-replica",
                ev,
                f"redirected a client to {target}, which its replica "
                f"list shows as {self.views.get(ev.node, {}).get(target, 'no replica')}",
            )

    def convergence(self) -> None:
        if not self.ends:
            return
        last = self.ends[-1]
        for e in self.ends:
            rep = self.reps.get(e.node)
            if rep is None or CNSet.decode(e.attrs["cnset"]) != rep.cnset:
                self.notes.append(f"{e.event_id}: replayed state of {e.node} differs from the recorded END")
        if last.ts_ms - int(last.attrs["quiesce_ms"]) < int(last.attrs["bound_ms"]):
            return
        active = {s: r.cnset for s, r in self.reps.items() if r.state == ACTIVE}
        self.flag("convergence", last, P.converged(active), *self.ends[:-1])


class PFMonitor:
    """Monitor for mechanism `pf`, one folder (entity) at a time."""

    mechanism = MECH
    scope: Literal["entity", "trace"] = "entity"

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        return _Replay(events).run()


def monitor() -> PFMonitor:
    return PFMonitor()
