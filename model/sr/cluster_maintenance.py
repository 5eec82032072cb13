"""Shadow maintenance: heartbeats, XQUERYDISCARD, discard notifications, promotion and expiry.

Seed 000, "How shadow messages are maintained" (SR-050..SR-067) and "Message processing after an outage"
(SR-058, SR-059, SR-068..SR-072). A mixin of `Cluster`: the shadow server queries each primary it holds
shadows for at least every ShadowHeartbeatFrequency and on every other session to it (SR-054, SR-055),
takes discard notifications, and promotes its shadows when the primary's database ID changed or it has
not reached the primary for ShadowResubmitTimeSpan (checked on heartbeat ticks, SR-I06). The shadows and
queued copies are read from the fold's `World` (`ShadowRec`, `PrimaryRec`: views made when read, issue 33);
The primary's queued discard events are the fold's too (`World.owed`, and `World.handed`: those a successful
XQUERYDISCARD carried); a policy that forgets them at a restart (the mutant `discards-in-memory`) is a decision
over that state (`remembered`), as is one that marks more forks discarded than were processed (`discard_marks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from model.sr import events as ev
from model.sr.choice_points import HEARTBEAT_PHASE
from model.sr.world import ABSENT, QUEUED, SAFETYNET, SHADOW, Inst

if TYPE_CHECKING:
    from model.kernel.sim import Simulator
    from model.sr.policy import Policy
    from model.sr.state import SrConfig
    from model.sr.world import World

Key = tuple[str, int]  # (message, instance)
Key3 = tuple[str, int, str]  # (message, instance, fork)


@dataclass(frozen=True)
class PrimaryRec:
    """A queued copy as the fold knows it (a view of `World`, made when read: issue 33): the forks, those still
    queued, the shadow its discard events go to (a message accepted with redundancy, SR-050), how it came (the
    primary's own copy or a promoted shadow) and when it entered the queue (MessageExpirationTimeout, SR-067; a
    promoted copy: when the shadow was made, SR-I21)."""

    forks: tuple[str, ...]
    left: frozenset[str]
    shadow: str | None
    via: str
    since_ms: int


@dataclass(frozen=True)
class ShadowRec:
    """A shadow as the fold knows it (a view of `World`, made when read, never kept: issue 33): the instance's
    primary, the primary's database ID when it was made (SR-068), its forks, when it was made, and the forks whose
    discard notification arrived (SR-052, SR-I20)."""

    primary: str
    primary_db: str
    forks: tuple[str, ...]
    created_ms: int
    notified: frozenset[str]


@dataclass
class Server:
    """A transport server of the cluster (its state is the fold's `World`: issue 33)."""

    name: str


class Maintenance:
    """Methods of `Cluster` for the shadow side; see the module docstring."""

    sim: Simulator
    cfg: SrConfig
    pol: Policy
    servers: dict[str, Server]
    world: World  # the monitor's fold state, which the decisions read (issue 33)
    timers: set[tuple[str, str, int]]

    def emit(self, node: str, msg: str, kind: str, **attrs: Any) -> None: ...  # provided by Cluster

    def reach(self, a: str, b: str) -> bool: ...  # provided by Cluster

    def db(self, name: str) -> str: ...  # provided by Cluster

    def _schedule_fork(self, node: str, key: Key, fork: str) -> None: ...  # provided by `cluster_forks.Forks`

    def _schedule_queue_expiry(self, node: str, key: Key) -> None: ...  # provided by Cluster

    def _to_safetynet(self, node: str, key: Key, forks: tuple[str, ...], role: str) -> None: ...

    def _start_heartbeat(self, node: str) -> None:
        phase = self.sim.choices.randint(HEARTBEAT_PHASE, 0, self.cfg.heartbeat_ms)
        self.sim.after(phase, self._tick, node, node=node)

    def shadows(self, node: str) -> dict[Key, ShadowRec]:
        """The shadows `node` holds, by instance (copies the fold has in state `SHADOW` on it, `World.at`)."""
        out = {}
        for key, iv in (self.world.at.get(node) or {}).items():
            if iv.copies[node].state == SHADOW:
                out[key] = _view(iv)
        return out

    def held_as(self, node: str, key: Key) -> str:
        """The state of `node`'s copy of the instance `key` (`world.ABSENT` when it has none)."""
        iv = (self.world.at.get(node) or {}).get(key)
        return iv.state(node) if iv is not None else ABSENT

    def safetynet(self, node: str) -> list[tuple[Key, tuple[str, ...], int]]:
        """What `node`'s Safety Net holds, by instance: the forks and when it entered (SR-012, SR-065)."""
        out = []
        for key, iv in (self.world.at.get(node) or {}).items():
            copy = iv.copies[node]
            if copy.state == SAFETYNET:
                out.append((key, iv.forks, copy.since_ms))
        return sorted(out)

    def queued(self, node: str, key: Key) -> PrimaryRec | None:
        """`node`'s queued copy of the instance `key` (a copy the fold has in state `QUEUED` on it), or None."""
        iv = (self.world.at.get(node) or {}).get(key)
        return _queued(iv, node) if iv is not None and iv.copies[node].state == QUEUED else None

    def queue(self, node: str) -> dict[Key, PrimaryRec]:
        """What `node`'s queue holds, by instance."""
        out = {}
        for key, iv in (self.world.at.get(node) or {}).items():
            if iv.copies[node].state == QUEUED:
                out[key] = _queued(iv, node)
        return out

    def shadow(self, node: str, key: Key) -> ShadowRec | None:
        iv = (self.world.at.get(node) or {}).get(key)
        return _view(iv) if iv is not None and iv.copies[node].state == SHADOW else None

    def _tick(self, node: str) -> None:
        srv = self.servers[node]
        for p in sorted({r.primary for r in self.shadows(node).values()}):
            self._query(node, p, "heartbeat")
        self._auto_discard(srv)
        self.sim.after(self.pol.heartbeat_period(self.cfg), self._tick, node, node=node)

    def _query(self, shadow: str, primary: str, reason: str) -> None:
        mine = sorted(k for k, r in self.shadows(shadow).items() if r.primary == primary)
        if not mine:
            return
        now = self.sim.now_ms
        ok = self.reach(shadow, primary)
        db = self.db(primary) if ok else None
        # what the answer carries: the discard events the primary has queued for `shadow` now (`World.owed`; the
        # fold hands them over at the query, `heartbeats.hand_over`, SR-053)
        carried = self._discards(primary, shadow) if ok else []
        # the query is recorded first: what it observed (success, database ID) explains what follows
        self.emit(
            shadow,
            ev.heartbeat_entity(shadow, primary),
            ev.XQUERYDISCARD,
            primary=primary,
            ok=ok,
            reason=reason,
            db=db,
            held=len(mine),
        )
        for key in mine:
            rec = self.shadow(shadow, key)
            assert rec is not None  # (only this loop's promotions move a shadow, each its own)
            # the last successful session (`World.contact`: a shadow session or query); one from before this
            # server's new transport database is older than every shadow it holds now
            last = max(self.world.contact.get((shadow, primary), rec.created_ms), rec.created_ms)
            why = self.pol.promotion_reason(now, last, self.cfg, rec.primary_db, db)
            if why:
                self._promote(shadow, key, why, last, db)
        for msg, inst, fork in carried:
            self._notified(shadow, (msg, inst), fork)
        if not ok and self.cfg.promotion_check == "exactTimer":
            self._exact_timer(shadow, primary)

    def _exact_timer(self, shadow: str, primary: str) -> None:
        """PromotionCheck = exactTimer (SR-I06): check again exactly when the resubmit span runs out."""
        left = [r for r in self.shadows(shadow).values() if r.primary == primary]
        if not left:
            return
        due = max(self.world.contact.get((shadow, primary), 0), min(r.created_ms for r in left)) + self.cfg.resubmit_ms
        if due > self.sim.now_ms and (shadow, primary, due) not in self.timers:
            self.timers.add((shadow, primary, due))
            self.sim.at(due, self._query, shadow, primary, "timer", node=shadow)

    def _notified(self, shadow: str, key: Key, fork: str) -> None:
        rec = self.shadow(shadow, key)
        if rec is None:
            return
        self.emit(shadow, key[0], ev.DISCARD_NOTIFY, inst=key[1], fork=fork, primary=rec.primary)
        if self.pol.release_ready(rec.forks, rec.notified | {fork}):
            self.emit(shadow, key[0], ev.HADISCARD, inst=key[1], primary=rec.primary)
            self._to_safetynet(shadow, key, rec.forks, "shadow")

    def _promote(self, shadow: str, key: Key, reason: str, last: int, observed: str | None) -> None:
        rec = self.shadow(shadow, key)
        assert rec is not None
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
        for f in left:
            self._schedule_fork(shadow, key, f)
        self._schedule_queue_expiry(shadow, key)

    def _remembered(self, primary: str, shadow: str) -> list[tuple[str, int, str, int]]:
        """The discard events of `shadow`'s queue at `primary` (`World.owed`) the primary still has: all (they are
        kept in its transport database, SR-011), or under a policy that keeps them in memory only, those it queued
        after its last restart (`World.owed_at_boot`)."""
        queue = self.world.owed.get((primary, shadow), {})
        lost = frozenset() if self.pol.persist_discards() else self.world.owed_at_boot.get(primary, frozenset())
        return [
            (msg, inst, fork, at) for (msg, inst, fork), at in queue.items() if (shadow, msg, inst, fork) not in lost
        ]

    def _discards(self, primary: str, shadow: str) -> list[Key3]:
        """The discard notifications the primary's answer to `shadow` carries, in the order they were queued: per
        queued event, the forks the policy marks discarded (`discard_marks`: the fork itself; an expired fork is
        itself whatever the policy)."""
        out: list[Key3] = []
        for msg, inst, fork, _ in self._remembered(primary, shadow):
            m = self.world.msgs.get(msg)
            iv = m.insts.get(inst) if m is not None else None
            if iv is None or fork in iv.expired:
                out.append((msg, inst, fork))
            else:
                out += [(msg, inst, f) for f in self.pol.discard_marks(fork, iv.forks)]
        return out

    def _auto_discard(self, srv: Server) -> None:
        """SR-064, SR-I23: a queued discard event is deleted once the shadow has not queried for
        ShadowMessageAutoDiscardInterval since the later of its last query and the event's queueing."""
        now, interval = self.sim.now_ms, self.pol.auto_discard_ms(self.cfg)
        for shadow in sorted(s for p, s in self.world.owed if p == srv.name):
            last = self.world.last_ok.get((shadow, srv.name), -interval)  # its last successful query
            for msg, inst, _, at in self._remembered(srv.name, shadow):
                if now - max(last, at) >= interval:
                    self.emit(srv.name, msg, ev.DISCARD_EXPIRE, inst=inst, shadow=shadow)

    def _schedule_expiry(self, node: str, key: Key) -> None:
        rec = self.shadow(node, key)
        assert rec is not None
        after = self.pol.shadow_lifetime_ms(self.cfg)
        self.sim.at(max(self.sim.now_ms, rec.created_ms + after), self._expire, node, key, after, node=node)

    def _expire(self, node: str, key: Key, after: int) -> None:
        if self.shadow(node, key) is not None:
            self.emit(node, key[0], ev.SHADOW_EXPIRE, inst=key[1])


def _view(iv: Inst) -> ShadowRec:
    return ShadowRec(iv.primary, f"{iv.primary}-db{iv.shadow_epoch}", iv.forks, iv.shadow_ms, frozenset(iv.notified))


def _queued(iv: Inst, node: str) -> PrimaryRec:
    copy = iv.copies[node]
    if copy.promoted:
        return PrimaryRec(iv.forks, frozenset(copy.left), None, "promoted", iv.shadow_ms)
    shadow = iv.shadow if iv.redundant and iv.shadow else None
    return PrimaryRec(iv.forks, frozenset(copy.left), shadow, "primary", copy.since_ms)
