"""Shadow maintenance: heartbeats, XQUERYDISCARD, discard notifications, promotion and expiry.

Seed 000, "How shadow messages are maintained" (SR-050..SR-067) and "Message processing after an outage"
(SR-058, SR-059, SR-068..SR-072). A mixin of `Cluster`: the shadow server queries each primary it holds
shadows for at least every ShadowHeartbeatFrequency and on every other session to it (SR-054, SR-055),
takes discard notifications, and promotes its shadows when the primary's database ID changed or it has
not reached the primary for ShadowResubmitTimeSpan (checked on heartbeat ticks, SR-I06). The records
below are the transport database's contents (kept across a restart with the same storage).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from model.sr import events as ev

if TYPE_CHECKING:
    from model.kernel.sim import Simulator
    from model.sr.policy import Policy
    from model.sr.state import SrConfig

Key = tuple[str, int]  # (message, instance)


@dataclass
class PrimaryRec:
    forks: tuple[str, ...]
    left: set[str]
    shadow: str | None
    via: str = "primary"
    since_ms: int = 0  # when the message entered this queue (MessageExpirationTimeout, SR-067)


@dataclass
class ShadowRec:
    primary: str
    primary_db: str
    forks: tuple[str, ...]
    created_ms: int
    notified: set[str] = field(default_factory=set)


@dataclass
class Server:
    """A transport server's transport database (kept on disk) plus its running state."""

    name: str
    db: str
    queue: dict[Key, PrimaryRec] = field(default_factory=dict)
    shadows: dict[Key, ShadowRec] = field(default_factory=dict)
    pending: dict[str, list[tuple[str, int, str, int]]] = field(
        default_factory=dict
    )  # per shadow: msg, inst, fork, queued at
    last_query: dict[str, int] = field(default_factory=dict)
    last_contact: dict[str, int] = field(default_factory=dict)
    safetynet: dict[Key, tuple[tuple[str, ...], int]] = field(default_factory=dict)  # forks, entered at


class Maintenance:
    """Methods of `Cluster` for the shadow side; see the module docstring."""

    sim: Simulator
    cfg: SrConfig
    pol: Policy
    servers: dict[str, Server]
    timers: set[tuple[str, str, int]]
    boot: dict[str, int]

    def emit(self, node: str, msg: str, kind: str, **attrs: Any) -> None: ...  # provided by Cluster

    def reach(self, a: str, b: str) -> bool: ...  # provided by Cluster

    def _schedule_fork(self, node: str, key: Key, fork: str) -> None: ...  # provided by Cluster

    def _schedule_queue_expiry(self, node: str, key: Key) -> None: ...  # provided by Cluster

    def _to_safetynet(self, node: str, key: Key, forks: tuple[str, ...], role: str) -> None: ...

    def _start_heartbeat(self, node: str) -> None:
        self.boot[node] = self.sim.now_ms
        self.sim.after(self.sim.rng.randint(0, self.cfg.heartbeat_ms), self._tick, node, node=node)

    def _tick(self, node: str) -> None:
        srv = self.servers[node]
        for p in sorted({r.primary for r in srv.shadows.values()}):
            self._query(node, p, "heartbeat")
        self._auto_discard(srv)
        self.sim.after(self.pol.heartbeat_period(self.cfg), self._tick, node, node=node)

    def _query(self, shadow: str, primary: str, reason: str) -> None:
        s = self.servers[shadow]
        mine = sorted(k for k, r in s.shadows.items() if r.primary == primary)
        if not mine:
            return
        now = self.sim.now_ms
        ok = self.reach(shadow, primary)
        p = self.servers[primary]
        if ok:
            s.last_contact[primary] = now
        # the query is recorded first: what it observed (success, database ID) explains what follows
        self.emit(
            shadow,
            ev.heartbeat_entity(shadow, primary),
            ev.XQUERYDISCARD,
            primary=primary,
            ok=ok,
            reason=reason,
            db=p.db if ok else None,
            held=len(mine),
        )
        for key in mine:
            rec = s.shadows[key]
            last = max(s.last_contact.get(primary, rec.created_ms), rec.created_ms)
            why = self.pol.promotion_reason(now, last, self.cfg, rec.primary_db, p.db if ok else None)
            if why:
                self._promote(shadow, key, why, last, p.db if ok else None)
        if ok:
            p.last_query[shadow] = now
            for msg, inst, fork, _ in p.pending.pop(shadow, []):
                self._notified(shadow, (msg, inst), fork)
        elif self.cfg.promotion_check == "exactTimer":
            self._exact_timer(shadow, primary)

    def _exact_timer(self, shadow: str, primary: str) -> None:
        """PromotionCheck = exactTimer (SR-I06): check again exactly when the resubmit span runs out."""
        s = self.servers[shadow]
        left = [r for r in s.shadows.values() if r.primary == primary]
        if not left:
            return
        due = max(s.last_contact.get(primary, 0), min(r.created_ms for r in left)) + self.cfg.resubmit_ms
        if due > self.sim.now_ms and (shadow, primary, due) not in self.timers:
            self.timers.add((shadow, primary, due))
            self.sim.at(due, self._query, shadow, primary, "timer", node=shadow)

    def _notified(self, shadow: str, key: Key, fork: str) -> None:
        s = self.servers[shadow]
        rec = s.shadows.get(key)
        if rec is None:
            return
        rec.notified.add(fork)
        self.emit(shadow, key[0], ev.DISCARD_NOTIFY, inst=key[1], fork=fork, primary=rec.primary)
        if self.pol.release_ready(rec.forks, frozenset(rec.notified)):
            del s.shadows[key]
            self.emit(shadow, key[0], ev.HADISCARD, inst=key[1], primary=rec.primary)
            self._to_safetynet(shadow, key, rec.forks, "shadow")

    def _promote(self, shadow: str, key: Key, reason: str, last: int, observed: str | None) -> None:
        s = self.servers[shadow]
        rec = s.shadows.pop(key)
        self.emit(
            shadow,
            key[0],
            ev.PROMOTE,
            inst=key[1],
            primary=rec.primary,
            reason=reason,
            last_contact_ms=last,
            original_db=rec.primary_db,
            observed_db=observed,
        )
        left = [f for f in rec.forks if f not in rec.notified]
        s.queue[key] = PrimaryRec(rec.forks, set(left), None, via="promoted", since_ms=rec.created_ms)
        for f in left:
            self._schedule_fork(shadow, key, f)
        self._schedule_queue_expiry(shadow, key)

    def _auto_discard(self, srv: Server) -> None:
        """SR-064, SR-I23: a queued discard event is deleted once the shadow has not queried for
        ShadowMessageAutoDiscardInterval since the later of its last query and the event's queueing."""
        now, interval = self.sim.now_ms, self.pol.auto_discard_ms(self.cfg)
        for shadow in sorted(srv.pending):
            last = srv.last_query.get(shadow, -interval)
            keep = []
            for msg, inst, fork, at in srv.pending[shadow]:
                if now - max(last, at) >= interval:
                    self.emit(srv.name, msg, ev.DISCARD_EXPIRE, inst=inst, shadow=shadow)
                else:
                    keep.append((msg, inst, fork, at))
            srv.pending[shadow] = keep

    def _schedule_expiry(self, node: str, key: Key) -> None:
        rec = self.servers[node].shadows[key]
        after = self.pol.shadow_lifetime_ms(self.cfg)
        self.sim.at(max(self.sim.now_ms, rec.created_ms + after), self._expire, node, key, after, node=node)

    def _expire(self, node: str, key: Key, after: int) -> None:
        if self.servers[node].shadows.pop(key, None) is not None:
            self.emit(node, key[0], ev.SHADOW_EXPIRE, inst=key[1])
