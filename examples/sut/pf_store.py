"""One public folder store of the reference store group `pf_node.py` (standard library only; no haconform).

Seed 001 ("Change Numbers", "Replication State Tables", "Packing and Unpacking", "Replication Message
Types", "Adding a Replica", "Deleting a Replica", "Hierarchy Replication") and seed 003 ("Backfill Requests
and Backfill Messages", "Backfill Time-outs", "Example Replication Cycles"). A store keeps, per folder it
holds a replica of, the state table rows of the seed: its change numbers (CNs), the local changes not yet
broadcast, the time its status expires, one row per other replica (the CNSet last heard from it, whether it
answered the last backfill request) and the backfill array. Everything a store does is recorded as an event
(`model/pf/README.md` lists the kinds). The store group (`pf_node.Group`) carries messages between stores.

A CN is a pair (originator, counter) where the originator is `server#epoch` (the epoch grows when a store is
restored from a backup, so it never reissues a number); a CNSet is a frozenset of CNs, written in traces as
`origin:1-5,7` per originator.
"""

from __future__ import annotations

import copy
from typing import Any

MIN = 60_000
HOUR = 60 * MIN
HIERARCHY = "1-1"  # the hierarchy folder's FID (seed 001, "Hierarchy Replication")
ACTIVE, PENDING, DEAD = "active", "delete_pending", "delete_now"
# the seeds' default schedule and limits (seed 001 "Default Replication Event Schedule", "Packing and
# Unpacking"; seed 003 "Backfill Time-outs")
HIER_EVERY, CONTENT_EVERY, BACKFILL_EVERY = 5 * MIN, 15 * MIN, 5 * MIN
STATUS_PERIOD, STATUS_OFFSET, STATUS_TIMEOUT = 12 * HOUR, 15 * MIN, 24 * HOUR  # thread at 00:15 and 12:15 GMT
MAX_FOLDERS, MAX_DELETES, MAX_ITEMS, MAX_KB = 20, 500, 100, 300
INITIAL = {True: 6 * HOUR, False: 12 * HOUR}  # local, remote
FIRST_RETRY = {True: 12 * HOUR, False: 24 * HOUR}
LATER_RETRY = {True: 24 * HOUR, False: 48 * HOUR}
NEW_REPLICA_WAIT = 15 * MIN  # a new replica whose data are in its own routing group
CODES = {"hierarchy": 0x2, "content": 0x4, "backfill_request": 0x8, "status": 0x10, "status_request": 0x20}
RESPONSE = {True: 0x80000002, False: 0x80000004}  # backfill response: hierarchy, content
DATA = (0x2, 0x4, 0x80000002, 0x80000004)

CN = tuple[str, int]
CNs = frozenset[CN]
NONE: CNs = frozenset()


def encode(cns: CNs) -> list[str]:
    by: dict[str, list[int]] = {}
    for origin, n in cns:
        by.setdefault(origin, []).append(n)
    out = []
    for origin in sorted(by):
        nums, runs = sorted(by[origin]), []
        lo = hi = nums[0]
        for n in nums[1:]:
            if n == hi + 1:
                hi = n
                continue
            runs.append((lo, hi))
            lo = hi = n
        runs.append((lo, hi))
        out.append(f"{origin}:" + ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs))
    return out


def decode(items: list[str]) -> CNs:
    out: set[CN] = set()
    for item in items:
        origin, _, text = item.rpartition(":")
        for piece in text.split(","):
            lo, _, hi = piece.partition("-")
            out.update((origin, n) for n in range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def cn_text(cn: CN) -> str:
    return f"{cn[0]}:{cn[1]}"


def parse_cn(text: str) -> CN:
    origin, _, n = text.rpartition(":")
    return origin, int(n)


def fits(batch: list[dict[str, Any]], hierarchy: bool, max_deletes: int = MAX_DELETES) -> bool:
    """Packing limits; one change always fits (an oversized post travels alone). `max_deletes`: the setup's
    deleted-folder limit (Replication Deleted Folder Count Limit, 500 by default)."""
    if len(batch) <= 1:
        return True
    if sum(c["size_kb"] for c in batch) > MAX_KB:
        return False
    if not hierarchy:
        return len(batch) <= MAX_ITEMS
    deletes = sum(1 for c in batch if c["op"] == "delete")
    return deletes <= max_deletes and len({c["target"] for c in batch if c["op"] != "delete"}) <= MAX_FOLDERS


def pack(changes: list[dict[str, Any]], hierarchy: bool, max_deletes: int = MAX_DELETES) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    for c in sorted(changes, key=lambda c: parse_cn(c["cn"])):
        if out and fits([*out[-1], c], hierarchy, max_deletes):
            out[-1].append(c)
        else:
            out.append([c])
    return out


def replica_list(changes: list[dict[str, Any]]) -> dict[str, str]:
    """A folder's replica list from the hierarchy changes held about it: per server the state of the latest
    change (time made, then CN); a deleted folder lists nobody."""
    best: dict[str, tuple[tuple[int, CN], str]] = {}
    for c in changes:
        if c["op"] == "delete":
            return {}
        if c["op"] != "replica":
            continue
        server, _, state = c["detail"].rpartition(":")
        key = (c["stamp"], parse_cn(c["cn"]))
        if server not in best or key > best[server][0]:
            best[server] = (key, state)
    return {s: st for s, (_, st) in sorted(best.items()) if st != "removed"}


def wait(sent: int, local: bool, cause: str) -> int:
    """How long a backfill entry waits: the initial time-out before its first request, then the retries."""
    if sent == 0:
        if cause == "delete_pending":
            return 0
        if cause == "new_replica" and local:
            return NEW_REPLICA_WAIT
        return INITIAL[local]
    return FIRST_RETRY[local] if sent == 1 else LATER_RETRY[local]


class Store:
    """One store: `d` is its persisted state (JSON-able except the CNSets, which `dump`/`load` convert)."""

    def __init__(self, group: Any, name: str, d: dict[str, Any]) -> None:
        self.g, self.name, self.d = group, name, d

    # --- bookkeeping ------------------------------------------------------------------------------------
    @staticmethod
    def fresh() -> dict[str, Any]:
        return {"up": True, "epoch": 0, "counter": 0, "msgs": 0, "reps": {}, "data": {}, "hindex": {}, "views": {}}

    @property
    def origin(self) -> str:
        return f"{self.name}#{self.d['epoch']}"

    @property
    def up(self) -> bool:
        return bool(self.d["up"])

    def emit(self, fid: str, kind: str, **attrs: Any) -> None:
        self.g.emit(self.name, fid, kind, attrs)

    def cost(self, other: str) -> int | None:
        return self.g.cost(self.name, other)

    def others(self, rep: dict[str, Any]) -> list[str]:
        return [s for s, st in sorted(rep["view"].items()) if s != self.name and st in (ACTIVE, PENDING)]

    def create_event(self, fid: str, rep: dict[str, Any]) -> None:
        """REPLICA_CREATE, restating this store's context (transport costs, versions; defaults otherwise)."""
        self.emit(
            fid,
            "REPLICA_CREATE",
            origin=rep["origin"],
            new=fid != HIERARCHY,
            costs=[f"{s}={c}" for s, c in sorted(self.g.costs_from(self.name).items())],
            versions=[f"{s}={v}" for s, v in sorted(self.g.versions.items())],
            preferred=[],
            params=self.g.params_text(),
        )

    def _replica_events(self, fid: str, rep: dict[str, Any]) -> None:
        self.create_event(fid, rep)
        self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(rep["view"].items())])

    def new_rep(self, fid: str, view: dict[str, str]) -> dict[str, Any]:
        rep = {
            "origin": self.origin,
            "cn": NONE,
            "unsent": NONE,
            "state": ACTIVE,
            "expiry": None,
            "rows": {},
            "entries": [],
            "statuses": {},
            "new": fid != HIERARCHY,
            "view": dict(view),
        }
        self.d["reps"][fid] = rep
        self.d["data"].setdefault(fid, {})
        return rep

    def mount(self, members: list[str]) -> dict[str, Any]:
        self.d["views"][HIERARCHY] = {m: ACTIVE for m in members}
        return self.new_rep(HIERARCHY, self.d["views"][HIERARCHY])

    # --- messages -----------------------------------------------------------------------------------------
    def send(self, fid: str, kind: str, to: list[str], *, code: int | None = None, **kw: Any) -> str:
        rep = self.d["reps"][fid]
        self.d["msgs"] += 1
        msg = {
            "msg": f"{self.origin}/{self.d['msgs']}",
            "code": CODES[kind] if code is None else code,
            "type": kind,
            "recipients": list(to),
            "cnset": encode(kw.pop("cnset", rep["cn"])),
            "cns": [c["cn"] for c in kw.get("changes", [])],
            "reply_to": kw.get("reply_to", ""),
            "requires_response": bool(kw.get("requires_response", False)),
            "request": encode(kw.get("request", NONE)),
            "reason": kw["reason"],
        }
        self.emit(fid, "REPL_SEND", **msg)
        self.g.post_mail(self.name, fid, msg, kw.get("changes", []))
        return str(msg["msg"])

    def status_request(self, fid: str) -> None:
        rep = self.d["reps"][fid]
        to = self.others(rep)
        if to:
            self.send(fid, "status_request", to, requires_response=rep["state"] == PENDING, reason="status_request")

    def broadcast(self, fid: str) -> None:
        rep = self.d["reps"][fid]
        to = self.others(rep)
        if not rep["unsent"] or not to:
            return
        changes = [self.d["data"][fid][cn_text(cn)] for cn in rep["unsent"]]
        rep["unsent"] = NONE
        kind = "hierarchy" if fid == HIERARCHY else "content"
        for batch in pack(changes, fid == HIERARCHY, self.g.pack_deletes):
            self.send(fid, kind, to, changes=batch, reason="broadcast")

    def send_data(self, fid: str, cns: CNs, to: str, reason: str, reply_to: str = "") -> None:
        changes = [self.d["data"][fid][cn_text(cn)] for cn in cns]
        batches = pack(changes, fid == HIERARCHY, self.g.pack_deletes) or ([[]] if reply_to else [])
        for batch in batches:
            if reply_to:
                code = RESPONSE[fid == HIERARCHY]
                self.send(fid, "backfill_response", [to], code=code, changes=batch, reply_to=reply_to, reason=reason)
            else:
                self.send(fid, "hierarchy" if fid == HIERARCHY else "content", [to], changes=batch, reason=reason)

    # --- local changes and the replica lists -------------------------------------------------------------
    def change(self, fid: str, op: str, *, size_kb: int = 1, target: str = "", detail: str = "") -> None:
        self.d["counter"] += 1
        cn = (self.origin, self.d["counter"])
        now = self.g.now
        c = {"cn": cn_text(cn), "op": op, "mid": f"{fid}/{cn_text(cn)}", "size_kb": size_kb}
        c.update(target=target, detail=detail, stamp=now)
        self.d["data"].setdefault(fid, {})[c["cn"]] = c
        self.emit(fid, "CHANGE", **c)
        rep = self.d["reps"].get(fid)
        if rep is not None:
            rep["cn"] = rep["cn"] | {cn}
            if not (self.g.bug == "local-posts-only" and op == "post"):
                rep["unsent"] = rep["unsent"] | {cn}
            rep["expiry"] = now + STATUS_TIMEOUT  # status expiry follows the last local change (PF-I01)
        if fid == HIERARCHY:
            self.learn([c])

    def learn(self, changes: list[dict[str, Any]]) -> None:
        """Hierarchy changes now held: refold the replica lists they touch."""
        targets = set()
        for c in changes:
            self.d["hindex"].setdefault(c["target"], []).append(c)
            targets.add(c["target"])
        for t in sorted(targets - {HIERARCHY}):
            self.set_view(t, replica_list(self.d["hindex"][t]))

    def set_view(self, fid: str, view: dict[str, str]) -> None:
        if self.d["views"].get(fid) == view:
            return
        self.d["views"][fid] = view
        rep = self.d["reps"].get(fid)
        items = [f"{s}={v}" for s, v in sorted(view.items())]
        if rep is None:
            if view.get(self.name) != ACTIVE:
                self.emit(fid, "REPLICA_VIEW", replicas=items)
                return
            rep = self.new_rep(fid, view)  # the replica list names this store: a new replica (seed 001)
            self._replica_events(fid, rep)
            self.status_request(fid)
            return
        rep["view"] = dict(view)
        self.emit(fid, "REPLICA_VIEW", replicas=items)
        mine = view.get(self.name)
        if mine == PENDING and rep["state"] == ACTIVE:
            rep.update(state=PENDING, statuses={}, entries=[], expiry=None)
            self.emit(fid, "DELETE_PENDING")
            self.d.setdefault("first_request", []).append(fid)
        elif mine is None and rep["state"] != DEAD:
            self.remove(fid)

    def remove(self, fid: str) -> None:
        del self.d["reps"][fid]
        self.d["data"].pop(fid, None)
        self.emit(fid, "REPLICA_REMOVED")

    def pending_work(self) -> dict[str, Any]:
        """What the replication thread would act on: unsent changes or removals (hierarchy event), unsent
        content or delete-pending replicas (content event), the earliest backfill entry, the earliest expiry."""
        reps = self.d["reps"]
        hier = reps.get(HIERARCHY, {})
        dues = [e["due"] for r in reps.values() for e in r["entries"]]
        expiries = [r["expiry"] for r in reps.values() if r["state"] == ACTIVE and r["expiry"] is not None]
        return {
            "hierarchy": bool(hier.get("unsent"))
            or bool(self.d.get("first_request"))
            or any(r["state"] == DEAD for r in reps.values()),
            "content": any(
                f != HIERARCHY and ((r["state"] == ACTIVE and r["unsent"]) or r["state"] == PENDING)
                for f, r in reps.items()
            ),
            "due": min(dues) if dues else None,
            "expiry": min(expiries) if expiries else None,
        }

    # --- the replication thread ------------------------------------------------------------------------------
    def tick_hierarchy(self) -> None:
        for fid in sorted(f for f, r in self.d["reps"].items() if r["state"] == DEAD):
            self.remove(fid)  # the maintenance cycle, then the hierarchy says so
            self.change(HIERARCHY, "replica", target=fid, detail=f"{self.name}:removed")
        self.broadcast(HIERARCHY)
        for fid in sorted(set(self.d.pop("first_request", []))):
            if self.d["reps"].get(fid, {}).get("state") == PENDING:
                self.status_request(fid)

    def tick_content(self) -> None:
        for fid, rep in sorted(self.d["reps"].items()):
            if fid == HIERARCHY or fid.startswith("L-"):
                continue
            if rep["state"] == ACTIVE:
                self.broadcast(fid)
            elif rep["state"] == PENDING:
                self.status_request(fid)

    def tick_status(self) -> None:
        now = self.g.now
        for fid, rep in sorted(self.d["reps"].items()):
            if rep["state"] == ACTIVE and rep["expiry"] is not None and rep["expiry"] <= now:
                self.emit(fid, "STATUS_EXPIRED", expiry_ms=rep["expiry"])
                rep["expiry"] = None
                if self.others(rep):
                    self.send(fid, "status", self.others(rep), reason="expiry")

    def restarted(self) -> None:
        """Back from an outage: ask for status of the hierarchy and every active replica (PF-I15)."""
        for fid, rep in sorted(self.d["reps"].items()):
            if rep["state"] == ACTIVE:
                self.status_request(fid)

    # --- backfill -----------------------------------------------------------------------------------------------
    def is_local(self, rep: dict[str, Any], cns: CNs) -> bool:
        """Missing changes are local when a store of the own routing group is known to hold some of them."""
        return any(self.cost(s) == 0 and (row["cn"] & cns) for s, row in rep["rows"].items() if s != self.name)

    def tick_backfill(self) -> None:
        now = self.g.now
        for fid, rep in sorted(self.d["reps"].items()):
            if not any(e["due"] <= now for e in rep["entries"]):
                continue
            asks: list[tuple[str, CNs]] = []
            for e in rep["entries"]:
                if e["due"] > now:
                    continue
                for s in e["asked"]:  # silent since it was asked: taken as down
                    row = rep["rows"].setdefault(s, {"cn": NONE, "down": False, "heard": -1})
                    if row["heard"] < e["asked_ms"]:
                        row["down"] = True
                picked = self.sources(rep, e["cns"])
                if self.g.bug == "backfill-wrong-source" and len(picked) == 1:
                    holders = [s for s in self.others(rep) if rep["rows"].get(s, {}).get("cn", NONE) & e["cns"]]
                    picked = [(holders[-1], rep["rows"][holders[-1]]["cn"] & e["cns"])]
                local = self.is_local(rep, e["cns"])
                sent = e["attempt"] + (1 if picked else 0)
                e.update(due=now + self.wait(max(sent, 1), local, e["cause"]), attempt=sent, local=local)
                e.update(asked=[s for s, _ in picked], asked_ms=now, base=now)
                asks.extend(picked)
            rep["new"] = rep["new"] and not asks
            self.emit(fid, "BACKFILL", requests=[f"{s}=" + "|".join(encode(c)) for s, c in asks])
            for s, c in asks:
                self.send(fid, "backfill_request", [s], request=c, reason="backfill")

    def wait(self, sent: int, local: bool, cause: str) -> int:
        """`wait`, or with the bug `retry-before-timeout` every retry after the initial time-out again."""
        if self.g.bug == "retry-before-timeout" and sent > 0:
            return wait(0, local, "gap")
        return wait(sent, local, cause)

    def sources(self, rep: dict[str, Any], missing: CNs) -> list[tuple[str, CNs]]:
        """Seed 003's order: servers not down, preferred, cheapest, newest version, most of the missing
        changes (then the name); walk it until every missing change is assigned."""
        keyed = []
        for s, st in sorted(rep["view"].items()):
            if s == self.name or st not in (ACTIVE, PENDING):
                continue
            row = rep["rows"].get(s, {"cn": NONE, "down": False})
            count = len(row["cn"] & missing)
            if count:
                cost = self.cost(s)
                cost_key, version_key = 10**9 if cost is None else cost, -self.g.versions.get(s, 0)
                if self.g.bug == "version-before-cost":
                    cost_key, version_key = version_key, cost_key
                keyed.append(((row["down"], True, cost_key, version_key, -count, s), row))
        out, left = [], missing
        for key, row in sorted(keyed, key=lambda k: k[0]):
            take = row["cn"] & left
            if take:
                out.append((key[-1], frozenset(take)))
                left = left - take
            if not left:
                break
        return out

    # --- receiving ------------------------------------------------------------------------------------------------
    def receive(self, fid: str, msg: dict[str, Any], changes: list[dict[str, Any]], sender: str) -> None:
        self.emit(fid, "REPL_RECV", msg=msg["msg"], code=msg["code"], src=sender)
        rep = self.d["reps"].get(fid)
        if rep is None:
            return
        now, code = self.g.now, msg["code"]
        theirs, rr = decode(msg["cnset"]), bool(msg["requires_response"])
        carried = frozenset(parse_cn(c["cn"]) for c in changes)
        applied = carried - rep["cn"] if code in DATA else NONE
        rep["cn"] = rep["cn"] | applied
        row = rep["rows"].setdefault(sender, {"cn": NONE, "down": False, "heard": -1})
        row.update(cn=theirs, down=False, heard=now)
        entries = []
        for e in rep["entries"]:
            e["cns"] = e["cns"] - rep["cn"]
            if e["cns"]:
                entries.append(e)
        for e in entries:  # an entry becomes local once a store of the own group is known to hold its changes
            if not e["local"] and self.is_local(rep, e["cns"]):
                e.update(local=True, due=min(e["due"], e["base"] + self.wait(e["attempt"], True, e["cause"])))
        rep["entries"] = entries
        held = rep["cn"].union(*(e["cns"] for e in entries))
        missing = theirs - held
        if missing and rep["state"] == ACTIVE:
            local = self.is_local(rep, missing) and self.g.bug != "entry-never-local"
            cause = "new_replica" if rep["new"] else "gap"
            if rep["view"].get(sender) == PENDING:
                cause = "delete_pending"
            due = now + self.wait(0, local, cause)
            entry = {"cns": missing, "due": due, "attempt": 0, "local": local, "asked": [], "asked_ms": -1}
            entry.update(base=now, cause=cause)
            entries.append(entry)
            self.emit(fid, "BACKFILL_FILE", cns=encode(missing), due_ms=due, local=local)
        for c in changes:
            if parse_cn(c["cn"]) in applied:
                self.d["data"][fid][c["cn"]] = c
        self.react(fid, rep, msg, sender, theirs, rr)
        if fid == HIERARCHY and applied:
            self.learn([c for c in changes if parse_cn(c["cn"]) in applied])

    def react(self, fid: str, rep: dict[str, Any], msg: dict[str, Any], sender: str, theirs: CNs, rr: bool) -> None:
        code, state = msg["code"], rep["state"]
        if code == CODES["status_request"]:
            may = state == ACTIVE if rr else state != DEAD
            if may and (rr or (theirs < rep["cn"])):  # the strict subset rule; a pending replica is always answered
                claim = rep["cn"]
                if self.g.bug == "status-claims-more" and fid != HIERARCHY:  # claims its next change number
                    claim = claim | {(self.origin, self.d["counter"] + 1)}
                self.send(fid, "status", [sender], reply_to=msg["msg"], reason="status_reply", cnset=claim)
        if code == CODES["backfill_request"]:
            self.send_data(fid, decode(msg["request"]) & rep["cn"], sender, "backfill_response", msg["msg"])
        if code == CODES["status"] and state == PENDING:
            rep["statuses"][sender] = theirs
            if rep["view"].get(sender) == ACTIVE and rep["cn"] - theirs:
                self.send_data(fid, rep["cn"] - theirs, sender, "push")
            actives = [s for s, st in sorted(rep["view"].items()) if st == ACTIVE and s != self.name]
            if actives and all(s in rep["statuses"] and rep["statuses"][s] >= rep["cn"] for s in actives):
                rep["state"] = DEAD  # every other active replica holds all of it: delete now
                self.emit(fid, "DELETE_NOW", by=sender, cnset=encode(rep["cn"]))

    # --- backup and restore ---------------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(dump({k: self.d[k] for k in ("reps", "data", "hindex", "views")}))

    def restore(self, snap: dict[str, Any], backup: str) -> None:
        """Come back from a backup as a new originator; announce it and ask everyone for status."""
        snap = load(copy.deepcopy(snap))
        self.d["epoch"] += 1
        self.d["counter"] = 0
        self.d["up"] = True
        lost = sorted(set(self.d["reps"]) - set(snap["reps"]))
        for rep in snap["reps"].values():
            rep["origin"] = self.origin
        self.d.update(snap)
        self.d.pop("first_request", None)
        for fid in lost:
            self.emit(fid, "RESTORE", backup=backup, origin=self.origin, present=False)
        for fid in sorted(self.d["reps"]):
            self.emit(fid, "RESTORE", backup=backup, origin=self.origin, present=True)
        for fid, view in sorted(self.d["views"].items()):
            self.emit(fid, "REPLICA_VIEW", replicas=[f"{s}={v}" for s, v in sorted(view.items())])
        self.restarted()


# --- persistence: CNSets as their text form -----------------------------------------------------------------------
def _rep_map(rep: dict[str, Any], f: Any) -> dict[str, Any]:
    out = dict(rep, cn=f(rep["cn"]), unsent=f(rep["unsent"]))
    out["rows"] = {s: dict(r, cn=f(r["cn"])) for s, r in rep["rows"].items()}
    out["entries"] = [dict(e, cns=f(e["cns"])) for e in rep["entries"]]
    out["statuses"] = {s: f(c) for s, c in rep["statuses"].items()}
    return out


def dump(d: dict[str, Any]) -> dict[str, Any]:
    return dict(d, reps={fid: _rep_map(r, encode) for fid, r in d["reps"].items()})


def load(d: dict[str, Any]) -> dict[str, Any]:
    return dict(d, reps={fid: _rep_map(r, decode) for fid, r in d["reps"].items()})
