"""One public folder store on the kernel: timers, mail handling and the hierarchy view, around `rules.py`.

Seed 001, "Replication Process" and "Default Replication Event Schedule": a replication thread runs timed
events: hierarchy every 5 minutes, content every 15, backfill entries checked every 5, the status thread
at 00:15 and 12:15 GMT (PF-023, PF-030, BF-007). Every state change of a replica records an event in the
folder's entity, so that the monitor can replay the same rules from the trace; a timer that changes
nothing records nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

from model.kernel.network import Envelope, Network
from model.kernel.sim import Simulator
from model.pf import step as R
from model.pf.cnset import CN, EMPTY, CNSet
from model.pf.decisions import Decisions
from model.pf.events import (
    BACKFILL_REQ,
    CODE_NAMES,
    MECH,
    STATUS,
    STATUS_REQ,
    change_attrs,
    replication_code,
    response_code,
    send_attrs,
)
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Change, Ctx, Msg, Replica
from spec.catalogue import require

require(
    "PF-008",
    "PF-013",
    "PF-016",
    "PF-017",
    "PF-022",
    "PF-025",
    "PF-026",
    "BF-018",
    "BF-020",
    "BF-021",
    "BF-023",
    "BF-025",
    "BF-026",
    "BF-028",
    "BF-029",
    "BF-031",
    "BF-034",
    "BF-035",
)

View = dict[str, str]

# Choice points of a store (issue 33; the table in model/pf/README.md): the phase of each replication timer.
PHASE_HIERARCHY = "pf.phase.hierarchy"  # first hierarchy broadcast, 1..ReplicationSendFolderTree (PF-023)
PHASE_CONTENT = "pf.phase.content"  # first content broadcast, 1..ReplicationSendAlways (PF-023)
PHASE_BACKFILL = "pf.phase.backfill"  # first backfill check, 1..ReplicationTimeout (BF-007)


class ClusterView(Protocol):
    """What a store uses of the cluster it belongs to (`model.pf.sim.Cluster`, which builds the stores)."""

    sim: Simulator
    net: Network
    rules: Decisions
    stores: dict[str, Store]


class Store:
    """A public folder store (one per server in the top level hierarchy, PF-002)."""

    def __init__(self, cluster: ClusterView, name: str, ctx: Ctx) -> None:
        self.c, self.sim, self.name, self.ctx = cluster, cluster.sim, name, ctx
        self.p = ctx.params
        self.epoch, self.counter, self.msgs = 0, 0, 0
        self.replicas: dict[str, Replica] = {}
        self.data: dict[str, dict[CN, Change]] = {}
        self.held = R.HeldHierarchy()  # the hierarchy changes it holds, folded per folder (PF-025)
        self.views: dict[str, View] = {}
        self.local_only: set[str] = set()
        self.first_request: set[str] = set()

    @property
    def origin(self) -> str:
        return f"{self.name}#{self.epoch}"

    # --- plumbing ----------------------------------------------------------------------------------
    def emit(self, fid: str, kind: str, **attrs: Any) -> None:
        self.sim.emit(self.name, MECH, fid, kind, **attrs)

    def _next_cn(self) -> CN:
        self.counter += 1
        return CN(self.origin, self.counter)

    def _send(self, fid: str, code: int, recipients: tuple[str, ...], **kw: Any) -> Msg:
        self.msgs += 1
        rep = self.replicas[fid]
        cnset = kw.pop("cnset") if "cnset" in kw else self.c.rules.extras.get("message_cnset", lambda r: r.cnset)(rep)
        msg = Msg(f"{self.origin}/{self.msgs}", code, fid, self.name, recipients, cnset, **kw)
        self.emit(fid, "REPL_SEND", **send_attrs(msg))
        for r in recipients:
            self.c.net.send(self.name, r, {"msg": msg}, mechanism=MECH, entity=fid, kind=CODE_NAMES[code])
        return msg

    def _create_replica(self, fid: str, *, new: bool) -> None:
        rep = R.new_replica(fid, self.name, self.origin, self.views.get(fid, {}), new=new)
        self.replicas[fid] = rep
        self.data.setdefault(fid, {})
        self.emit(
            fid,
            "REPLICA_CREATE",
            origin=self.origin,
            new=rep.new_replica,
            costs=self.ctx.encode_costs(),
            versions=self.ctx.encode_versions(),
            preferred=list(self.ctx.preferred),
            params=self.p.to_json(),
        )
        self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(rep.view.items())])

    # --- start and timers ----------------------------------------------------------------------------
    def start(self, members: list[str], *, joining: bool) -> None:
        """Mount the store: its hierarchy replica, then (for a new store) a hierarchy status request
        (BF-020); then the replication timers."""
        self.views[HIERARCHY] = {m: ACTIVE for m in members}
        self._create_replica(HIERARCHY, new=False)
        if joining:
            self._status_request(HIERARCHY, requires_response=False)
        self.schedule()

    def schedule(self) -> None:
        """The replication timers, each at a phase the seed leaves open (choice points `pf.phase.*`, issue 33:
        the first run falls anywhere in its first period; model/pf/README.md), then the status thread."""
        p, n, choose = self.p, self.name, self.sim.choices
        self.sim.after(choose.randint(PHASE_HIERARCHY, 1, p.hierarchy_interval_ms), self.tick_hierarchy, node=n)
        self.sim.after(choose.randint(PHASE_CONTENT, 1, p.content_interval_ms), self.tick_content, node=n)
        self.sim.after(choose.randint(PHASE_BACKFILL, 1, p.backfill_check_ms), self.tick_backfill, node=n)
        self.sim.at(R.next_thread_time(self.sim.now_ms, p), self.tick_status, node=n)

    def members_changed(self, members: list[str]) -> None:
        self._set_view(HIERARCHY, {m: ACTIVE for m in members})

    def restarted(self, members: list[str]) -> None:
        """Back after an outage with its own database: it might have missed replication messages, so
        (PF-I15, StatusRequestOnRestart) it sends status requests for the hierarchy and every active replica."""
        self.members_changed(members)
        if self.p.status_request_on_restart:
            for fid in sorted(self.replicas):
                if self.replicas[fid].state == ACTIVE:
                    self._status_request(fid, requires_response=False)
        self.schedule()

    def tick_hierarchy(self) -> None:
        for fid in [f for f, r in self.replicas.items() if r.state == DELETE_NOW]:
            self._remove(fid)
            self._hier_change(fid, "replica", f"{self.name}:removed")
        self._broadcast(HIERARCHY)
        for fid in sorted(self.first_request):
            if fid in self.replicas and self.replicas[fid].state == DELETE_PENDING:
                self._status_request(fid, requires_response=True)
        self.first_request.clear()
        self.sim.after(self.p.hierarchy_interval_ms, self.tick_hierarchy, node=self.name)

    def tick_content(self) -> None:
        for fid, rep in list(self.replicas.items()):
            if fid == HIERARCHY:
                continue
            if rep.state == ACTIVE:
                self._broadcast(fid)
            elif rep.state == DELETE_PENDING:
                self._status_request(fid, requires_response=True)
        self.sim.after(self.p.content_interval_ms, self.tick_content, node=self.name)

    def tick_backfill(self) -> None:
        now = self.sim.now_ms
        for fid, rep in list(self.replicas.items()):
            if not any(self.c.rules.entry_due(e, now) for e in rep.backfill):
                continue
            # servers this store cannot reach now (crashed, or across a partition) sort last (BF-011, BF-I16)
            gone = [s for s in rep.view if s != self.name and not self.c.net.reachable(self.name, s)]
            rep, requests = R.backfill_tick(rep, now, self.ctx, self.c.rules, unavailable=gone)
            self.replicas[fid] = rep
            self.emit(fid, "BACKFILL", requests=[f"{s}=" + "|".join(cns.encode()) for s, cns in requests])
            for server, cns in requests:
                self._send(fid, BACKFILL_REQ, (server,), request=cns, reason="backfill")
        self.sim.after(self.p.backfill_check_ms, self.tick_backfill, node=self.name)

    def tick_status(self) -> None:
        now = self.sim.now_ms
        for fid, rep in list(self.replicas.items()):
            if R.status_due(rep, now):
                self.emit(fid, "STATUS_EXPIRED", expiry_ms=rep.expiry_ms)
                self.replicas[fid] = R.status_sent(rep)
                recipients = self.c.rules.others(self.replicas[fid])
                if recipients:
                    self._send(fid, STATUS, recipients, reason="expiry")
        self.sim.at(R.next_thread_time(now, self.p), self.tick_status, node=self.name)

    # --- local changes -------------------------------------------------------------------------------
    def local_change(
        self, fid: str, op: str, *, mid: str = "", size_kb: int = 1, target: str = "", detail: str = ""
    ) -> Change:
        cn = self._next_cn()
        change = Change(cn, op, mid or f"{fid}/{cn}", size_kb, target, detail, self.sim.now_ms)
        self.data.setdefault(fid, {})[cn] = change
        self.emit(fid, "CHANGE", **change_attrs(change))
        if fid in self.replicas:
            self.replicas[fid] = R.local_change(self.replicas[fid], cn, self.sim.now_ms, self.p)
        if fid == HIERARCHY:
            self._index([change])
        return change

    def _hier_change(self, target: str, op: str, detail: str = "") -> Change:
        return self.local_change(HIERARCHY, op, target=target, detail=detail)

    def _broadcast(self, fid: str) -> None:
        rep = self.replicas[fid]
        if not rep.unsent or fid in self.local_only:
            return
        recipients = self.c.rules.others(rep)
        if not recipients:
            return
        rep, cns = R.take_unsent(rep, self.sim.now_ms, self.p)
        self.replicas[fid] = rep
        changes = [self.data[fid][cn] for cn in cns]
        for batch in self.c.rules.pack(changes, fid == HIERARCHY, self.p):
            self._send(fid, replication_code(fid), recipients, changes=batch, reason="broadcast")

    def _status_request(self, fid: str, *, requires_response: bool) -> None:
        recipients = self.c.rules.others(self.replicas[fid])
        if recipients:
            self._send(fid, STATUS_REQ, recipients, requires_response=requires_response, reason="status_request")

    # --- the hierarchy view (PF-025, BF-021, BF-028) ---------------------------------------------------
    def _index(self, changes: list[Change]) -> None:
        for t in self.held.hold(changes):
            self._set_view(t, self.held.view(t))

    def _set_view(self, fid: str, view: View) -> None:
        if self.views.get(fid) == view:
            return
        self.views[fid] = view
        if fid in self.replicas:
            self.replicas[fid].view = view
        elif view.get(self.name) != ACTIVE:
            self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(view.items())])
            return
        else:
            self._create_replica(fid, new=True)
            self._status_request(fid, requires_response=False)
            return
        self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(view.items())])
        rep, mine = self.replicas[fid], view.get(self.name)
        if mine == DELETE_PENDING and rep.state == ACTIVE:
            self._enter_delete_pending(fid)
        elif mine is None and rep.state != DELETE_NOW and fid != HIERARCHY:
            self._remove(fid)

    def _enter_delete_pending(self, fid: str) -> None:
        self.replicas[fid] = R.enter_delete_pending(self.replicas[fid])
        self.emit(fid, "DELETE_PENDING")
        self.first_request.add(fid)  # sent after the next hierarchy broadcast (BF-029 steps 2-3)
        self._maybe_delete_now(fid, "")

    def _maybe_delete_now(self, fid: str, by: str) -> None:
        rep = self.replicas[fid]
        if rep.state == DELETE_PENDING and self.c.rules.delete_ready(rep, self.p):
            self.replicas[fid] = R.delete_now(rep)
            self.emit(fid, "DELETE_NOW", by=by, cnset=rep.cnset.encode())

    def _remove(self, fid: str) -> None:
        del self.replicas[fid]
        self.data.pop(fid, None)
        self.emit(fid, "REPLICA_REMOVED")

    # --- receiving -------------------------------------------------------------------------------------
    def on_envelope(self, env: Envelope) -> None:
        msg: Msg = env.payload["msg"]
        fid = msg.fid
        self.emit(fid, "REPL_RECV", msg=msg.msg_id, code=msg.code, src=msg.sender)
        rep = self.replicas.get(fid)
        if rep is None:
            return
        now = self.sim.now_ms
        rep, react = R.receive(
            rep,
            msg.code,
            msg.sender,
            msg.cnset,
            msg.carried,
            msg.request,
            msg.requires_response,
            now,
            self.ctx,
            self.c.rules,
            sent_ms=env.sent_ms,
        )
        self.replicas[fid] = rep
        new = [c for c in msg.changes if c.cn in react.applied]
        for c in new:
            self.data[fid][c.cn] = c
        if react.filed is not None:
            e = react.filed
            self.emit(fid, "BACKFILL_FILE", cns=e.cns.encode(), due_ms=e.due_ms, local=e.local)
        self._react(fid, msg, react)
        if fid == HIERARCHY and new:
            self._index(new)

    def _react(self, fid: str, msg: Msg, react: R.Reaction) -> None:
        if react.answer_status:
            rep = self.replicas[fid]
            cnset = self.c.rules.extras.get("status_cnset", lambda own, req: own)(rep.cnset, msg.cnset)
            self._send(fid, STATUS, (msg.sender,), reply_to=msg.msg_id, reason="status_reply", cnset=cnset)
        if react.backfill_reply is not None:
            changes = [self.data[fid][cn] for cn in react.backfill_reply]
            batches = self.c.rules.pack(changes, fid == HIERARCHY, self.p) or [()]
            for batch in batches:
                self._send(
                    fid,
                    response_code(fid),
                    (msg.sender,),
                    changes=batch,
                    reply_to=msg.msg_id,
                    reason="backfill_response",
                )
        if react.push:
            changes = [self.data[fid][cn] for cn in react.push]
            for batch in self.c.rules.pack(changes, fid == HIERARCHY, self.p):
                self._send(fid, replication_code(fid), (msg.sender,), changes=batch, reason="push")
        if react.delete_ready:
            self._maybe_delete_now(fid, msg.sender)

    # --- backup and restore (BF-023, PF-I07) -----------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            "replicas": {f: r.copy() for f, r in self.replicas.items()},  # copies: replicas change in place
            "data": {f: dict(d) for f, d in self.data.items()},
            "held": self.held.copy(),
            "views": dict(self.views),
        }

    def restore(self, snap: dict[str, Any], backup_id: str) -> None:
        """Come back from a backup as a new originator, then broadcast status requests for the hierarchy
        and every content replica."""
        self.epoch += 1
        self.counter = 0
        lost = set(self.replicas) - set(snap["replicas"])
        self.replicas = {f: r.copy() for f, r in snap["replicas"].items()}
        for r in self.replicas.values():
            r.origin = self.origin
        self.data = {f: dict(d) for f, d in snap["data"].items()}
        self.held = snap["held"].copy()
        self.views = dict(snap["views"])
        for fid in sorted(lost):
            self.emit(fid, "RESTORE", backup=backup_id, origin=self.origin, present=False)
        for fid in sorted(self.replicas):
            self.emit(fid, "RESTORE", backup=backup_id, origin=self.origin, present=True)
        for fid, view in sorted(self.views.items()):
            self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(view.items())])
        self.members_changed(sorted(self.c.stores))
        for fid in sorted(self.replicas):
            if self.replicas[fid].state == ACTIVE:
                self._status_request(fid, requires_response=False)
        self.schedule()

    # --- clients (PF-026, BF-035) ----------------------------------------------------------------------
    def client_access(self, fid: str) -> str:
        rep = self.replicas.get(fid)
        if rep is not None and rep.state == ACTIVE:
            self.emit(fid, "CLIENT_ACCESS", outcome="served", target=self.name)
            return self.name
        view = self.views.get(fid, {})
        targets = sorted((self.ctx.costs.get(s, 10**9), s) for s, st in view.items() if st == ACTIVE and s != self.name)
        target = targets[0][1] if targets else ""
        self.emit(fid, "CLIENT_ACCESS", outcome="redirect" if target else "unavailable", target=target)
        return target

    def cnset(self, fid: str) -> CNSet:
        rep = self.replicas.get(fid)
        return rep.cnset if rep is not None else EMPTY
