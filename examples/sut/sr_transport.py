"""The transport servers of `sr_node.py`: shadow creation, fork processing, heartbeats, promotion, expiry.

Standard library only; it does not import haconform. Seed 000, "How shadow messages are created" (a message
is taken only while its primary is up and reachable; the shadow follows the attempt plan of
ShadowMessagePreference and the retry counts; the sender is acknowledged after the shadow's acknowledgement, or
rejected/accepted without one as RejectMessageOnShadowFailure says; a shadow session to a server that is
running but cut off stalls and times out after the smaller connection inactivity time-out), "How shadow
messages are maintained" (each shadow server queries every primary it holds shadows for once every
ShadowHeartbeatFrequency, and over every session it opens to it; discard notifications arrive only in answer
to a successful query; the shadow is released after every fork's notification and kept in Safety Net; a
primary deletes the discard events of a shadow server that has not queried it for
ShadowMessageAutoDiscardInterval; an unreleased shadow is dropped SafetyNetHoldTime + MessageExpirationTimeout
after it was made), "Message processing after an outage" (a shadow server takes ownership when a query sees
the primary's new transport database, or when it has not reached the primary for ShadowResubmitTimeSpan; the
promoted copy processes every fork not yet notified, non-mailbox forks included; queued forks fail after
MessageExpirationTimeout; a new transport database loses what the old one held; Safety Net resubmits only
mailbox forks, and duplicate detection hides a second mailbox delivery).

The shadow server's half (heartbeats, notifications, promotion, discard and shadow expiry) is `sr_maintain.py`.
Every fork is processed at once (delivered to mailboxes, or handed to its next hop), retried every five minutes
while the server is cut off. A shadow session stalls when its server is running but cut off, or when the world
of the setup stalls it: `stall_p` (the harness's share of shadow sessions that stall) of the attempts, spread
evenly (the k-th attempt on a reachable server stalls when floor(k * stall_p) grows). The sender's session
times out ConnectionTimeout after its connection opened, a minute before its data (SR-I22): shadow creation
still under way then ends, and the message is rejected or accepted without an answer to the sender.
Every timer is data in the state (`timers`), so a `kill -9` between requests loses nothing.
"""

from __future__ import annotations

from typing import Any

from sr_maintain import Maintenance

REJECTION = "451 4.4.0 Message failed to be made redundant"
ACK = "250 2.6.0 Queued mail for delivery"
MAILBOX = ("mbx", "journal")
MINUTE = 60_000
HOP_RETRY_MS = 5 * MINUTE
DAY = 24 * 60 * MINUTE
# a setting the setup leaves out is at its catalogue default (spec/requirements, seed 000)
DEFAULTS: dict[str, Any] = {
    "enabled": True,
    "reject_on_failure": False,
    "preference": "PreferRemote",
    "max_remote": 4,
    "max_local": 2,
    "retry_meaning": "attempts",
    "heartbeat_ms": 2 * MINUTE,
    "resubmit_ms": 3 * 60 * MINUTE,
    "auto_discard_ms": 2 * DAY,
    "safety_net_hold_ms": 2 * DAY,
    "expiration_ms": 2 * DAY,
    "recv_inactivity_ms": 5 * MINUTE,
    "send_inactivity_ms": 10 * MINUTE,
    "recv_timeout_ms": 10 * MINUTE,
    "shadow_timeout_ends": "attempt",
    "stall_p": 0.0,
}


def is_mailbox(fork: str) -> bool:
    return fork.split(":", 1)[0] in MAILBOX


class Transport(Maintenance):
    def __init__(self, state: dict[str, Any], bug: str) -> None:
        self.s = state
        self.bug = bug
        self.out: list[dict[str, Any]] = []
        self.now = 0

    # --- set-up -------------------------------------------------------------------------------------
    @staticmethod
    def fresh(setup: dict[str, Any], now: int) -> dict[str, Any]:
        """The servers are the ones the harness gives in `topology` (it records them as configuration)."""
        servers = {
            name: {"site": srv["site"], "dag": srv["dag"], "up": True, "epoch": 1, "run": 1}
            for name, srv in setup["topology"].items()
            if srv["version"] == "2013"
        }
        hubs = [name for name, srv in setup["topology"].items() if srv["version"] == "2010"]
        state = {"setup": setup, "servers": servers, "isolated": [], "messages": [], "hubs": hubs, "mailstore": []}
        state.update(sessions={}, timers=[], seq=0)
        for srv in servers.values():
            Transport.reset(srv)
        t = Transport(state, "")
        t.now = now
        for name in sorted(servers):
            t.heartbeat_timer(name, first=True)
        return state

    @staticmethod
    def reset(srv: dict[str, Any]) -> None:
        """A transport database's contents: queue, shadows, discard events per shadow server, Safety Net."""
        srv.update(queue={}, shadows={}, pending={}, last_query={}, last_contact={}, safetynet={})

    def cfg(self, key: str) -> Any:
        setup = self.s["setup"]
        return setup[key] if key in setup else DEFAULTS[key]

    def emit(self, node: str, entity: str, kind: str, **attrs: Any) -> None:
        self.out.append({"ts_ms": self.now, "node": node, "entity": entity, "kind": kind, "attrs": attrs})

    def timer(self, due: int, what: str, node: str, *args: Any) -> None:
        self.s["seq"] += 1
        self.s["timers"].append([due, self.s["seq"], what, node, *args])

    def boundary(self, name: str) -> str:
        srv = self.s["servers"][name]
        return f"dag:{srv['dag']}" if srv["dag"] else f"site:{srv['site']}"

    def usable(self, name: str) -> bool:
        return self.s["servers"][name]["up"] and name not in self.s["isolated"]

    def reach(self, a: str, b: str) -> bool:
        return self.usable(a) and self.usable(b)

    def db(self, name: str) -> str:
        return f"{name}-db{self.s['servers'][name]['epoch']}"

    def plan(self, primary: str) -> list[str]:
        srv = self.s["servers"][primary]
        extra = 1 if self.cfg("retry_meaning") == "retries" else 0
        remote, local = ["remote"] * (self.cfg("max_remote") + extra), ["local"] * (self.cfg("max_local") + extra)
        dag = srv["dag"]
        multi = bool(dag) and len({s["site"] for s in self.s["servers"].values() if s["dag"] == dag}) > 1
        if not multi:
            return local
        return {"PreferRemote": remote + local, "RemoteOnly": remote, "LocalOnly": local}[self.cfg("preference")]

    # --- creation (SR-018..SR-048) ------------------------------------------------------------------
    def submit(self, msg: str, primary: str, forks: list[str], origin: str) -> None:
        if primary not in self.s["servers"] or not self.usable(primary):
            return  # the sender cannot connect; it will try again later (not modelled here)
        srv = self.s["servers"][primary]
        hubs = [h for h in self.s["hubs"] if self.cfg("topology")[h]["site"] == srv["site"]]
        forks = [f for f in forks if not f.startswith("hub:") or f[4:] in hubs] or ["mbx"]
        self.emit(primary, msg, "RECEIVE", inst=1, sender=f"{origin}-sender", origin=origin,
                  boundary=self.boundary(primary), site=srv["site"], db=self.db(primary), forks=forks,
                  sender_xshadow=origin == "hub2010", xshadow_advertised=self.bug == "advertise-xshadow")  # fmt: skip
        self.s["messages"].append(msg)  # every received message ends in a SNAPSHOT
        sess = {"primary": primary, "forks": forks, "plan": self.plan(primary), "tries": 0}
        self.s["sessions"][msg] = sess
        # the sender connected a minute before its data: ConnectionTimeout counts from then (SR-039, SR-I22)
        self.timer(self.now + self.cfg("recv_timeout_ms") - MINUTE, "inbound", primary, msg)
        if self.bug == "ack-before-shadow":
            self.emit(primary, msg, "ACCEPT", inst=1, redundant=True, acked=True, response=ACK)
            sess["acked"] = True
        if not self.cfg("enabled"):
            self.conclude(msg, None)
        else:
            self.attempts(msg)

    def attempts(self, msg: str) -> None:
        """The shadow attempts from the next one on: stops at a stalled session (its time-out continues them),
        at a shadow made, or when the plan is spent."""
        sess = self.s["sessions"][msg]
        primary, plan, site = sess["primary"], sess["plan"], self.s["servers"][sess["primary"]]["site"]
        if not plan:
            self.emit(primary, msg, "HAREDIRECTFAIL", inst=1, shadow="", reason="no shadow attempts allowed",
                      final=True, **{"try": 0})  # fmt: skip
            self.fail_final(msg)
            return
        while sess["tries"] < len(plan):
            sess["tries"] = n = sess["tries"] + 1
            where, final = plan[n - 1], n == len(plan)
            cands = [name for name, srv in sorted(self.s["servers"].items())
                     if name != primary and self.boundary(name) == self.boundary(primary)
                     and (srv["site"] != site) == (where == "remote")]  # fmt: skip
            if not cands:  # nobody in the boundary may hold it: the attempt is given up without a session
                self.emit(primary, msg, "HAREDIRECTFAIL", inst=1, shadow="", reason="No suitable shadow servers",
                          final=final, **{"try": n})  # fmt: skip
                continue
            usable = [name for name in cands if self.reach(primary, name)]
            target = (usable or cands)[0]
            self.emit(primary, msg, "HAREDIRECT", inst=1, shadow=target, site=where,
                      shadow_site=self.s["servers"][target]["site"], site_of_primary=site, **{"try": n})  # fmt: skip
            if self.reach(primary, target):  # a session that opens carries XQUERYDISCARD (SR-054, SR-I05)
                self.query(primary, target, "session")
            cut_off = not usable and self.s["servers"][target]["up"]
            if cut_off or (usable and self.world_stalls()):
                sess["shadow"] = target  # the session stalls
                idle = min(self.cfg("send_inactivity_ms"), self.cfg("recv_inactivity_ms"))
                if self.bug == "early-shadow-timeout":
                    idle //= 2
                self.timer(self.now + idle, "stall", primary, msg)
                return
            if not usable:  # a down or cut-off server is only found out by trying it
                self.emit(primary, msg, "HAREDIRECTFAIL", inst=1, shadow=target, reason="unreachable", final=final,
                          **{"try": n})  # fmt: skip
                continue
            sh = self.s["servers"][target]
            sh["shadows"][msg] = {"primary": primary, "primary_db": self.db(primary), "forks": sess["forks"],
                                  "created": self.now, "notified": []}  # fmt: skip
            sh["last_contact"][primary] = self.now
            self.emit(target, msg, "HARECEIVE", inst=1, primary=primary, boundary=self.boundary(target),
                      primary_db=self.db(primary), forks=sess["forks"])  # fmt: skip
            self.emit(primary, msg, "SHADOW_ACK", inst=1, shadow=target)
            life = self.cfg("safety_net_hold_ms") + self.cfg("expiration_ms")
            self.timer(self.now + life, "shadow_expire", target, msg)
            self.conclude(msg, target)
            return
        self.fail_final(msg)

    def world_stalls(self) -> bool:
        """The setup's `stall_p` share of the attempts on reachable servers, spread evenly over them."""
        k = self.s["attempts"] = self.s.get("attempts", 0) + 1
        p = float(self.cfg("stall_p"))
        return int(k * p) > int((k - 1) * p)

    def stall(self, msg: str) -> None:
        sess = self.s["sessions"].get(msg)
        if sess is None:
            return
        ends = self.cfg("shadow_timeout_ends") == "creation"
        primary = sess["primary"]
        self.emit(primary, msg, "SESSION_TIMEOUT", inst=1, session="shadow", timeout="ConnectionInactivityTimeout")
        self.emit(primary, msg, "HAREDIRECTFAIL", inst=1, shadow=sess["shadow"], reason="timeout",
                  final=sess["tries"] == len(sess["plan"]) or ends, **{"try": sess["tries"]})  # fmt: skip
        if ends:
            self.fail_final(msg)
        else:
            self.attempts(msg)

    def inbound(self, node: str, msg: str) -> None:
        """The sender's session times out while shadow creation is still under way: creation ends (SR-039)."""
        sess = self.s["sessions"].get(msg)
        if sess is None or sess["primary"] != node:
            return
        self.emit(node, msg, "SESSION_TIMEOUT", inst=1, session="inbound", timeout="ConnectionTimeout")
        self.s["timers"][:] = [t for t in self.s["timers"] if t[2:4] != ["stall", node] or t[4] != msg]
        self.emit(node, msg, "HAREDIRECTFAIL", inst=1, shadow=sess.get("shadow", ""),
                  reason="inbound session timed out", final=True, **{"try": sess["tries"]})  # fmt: skip
        self.fail_final(msg, session_open=False)

    def fail_final(self, msg: str, session_open: bool = True) -> None:
        sess = self.s["sessions"][msg]
        if self.cfg("reject_on_failure") and not sess.get("acked"):
            del self.s["sessions"][msg]
            self.emit(sess["primary"], msg, "REJECT", inst=1, response=REJECTION)
            return
        self.conclude(msg, None, session_open)

    def conclude(self, msg: str, shadow: str | None, session_open: bool = True) -> None:
        """ACCEPT (answered in the sender's session while it is open), then every fork processed at once."""
        sess = self.s["sessions"].pop(msg)
        primary = sess["primary"]
        if not sess.get("acked"):
            response = ACK if session_open else ""
            self.emit(primary, msg, "ACCEPT", inst=1, redundant=shadow is not None, acked=session_open,
                      response=response)  # fmt: skip
        self.s["servers"][primary]["queue"][msg] = {"forks": sess["forks"], "left": list(sess["forks"]),
                                                    "shadow": shadow, "via": "primary", "since": self.now}  # fmt: skip
        self.queued(primary, msg)

    def queued(self, node: str, msg: str) -> None:
        rec = self.s["servers"][node]["queue"][msg]
        if self.now >= rec["since"] + self.cfg("expiration_ms"):  # a promoted copy past its expiry (SR-067)
            self.queue_expire(node, msg)
            return
        for fork in list(rec["left"]):
            self.process(node, msg, fork)
        if msg in self.s["servers"][node]["queue"]:
            self.timer(max(self.now, rec["since"] + self.cfg("expiration_ms")), "queue_expire", node, msg)

    # --- processing (SR-007, SR-050, SR-067) ----------------------------------------------------------
    def process(self, node: str, msg: str, fork: str) -> None:
        srv = self.s["servers"][node]
        rec = srv["queue"].get(msg)
        if rec is None or fork not in rec["left"]:
            return
        if node in self.s["isolated"]:  # the next hop cannot be reached: the queue retries later
            self.timer(self.now + HOP_RETRY_MS, "fork", node, msg, fork)
            return
        self.transmit(node, msg, fork, rec["via"])
        rec["left"].remove(fork)
        if rec["shadow"]:
            srv["pending"].setdefault(rec["shadow"], []).append([msg, fork, self.now])
        if not rec["left"]:
            del srv["queue"][msg]
            self.to_safetynet(node, msg, rec["forks"], "primary")

    def transmit(self, node: str, msg: str, fork: str, via: str) -> None:
        if is_mailbox(fork):
            dup = f"{msg}|{fork}" in self.s["mailstore"]
            if not dup:
                self.s["mailstore"].append(f"{msg}|{fork}")
            self.emit(node, msg, "DUPLICATEDELIVER" if dup else "DELIVER", inst=1, fork=fork, via=via)
        else:
            hop = fork.split(":", 1)[1] if ":" in fork else "sender"
            self.emit(node, msg, "SEND", inst=1, fork=fork, next_hop=hop, via=via)

    def queue_expire(self, node: str, msg: str) -> None:
        srv = self.s["servers"][node]
        rec = srv["queue"].get(msg)
        if rec is None or not rec["left"]:
            return
        left = sorted(rec["left"])
        self.emit(node, msg, "FAIL", inst=1, forks=left, reason="expired", expiration_ms=self.cfg("expiration_ms"))
        if rec["shadow"]:  # the shadow may let go of what failed
            srv["pending"].setdefault(rec["shadow"], []).extend([msg, f, self.now] for f in left)
        del srv["queue"][msg]

    def to_safetynet(self, node: str, msg: str, forks: list[str], role: str) -> None:
        self.s["servers"][node]["safetynet"][msg] = {"forks": forks, "entered": self.now}
        self.emit(node, msg, "SAFETYNET", inst=1, role=role)
        self.timer(self.now + self.hold(), "safetynet_expire", node, msg)

    def hold(self) -> int:
        return self.cfg("safety_net_hold_ms") // (2 if self.bug == "short-safetynet-hold" else 1)

    def safetynet_expire(self, node: str, msg: str) -> None:
        if self.s["servers"][node]["safetynet"].pop(msg, None) is not None:
            self.emit(node, msg, "SAFETYNET_EXPIRE", inst=1)

    def safetynet_resubmit(self, node: str) -> None:
        """SR-033, SR-038, SR-069..SR-071: only mailbox forks; never across the boundary, never to a 2010 Hub."""
        srv = self.s["servers"][node]
        if not srv["up"]:
            return
        for msg, item in sorted(srv["safetynet"].items()):
            if self.now - item["entered"] >= self.hold():  # overdue (restarted a moment ago): gone first
                self.safetynet_expire(node, msg)
                continue
            for fork in item["forks"]:
                if is_mailbox(fork) or (self.bug == "resubmit-external" and fork.startswith("ext:")):
                    self.emit(node, msg, "RESUBMIT", inst=1, fork=fork, source="SAFETYNET")
                    self.transmit(node, msg, fork, "safetynet")

    # --- time and faults ------------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Every timer due by the end, in time order; a crashed server's timers went with it."""
        end = self.now + ms
        timers = self.s["timers"]
        while timers:
            first = min(timers)
            if first[0] > end:
                break
            timers.remove(first)
            self.now = max(self.now, first[0])
            what, node, args = first[2], first[3], first[4:]
            if node in self.s["servers"] and not self.s["servers"][node]["up"]:
                continue
            if what == "stall":
                self.stall(*args)
            elif what == "fork":
                self.process(node, *args)
            else:
                getattr(self, what)(node, *args)
        self.now = end

    def crash(self, server: str) -> None:
        srv = self.s["servers"][server]
        srv["up"] = False
        self.s["timers"][:] = [t for t in self.s["timers"] if t[3] != server]
        for msg in [m for m, sess in self.s["sessions"].items() if sess["primary"] == server]:
            del self.s["sessions"][msg]  # the sender's session dies with the server

    def restart(self, server: str, new_database: bool) -> None:
        srv = self.s["servers"][server]
        if srv["up"]:
            return  # restarting a running server changes nothing
        srv["up"] = True
        srv["run"] += 1
        if new_database:
            for msg in sorted(srv["queue"]):
                self.emit(server, msg, "LOST", inst=1, role="primary")
            for msg in sorted(srv["shadows"]):
                self.emit(server, msg, "LOST", inst=1, role="shadow")
            srv["epoch"] += 1
            self.reset(srv)
        for msg, rec in sorted(srv["queue"].items()):
            self.timer(max(self.now, rec["since"] + self.cfg("expiration_ms")), "queue_expire", server, msg)
            for fork in rec["left"]:
                self.timer(self.now, "fork", server, msg, fork)
        life = self.cfg("safety_net_hold_ms") + self.cfg("expiration_ms")
        for msg, rec in sorted(srv["shadows"].items()):
            self.timer(max(self.now, rec["created"] + life), "shadow_expire", server, msg)
        for msg, item in sorted(srv["safetynet"].items()):
            self.timer(max(self.now, item["entered"] + self.hold()), "safetynet_expire", server, msg)
        self.heartbeat_timer(server, first=True)
        self.advance(0)  # what is overdue happens at the restart
