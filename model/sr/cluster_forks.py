"""Forks processed, Safety Net and outages: the primary's side of a message after it is accepted.

Seed 000, "How shadow messages are maintained" (SR-050, SR-051: the discard status of each fork processed),
"Safety Net" (SR-032, SR-033, SR-037, SR-038, SR-065), "Message processing after an outage" (SR-057,
SR-068..SR-072). A mixin of `Cluster` (`model.sr.cluster`; first in its bases, so its methods are not the stubs
`Maintenance` declares), as `cluster_maintenance.Maintenance` is for the shadow
side: each queued fork is processed after a hop latency (a choice point), transmitted (a delivery, a duplicate
delivery where the store saw it, or a send to the next hop), and a primary whose forks are all done moves the
message to Safety Net, which keeps it for SafetyNetHoldTime and resubmits on a mailbox database failover. A
server that restarts reschedules its queue, its shadows' expiry and Safety Net's from the fold's `World`; a new
transport database loses what the fold says it held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model.sr import events as ev
from model.sr.choice_points import HOP_LATENCY, HOP_SLOW, HOP_SLOW_LATENCY
from model.sr.cluster_maintenance import Key, PrimaryRec, Server, ShadowRec
from model.sr.state import fork_kind
from model.sr.world import QUEUED, SAFETYNET, SHADOW

if TYPE_CHECKING:
    from model.kernel.sim import Simulator
    from model.sr.policy import Policy
    from model.sr.state import SrConfig
    from model.sr.world import World


class Forks:
    """Methods of `Cluster` for the primary's side after acceptance; see the module docstring."""

    sim: Simulator
    cfg: SrConfig
    pol: Policy
    servers: dict[str, Server]
    world: World
    sessions: dict[Key, Any]
    t: Any  # the cluster's `Timing`

    if TYPE_CHECKING:  # provided by `Cluster` and `Maintenance` (declared here for the type checker only)

        def emit(self, node: str, msg: str, kind: str, **attrs: Any) -> None: ...
        def up(self, name: str) -> bool: ...
        def cut_off(self, name: str) -> bool: ...
        def queued(self, node: str, key: Key) -> PrimaryRec | None: ...
        def queue(self, node: str) -> dict[Key, PrimaryRec]: ...
        def shadows(self, node: str) -> dict[Key, ShadowRec]: ...
        def held_as(self, node: str, key: Key) -> str: ...
        def safetynet(self, node: str) -> list[tuple[Key, tuple[str, ...], int]]: ...
        def _schedule_queue_expiry(self, node: str, key: Key) -> None: ...
        def _schedule_expiry(self, node: str, key: Key) -> None: ...
        def _expire(self, node: str, key: Key, after: int) -> None: ...
        def _start_heartbeat(self, node: str) -> None: ...
        def _sender_retry(self, msg: str, primary: str, forks: Any, origin: str, inst: int) -> None: ...

    # --- processing forks, discard status (SR-032, SR-037, SR-050, SR-051) ---------------------------
    def _schedule_fork(self, node: str, key: Key, fork: str) -> None:
        choose = self.sim.choices
        if choose.chance(HOP_SLOW, self.t.hop_slow_p):
            delay = choose.randint(HOP_SLOW_LATENCY, *self.t.hop_slow_ms)
        else:
            delay = choose.randint(HOP_LATENCY, *self.t.hop_ms)
        self.sim.after(delay, self._process, node, key, fork, node=node)

    def _process(self, node: str, key: Key, fork: str) -> None:
        rec = self.queued(node, key)
        if rec is None or fork not in rec.left:
            return
        msg, inst = key
        if self.cut_off(node):  # the next hop cannot be reached: the queue retries later
            self._schedule_fork(node, key, fork)
            return
        # the fold takes the fork off the queue and queues its discard event for the shadow (`World.owed`)
        self._transmit(node, msg, inst, fork, rec.via)
        if self.pol.primary_done(set(rec.left - {fork})):
            self._to_safetynet(node, key, rec.forks, "primary")

    def _transmit(self, node: str, msg: str, inst: int, fork: str, via: str) -> None:
        kind = fork_kind(fork)
        if kind in ("mailbox", "journal"):
            # the mailbox store has the fork when the fold saw it delivered (`Msg.delivered`, per network message ID)
            dup = fork in self.world.msgs[msg].delivered and self.pol.duplicate_detection()
            self.emit(node, msg, ev.DUPLICATEDELIVER if dup else ev.DELIVER, inst=inst, fork=fork, via=via)
        else:
            hop = fork.split(":", 1)[1] if ":" in fork else "sender"
            for _ in range(self.pol.sends_per_fork()):
                self.emit(node, msg, ev.SEND, inst=inst, fork=fork, next_hop=hop, via=via)

    def _to_safetynet(self, node: str, key: Key, forks: tuple[str, ...], role: str) -> None:
        self.emit(node, key[0], ev.SAFETYNET, inst=key[1], role=role)
        self._schedule_safetynet_expiry(node, key)

    def _schedule_safetynet_expiry(self, node: str, key: Key) -> None:
        """SafetyNetHoldTime (SR-065) counts from the entry; a restart does not restart the clock."""
        due = self.world.msgs[key[0]].insts[key[1]].copies[node].since_ms + self.pol.safetynet_hold_ms(self.cfg)
        self.sim.at(max(self.sim.now_ms, due), self._safetynet_expire, node, key, node=node)

    def _safetynet_expire(self, node: str, key: Key) -> None:
        if self.held_as(node, key) == SAFETYNET:
            self.emit(node, key[0], ev.SAFETYNET_EXPIRE, inst=key[1])

    def safetynet_resubmit(self, node: str) -> None:
        """A mailbox database failover asks Safety Net on `node` to resubmit (SR-033, SR-038)."""
        if not self.up(node):
            return
        hold = self.pol.safetynet_hold_ms(self.cfg)
        for (msg, inst), forks, entered in self.safetynet(node):
            if self.sim.now_ms - entered > hold:  # overdue, its expiry timer not yet run at this instant (a
                self._safetynet_expire(node, (msg, inst))  # restart a moment ago): gone before it can be used
                continue
            for f in forks:
                if self.pol.may_resubmit(f):
                    self.emit(node, msg, ev.RESUBMIT, inst=inst, fork=f, source="SAFETYNET")
                    self._transmit(node, msg, inst, f, "safetynet")

    # --- outages (SR-057, SR-068..SR-072) ---------------------------------------------------------------
    def _lifecycle(self, node: str, what: str) -> None:
        if node not in self.servers:
            return
        if what == "crash":
            for key, sess in sorted(self.sessions.items()):
                if sess.primary == node and not sess.done:  # the sender's session dies with the server
                    sess.done = True
                    self._sender_retry(key[0], node, sess.forks, "outside", key[1] + 1)
            return
        if what == "restart-new-storage":
            lost = self.world.destroyed.pop(node, [])  # what the new transport database lost (`step._apply`)
            for key in sorted(k for k, state in lost if state == QUEUED):
                self.emit(node, key[0], ev.LOST, inst=key[1], role="primary")
            for key in sorted(k for k, state in lost if state == SHADOW):
                self.emit(node, key[0], ev.LOST, inst=key[1], role="shadow")
            self.servers[node] = Server(node)
        for key, rec in sorted(self.queue(node).items()):
            for f in sorted(rec.left):
                self._schedule_fork(node, key, f)
            self._schedule_queue_expiry(node, key)
        life = self.pol.shadow_lifetime_ms(self.cfg)
        for key, rec in sorted(self.shadows(node).items()):
            if self.sim.now_ms - rec.created_ms >= life:  # overdue while the server was down (SR-066):
                self._expire(node, key, life)  # gone before a query at this instant can promote it
            else:
                self._schedule_expiry(node, key)
        hold = self.pol.safetynet_hold_ms(self.cfg)
        for key, _, entered in self.safetynet(node):
            if self.sim.now_ms - entered > hold:  # overdue while the server was down (SR-065)
                self._safetynet_expire(node, key)
            else:
                self._schedule_safetynet_expiry(node, key)
        self._start_heartbeat(node)
