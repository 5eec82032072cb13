"""The transport servers of one organisation, driven by the kernel: the executable side of the rules.

Seed 000: "How shadow messages are created" (SR-027..SR-031), "SMTP timeouts" (SR-039..SR-048), "How
shadow messages are maintained" (SR-050..SR-067), "Message processing after an outage" (SR-068..SR-076),
Exchange 2010 coexistence (SR-036..SR-038). Each server's transport database (queues, shadow queues,
discard notifications, Safety Net) survives a restart with the same storage and is lost with a new one;
its database ID is derived from the storage generation the fold saw. Every decision goes through `Policy`, whose
methods call the pure functions of `decisions.py`; the mutants override one method each. Every recorded
event (the kernel's faults included) is folded through `step.step` into `self.world`, the monitor's own
state, as it is recorded (`folding.FoldingRecorder`), so `self.breaches` is what the monitor would report, and the
decisions read that world: copies, shadows, Safety Net, contacts, reachability (issue 33; `model/sr/README.md`,
"One state"). The topology is recorded as `SR_CONFIG`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from model.kernel.network import NetConfig, Network
from model.kernel.sim import MINUTE, SECOND, Simulator
from model.kernel.topology import Topology
from model.sr import decisions
from model.sr import events as ev
from model.sr.choice_points import (
    ACK_LOST,
    RETRY_DELAY,
    RETRY_SERVER,
    SHADOW_LATENCY,
    SHADOW_SERVER,
    SHADOW_SLOW,
    SHADOW_SLOW_LATENCY,
    SHADOW_STALL,
)
from model.sr.cluster_forks import Forks
from model.sr.cluster_maintenance import Maintenance, Server
from model.sr.folding import FoldingRecorder
from model.sr.policy import Policy
from model.sr.state import SrConfig
from model.sr.world import World
from traces.verdict import Violation

Key = tuple[str, int]  # (message, instance)


@dataclass
class Session:
    primary: str
    forks: tuple[str, ...]
    plan: tuple[str, ...]
    tries: int = 0
    attempt: Any = None
    deadline: Any = None
    shadow: str = ""
    done: bool = False
    inbound_closed: bool = False  # the sender's session timed out: a later ACCEPT cannot reach the sender


@dataclass(frozen=True)
class Timing:
    """Random latencies of the simulated world (not seed parameters)."""

    shadow_ms: tuple[int, int] = (20, 2 * SECOND)
    stall_p: float = 0.05  # a shadow session stalls and times out (ConnectionInactivityTimeout)
    slow_p: float = 0.05  # a shadow session transfers slowly (up to 6 min)
    ack_loss_p: float = 0.03  # the 250 to the sender is lost: the sender's session times out
    hop_ms: tuple[int, int] = (100, 5 * SECOND)
    hop_slow_p: float = 0.1
    hop_slow_ms: tuple[int, int] = (5 * MINUTE, 60 * MINUTE)
    retry_ms: tuple[int, int] = (MINUTE, 10 * MINUTE)
    max_insts: int = 3


class Cluster(Forks, Maintenance):
    def __init__(
        self,
        sim: Simulator,
        topology: Topology,
        cfg: SrConfig,
        policy: Policy | None = None,
        timing: Timing | None = None,
    ) -> None:
        self.sim, self.topo, self.cfg = sim, topology, cfg.validate()
        self.pol = policy or Policy()
        self.t = timing or Timing()
        self.net = Network(sim, topology, NetConfig(latency_ms=(1, 50)))
        self.exchange = [n for n in topology.names() if topology.server(n).version == "2013"]
        self.members = {
            n: (topology.boundary(n), topology.server(n).site, topology.server(n).version) for n in topology.names()
        }
        self.servers = {n: Server(n) for n in self.exchange}
        self.world = World(self.cfg)
        self.breaches: list[tuple[str, Violation]] = []
        sim.recorder = FoldingRecorder(sim.recorder, self.world, self.breaches)
        self.sessions: dict[Key, Session] = {}
        self.timers: set[tuple[str, str, int]] = set()
        sim.on_lifecycle(self._lifecycle)
        servers = {n: {"site": s.site, "dag": s.dag, "version": s.version} for n, s in sorted(topology.servers.items())}
        self.emit("sim", "config", ev.SR_CONFIG, topology=json.dumps(servers, sort_keys=True, separators=(",", ":")))
        for n in self.exchange:
            self._start_heartbeat(n)

    # --- recording --------------------------------------------------------------------------------
    def db(self, name: str) -> str:
        """The database ID of `name`'s transport database (SR-068), from the storage generation the fold derived."""
        return f"{name}-db{self.world.epoch.get(name, 0)}"

    def emit(self, node: str, msg: str, kind: str, **attrs: Any) -> None:
        self.sim.emit(node, ev.MECH, msg, kind, **attrs)

    # --- the recorded faults, as the fold derived them (`World.up`, `World.group`) --------------------------------
    def up(self, name: str) -> bool:
        return self.world.up.get(name, True)

    def cut_off(self, name: str) -> bool:
        """A network card failure isolates `name` (each isolated server is a group of its own, `isolate`)."""
        return name in self.world.group

    def reach(self, a: str, b: str) -> bool:
        return self.world.reach(a, b)

    def isolate(self, node: str) -> None:
        """A network card failure: the server runs but nobody reaches it (SR-069)."""
        self.net.partition(*([n] for n in sorted({*self.world.group, node})))

    def heal(self) -> None:
        if self.world.group:
            self.net.heal()

    # --- receiving and shadow creation (SR-027..SR-031, SR-039..SR-048) ------------------------------
    def submit(self, msg: str, primary: str, forks: Sequence[str], origin: str = "outside", inst: int = 1) -> None:
        """A sender opens an SMTP session to `primary` and transmits `msg` (SR-027)."""
        if not self.up(primary) or self.cut_off(primary):
            self._sender_retry(msg, primary, forks, origin, inst)
            return
        s = self.topo.server(primary)
        in_dag, multi = bool(s.dag), bool(s.dag) and self.topo.dag_spans_sites(s.dag)
        plan = self.pol.plan(self.cfg.replace(preference=self.cfg.preference_of(primary)), in_dag, multi)
        self.emit(
            primary,
            msg,
            ev.RECEIVE,
            inst=inst,
            sender=f"{origin}-sender",
            origin=origin,
            boundary=self.members[primary][0],
            site=s.site,
            db=self.db(primary),
            forks=list(forks),
            sender_xshadow=origin == "hub2010",
            xshadow_advertised=self.pol.advertise_xshadow(),
        )
        sess = Session(primary, tuple(forks), plan)
        self.sessions[(msg, inst)] = sess
        sess.deadline = self.sim.after(self.cfg.recv_timeout_ms, self._inbound_timeout, msg, inst, node=primary)
        if self.pol.shadowing(self.cfg):
            self._attempt(msg, inst)
        else:
            self._accept(msg, inst, redundant=False, acked=True)

    def _attempt(self, msg: str, inst: int) -> None:
        sess = self.sessions[(msg, inst)]
        n = sess.tries + 1
        if n > len(sess.plan):
            if not sess.plan:
                self.emit(
                    sess.primary,
                    msg,
                    ev.HAREDIRECTFAIL,
                    inst=inst,
                    shadow="",
                    reason="no shadow attempts allowed",
                    final=True,
                    **{"try": 0},
                )
            self._fail_final(msg, inst)
            return
        sess.tries = n
        p = sess.primary
        site_class = sess.plan[n - 1]
        members = (
            self.members
            if self.pol.in_boundary_only()
            else {k: (self.members[p][0], v[1], v[2]) for k, v in self.members.items()}
        )
        cands = decisions.shadow_candidates(p, site_class, members, lambda x: x in self.servers)
        if not cands:
            self.emit(
                p,
                msg,
                ev.HAREDIRECTFAIL,
                inst=inst,
                shadow="",
                reason="No suitable shadow servers",
                final=n == len(sess.plan),
                **{"try": n},
            )
            self._attempt(msg, inst)
            return
        target = self.sim.choices.pick(SHADOW_SERVER, cands)
        sess.shadow = target
        self.emit(
            p,
            msg,
            ev.HAREDIRECT,
            inst=inst,
            shadow=target,
            site=site_class,
            shadow_site=self.members[target][1],
            site_of_primary=self.members[p][1],
            **{"try": n},
        )
        self._query(p, target, "session")  # any session to a server carries XQUERYDISCARD (SR-054)
        if self.pol.ack_early():
            self._accept(msg, inst, redundant=False, acked=True)
        choose = self.sim.choices
        if choose.chance(SHADOW_STALL, self.t.stall_p):
            idle = self.pol.shadow_idle_ms(self.cfg)
            sess.attempt = self.sim.after(idle, self._stalled, msg, inst, node=p)
            return
        lo, hi = self.t.shadow_ms
        if not choose.chance(SHADOW_SLOW, self.t.slow_p):
            delay = choose.randint(SHADOW_LATENCY, lo, hi)
        else:
            delay = choose.randint(SHADOW_SLOW_LATENCY, hi, 6 * MINUTE)
        sess.attempt = self.sim.after(delay, self._shadow_done, msg, inst, target, node=p)

    def _stalled(self, msg: str, inst: int) -> None:
        sess = self.sessions[(msg, inst)]
        self.emit(
            sess.primary,
            msg,
            ev.SESSION_TIMEOUT,
            inst=inst,
            session="shadow",
            timeout="ConnectionInactivityTimeout",
        )
        self.emit(
            sess.primary,
            msg,
            ev.HAREDIRECTFAIL,
            inst=inst,
            shadow=sess.shadow,
            reason="timeout",
            final=sess.tries == len(sess.plan) or self.cfg.shadow_timeout_ends == "creation",
            **{"try": sess.tries},
        )
        if self.cfg.shadow_timeout_ends == "creation":  # SR-I18, SR-P21: the time-out ends shadow creation
            self._fail_final(msg, inst)
        else:
            self._attempt(msg, inst)

    def _shadow_done(self, msg: str, inst: int, target: str) -> None:
        sess = self.sessions[(msg, inst)]
        p = sess.primary
        if not self.reach(p, target):
            self.emit(
                p,
                msg,
                ev.HAREDIRECTFAIL,
                inst=inst,
                shadow=target,
                reason="unreachable",
                final=sess.tries == len(sess.plan),
                **{"try": sess.tries},
            )
            self._attempt(msg, inst)
            return
        if not self.pol.store_before_ack():
            self.emit(p, msg, ev.SHADOW_ACK, inst=inst, shadow=target)
        self.emit(
            target,
            msg,
            ev.HARECEIVE,
            inst=inst,
            primary=p,
            boundary=self.members[target][0],
            primary_db=self.db(p),
            forks=list(sess.forks),
        )
        self._schedule_expiry(target, (msg, inst))
        if self.pol.store_before_ack():
            self.emit(p, msg, ev.SHADOW_ACK, inst=inst, shadow=target)
        if sess.done:
            return
        acked = not self.sim.choices.chance(ACK_LOST, self.t.ack_loss_p)  # a lost 250: the sender transmits again
        self._accept(msg, inst, redundant=True, acked=acked, shadow=target)

    def _inbound_timeout(self, msg: str, inst: int) -> None:
        sess = self.sessions[(msg, inst)]
        if sess.done:
            return
        self.emit(sess.primary, msg, ev.SESSION_TIMEOUT, inst=inst, session="inbound", timeout="ConnectionTimeout")
        sess.inbound_closed = True
        if not self.pol.abort_on_inbound_timeout():
            return
        self.sim.cancel(sess.attempt)
        self.emit(
            sess.primary,
            msg,
            ev.HAREDIRECTFAIL,
            inst=inst,
            shadow=sess.shadow,
            reason="inbound session timed out",
            final=True,
            **{"try": sess.tries},
        )
        self._fail_final(msg, inst, session_open=False)

    def _fail_final(self, msg: str, inst: int, session_open: bool = True) -> None:
        sess = self.sessions[(msg, inst)]
        if self.pol.outcome_on_failure(self.cfg) == "rejected":
            sess.done = True
            self.sim.cancel(sess.deadline)
            self.emit(sess.primary, msg, ev.REJECT, inst=inst, response=self.pol.rejection_text())
            self._sender_retry(msg, sess.primary, sess.forks, "outside", inst + 1)
        else:
            self._accept(msg, inst, redundant=False, acked=session_open)

    def _accept(self, msg: str, inst: int, *, redundant: bool, acked: bool, shadow: str | None = None) -> None:
        sess = self.sessions[(msg, inst)]
        if sess.done:
            return
        sess.done = True
        self.sim.cancel(sess.deadline)
        p = sess.primary
        acked = acked and not sess.inbound_closed  # the answer needs the sender's session (SR-039, SR-I22)
        self.emit(
            p,
            msg,
            ev.ACCEPT,
            inst=inst,
            redundant=redundant,
            acked=acked,
            response=ev.ACK_TEXT if acked else "",
        )
        for f in sess.forks:
            self._schedule_fork(p, (msg, inst), f)
        self._schedule_queue_expiry(p, (msg, inst))
        if not acked:
            self._sender_retry(msg, p, sess.forks, "outside", inst + 1)  # SR-042

    def _schedule_queue_expiry(self, node: str, key: Key) -> None:
        rec = self.queued(node, key)
        assert rec is not None
        due = rec.since_ms + self.pol.queue_lifetime_ms(self.cfg)
        self.sim.at(max(self.sim.now_ms, due), self._queue_expire, node, key, node=node)

    def _queue_expire(self, node: str, key: Key) -> None:
        """MessageExpirationTimeout (SR-067): what is still queued fails; the shadow may then let go."""
        rec = self.queued(node, key)
        if rec is None or not rec.left:
            return
        left = sorted(rec.left)
        self.emit(node, key[0], ev.FAIL, inst=key[1], forks=left, reason="expired")
        # (the fold queues the shadow's discard events for the forks expired: `World.owed`)

    def _sender_retry(self, msg: str, primary: str, forks: Sequence[str], origin: str, inst: int) -> None:
        if inst > self.t.max_insts:
            return
        boundary = self.members[primary][0]
        options = [n for n in self.exchange if self.members[n][0] == boundary]
        target = self.sim.choices.pick(RETRY_SERVER, options)
        delay = self.sim.choices.randint(RETRY_DELAY, *self.t.retry_ms)
        self.sim.after(delay, self.submit, msg, target, forks, origin, inst)

    def snapshot(self, quiesced: bool) -> None:
        """Harness record closing the run, one per message (read by the liveness rules)."""
        for msg in sorted(self.world.msgs):
            self.emit("sim", msg, ev.SNAPSHOT, quiesced=quiesced)
