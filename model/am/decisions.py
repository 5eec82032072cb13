"""The decisions of Active Manager: what the PAM records during a BCSS run, and the transaction `Tx`.

Seed 002, section "Exchange Server Active Manager" (PAM = quorum owner AM-005/AM-006, PAM moved before
maintenance AM-007, only the PAM moves active designations AM-008/AM-014, one active copy AM-009, SAM
duties AM-010..AM-013, location answers AM-011/AM-019) and sections "Best Copy Selection" / "Best copy
selection process" (the five steps AM-021..AM-025, AM-051). Every function takes a state and inputs and
returns a new state plus the events to record; no I/O, no clock, no randomness except through `Env`.
`flaws` plants the bugs of `mutants.py`; the reference model runs with none. The state changes only
through `step.apply` on the event recorded (`Tx.emit`): these functions decide, `step.py` transitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the compiled build: the world and its databases as C structs (`decisions.pxd`, session 26)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.am import events as ev
from model.am import step
from model.am.bcss import Options, acll, dial_allows, dial_threshold, select
from model.am.state import DISMOUNTED, MOUNTED, CopyState, DbState, Snapshot, Trigger, World
from spec.catalogue import require

require(
    "AM-002",
    "AM-005",
    "AM-006",
    "AM-007",
    "AM-008",
    "AM-009",
    "AM-010",
    "AM-011",
    "AM-012",
    "AM-013",
    "AM-014",
    "AM-019",
    "AM-021",
    "AM-022",
    "AM-023",
    "AM-024",
    "AM-025",
    "AM-051",
)

Out = tuple[str, str, dict[str, Any]]  # (entity, kind, attrs)


class Env(Protocol):
    """The environment's answers to questions the rules cannot decide (drawn from the seeded rng)."""

    def choose(self, options: Sequence[str]) -> str: ...
    def mount_ok(self, db: str, server: str) -> bool: ...
    def source_last_log(self, db: str, lgen: int) -> int: ...


class Tx:
    """Accumulates a new world and the events recording each change (every state change is recorded)."""

    def __init__(self, world: World, flaws: frozenset[str] = frozenset(), opts: Options | None = None):
        self.w = world
        self.outs: list[Out] = []
        self.flaws = flaws
        self.opts = opts or world.opts or Options()
        self.dag_dirty = False
        self.health_changed: list[tuple[str, str]] = []

    def emit(self, entity: str, kind: str, **attrs: Any) -> None:
        """Record one event and apply it: the only way the generator's world changes (`step.apply`).

        After a batch of DAG-level changes, before the next other event (and at the end), the DAG's state is
        recorded as AM_DAG_CONFIG, so that each database's monitor has the facts it needs as context."""
        if kind == ev.DAG_VIEW:
            self.flush()  # each view starts a new batch of DAG facts
        if kind in ev.DAG_STATE_KINDS:
            self.dag_dirty = True
            if kind == ev.SERVER_HEALTH:
                self.health_changed.append((attrs["server"], attrs["component"]))
        elif self.dag_dirty and kind not in ev.DAG_KINDS:
            self.flush()
        if kind in ev.OP_IDS:
            attrs["op"] = ev.OP_IDS[kind]
        self.w = step.apply(self.w, entity, kind, attrs)
        self.outs.append((entity, kind, attrs))

    def flush(self) -> None:
        if self.dag_dirty:
            self.dag_dirty = False
            changed, self.health_changed = self.health_changed, []
            self.emit(self.w.dag, ev.AM_DAG_CONFIG, **step.dag_attrs(self.w, changed))

    @cython.locals(d=DbState)
    def set_copy(self, db: str, server: str, **changes: Any) -> None:
        """Change a copy: the activation policy as configuration (AM_CONFIG), then the copy's full state."""
        d = self.w.dbs[db]
        old = d.copies[server]
        c = old.with_(**changes)
        if c == old:
            return
        policy = {k: getattr(c, k) for k in ("blocked", "suspended") if getattr(c, k) != getattr(old, k)}
        if policy:
            self.emit(db, ev.AM_CONFIG, database=db, server=server, **policy)
        self.emit(db, ev.COPY_STATE, **copy_attrs(c))

    def set_lgen(self, db: str, lgen: int) -> None:
        self.emit(db, ev.LOGS, lgen=lgen)

    def world(self) -> tuple[World, list[Out]]:
        self.flush()
        return self.w, self.outs


def copy_attrs(c: CopyState) -> dict[str, Any]:
    return {
        "server": c.server,
        "status": c.status,
        "lli": c.lli,
        "rq": c.replay_queue,
        "ci": c.content_index,
        "pref": c.preference,
        "blocked": c.blocked,
        "suspended": c.suspended,
    }


@cython.locals(w=World, d=DbState)
def snapshot(w: World, db: str, pam: str | None) -> Snapshot:
    """What the PAM sees of a database: reachability is relative to the PAM's side of any partition."""
    d = w.dbs[db]
    side = w.group_of(pam) if pam is not None and pam in w.up else frozenset()  # `w.reachable(pam, _)`
    copies = tuple(
        c if c.reachable == (c.server in side) else c.reach(c.server in side)  # values: shared when unchanged
        for _, c in sorted(d.copies.items())
    )
    return Snapshot(
        db,
        d.active or "",
        d.lgen,
        copies,
        {s: w.dials[s] for s in d.copies if s in w.dials},
        {s: w.health[s] for s in d.copies if s in w.health},
    )


# ---- the BCSS run: steps 2..5 (AM-022..AM-025, AM-051) -----------------------------------------------


@cython.locals(d=DbState)
def run_bcss(tx: Tx, db: str, trigger: Trigger, env: Env, by: str) -> None:
    """The PAM (`by`) selects, then for each copy in order: ACLL, dial comparison, mount, fall through."""
    d = tx.w.dbs[db]
    source = d.active or ""
    snap = snapshot(tx.w, db, by)
    if "ignore_blocked" in tx.flaws:
        snap = snap.but(copies=tuple(c.with_(blocked=False, suspended=False) for c in snap.copies))
    used = Trigger("failure") if "ignore_responder" in tx.flaws else trigger  # mutant: no AM-032 filter
    seen = snap
    if "lossless_ignored" in tx.flaws:  # mutant: sorts as if no server were Lossless (AM-036)
        seen = snap.but(dials={s: "GoodAvailability" for s in snap.dials})
    if "preference_sort" in tx.flaws:  # mutant: always sorts by activation preference (breaks AM-035)
        seen = snap.but(dials={s: "Lossless" for s in snap.dials})
    if "lossless_switchover_ignored" in tx.flaws and used.lossless:  # mutant: sorts by copy queue (AM-037)
        used = Trigger(used.kind, used.component, False)
    sel = select(seen, used, tx.opts)
    order = sel.order[::-1] if "wrong_order" in tx.flaws else sel.order
    tx.emit(
        db,
        ev.BCSS_START,
        pam=by,
        trigger=trigger.kind,
        component=trigger.component,
        lossless=trigger.lossless,
        source=source,
        sort=sel.sort,
        order=[ev.encode_choice(c.server, c.tier, c.criteria_set) for c in order],
    )
    for choice in order:
        if _attempt(tx, db, choice.server, source, snap, env, by):
            tx.emit(db, ev.BCSS_END, outcome="mounted", server=choice.server)
            return
    tx.emit(db, ev.BCSS_END, outcome="exhausted" if order else "no_candidate", server=None)


@cython.locals(d=DbState)
def _attempt(tx: Tx, db: str, target: str, source: str, snap: Snapshot, env: Env, by: str) -> bool:
    d = tx.w.dbs[db]
    copy = d.copies[target]
    if "skip_acll" in tx.flaws:  # mutant: mounts straight away when the copy queue is within the dial
        return dial_allows(d.lgen - copy.lli, snap, target, tx.opts) and _mount_request(tx, db, target, env, by)
    tx.emit(db, ev.ACLL_START, server=target, source=source)
    src_ok = source != "" and source in tx.w.up and tx.w.reachable(target, source)
    lli = acll(copy, env.source_last_log(db, d.lgen) if src_ok else None)
    missing = max(0, d.lgen - lli)
    ok = dial_allows(missing, snap, target, tx.opts) or "no_dial" in tx.flaws
    tx.set_copy(db, target, lli=lli)
    tx.emit(
        db,
        ev.ACLL_END,
        server=target,
        lli_before=copy.lli,
        lli=lli,
        missing=missing,
        threshold=dial_threshold(snap, target, tx.opts),
        ok=ok,
        op=314 if ok else 313,
    )
    return ok and _mount_request(tx, db, target, env, by)


def _mount_request(tx: Tx, db: str, target: str, env: Env, by: str) -> bool:
    """Step 5: designate the copy active and ask the store to mount it; False when it does not mount."""
    if tx.w.dbs[db].active != target:
        tx.emit(db, ev.ACTIVE_MOVE, src=tx.w.dbs[db].active, dst=target, by=by)
    tx.emit(db, ev.MOUNT_START, server=target, by=by)
    if not env.mount_ok(db, target):
        tx.emit(db, ev.MOUNT_FAIL, server=target)
        tx.set_copy(db, target, status=DISMOUNTED)
        if "retry_mount" not in tx.flaws:
            return False
        tx.emit(db, ev.MOUNT_START, server=target, by=by)  # mutant: asks again for the copy that failed (AM-025)
        if not env.mount_ok(db, target):
            tx.emit(db, ev.MOUNT_FAIL, server=target)
            return False
    _mount(tx, db, target)
    return True


def _mount(tx: Tx, db: str, server: str) -> None:
    tx.emit(db, ev.MOUNTED, server=server)
    tx.set_copy(db, server, status=MOUNTED)


@cython.locals(d=DbState)
def dismount(tx: Tx, db: str, reason: str, status: str) -> None:
    d = tx.w.dbs[db]
    if d.active is None:
        return
    if d.active in d.on:
        tx.emit(db, ev.DISMOUNTED, server=d.active, reason=reason)
    tx.set_copy(db, d.active, status=status)


@cython.locals(w=World, d=DbState)
def needs_failover(w: World, db: str, pam: str) -> bool:
    """A DAG database with no mounted copy, or whose active copy the PAM cannot reach."""
    d = w.dbs[db]
    if d.dag is None:
        return False
    return not d.mounted or d.active is None or not w.reachable(pam, d.active)


def failover_all(tx: Tx, env: Env, trigger: Trigger | None = None) -> None:
    """The PAM reacts to server failures (AM-004, AM-006): every DAG database without a mounted copy."""
    pam = tx.w.pam
    if pam is None:
        return
    for db in sorted(tx.w.dbs):
        if not needs_failover(tx.w, db, pam):
            continue
        if tx.w.dbs[db].stuck and not select(snapshot(tx.w, db, pam), trigger, tx.opts).order:
            continue  # nothing changed that could help: do not record another empty run
        run_bcss(tx, db, trigger or Trigger(), env, pam)
