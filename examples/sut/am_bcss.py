"""Best copy and server selection for the reference Active Manager (`am_node.py`), standard library only.

Written from seed 002 ("Best Copy Selection", "Best copy selection process") and the interpretations
`haconform spec --interpretations` lists, not from the model's code: the PAM builds the candidate list
(unreachable and blocked copies left out, AM-034; for a responder failover only servers where the component
is better, AM-032), sorts it (copy queue then activation preference, or activation preference alone when a
server is Lossless or for a lossless switchover, AM-035..AM-037), walks the four health tiers and ten
criteria sets in the configured order (AM-027, AM-039), and for each copy in turn runs attempt copy last
logs, compares the missing logs with the dial and asks for the mount (AM-023..AM-025); a copy that does not
mount sends it on to the next one, each copy once per run (AM-I12).

`BUGS` are planted bugs for `--bug`: each breaks one seed statement, and `haconform conform am` must name
that statement's rule.
"""

from __future__ import annotations

import random
from typing import Any

BUGS = {
    "retry-failed-mount": "after a mount fails, asks the store to mount the same copy again (AM-025, AM-I12)",
    "activate-blocked": "leaves blocked and suspended copies in the candidate list (AM-034)",
    "lossless-switchover-by-queue": "sorts a lossless switchover by copy queue, not activation preference (AM-037)",
}
ACCEPTABLE = {"Healthy", "DisconnectedAndHealthy", "DisconnectedAndResynchronizing", "SeedingSource"}
RANK = {"Healthy": 2, "Degraded": 1, "Unhealthy": 0}
PRIORITY = {"High": 2, "Normal": 1, "Low": 0}
# criteria set -> (content index required, copy queue bounded, replay queue bounded)
CRITERIA = {
    1: ("Healthy", True, True),
    2: ("Crawling", True, True),
    3: ("Healthy", False, True),
    4: ("Crawling", False, True),
    5: (None, False, True),
    6: ("Healthy", True, False),
    7: ("Crawling", True, False),
    8: ("Healthy", False, False),
    9: ("Crawling", False, False),
    10: (None, False, False),
}
DEFAULTS: dict[str, Any] = {
    "order": "TierMajor",
    "up_to_normal": "NormalAndAbove",
    "require_status": True,
    "dial_scope": "TargetServer",
    "responder": "Better",
    "below_source": False,
    "cq_below": 10,
    "rq_below": 50,
    "thresholds": [["Lossless", 0], ["GoodAvailability", 6], ["BestAvailability", 12]],
}


class Selection:
    """Mixed into `am_node.ActiveManager`, which provides `s` (the state), `bug`, `emit`, `set_copy`,
    `mount`, `dismount`, `pam` and `quorum`."""

    s: dict[str, Any]
    bug: str

    def emit(self, entity: str, kind: str, **attrs: Any) -> None: ...
    def set_copy(self, db: str, server: str, **changes: Any) -> None: ...
    def mount(self, db: str, server: str) -> None: ...
    def dismount(self, db: str, reason: str, status: str) -> None: ...
    def pam(self) -> str | None: ...

    # --- the environment: one seeded generator, its draws counted in the persisted state ---------------
    def draw(self) -> float:
        n = self.s["draws"] = self.s.get("draws", 0) + 1
        return random.Random(self.s.get("seed", 0) * 1_000_003 + n).random()

    def opt(self, key: str) -> Any:
        return {**DEFAULTS, **self.s.get("bcss", {})}[key]

    # --- who reaches whom ---------------------------------------------------------------------------
    def side(self, server: str | None) -> set[str]:
        up = set(self.s["up"])
        if server is None or server not in up:
            return set()
        return next((set(g) & up for g in self.s["groups"] if server in g), {server})

    def reachable(self, a: str, b: str) -> bool:
        return b in self.side(a)

    # --- health tiers (AM-027..AM-031) and the responder constraint (AM-032) ------------------------------
    def comp_state(self, server: str, comp: str) -> str:
        entry = self.s["health"].get(server, {}).get(comp)
        return entry[1] if entry else "Unhealthy"

    def tier(self, target: str, source: str) -> int | None:
        h = self.s["health"].get(target, {})
        if all(state == "Healthy" for _, state in h.values()):
            return 1
        normal_only = self.opt("up_to_normal") == "NormalOnly"
        counted = [state for prio, state in h.values() if (PRIORITY[prio] == 1 if normal_only else PRIORITY[prio] >= 1)]
        if all(state == "Healthy" for state in counted):
            return 2
        names = set(h) | set(self.s["health"].get(source, {}))
        t = {n: RANK[self.comp_state(target, n)] for n in names}
        src = {n: RANK[self.comp_state(source, n)] for n in names}
        if all(t[n] >= src[n] for n in names) and any(t[n] > src[n] for n in names):
            return 3
        if all(t[n] == src[n] for n in names):
            return 4
        return 5 if self.opt("below_source") else None

    def responder_ok(self, target: str, source: str, comp: str) -> bool:
        if self.opt("responder") == "Healthy":
            return self.comp_state(target, comp) == "Healthy"
        return RANK[self.comp_state(target, comp)] > RANK[self.comp_state(source, comp)]

    # --- the ordered list (AM-033..AM-050) ------------------------------------------------------------
    def meets(self, c: dict[str, Any], n: int, lgen: int) -> bool:
        ci, cq_bound, rq_bound = CRITERIA[n]
        if (n == 10 or self.opt("require_status")) and c["status"] not in ACCEPTABLE:
            return False
        if ci is not None and c["ci"] != ci:
            return False
        if cq_bound and max(0, lgen - c["lli"]) >= self.opt("cq_below"):
            return False
        return not (rq_bound and c["rq"] >= self.opt("rq_below"))

    def sort_by_preference(self, db: str, trigger: dict[str, Any]) -> bool:
        lossless_switchover = trigger["kind"] == "switchover" and trigger["lossless"]
        if lossless_switchover and self.bug != "lossless-switchover-by-queue":
            return True
        return any(self.s["dials"].get(sv) == "Lossless" for sv in self.s["dbs"][db]["copies"])

    def select(self, db: str, trigger: dict[str, Any], pam: str) -> tuple[list[tuple[str, int, int]], bool]:
        """[(server, tier, criteria set)] in the order to try, and whether sorted by activation preference."""
        d = self.s["dbs"][db]
        source, lgen, side = d["active"] or "", d["lgen"], self.side(pam)
        keep = []
        for sv, c in sorted(d["copies"].items()):
            if sv == source or sv not in side:
                continue
            if (c["blocked"] or c["suspended"]) and self.bug != "activate-blocked":
                continue
            if trigger["kind"] == "responder" and not self.responder_ok(sv, source, trigger["component"]):
                continue
            keep.append(sv)
        by_pref = self.sort_by_preference(db, trigger)

        def key(sv: str) -> tuple[int, ...]:
            c = d["copies"][sv]
            return (c["pref"],) if by_pref else (max(0, lgen - c["lli"]), c["pref"])

        placed = []
        for rank, sv in enumerate(sorted(keep, key=lambda sv: (*key(sv), sv))):
            tier = self.tier(sv, source)
            n = next((n for n in CRITERIA if self.meets(d["copies"][sv], n, lgen)), None)
            if tier is None or n is None:
                continue
            group = (tier, n) if self.opt("order") == "TierMajor" else (n, tier)
            placed.append((group, rank, (sv, tier, n)))
        return [p[2] for p in sorted(placed)], by_pref

    # --- the run: ACLL, the dial, the mount (AM-022..AM-025, AM-051) -------------------------------------
    def threshold(self, db: str, target: str) -> int:
        limits = dict(map(tuple, self.opt("thresholds")))
        dial = self.s["dials"].get
        if self.opt("dial_scope") == "MostRestrictive":
            return min(limits[dial(sv, self.s["default_dial"])] for sv in self.s["dbs"][db]["copies"])
        return limits[dial(target, self.s["default_dial"])]

    def run_bcss(self, db: str, trigger: dict[str, Any], by: str) -> None:
        d = self.s["dbs"][db]
        source = d["active"] or ""
        order, by_pref = self.select(db, trigger, by)
        self.emit(
            db,
            "BCSS_START",
            pam=by,
            trigger=trigger["kind"],
            component=trigger.get("component"),
            lossless=trigger["lossless"],
            source=source,
            sort="ActivationPreference" if by_pref else "CopyQueue",
            order=[f"{sv}:{tier}:{n}" for sv, tier, n in order],
        )
        for sv, _, _ in order:
            if self.attempt(db, sv, source, by):
                d["stuck"] = False
                self.emit(db, "BCSS_END", outcome="mounted", server=sv)
                return
        d["stuck"] = True
        self.emit(db, "BCSS_END", outcome="exhausted" if order else "no_candidate", server=None)

    def attempt(self, db: str, target: str, source: str, by: str) -> bool:
        d = self.s["dbs"][db]
        c = d["copies"][target]
        self.emit(db, "ACLL_START", server=target, source=source)
        lli = c["lli"]
        if source and source in self.s["up"] and self.reachable(target, source):
            short = self.draw() < 0.2
            lli = max(lli, d["lgen"] - (1 + int(self.draw() * 20)) if short else d["lgen"])
            lli = max(0, lli)
        missing, threshold = max(0, d["lgen"] - lli), self.threshold(db, target)
        before = c["lli"]
        self.set_copy(db, target, lli=lli)
        ok = missing <= threshold
        self.emit(
            db,
            "ACLL_END",
            op=314 if ok else 313,
            server=target,
            lli_before=before,
            lli=lli,
            missing=missing,
            threshold=threshold,
            ok=ok,
        )
        return ok and self.mount_request(db, target, by)

    def mount_request(self, db: str, target: str, by: str) -> bool:
        d = self.s["dbs"][db]
        if d["active"] != target:
            self.emit(db, "ACTIVE_MOVE", src=d["active"], dst=target, by=by)
            d["active"] = target
        self.emit(db, "MOUNT_START", server=target, by=by)
        if self.draw() < self.s.get("mount_fail", 0.0):
            self.emit(db, "MOUNT_FAIL", server=target)
            self.set_copy(db, target, status="Dismounted")
            if self.bug != "retry-failed-mount":
                return False
            self.emit(db, "MOUNT_START", server=target, by=by)  # the planted bug: the same copy again
            if self.draw() < self.s.get("mount_fail", 0.0):
                self.emit(db, "MOUNT_FAIL", server=target)
                return False
        self.mount(db, target)
        return True

    # --- when BCSS runs ----------------------------------------------------------------------------
    def failover_all(self) -> None:
        """The PAM fails over every DAG database with no mounted copy it can reach (AM-004, AM-006)."""
        pam = self.pam()
        if pam is None:
            return
        for db in sorted(self.s["dbs"]):
            d = self.s["dbs"][db]
            if not d["dag"]:
                continue
            if d["mounted"] and d["active"] is not None and self.reachable(pam, d["active"]):
                continue
            if d.get("stuck") and not self.select(db, failure(), pam)[0]:
                continue  # nothing changed that could help: no idle run
            self.run_bcss(db, failure(), pam)

    def move_off(self, db: str, trigger: dict[str, Any], by: str, reason: str) -> None:
        """Switchover or responder: dismount, run BCSS; if nothing mounts, remount the source."""
        d = self.s["dbs"][db]
        source = d["active"]
        self.dismount(db, reason, "Healthy")
        self.run_bcss(db, trigger, by)
        if not d["mounted"] and source is not None:
            if d["active"] != source:
                self.emit(db, "ACTIVE_MOVE", src=d["active"], dst=source, by=by)
                d["active"] = source
            self.emit(db, "MOUNT_START", server=source, by=by, remount=True)
            self.mount(db, source)


def failure() -> dict[str, Any]:
    return {"kind": "failure", "component": None, "lossless": False}
