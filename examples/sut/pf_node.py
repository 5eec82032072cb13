#!/usr/bin/env python3
"""A reference public folder store group speaking the haconform stdio protocol (standard library only).

It does not import haconform. It is the simplest design the seeds allow to converge: replication is
synchronous (a post reaches every active replica of its folder at once, and a new replica starts with
the folder's whole content), so there is no backfill to get wrong; a removed replica stays delete
pending for one maintenance interval (15 minutes of virtual time) before it goes; the last active
replica cannot be removed; clients of a store without an active replica are redirected to an active one
from that store's replica list. It records folder creation, every store's copy of the replica list and
every client redirect; it sends no replication messages, so the coverage report shows the message rules
(packing, CNSets carried, status, backfill) as not exercised.

    python examples/sut/pf_node.py --state-dir DIR [--bug redirect-to-pending]

`--bug local-posts-only` plants one bug: a post stays on the replica it was made on and never reaches
the folder's other replicas, so they never converge (PF-035).
Protocol: conformance/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

MAINTENANCE_MS = 15 * 60 * 1000


class Stores:
    def __init__(self, state: dict[str, Any], bug: str) -> None:
        self.s = state
        self.bug = bug
        self.out: list[dict[str, Any]] = []
        self.now = 0

    def emit(self, node: str, entity: str, kind: str, **attrs: Any) -> None:
        self.out.append({"ts_ms": self.now, "node": node, "entity": entity, "kind": kind, "attrs": attrs})

    @staticmethod
    def fresh(setup: dict[str, Any]) -> dict[str, Any]:
        return {
            "stores": {name: {"up": True} for name, _, _ in setup["stores"]},
            "folders": {},
            "next_fid": 0x2A40,
            "backups": 0,
        }

    def up(self, store: str) -> bool:
        return store in self.s["stores"] and self.s["stores"][store]["up"]

    def views(self, fid: str) -> None:
        """Every running store records its copy of the folder's replica list."""
        f = self.s["folders"][fid]
        items = [f"{name}={state}" for name, state in sorted(f["replicas"].items())]
        for store in sorted(self.s["stores"]):
            if self.up(store):
                self.emit(store, fid, "REPLICA_VIEW", replicas=items)

    # --- operations ---------------------------------------------------------------------------------
    def op_create_folder(self, via: str, name: str, tree: str, replicating: bool) -> str:
        if not self.up(via):
            return ""
        self.s["next_fid"] += 1
        fid = f"1-{self.s['next_fid']:X}"
        self.s["folders"][fid] = {"name": name, "replicas": {via: "active"}, "held": {via: {}}, "pending_until": {}}
        self.emit(via, fid, "FOLDER_CREATE", name=name, tree=tree, replicating=replicating)
        self.views(fid)
        return fid

    def op_modify_folder(self, via: str, fid: str, what: str) -> bool:
        return self.up(via) and fid in self.s["folders"]

    def op_post(self, store: str, fid: str, size_kb: int) -> bool:
        f = self.s["folders"].get(fid)
        if f is None or not self.up(store) or f["replicas"].get(store) != "active":
            return False
        for server, state in f["replicas"].items():  # synchronous: every active replica has it at once
            if state == "active" and (self.bug != "local-posts-only" or server == store):
                held = f["held"].setdefault(server, {})
                held[store] = held.get(store, 0) + 1
        return True

    def op_add_replica(self, fid: str, server: str, via: str) -> bool:
        f = self.s["folders"].get(fid)
        if f is None or not self.up(via) or server not in self.s["stores"]:
            return False
        if f["replicas"].get(server) == "active":
            return True
        source = next(s for s, st in sorted(f["replicas"].items()) if st == "active")
        f["held"][server] = dict(f["held"][source])
        f["replicas"][server] = "active"
        f["pending_until"].pop(server, None)
        self.views(fid)
        return True

    def op_remove_replica(self, fid: str, server: str, via: str) -> bool:
        f = self.s["folders"].get(fid)
        if f is None or not self.up(via) or f["replicas"].get(server) != "active":
            return False
        if sum(1 for st in f["replicas"].values() if st == "active") < 2:
            return False  # the last active replica cannot be removed
        f["replicas"][server] = "delete_pending"
        f["pending_until"][server] = self.now + MAINTENANCE_MS
        self.views(fid)
        return True

    def op_client_access(self, store: str, fid: str) -> str:
        f = self.s["folders"].get(fid)
        if f is None or not self.up(store):
            return ""
        if f["replicas"].get(store) == "active":
            self.emit(store, fid, "CLIENT_ACCESS", outcome="served", target=store)
            return store
        targets = [s for s, st in sorted(f["replicas"].items()) if st == "active"]
        if not targets:
            self.emit(store, fid, "CLIENT_ACCESS", outcome="unavailable", target="")
            return ""
        self.emit(store, fid, "CLIENT_ACCESS", outcome="redirect", target=targets[0])
        return targets[0]

    def op_crash(self, store: str) -> None:
        self.s["stores"][store]["up"] = False

    def op_restart(self, store: str) -> None:
        self.s["stores"][store]["up"] = True

    def op_backup(self, store: str) -> str:
        self.s["backups"] += 1
        return f"{store}-backup{self.s['backups']}"

    def op_restore(self, store: str) -> bool:
        return self.up(store)  # synchronous replication: a restored store holds what the others hold

    def op_set_loss(self, loss: float) -> None:
        return None  # nothing is sent by mail, so nothing can be lost

    def op_advance(self, ms: int) -> None:
        end = self.now + ms
        for fid, f in sorted(self.s["folders"].items()):
            for server, until in sorted(f["pending_until"].items()):
                if until <= end:
                    self.now = max(self.now, until)
                    del f["pending_until"][server]
                    del f["replicas"][server]
                    f["held"].pop(server, None)
                    self.emit(server, fid, "REPLICA_REMOVED")
                    self.views(fid)
        self.now = end

    def op_quiesce(self) -> None:
        for st in self.s["stores"].values():
            st["up"] = True

    def op_replicas(self, fid: str) -> dict[str, str]:
        return dict(self.s["folders"].get(fid, {}).get("replicas", {}))

    def op_cnset(self, store: str, fid: str) -> list[str]:
        f = self.s["folders"].get(fid)
        if f is None or store not in f["replicas"]:
            return []
        return [f"{origin}#1:1-{n}" for origin, n in sorted(f["held"].get(store, {}).items())]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--bug", choices=["local-posts-only"], default="")
    args = ap.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    path = args.state_dir / "state.json"
    state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    for line in sys.stdin:
        req = json.loads(line)
        stores = Stores(state or {}, args.bug)
        stores.now = req["now_ms"]
        try:
            if req["op"] == "setup":
                resumed = state is not None
                if not resumed:
                    state = Stores.fresh(req["args"])
                result: Any = {"resumed": resumed}
            else:
                result = getattr(stores, "op_" + req["op"])(**req["args"])
            reply: dict[str, Any] = {"id": req["id"], "events": stores.out, "result": result}
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            reply = {"id": req["id"], "events": [], "error": f"{type(exc).__name__}: {exc}"}
        if state is not None:
            tmp = args.state_dir / "state.json.tmp"
            tmp.write_text(json.dumps(state), encoding="utf-8")
            os.replace(tmp, path)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
