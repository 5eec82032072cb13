#!/usr/bin/env python3
"""A reference public folder store group speaking the haconform stdio protocol (standard library only).

It does not import haconform: the stores (`pf_store.py`, beside this file) follow seeds 001 and 003 on
their own. One store per server of the setup, one top level hierarchy (1-1). Replication is asynchronous:
each store runs the seed's replication thread on virtual time (hierarchy event every 5 minutes, content
event every 15, backfill check every 5, each at a per-store phase drawn from the setup's seed; the status
thread at 00:15 and 12:15 GMT), and every message travels as mail with a delay between 1 s and the
setup's `latency_max_ms` (drawn per message and recipient from the setup's seed), lost with the
probability `set_loss` gives, and lost when its recipient is down. So a lost post is repaired only by
status messages and backfill. Adding a replica is a hierarchy change; the new replica asks for status
and backfills what the answers show; removing one makes it delete pending until status from every other
active replica shows everything it holds (it pushes what they lack), then delete now, then removed at the
next maintenance cycle. Deleting a folder is a hierarchy change too: every store drops its replica of it, and a
hierarchy message packs at most the setup's `deleted_folder_limit` deletes (500 unless set). A local folder
(Restrictions, Views: `replicating` false) lives on its store only, is never replicated, and is served there.
Clients of a store without an active replica are redirected to the cheapest active
one its replica list names. Backups are snapshots of a store; a restored store continues as a new
originator. Every step is recorded as the events of `model/pf/README.md`, so the public folder monitor
judges packing, CNSets, status, backfill, the replica lifecycle and client access.

    python examples/sut/pf_node.py --state-dir DIR [--bug NAME]

The whole store group persists to DIR/state.json before each reply (a kill -9 and a restart with the same
DIR resumes, every store that was up asking for status as after an outage); a new DIR starts afresh.
Bugs (`--bug`), each one a monitor rule finds:
  status-claims-more    a folder's status reply claims the change number its store will issue next
                        (cnset-carried, PF-013)
  backfill-wrong-source a backfill request with one source goes to the last holder in name order rather than
                        the first by the seed's keys (backfill-source-order, BF-011)
  version-before-cost   backfill sources sorted by version before transport cost (backfill-source-order, BF-011)
  content-every-5-minutes
                        the content replication event runs every 5 minutes, not on the configured 15-minute
                        ReplicationSendAlways schedule (broadcast-not-early, PF-038)
  retry-before-timeout  a backfill entry is retried after the initial time-out (6 h local, 12 h remote) instead of
                        the retry time-outs (12 h / 24 h, then 24 h / 48 h) (backfill-before-timeout, BF-006)
  entry-never-local     a backfill entry is always filed remote (12 h), even when a store of the own routing group
                        shows it holds some of the missing changes (backfill-entry-derived, BF-005)
  serve-while-pending   a delete-pending replica still serves clients (served-by-active-replica, BF-028)
  local-posts-only      posts are never broadcast, only backfilled (broadcast-interval, PF-023)
  ignore-delete-limit   hierarchy messages pack any number of folder deletes, whatever the setup's
                        deleted_folder_limit (packing-limits, PF-011)
  create-while-crashed  create_folder answers a new folder ID even when the store named is down (the model
                        refuses there): the harness must follow a system that answers where the model does not
                        (issue 36), whatever the rules then say of its records
Protocol: conformance/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pf_store import (
    ACTIVE,
    BACKFILL_EVERY,
    CONTENT_EVERY,
    FIRST_RETRY,
    HIER_EVERY,
    HIERARCHY,
    INITIAL,
    LATER_RETRY,
    MAX_DELETES,
    PENDING,
    STATUS_OFFSET,
    STATUS_PERIOD,
    Store,
    dump,
    encode,
    load,
)

BUGS = (
    "status-claims-more",
    "version-before-cost",
    "content-every-5-minutes",
    "retry-before-timeout",
    "entry-never-local",
    "serve-while-pending",
    "backfill-wrong-source",
    "local-posts-only",
    "ignore-delete-limit",
    "create-while-crashed",
)
TICKS = (("hierarchy", HIER_EVERY), ("content", CONTENT_EVERY), ("backfill", BACKFILL_EVERY))


def next_time(after: int, offset: int, period: int) -> int:
    """The first time strictly after `after` of the schedule offset + k * period."""
    return offset + ((after - offset) // period + 1) * period


class Group:
    """The store group: stores, mail in flight, the virtual clock and the events recorded in one request."""

    def __init__(self, state: dict[str, Any], bug: str, now: int) -> None:
        self.s, self.bug, self.now = state, bug, now
        self.out: list[dict[str, Any]] = []
        self.stores = {name: Store(self, name, d) for name, d in state.get("stores", {}).items()}
        self.versions: dict[str, int] = state.get("versions", {})
        self.max_deletes = int(state.get("deleted_folder_limit", MAX_DELETES))
        self.pack_deletes = 10**9 if bug == "ignore-delete-limit" else self.max_deletes  # what packing keeps to
        content = 5 * 60_000 if bug == "content-every-5-minutes" else CONTENT_EVERY
        self.ticks = (("hierarchy", HIER_EVERY), ("content", content), ("backfill", BACKFILL_EVERY))

    # --- set-up -------------------------------------------------------------------------------------------
    @staticmethod
    def fresh(setup: dict[str, Any], now: int) -> dict[str, Any]:
        rng = random.Random(setup["seed"])
        groups = {name: rg for name, rg, _ in setup["stores"]}
        versions = {name: {"5.5": 55, "2000": 2000, "2003": 2003}.get(v, 0) for name, _, v in setup["stores"]}
        return {
            "seed": setup["seed"],
            "latency": [1000, max(1000, int(setup["latency_max_ms"]))],
            "deleted_folder_limit": int(setup.get("deleted_folder_limit", MAX_DELETES)),
            "loss": 0.0,
            "groups": groups,
            "links": [list(x) for x in setup["links"]],
            "versions": versions,
            "stores": {name: Store.fresh() for name in sorted(groups)},
            "phase": {n: [rng.randint(1, p) for _, p in TICKS] for n in sorted(groups)},
            "clock": now,
            "mail": [],
            "mails": 0,
            "next_fid": 0x2A40,
            "backups": {},
            "nbackups": 0,
        }

    def mount_all(self) -> None:
        """Stores mount one after the other; each one joining an existing hierarchy asks the stores already
        there for the hierarchy's status (seed 003, BF-020), and they add it to their replica lists."""
        members: list[str] = []
        for name in sorted(self.stores):
            members.append(name)
            store = self.stores[name]
            store.create_event(HIERARCHY, store.mount(list(members)))
            store.emit(HIERARCHY, "REPLICA_VIEW", replicas=[f"{m}={ACTIVE}" for m in members])
            store.status_request(HIERARCHY)
            for other in members[:-1]:
                o = self.stores[other]
                o.d["views"][HIERARCHY] = o.d["reps"][HIERARCHY]["view"] = {m: ACTIVE for m in members}
                o.emit(HIERARCHY, "REPLICA_VIEW", replicas=[f"{m}={ACTIVE}" for m in members])

    # --- what stores ask of the group -----------------------------------------------------------------------
    def params_text(self) -> str:
        """The parameters that differ from the seeds' defaults, as a store restates them (JSON)."""
        differ = {} if self.max_deletes == MAX_DELETES else {"deleted_folder_limit": self.max_deletes}
        return json.dumps(differ, sort_keys=True, separators=(",", ":"))

    def emit(self, node: str, fid: str, kind: str, attrs: dict[str, Any]) -> None:
        self.out.append({"ts_ms": self.now, "node": node, "entity": fid, "kind": kind, "attrs": attrs})

    def cost(self, a: str, b: str) -> int | None:
        """Transport cost between two servers: 0 in one routing group, else the cheapest path of links."""
        ga, gb = self.s["groups"].get(a), self.s["groups"].get(b)
        if ga is None or gb is None:
            return None
        best = {ga: 0}
        frontier = [(0, ga)]
        while frontier:
            d, g = heapq.heappop(frontier)
            if d > best.get(g, d):
                continue
            for x, y, c in self.s["links"]:
                for u, v in ((x, y), (y, x)):
                    if u == g and d + int(c) < best.get(v, 10**18):
                        best[v] = d + int(c)
                        heapq.heappush(frontier, (best[v], v))
        return best.get(gb)

    def costs_from(self, name: str) -> dict[str, int]:
        return {s: c for s in self.stores if s != name and (c := self.cost(name, s)) is not None}

    def post_mail(self, src: str, fid: str, msg: dict[str, Any], changes: list[dict[str, Any]]) -> None:
        lo, hi = self.s["latency"]
        for to in msg["recipients"]:
            rng = random.Random(f"{self.s['seed']}/{msg['msg']}/{to}")
            if rng.random() < self.s["loss"]:
                continue  # lost in transport
            self.s["mails"] += 1
            item = {"kind": "mail", "from": src, "to": to, "fid": fid, "msg": msg, "changes": changes}
            heapq.heappush(self.s["mail"], [self.now + rng.randint(lo, hi), self.s["mails"], item])

    # --- virtual time ------------------------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Run mail deliveries and every store's replication thread up to now + ms, in time order."""
        end = self.now + ms
        clock = self.s["clock"]
        while True:
            t = self._next_instant(clock, end)
            if t > end:
                break
            self.now = t
            while self.s["mail"] and self.s["mail"][0][0] <= t:
                self._deliver(heapq.heappop(self.s["mail"])[2])
            for name, store in sorted(self.stores.items()):
                for (kind, period), offset in zip(self.ticks, self.s["phase"][name], strict=True):
                    if (t - offset) % period == 0 and store.up:
                        getattr(store, "tick_" + kind)()
            if (t - STATUS_OFFSET) % STATUS_PERIOD == 0:
                for _, store in sorted(self.stores.items()):
                    if store.up:
                        store.tick_status()
            clock = t
        self.now = end
        self.s["clock"] = end

    def _next_instant(self, after: int, end: int) -> int:
        """The first instant after `after` at which a delivery or a timer can change anything (timers that
        would find nothing to do are skipped: the result is the same, only faster)."""
        times = [self.s["mail"][0][0] if self.s["mail"] else end + 1]
        for name, store in self.stores.items():
            if not store.up:
                continue
            (h, c, b), periods = self.s["phase"][name], [p for _, p in self.ticks]
            work = store.pending_work()
            if work["hierarchy"]:
                times.append(next_time(after, h, periods[0]))
            if work["content"]:
                times.append(next_time(after, c, periods[1]))
            if work["due"] is not None:
                times.append(next_time(max(after, work["due"] - 1), b, periods[2]))
            if work["expiry"] is not None:
                times.append(next_time(max(after, work["expiry"] - 1), STATUS_OFFSET, STATUS_PERIOD))
        return min(times)

    def _deliver(self, item: dict[str, Any]) -> None:
        if item["kind"] == "touch":
            for _, store in sorted(self.stores.items()):
                for fid, rep in sorted(store.d["reps"].items()):
                    if fid != HIERARCHY and rep["state"] == ACTIVE:
                        store.change(fid, "post", size_kb=1)
            return
        store = self.stores[item["to"]]
        if store.up:  # mail to a store that is down is lost
            store.receive(item["fid"], item["msg"], item["changes"], item["from"])

    # --- operations (one per request) ----------------------------------------------------------------------
    def _up(self, name: str) -> Store | None:
        store = self.stores.get(name)
        return store if store is not None and store.up else None

    def op_create_folder(self, via: str, name: str, tree: str, replicating: bool) -> str:
        store = self.stores.get(via) if self.bug == "create-while-crashed" else self._up(via)
        if store is None:
            return ""
        self.s["next_fid"] += 1
        if not replicating:  # a local folder: no hierarchy entry, never replicated (PF-004)
            fid = f"L-{via}-{self.s['next_fid']:X}"
            store.emit(fid, "FOLDER_CREATE", name=name, tree=tree, replicating=False)
            store.new_rep(fid, {via: ACTIVE})
            return fid
        fid = f"1-{self.s['next_fid']:X}"
        store.emit(fid, "FOLDER_CREATE", name=name, tree=tree, replicating=True)
        store.change(HIERARCHY, "create", target=fid, detail=name)
        store.change(HIERARCHY, "replica", target=fid, detail=f"{via}:{ACTIVE}")
        return fid

    def op_modify_folder(self, via: str, fid: str, what: str) -> bool:
        store = self._up(via)
        if store is None or not store.d["views"].get(fid):
            return False
        store.change(HIERARCHY, "modify", target=fid, detail=what)
        return True

    def op_delete_folder(self, via: str, fid: str) -> bool:
        """Deleting a folder is a hierarchy change (seed 001, "Hierarchy Replication"): every store that holds
        it drops its replica of the folder, whatever it held; the deletes made together go out in one hierarchy
        broadcast, at most the setup's deleted-folder limit per message."""
        store = self._up(via)
        if store is None or not store.d["views"].get(fid):
            return False
        store.change(HIERARCHY, "delete", target=fid, detail="delete")
        return True

    def op_post(self, store: str, fid: str, size_kb: int) -> bool:
        s = self._up(store)
        rep = s.d["reps"].get(fid) if s is not None else None
        if s is None or rep is None or rep["state"] != ACTIVE:
            return False
        s.change(fid, "post", size_kb=size_kb)
        return True

    def op_add_replica(self, fid: str, server: str, via: str) -> bool:
        store = self._up(via)
        view = store.d["views"].get(fid) if store is not None else None
        if store is None or not view or server in view or server not in self.stores:
            return False
        store.change(HIERARCHY, "replica", target=fid, detail=f"{server}:{ACTIVE}")
        return True

    def op_remove_replica(self, fid: str, server: str, via: str) -> bool:
        store = self._up(via)
        view = store.d["views"].get(fid, {}) if store is not None else {}
        if store is None or view.get(server) != ACTIVE or sum(st == ACTIVE for st in view.values()) < 2:
            return False  # the last active replica cannot be removed
        store.change(HIERARCHY, "replica", target=fid, detail=f"{server}:delete_pending")
        return True

    def op_client_access(self, store: str, fid: str) -> str:
        s = self._up(store)
        if s is None:
            return ""
        rep = s.d["reps"].get(fid)
        serving = (ACTIVE, PENDING) if self.bug == "serve-while-pending" else (ACTIVE,)
        if rep is not None and rep["state"] in serving:
            s.emit(fid, "CLIENT_ACCESS", outcome="served", target=store)
            return store
        view = s.d["views"].get(fid, {})
        near = sorted((s.cost(o) or 0, o) for o, st in view.items() if st == ACTIVE and o != store)
        target = near[0][1] if near else ""
        s.emit(fid, "CLIENT_ACCESS", outcome="redirect" if target else "unavailable", target=target)
        return target

    def op_crash(self, store: str) -> None:
        self.stores[store].d["up"] = False

    def op_restart(self, store: str) -> None:
        s = self.stores[store]
        if not s.up:
            s.d["up"] = True
            s.restarted()

    def op_backup(self, store: str) -> str:
        s = self._up(store)
        if s is None:
            return ""
        self.s["nbackups"] += 1
        backup = f"{store}-b{self.s['nbackups']}"
        self.s["backups"][store] = [backup, s.snapshot()]
        for fid in sorted(s.d["reps"]):
            s.emit(fid, "BACKUP", backup=backup)
        return backup

    def op_restore(self, store: str) -> bool:
        if store not in self.s["backups"]:
            return False
        backup, snap = self.s["backups"][store]
        self.stores[store].restore(snap, backup)
        return True

    def op_set_loss(self, loss: float) -> None:
        self.s["loss"] = float(loss)

    def op_advance(self, ms: int) -> None:
        self.advance(ms)

    def op_quiesce(self) -> None:
        """The fairness assumption of PF-035: faults stop, every store touches the hierarchy now and every active
        replica its folder once the longest backfill wait (and a little) has passed."""
        self.s["loss"] = 0.0
        for name in sorted(self.stores):
            self.op_restart(name)
        for name in sorted(self.stores):
            self.stores[name].change(HIERARCHY, "modify", target=HIERARCHY, detail="touch")
        lat = self.s["latency"][1]
        gap = HIER_EVERY + max(INITIAL[False], FIRST_RETRY[False], LATER_RETRY[False]) + 2 * BACKFILL_EVERY + 4 * lat
        self.s["mails"] += 1
        heapq.heappush(self.s["mail"], [self.now + gap, self.s["mails"], {"kind": "touch"}])

    def op_replicas(self, fid: str) -> dict[str, str]:
        return {n: s.d["reps"][fid]["state"] for n, s in sorted(self.stores.items()) if fid in s.d["reps"]}

    def op_cnset(self, store: str, fid: str) -> list[str]:
        rep = self.stores[store].d["reps"].get(fid) if store in self.stores else None
        return encode(rep["cn"]) if rep is not None else []


# --- the program: one request per line, state persisted before each reply --------------------------------------
def save(path: Path, state: dict[str, Any]) -> None:
    doc = dict(state, stores={n: dump(d) for n, d in state["stores"].items()})
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    os.replace(tmp, path)


def restore_state(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["stores"] = {n: load(d) for n, d in doc["stores"].items()}
    return doc


def handle(state: dict[str, Any] | None, req: dict[str, Any], bug: str) -> tuple[dict[str, Any] | None, Any, list]:
    now = int(req["now_ms"])
    if req["op"] == "setup":
        if state is not None:  # resumed after a kill: every store that was up comes back from an outage
            group = Group(state, bug, now)
            group.s["clock"] = max(group.s["clock"], now)
            for _, store in sorted(group.stores.items()):
                if store.up:
                    store.restarted()
            return state, {"resumed": True}, group.out
        state = Group.fresh(req["args"], now)
        group = Group(state, bug, now)
        group.mount_all()
        return state, {"resumed": False}, group.out
    if state is None:
        raise ValueError(f"{req['op']!r} before setup")
    group = Group(state, bug, now)
    group.s["clock"] = max(group.s["clock"], now)
    result = getattr(group, "op_" + req["op"])(**req["args"])
    return state, result, group.out


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--bug", choices=BUGS, default="")
    args = ap.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    path = args.state_dir / "state.json"
    state = restore_state(path)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            state, result, events = handle(state, req, args.bug)
            reply: dict[str, Any] = {"id": req["id"], "events": events, "result": result}
            if state is not None:
                save(path, state)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            state = restore_state(path)  # the request had no effect
            reply = {"id": req.get("id", 0), "events": [], "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
