"""The shadow server's half of `sr_transport.py`: heartbeats, discard notifications, promotion, expiry.

Standard library only; it does not import haconform. Seed 000, "How shadow messages are maintained" (SR-053..SR-066)
and "Message processing after an outage" (SR-058, SR-059): each shadow server queries every primary it holds shadows
for once every ShadowHeartbeatFrequency (and over every session it opens to it); a successful query brings the
discard notifications the primary queued for it; the shadow is released after every fork's notification and kept
in Safety Net; a query that sees the primary's new transport database, or none after ShadowResubmitTimeSpan without
contact, promotes the shadow; a primary deletes the discard events of a shadow server that has not queried it for
ShadowMessageAutoDiscardInterval; an unreleased shadow is dropped SafetyNetHoldTime + MessageExpirationTimeout after
it was made. A mixin of `sr_transport.Transport`, which provides the state and the helpers declared below.
"""

from __future__ import annotations

from typing import Any


class Maintenance:
    s: dict[str, Any]
    bug: str
    now: int

    def cfg(self, key: str) -> Any: ...  # provided by Transport

    def emit(self, node: str, entity: str, kind: str, **attrs: Any) -> None: ...

    def timer(self, due: int, what: str, node: str, *args: Any) -> None: ...

    def reach(self, a: str, b: str) -> bool: ...

    def db(self, name: str) -> str: ...

    def queued(self, node: str, msg: str) -> None: ...

    def to_safetynet(self, node: str, msg: str, forks: list[str], role: str) -> None: ...

    def heartbeat_timer(self, node: str, first: bool = False) -> None:
        """The next heartbeat tick. The first after a start comes a millisecond early, so that every tick falls
        off the whole seconds at which the harness injects faults: a tick never shares an instant with a restart
        (SR-I06 leaves the phase of the timer open; see issue 34's note on promotion-overdue at one instant)."""
        period = self.cfg("heartbeat_ms") * (2 if self.bug == "slow-heartbeat" else 1)
        self.timer(self.now + period - (1 if first else 0), "tick", node, self.s["servers"][node]["run"])

    def tick(self, node: str, run: int) -> None:
        srv = self.s["servers"][node]
        if run != srv["run"]:
            return  # a timer of an earlier run of the server
        for primary in sorted({r["primary"] for r in srv["shadows"].values()}):
            self.query(node, primary, "heartbeat")
        self.auto_discard(node)
        self.heartbeat_timer(node)

    def query(self, shadow: str, primary: str, reason: str) -> None:
        s, p = self.s["servers"][shadow], self.s["servers"][primary]
        mine = sorted(k for k, r in s["shadows"].items() if r["primary"] == primary)
        if not mine:
            return
        ok = self.reach(shadow, primary)
        if ok:
            s["last_contact"][primary] = self.now
        observed = self.db(primary) if ok else None
        self.emit(shadow, f"hb:{shadow}>{primary}", "XQUERYDISCARD", primary=primary, ok=ok, reason=reason,
                  db=observed, held=len(mine))  # fmt: skip
        for msg in mine:
            rec = s["shadows"][msg]
            last = max(s["last_contact"].get(primary, rec["created"]), rec["created"])
            why = ""
            if (observed is not None and observed != rec["primary_db"]) or (
                observed is None and self.bug == "promote-unseen-db"
            ):
                why = "database_id"
            elif observed is None and self.now - last >= self.cfg("resubmit_ms"):
                why = "resubmit_timespan"
            if why:
                self.promote(shadow, msg, why, last, observed)
        if ok:
            p["last_query"][shadow] = self.now
            for msg, fork, _ in p["pending"].pop(shadow, []):
                self.notified(shadow, msg, fork)

    def notified(self, shadow: str, msg: str, fork: str) -> None:
        s = self.s["servers"][shadow]
        rec = s["shadows"].get(msg)
        if rec is None:
            return
        rec["notified"].append(fork)
        self.emit(shadow, msg, "DISCARD_NOTIFY", inst=1, fork=fork, primary=rec["primary"])
        if set(rec["notified"]) >= set(rec["forks"]) or self.bug == "release-before-all-forks":
            del s["shadows"][msg]
            self.emit(shadow, msg, "HADISCARD", inst=1, primary=rec["primary"])
            self.to_safetynet(shadow, msg, rec["forks"], "shadow")

    def promote(self, shadow: str, msg: str, reason: str, last: int, observed: str | None) -> None:
        """SR-058..SR-061: the promoted copy processes every fork not yet notified (non-mailbox forks too)."""
        s = self.s["servers"][shadow]
        rec = s["shadows"].pop(msg)
        self.emit(shadow, msg, "PROMOTE", inst=1, primary=rec["primary"], reason=reason, last_contact_ms=last,
                  original_db=rec["primary_db"], observed_db=observed)  # fmt: skip
        left = [f for f in rec["forks"] if f not in rec["notified"]]
        s["queue"][msg] = {"forks": rec["forks"], "left": left, "shadow": None, "via": "promoted",
                           "since": rec["created"]}  # fmt: skip
        self.queued(shadow, msg)

    def auto_discard(self, node: str) -> None:
        """SR-064, SR-I23: discard events of a shadow server that has not queried for the interval since the later
        of its last query and the event's queueing are deleted."""
        srv, interval = self.s["servers"][node], self.cfg("auto_discard_ms")
        for shadow in sorted(srv["pending"]):
            last = srv["last_query"].get(shadow, -interval)
            keep = []
            for msg, fork, at in srv["pending"][shadow]:
                if self.now - max(last, at) >= interval:
                    self.emit(node, msg, "DISCARD_EXPIRE", inst=1, shadow=shadow)
                else:
                    keep.append([msg, fork, at])
            srv["pending"][shadow] = keep

    def shadow_expire(self, node: str, msg: str) -> None:
        if self.s["servers"][node]["shadows"].pop(msg, None) is not None:
            hold, expiration = self.cfg("safety_net_hold_ms"), self.cfg("expiration_ms")
            self.emit(node, msg, "SHADOW_EXPIRE", inst=1, hold_ms=hold, expiration_ms=expiration)
