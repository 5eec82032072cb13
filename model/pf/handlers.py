"""The public folder monitor's event handlers: each applies one recorded event through `step.py` and judges
it against what the monitor derived (seeds 001 and 003; rules in `rules.RULES`).

Mixed into `monitor.PfFold`, which holds the state (`reps`, `views`, `held`, `sends`, ...) and `flag`; every
write to a replica goes through `put`/`drop` (so its deadlines are re-derived, `deadlines.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the records' locals as C structs (the `.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.pf import faults as F
from model.pf.cnset import CNSet
from model.pf.decisions import others, requires_response
from model.pf.events import (
    BACKFILL_REQ,
    BACKFILL_RESP_CONTENT,
    BACKFILL_RESP_HIER,
    CONTENT_REPL,
    DATA_CODES,
    HIER_REPL,
    STATUS,
    STATUS_REQ,
)
from model.pf.foldstate import FoldState, mark
from model.pf.properties import cnset_carried, content_to_replicas, packing_data, packing_limits, status_answer
from model.pf.rules import (
    BACKFILL_RESPONSE_ADDRESSING,
    CNSET_CARRIED,
    CONTENT_TO_REPLICAS_ONLY,
    MESSAGE_ROUTE,
    NO_EMPTY_BROADCAST,
    NON_REPLICATING_FOLDER,
    PACKING_LIMITS,
    PACKING_SEPARATION,
    REMOVAL_ANNOUNCED_AFTER_DELETE_NOW,
    REQUIRES_RESPONSE_DERIVED,
    RESTATED_STATE,
    STATUS_EXPIRY,
    STATUS_STRICT_SUBSET,
)
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Change, Msg, Replica
from model.pf.step import broadcast_sent, is_thread_time, local_change, receive, status_due, status_sent
from spec.catalogue import require
from traces.schema import Event

require("PF-004", "PF-010", "PF-013", "PF-016", "PF-018", "PF-021", "PF-024", "BF-018", "BF-021", "BF-028")

HIER_CODES = (HIER_REPL, BACKFILL_RESP_HIER)
CONTENT_CODES = (CONTENT_REPL, BACKFILL_RESP_CONTENT)
RESPONSE_CODES = (BACKFILL_RESP_HIER, BACKFILL_RESP_CONTENT)


class Handlers(FoldState):
    @cython.locals(self=FoldState)
    def sent_state(self, msg_id: str) -> str:
        """The sender's replica state when it sent `msg_id` (active when unknown)."""
        sent = self.sends.get(msg_id)
        return ACTIVE if sent is None else sent[2]

    @cython.locals(self=FoldState)
    def unseen(self, ev: Event, what: str) -> None:
        """An event of a replica whose beginning the trace does not show (no REPLICA_CREATE of the folder at that
        store, or one removed): no rule can judge it, so it is noted as unjudgeable with the reason (issue 18). A
        local folder (FOLDER_CREATE replicating false) has no replica: its own store's events are not noted."""
        if self.local_home.get(ev.entity) == ev.node:
            return
        self.notes.append(f"{ev.event_id}: {ev.node} records {what} {ev.entity} ({ev.kind}) without a replica of it "
                          "in the trace (no REPLICA_CREATE there): not judged")  # fmt: skip

    @cython.locals(self=FoldState, c=Change, rep=Replica)
    def on_change(self, ev: Event) -> None:
        a, store, fid = ev.attrs, ev.node, ev.entity
        c = Change(F.cn(a["cn"]), a["op"], a["mid"], a["size_kb"], a["target"], a["detail"], a["stamp"])
        self.changes[a["cn"]] = c
        self.change_fid[a["cn"]] = fid
        self.changed_at[store] = ev.ts_ms
        rep = self.reps.get((store, fid))
        if fid == HIERARCHY:
            self.hier_targets.add(c.target)
            if c.op == "replica" and c.detail.endswith(":removed"):
                self.removal_announced(ev, c)
        if rep is None and fid != HIERARCHY:
            self.unseen(ev, "a change to")
        if rep is not None:
            was = bool(rep.unsent)
            self.put((store, fid), local_change(rep, c.cn, ev.ts_ms, self.ctx(store).params))
            self.cnset_changed((store, fid), ev.ts_ms)
            if not was:
                self.anchor(self.owed_from, (store, fid), ev.ts_ms)
        if fid == HIERARCHY and rep is not None:
            self.hold_hierarchy(store, [str(c.cn)])

    @cython.locals(self=FoldState, c=Change, own=Replica)
    def removal_announced(self, ev: Event, c: Change) -> None:
        """A 1-1 change removing a replica from a folder's list: made only by that replica's store, once the replica
        is delete now, before or after the maintenance cycle removed it (seed 001 "Deleting a Replica" step 5, seed
        003 "Example Replication Cycles" steps 8 and 9 set no order between the removal and the hierarchy message;
        BF-034)."""
        store, server = ev.node, c.detail.rpartition(":")[0]
        own = self.reps.get((store, c.target))
        state = own.state if own is not None else None
        removed = (store, c.target) in self.removed_after_delete_now
        ok = server == store and (removed or state == DELETE_NOW)
        why: str | None
        if ok:
            why = None
        elif server != store:
            why = f"announced {server}'s replica of {c.target} removed: only {server} itself announces that, "
            why += "after its delete now"
        else:
            now = f"is {state}" if state else "holds none and recorded no DELETE_NOW for it"
            why = f"announced its replica of {c.target} removed while it {now}: a removal is announced only once the "
            why += "replica is delete now"
        self.flag(
            REMOVAL_ANNOUNCED_AFTER_DELETE_NOW,
            ev,
            why,
            data=why and {"removed": server, "folder": c.target, "announced_by": store, "state": state},
        )

    # --- messages ------------------------------------------------------------------------------------
    @cython.locals(self=FoldState, msg=Msg, rep=Replica)
    def on_repl_send(self, ev: Event) -> None:
        a, store, fid = ev.attrs, ev.node, ev.entity
        rep = self.reps.get((store, fid))
        if fid != HIERARCHY:
            why = (
                fid not in self.hier_targets
                and f"sent a {a.get('type')} message for {fid}, which has no "
                "hierarchy entry (a folder that never replicates)"
            )
            self.flag(NON_REPLICATING_FOLDER, ev, why, data=why and {"folder": fid, "code": a.get("code")})
        change_fid = self.change_fid
        carried, foreign = [], []
        for c in a["cns"]:
            (carried if change_fid.get(c) == fid else foreign).append(c)
        self.flag(
            PACKING_SEPARATION,
            ev,
            foreign and f"the message carries updates {foreign} of another folder",
            data=foreign and {"foreign": foreign, "folder": fid},
        )
        msg = F.message(store, fid, a, self.changes, carried)
        cset = msg.carried
        self.sends[msg.msg_id] = (msg, mark(ev.event_id, ev.ts_ms), rep.state if rep is not None else ACTIVE, cset)
        wrong_kind = (msg.code in HIER_CODES) != (fid == HIERARCHY) and msg.code in (*HIER_CODES, *CONTENT_CODES)
        self.flag(
            PACKING_SEPARATION,
            ev,
            wrong_kind and f"a {a.get('type')} message of code {msg.code:#x} for {fid}",
            data=wrong_kind and {"code": msg.code, "folder": fid},
        )
        if rep is None:
            self.notes.append(f"{ev.event_id}: {store} sends for {fid} without a replica in the trace")
            for rule in (CNSET_CARRIED, MESSAGE_ROUTE):
                self.tally.skip(rule, "a message sent for a folder the sender has no replica of in the trace")
            return
        p = self.ctx(store).params
        # each check's sentence is built only when it fails (the flags in the order they always came)
        if msg.code in DATA_CODES:
            why = packing_limits(msg.changes, fid == HIERARCHY, p)
            self.flag(PACKING_LIMITS, ev, why, data=why and packing_data(msg.changes, fid == HIERARCHY, p))
        why = msg.cnset != rep.cnset and cnset_carried(msg.cnset, rep.cnset)
        self.flag(CNSET_CARRIED, ev, why, data=why and {"observed": str(msg.cnset), "expected": str(rep.cnset)})
        route = self.route(ev, msg, rep)
        if "reason" in a:  # the message restates its route
            why = a["reason"] != route and f"reason {a.get('reason')!r}, but the message's route is {route!r}"
            self.flag(RESTATED_STATE, ev, why, data=why and {"observed": a["reason"], "expected": route})
        if route in ("broadcast", "expiry", "status_request", "push"):
            allowed = others(rep)
            why = not set(msg.recipients).issubset(allowed) and content_to_replicas(msg.recipients, allowed)
            self.flag(
                CONTENT_TO_REPLICAS_ONLY,
                ev,
                why,
                data=why and {"observed": list(msg.recipients), "allowed": list(allowed)},
            )
        if route == "status_request":
            need = requires_response(rep.state)
            bad = msg.requires_response != need
            self.flag(
                REQUIRES_RESPONSE_DERIVED,
                ev,
                bad and f"status request says requires_response={msg.requires_response}; its replica is {rep.state}",
                data=bad and {"observed": msg.requires_response, "expected": need, "state": rep.state},
            )
            if rep.state == DELETE_PENDING:
                self.anchor(self.last_request, (store, fid), ev.ts_ms)
            else:  # only a delete-pending replica's deadlines read it (`derive`): none re-derived
                self.last_request[(store, fid)] = ev.ts_ms
        if route == "broadcast":
            if not self.triggered_by_change(ev):
                hier = fid == HIERARCHY
                self.schedule_run(ev, "hierarchy" if hier else "content",
                                  p.hierarchy_interval_ms if hier else p.content_interval_ms)  # fmt: skip
            why = not msg.changes and f"a regular {a.get('type')} broadcast carries no update"
            self.flag(NO_EMPTY_BROADCAST, ev, why, data=why and {"observed": len(msg.changes), "code": msg.code})
            rep = broadcast_sent(rep, cset, ev.ts_ms, p)
            self.put((store, fid), rep)
            if not rep.unsent:
                self.anchor(self.owed_from, (store, fid), None)
        elif msg.reply_to:
            self.reply(ev, msg, rep, cset)

    @cython.locals(self=FoldState, msg=Msg, rep=Replica)
    def route(self, ev: Event, msg: Msg, rep: Replica) -> str:
        """The route the seeds allow for this message (message-route), derived from its code, what it
        answers and the sender's state; flags a message with none."""
        key = (ev.node, ev.entity)
        if msg.code == STATUS_REQ:
            self.tally.judge(MESSAGE_ROUTE)  # a status request needs no cause (seed 001, "Status Messages")
            return "status_request"
        if msg.code == BACKFILL_REQ:
            owed = self.expect_requests.get(key, [])
            if (msg.recipients[:1], msg.request) in [((s,), c) for s, c in owed] and len(msg.recipients) == 1:
                self.tally.judge(MESSAGE_ROUTE)
                owed.remove((msg.recipients[0], msg.request))
                if not owed:  # retired: a missing entry reads as no request owed, as an empty one did
                    del self.expect_requests[key]
            else:
                self.flag(
                    MESSAGE_ROUTE,
                    ev,
                    f"a backfill request to {list(msg.recipients)} for {msg.request} that no backfill check decided",
                    data={
                        "code": msg.code,
                        "observed": [list(msg.recipients), str(msg.request)],
                        "allowed": [[s, str(c)] for s, c in owed],
                    },
                )
            return "backfill"
        if msg.code == STATUS:
            if msg.reply_to:
                req = self.sends.get(msg.reply_to)
                ok = req is not None and req[0].code == STATUS_REQ and (ev.node, msg.reply_to) in self.received
                self.flag(
                    MESSAGE_ROUTE,
                    ev,
                    not ok and f"a status reply to {msg.reply_to}, which is no status request this store received",
                    data={"code": msg.code, "reply_to": msg.reply_to},
                )
                return "status_reply"
            ok = self.expired_now.pop(key, None) == ev.ts_ms
            self.flag(
                MESSAGE_ROUTE,
                ev,
                not ok and "a status message that answers nothing and follows no STATUS_EXPIRED of this folder",
                data={"code": msg.code, "observed_ms": ev.ts_ms},
            )
            return "expiry"
        if msg.code in RESPONSE_CODES:
            req = self.sends.get(msg.reply_to)
            ok = req is not None and req[0].code == BACKFILL_REQ and ev.node in req[0].recipients
            self.flag(
                MESSAGE_ROUTE,
                ev,
                not ok
                and f"a backfill response to {msg.reply_to or 'nothing'}, "
                "which is no backfill request addressed to this store",
                data={"code": msg.code, "reply_to": msg.reply_to},
            )
            return "backfill_response"
        if rep.state == ACTIVE:
            self.tally.judge(MESSAGE_ROUTE)  # an active replica's data message: a regular broadcast
            return "broadcast"
        self.flag(
            MESSAGE_ROUTE,
            ev,
            rep.state != DELETE_PENDING and f"replication data sent by a {rep.state} replica",
            data={"code": msg.code, "state": rep.state, "allowed": [ACTIVE, DELETE_PENDING]},
        )
        return "push"

    @cython.locals(self=FoldState, msg=Msg, rep=Replica, req=Msg)
    def reply(self, ev: Event, msg: Msg, rep: Replica, carried: CNSet) -> None:
        sent = self.sends.get(msg.reply_to)
        if sent is None:  # message-route judged it (a reply to nothing the trace shows sent)
            rule = STATUS_STRICT_SUBSET if msg.code == STATUS else BACKFILL_RESPONSE_ADDRESSING
            self.tally.skip(rule, "a reply to a request the trace does not show sent")
            return
        req, req_ev, _, _ = sent
        if msg.code == STATUS:
            sender_state = self.sent_state(req.msg_id)
            need = requires_response(sender_state)
            why = status_answer(req.cnset, rep.cnset, need)
            self.flag(
                STATUS_STRICT_SUBSET,
                ev,
                why,
                req_ev,
                data=why and {"requester": str(req.cnset), "own": str(rep.cnset), "requires_response": need},
            )
        if msg.code in RESPONSE_CODES:
            wrong = msg.recipients != (req.sender,) or not carried <= req.request
            self.flag(
                BACKFILL_RESPONSE_ADDRESSING,
                ev,
                wrong
                and f"response to {list(msg.recipients)} carrying {carried} for a request by "
                f"{req.sender} of {req.request}",
                req_ev,
                data=wrong
                and {
                    "observed": list(msg.recipients),
                    "expected": [req.sender],
                    "carried": str(carried),
                    "request": str(req.request),
                },
            )

    @cython.locals(self=FoldState, m=Msg, rep=Replica)
    def on_repl_recv(self, ev: Event) -> None:
        a, store, fid = ev.attrs, ev.node, ev.entity
        sent = self.sends.get(a["msg"])
        if sent is None:
            self.notes.append(f"{ev.event_id}: received message {a['msg']} was never recorded as sent")
            self.tally.skip(MESSAGE_ROUTE, "a message received that the trace does not show sent")
            return
        m, send_ev, state, carried = sent
        self.received.add((store, m.msg_id))
        if "src" in a or "code" in a:  # the delivery restates its message
            bad = [k for k, v in (("src", m.sender), ("code", m.code)) if k in a and a[k] != v]
            self.flag(
                RESTATED_STATE,
                ev,
                bad and f"REPL_RECV restates {bad} unlike the message sent",
                send_ev,
                data=bad and {"observed": {k: a[k] for k in bad}, "expected": {"src": m.sender, "code": m.code}},
            )
        self.flag(
            MESSAGE_ROUTE,
            ev,
            store not in m.recipients and f"received {m.msg_id}, not addressed to it",
            send_ev,
            data=None if store in m.recipients else {"observed": store, "allowed": list(m.recipients)},
        )
        rep = self.reps.get((store, fid))
        if rep is None:
            return
        entries = rep.backfill
        _, react = receive(
            rep,
            m.code,
            m.sender,
            m.cnset,
            carried,
            m.request,
            requires_response(state),
            ev.ts_ms,
            self.ctx(store),
            sent_ms=send_ev.ts_ms,
        )
        # updated in place; of what the replica's deadlines derive from (`Deadlines.derive`: its state,
        # unsent changes, status expiry, backfill entries and replica list) a message changes only the entries
        if rep.backfill is not entries:
            self.dirty.add((store, fid))
        if react.applied:
            self.cnset_changed((store, fid), ev.ts_ms)
        if react.filed is not None:
            self.file_readings((store, fid), rep, react.filed, ev)
        if fid == HIERARCHY and react.applied:
            self.hold_hierarchy(store, react.applied.texts())

    # --- status, delete, clients, backup ------------------------------------------------------------------
    @cython.locals(self=FoldState, rep=Replica)
    def on_status_expired(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        if rep is None:
            self.unseen(ev, "a status expiry of")
            self.tally.skip(STATUS_EXPIRY, "a status expiry of a replica whose creation the trace does not show")
            return
        p = self.ctx(store).params
        bad = not (status_due(rep, ev.ts_ms) and is_thread_time(ev.ts_ms, p))
        self.flag(
            STATUS_EXPIRY,
            ev,
            bad
            and f"status broadcast at {ev.ts_ms} with derived expiry {rep.expiry_ms} "
            "(not due, or not a status thread run)",
            data=bad
            and {"observed_ms": ev.ts_ms, "expected_ms": rep.expiry_ms, "parameters": list(STATUS_EXPIRY.params)},
        )
        if "expiry_ms" in ev.attrs:  # the event restates the derived expiry
            stated = ev.attrs["expiry_ms"]
            bad = stated != rep.expiry_ms
            self.flag(
                RESTATED_STATE,
                ev,
                bad and f"STATUS_EXPIRED states expiry {stated}; the local changes give {rep.expiry_ms}",
                data=bad and {"observed": stated, "expected": rep.expiry_ms},
            )
        self.expired_now[(store, fid)] = ev.ts_ms
        self.put((store, fid), status_sent(rep))
