#!/usr/bin/env python3
"""A reference Active Manager speaking the haconform stdio protocol (standard library only).

It does not import haconform. The PAM role follows the quorum (a strict majority of DAG members that reach
each other), a PAM is moved before its server goes into maintenance, a server that is down or cut off from
the quorum dismounts its databases, every state change is recorded, and SAMs answer location queries with
the copy mounted last. After a failure, a switchover or a responder's failover the PAM runs best copy and
server selection (`am_bcss.py`): candidates, sort, tiers and criteria sets, attempt copy last logs, the dial,
the mount, the next best copy when a mount fails. Mounts fail with the setup's `mount_fail` probability,
drawn from one generator seeded by the setup's seed.

    python examples/sut/am_node.py --state-dir DIR [--bug BUG]

`--bug keep-pam-in-minority` plants a bug: a PAM cut off from the quorum keeps its role (AM-005); the BCSS
bugs of `am_bcss.BUGS` (`retry-failed-mount` AM-025, `activate-blocked` AM-034,
`lossless-switchover-by-queue` AM-037) each break one statement of the selection.
Protocol: conformance/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from am_bcss import BUGS, Selection, failure

DAG_STATE_KINDS = {"DAG_VIEW", "PAM_ACQUIRE", "PAM_RELEASE", "SERVER_HEALTH"}
DAG_KINDS = DAG_STATE_KINDS | {"AM_CONFIG", "MAINTENANCE", "AM_DAG_CONFIG"}
# the HighAvailability operation event ID each of these kinds records as `op` (ACLL_END: 314 or 313, am_bcss.py)
OP_IDS = {
    "MOUNT_START": 300,
    "MOUNT_FAIL": 301,
    "MOUNTED": 302,
    "DISMOUNTED": 305,
    "ACTIVE_MOVE": 306,
    "ACLL_START": 312,
    "BCSS_START": 334,
    "BCSS_END": 335,
}


class ActiveManager(Selection):
    def __init__(self, state: dict[str, Any], bug: str) -> None:
        self.s = state
        self.bug = bug
        self.out: list[dict[str, Any]] = []
        self.now = 0

    def emit(self, entity: str, kind: str, **attrs: Any) -> None:
        """Record one event. After DAG-level changes (view, PAM claims, health) and before the next database
        event, the DAG's state is recorded as AM_DAG_CONFIG: each database is judged on its own, with the
        DAG facts it needs as context."""
        if kind == "DAG_VIEW":
            self.flush()
        if kind in DAG_STATE_KINDS:
            self.s["dag_dirty"] = True
            if kind == "SERVER_HEALTH":
                self.s.setdefault("health_changed", []).append([attrs["server"], attrs["component"]])
        elif self.s.get("dag_dirty") and kind not in DAG_KINDS:
            self.flush()
        if kind in OP_IDS:
            attrs["op"] = OP_IDS[kind]
        self.out.append({"ts_ms": self.now, "node": "am", "entity": entity, "kind": kind, "attrs": attrs})

    def flush(self) -> None:
        s = self.s
        if not s.get("dag_dirty"):
            return
        s["dag_dirty"] = False
        changed = sorted({(a, b) for a, b in s.get("health_changed", [])})
        s["health_changed"] = []
        health = [f"{sv}/{c}/{s['health'][sv][c][0]}/{s['health'][sv][c][1]}" for sv, c in changed]
        self.emit(
            s["dag"],
            "AM_DAG_CONFIG",
            members=s["members"],
            up=sorted(s["up"]),
            groups=["+".join(sorted(g)) for g in s["groups"]],
            claims=sorted(s["claims"]),
            health=health,
        )

    # --- quorum and PAM (AM-005, AM-006) --------------------------------------------------------------
    def quorum(self) -> list[str]:
        members, up = self.s["members"], set(self.s["up"])
        for g in self.s["groups"]:
            live = [m for m in members if m in g and m in up]
            if 2 * len(live) > len(members):
                return sorted(live)
        return []

    def view(self) -> None:
        s = self.s
        self.emit(
            s["dag"],
            "DAG_VIEW",
            members=s["members"],
            up=sorted(s["up"]),
            groups=["+".join(sorted(g)) for g in s["groups"]],
        )
        q = self.quorum()
        for c in sorted(set(s["claims"]) - set(q)):
            if self.bug == "keep-pam-in-minority" and c in s["up"]:
                continue
            self.emit(s["dag"], "PAM_RELEASE", server=c, reason="lost_quorum")
            s["claims"].remove(c)
        if q and not set(s["claims"]) & set(q):
            self.emit(s["dag"], "PAM_ACQUIRE", server=q[0], quorum=q)
            s["claims"].append(q[0])
        for db in sorted(s["dbs"]):
            d = s["dbs"][db]
            for server in sorted(d["copies"]):
                if server not in s["up"]:
                    if d["active"] == server and d["mounted"]:
                        self.dismount(db, "server_down", "ServiceDown")
                    self.set_copy(db, server, status="ServiceDown")
                elif d["dag"] and server not in q and d["active"] == server and d["mounted"]:
                    self.dismount(db, "lost_quorum", "Dismounted")
                elif d["copies"][server]["status"] == "ServiceDown":
                    self.set_copy(db, server, status="Dismounted" if d["active"] == server else "Healthy")
            if (
                not d["dag"]
                and d["active"] in s["up"]
                and not d["mounted"]
                and d["copies"][d["active"]]["status"] != "Failed"
            ):
                self.emit(db, "MOUNT_START", server=d["active"], by=d["active"])  # AM-002: standalone
                self.mount(db, d["active"])
        self.failover_all()

    def pam(self) -> str | None:
        inside = sorted(set(self.s["claims"]) & set(self.quorum()))
        return inside[0] if inside else None

    # --- copies -------------------------------------------------------------------------------------
    def set_copy(self, db: str, server: str, **changes: Any) -> None:
        """The activation policy (blocked, suspended) is configuration: AM_CONFIG, then the copy's state."""
        c = self.s["dbs"][db]["copies"][server]
        new = {**c, **changes}
        if new != c:
            policy = {k: new[k] for k in ("blocked", "suspended") if new[k] != c[k]}
            if policy:
                self.emit(db, "AM_CONFIG", database=db, server=server, **policy)
            self.s["dbs"][db]["copies"][server] = new
            self.emit(db, "COPY_STATE", server=server, **new)

    def mount(self, db: str, server: str) -> None:
        d = self.s["dbs"][db]
        d.update(active=server, mounted=True, last_mounted=server)
        self.emit(db, "MOUNTED", server=server)
        self.set_copy(db, server, status="Mounted")

    def dismount(self, db: str, reason: str, status: str) -> None:
        d = self.s["dbs"][db]
        if d["mounted"]:
            self.emit(db, "DISMOUNTED", server=d["active"], reason=reason)
        d["mounted"] = False
        self.set_copy(db, d["active"], status=status)

    # --- operations ---------------------------------------------------------------------------------
    @staticmethod
    def fresh(setup: dict[str, Any]) -> dict[str, Any]:
        servers = setup["members"] + setup["standalone"]
        return {
            "dag": setup["dag"],
            "members": setup["members"],
            "up": sorted(servers),
            "groups": [sorted(servers)],
            "claims": [],
            "components": setup["components"],
            "dials": {},
            "health": {},
            "dbs": {},
            "copies": setup["copies"],
            "standalone": setup["standalone"],
            "default_dial": setup["default_dial"],
            "seed": setup["seed"],
            "bcss": setup["bcss"],
            "mount_fail": setup.get("mount_fail", 0.0),
            "draws": 0,
        }

    def boot(self) -> None:
        s = self.s
        self.view()
        for server in sorted(s["up"]):
            s["dials"][server] = s["default_dial"]
            self.emit(s["dag"], "AM_CONFIG", server=server, dial=s["default_dial"])
            s["health"][server] = {}
            for comp, prio in s["components"]:
                s["health"][server][comp] = [prio, "Healthy"]
                self.emit(s["dag"], "SERVER_HEALTH", server=server, component=comp, priority=prio, state="Healthy")
        pam = self.pam()
        for db, servers in sorted(s["copies"].items()):
            dag = None if servers[0] in s["standalone"] else s["dag"]
            copies = {
                sv: {
                    "status": "Healthy",
                    "lli": 0,
                    "rq": 0,
                    "ci": "Healthy",
                    "pref": i + 1,
                    "blocked": False,
                    "suspended": False,
                }
                for i, sv in enumerate(servers)
            }
            s["dbs"][db] = {
                "dag": dag,
                "copies": copies,
                "active": servers[0],
                "mounted": False,
                "lgen": 0,
                "last_mounted": None,
            }
            self.emit(db, "DB_CREATE", dag=dag, servers=servers)
            for sv, c in copies.items():
                self.emit(db, "COPY_STATE", server=sv, **c)
            by = servers[0] if dag is None else pam
            self.emit(db, "ACTIVE_MOVE", src=None, dst=servers[0], by=by)
            self.emit(db, "MOUNT_START", server=servers[0], by=by)
            self.mount(db, servers[0])

    def change_view(self, up: list[str], groups: list[list[str]]) -> None:
        self.flush()  # the DAG facts so far are recorded before the view changes
        self.s["up"], self.s["groups"] = sorted(set(up)), [sorted(g) for g in groups]
        self.view()

    def all_servers(self) -> list[str]:
        return self.s["members"] + self.s["standalone"]

    def op_crash(self, server: str) -> None:
        self.change_view([x for x in self.s["up"] if x != server], self.s["groups"])

    def op_restart(self, server: str) -> None:
        self.change_view([*self.s["up"], server], self.s["groups"])

    def op_partition(self, groups: list[list[str]]) -> None:
        listed = {x for g in groups for x in g}
        rest = [x for x in self.all_servers() if x not in listed]
        self.change_view(self.s["up"], [g for g in groups if g] + ([rest] if rest else []))

    def op_heal(self) -> None:
        self.change_view(self.s["up"], [self.all_servers()])

    def fail_one(self, db: str, what: str) -> None:
        d = self.s["dbs"][db]
        if d["active"] is None or not d["mounted"]:
            return
        server, pam = d["active"], self.pam()
        role = "Standalone" if d["dag"] is None else ("PAM" if server == pam else "SAM")
        self.emit(db, "FAILURE", server=server, what=what, component=None, detector=server, role=role)
        self.dismount(db, what, "Failed")
        if d["dag"] is None or pam is None:
            return  # AM-002: a standalone database has nowhere to go; without a PAM nobody selects
        if role == "SAM":
            self.emit(db, "FAILOVER_REQUEST", server=server, pam=pam)  # AM-013: the SAM asks the PAM
        self.run_bcss(db, failure(), pam)

    def op_fail_database(self, db: str) -> None:
        self.fail_one(db, "database")

    def op_fail_store(self, server: str) -> None:
        for db in sorted(self.s["dbs"]):
            d = self.s["dbs"][db]
            if server in d["copies"]:
                if d["active"] == server and d["mounted"]:
                    self.fail_one(db, "store")
                if server in self.s["up"]:
                    self.set_copy(db, server, status="Failed")

    def op_responder_failover(self, server: str, component: str) -> None:
        """The component's responder on `server` moves the databases active there (AM-032)."""
        self.op_set_health(server, component, "Unhealthy")
        pam = self.pam()
        for db in sorted(self.s["dbs"]):
            d = self.s["dbs"][db]
            if not d["dag"] or d["active"] != server or not d["mounted"] or pam is None:
                continue
            role = "PAM" if server == pam else "SAM"
            self.emit(db, "FAILURE", server=server, what="responder", component=component, detector=server, role=role)
            if role == "SAM":
                self.emit(db, "FAILOVER_REQUEST", server=server, pam=pam)
            self.move_off(db, {"kind": "responder", "component": component, "lossless": False}, pam, "responder")

    def op_switchover(self, db: str, lossless: bool) -> None:
        """An administrator's targetless switchover, run by the PAM (AM-021, AM-037)."""
        d, pam = self.s["dbs"][db], self.pam()
        if pam is None or not d["mounted"] or not d["dag"]:
            return
        self.emit(db, "SWITCHOVER", lossless=lossless)
        self.move_off(db, {"kind": "switchover", "component": None, "lossless": lossless}, pam, "switchover")

    def op_move_pam(self, to: str) -> None:
        q, pam = self.quorum(), self.pam()
        if to not in q or to == pam:
            return
        if pam is not None:
            self.emit(self.s["dag"], "PAM_RELEASE", server=pam, reason="move")
            self.s["claims"].remove(pam)
        self.emit(self.s["dag"], "PAM_ACQUIRE", server=to, quorum=q)
        self.s["claims"].append(to)

    def op_maintenance(self, server: str) -> None:
        if server == self.pam():
            others = [x for x in self.quorum() if x != server]
            if others:
                self.op_move_pam(others[0])
        self.emit(self.s["dag"], "MAINTENANCE", server=server)
        self.op_crash(server)

    def op_set_health(self, server: str, component: str, state: str) -> None:
        h = self.s["health"].setdefault(server, {})
        prio = h.get(component, [dict(self.s["components"]).get(component, "Normal"), state])[0]
        h[component] = [prio, state]
        self.emit(self.s["dag"], "SERVER_HEALTH", server=server, component=component, priority=prio, state=state)

    def op_set_dial(self, server: str, dial: str) -> None:
        self.s["dials"][server] = dial
        self.emit(self.s["dag"], "AM_CONFIG", server=server, dial=dial)

    def op_set_copy(self, db: str, server: str, changes: dict[str, Any]) -> None:
        d = self.s["dbs"][db]
        if server not in d["copies"]:
            return
        names = {
            "status": "status",
            "content_index": "ci",
            "replay_queue": "rq",
            "blocked": "blocked",
            "suspended": "suspended",
        }
        new = {names[k]: v for k, v in changes.items()}
        if (d["active"] == server and d["mounted"]) or new.get("status") == "Mounted" or server not in self.s["up"]:
            new.pop("status", None)  # a stopped server's copy reports nothing; Mounted follows mounts only
        if new.get("status") == "ServiceDown":
            new.pop("status")  # ServiceDown follows the view, not a report
        self.set_copy(db, server, **new)
        if server in self.s["up"]:
            self.failover_all()  # a copy that became usable may be the one a stuck database waits for

    def op_generate_logs(self, db: str, n: int, lags: dict[str, int]) -> None:
        d = self.s["dbs"][db]
        if not d["mounted"] or n <= 0:
            return
        d["lgen"] += n
        self.emit(db, "LOGS", lgen=d["lgen"])
        self.set_copy(db, d["active"], lli=d["lgen"])
        reach = next((g for g in self.s["groups"] if d["active"] in g), [])
        for server, c in sorted(d["copies"].items()):
            if server != d["active"] and c["status"] == "Healthy" and server in self.s["up"] and server in reach:
                self.set_copy(db, server, lli=max(c["lli"], d["lgen"] - max(0, lags.get(server, 0))))

    def op_query(self, db: str, server: str) -> None:
        if server in self.s["up"]:
            self.emit(db, "LOCATION_QUERY", server=server, answer=self.s["dbs"][db]["last_mounted"])

    def op_pams(self) -> list[str]:
        return sorted(self.s["claims"])

    def op_mounted(self, db: str) -> list[str]:
        d = self.s["dbs"][db]
        return [d["active"]] if d["mounted"] else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--bug", choices=["keep-pam-in-minority", *sorted(BUGS)], default="")
    args = ap.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    path = args.state_dir / "state.json"
    state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    for line in sys.stdin:
        req = json.loads(line)
        am = ActiveManager(state or {}, args.bug)
        am.now = req["now_ms"]
        try:
            if req["op"] == "setup":
                resumed = state is not None
                if not resumed:
                    am.s = state = ActiveManager.fresh(req["args"])
                    am.boot()
                result: Any = {"resumed": resumed}
            else:
                result = getattr(am, "op_" + req["op"])(**req["args"])
            am.flush()
            reply: dict[str, Any] = {"id": req["id"], "events": am.out, "result": result}
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
