"""External inputs to the Active Manager model as pure transitions: views, failures, administration.

Seed 002, section "Exchange Server Active Manager": crashes and partitions change the cluster view and
move the PAM with quorum (AM-005, AM-006, interpretation AM-I13); SAMs detect local database and store
failures and ask the PAM (AM-010, AM-012, AM-013); the PAM is moved before maintenance (AM-007);
location queries are answered from the last mounted copy (AM-011, AM-019); standalone servers mount
their own databases and never fail over (AM-002). Section "Best Copy Selection": targetless switchovers
and responder failovers (AM-021, AM-032).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from model.am import events as ev
from model.am.decisions import Env, Tx, _mount, dismount, failover_all, run_bcss
from model.am.state import DISMOUNTED, FAILED, HEALTHY, MOUNTED, SERVICE_DOWN, Trigger, World
from spec.catalogue import require

require(
    "AM-002",
    "AM-005",
    "AM-006",
    "AM-007",
    "AM-010",
    "AM-011",
    "AM-012",
    "AM-013",
    "AM-019",
    "AM-021",
    "AM-032",
    "AM-037",
)

Result = tuple[World, list]


def _emit_view(tx: Tx, dag: str, members: Sequence[str], up: frozenset[str], groups: Sequence[frozenset[str]]) -> None:
    tx.emit(dag, ev.DAG_VIEW, members=list(members), up=sorted(up), groups=[ev.encode_group(g) for g in groups])


def _elect(tx: Tx, env: Env) -> None:
    """AM-005/AM-006: release PAM claims outside quorum, then give PAM to a quorum member if none."""
    w = tx.w
    q = w.quorum() or frozenset()
    for c in sorted(w.claims - q):
        if "second_pam" in tx.flaws and c in w.up:
            continue  # mutant: a PAM cut off from quorum keeps acting
        tx.emit(w.dag, ev.PAM_RELEASE, server=c, reason="lost_quorum")
    if q and not (tx.w.claims & q):
        new = env.choose(sorted(q))
        tx.emit(w.dag, ev.PAM_ACQUIRE, server=new, quorum=sorted(q))


def _server_states(tx: Tx, env: Env) -> None:
    """Copies on down servers are ServiceDown; minority servers dismount (AM-I13); back up: Healthy."""
    w = tx.w
    q = w.quorum() or frozenset()
    for db in sorted(w.dbs):
        d = tx.w.dbs[db]
        for s, c in sorted(d.copies.items()):
            if s not in w.up:
                if d.active == s:
                    dismount(tx, db, "server_down", SERVICE_DOWN)
                tx.set_copy(db, s, status=SERVICE_DOWN)
            elif d.dag is not None and s not in q and d.active == s and d.mounted:
                keeps = ("second_pam" in tx.flaws and s in w.claims) or "minority_keeps_mounted" in tx.flaws
                if not keeps:  # mutants: a cut-off server keeps serving its databases
                    dismount(tx, db, "lost_quorum", DISMOUNTED)
            elif c.status == SERVICE_DOWN:
                tx.set_copy(db, s, status=DISMOUNTED if d.active == s else HEALTHY)
        d = tx.w.dbs[db]
        if d.dag is None and d.active in w.up and not d.mounted and d.copies[d.active].status != FAILED:
            tx.emit(db, ev.MOUNT_START, server=d.active, by=d.active)
            _mount(tx, db, d.active)  # AM-002: the standalone Active Manager mounts its own database


def change_view(
    w: World, up: frozenset[str], groups: Sequence[frozenset[str]], env: Env, flaws: frozenset[str] = frozenset()
) -> Result:
    """Crash, restart, partition or heal: record the view, move the PAM with quorum, fail over."""
    tx = Tx(w, flaws)
    _emit_view(tx, w.dag, w.members, frozenset(up), tuple(groups))
    _elect(tx, env)
    _server_states(tx, env)
    failover_all(tx, env)
    return tx.world()


def _move_off(tx: Tx, db: str, trigger: Trigger, env: Env, by: str, reason: str) -> None:
    """Dismount the active copy, run BCSS; if nothing mounts, remount the source (op 309)."""
    source = tx.w.dbs[db].active
    dismount(tx, db, reason, HEALTHY)
    run_bcss(tx, db, trigger, env, by)
    if not tx.w.dbs[db].mounted and source is not None:
        if tx.w.dbs[db].active != source:
            tx.emit(db, ev.ACTIVE_MOVE, src=tx.w.dbs[db].active, dst=source, by=by)
        tx.emit(db, ev.MOUNT_START, server=source, by=by, remount=True)
        _mount(tx, db, source)


def fail_database(w: World, db: str, env: Env, flaws: frozenset[str] = frozenset(), what: str = "database") -> Result:
    """The local AM (SAM, or the PAM in its SAM duties) detects a failure of a mounted database."""
    tx = Tx(w, flaws)
    _fail_one(tx, db, env, what)
    return tx.world()


def _fail_one(tx: Tx, db: str, env: Env, what: str) -> None:
    d = tx.w.dbs[db]
    server = d.active
    if server is None or not d.mounted:
        return
    pam = tx.w.pam
    role = "Standalone" if d.dag is None else ("PAM" if server == pam else "SAM")
    tx.emit(db, ev.FAILURE, server=server, what=what, component=None, detector=server, role=role)
    dismount(tx, db, what, FAILED)
    if d.dag is None:
        return  # AM-002, AM-013: nothing to fail over to
    if role == "SAM" and "sam_activates" in tx.flaws:
        run_bcss(tx, db, Trigger("failure"), env, server)  # mutant: the SAM picks and activates
        return
    if pam is None:
        return
    if role == "SAM":
        tx.emit(db, ev.FAILOVER_REQUEST, server=server, pam=pam)
    run_bcss(tx, db, Trigger("failure"), env, pam)


def fail_store(w: World, server: str, env: Env, flaws: frozenset[str] = frozenset()) -> Result:
    """The Information Store on `server` fails: every copy there fails, mounted ones fail over."""
    tx = Tx(w, flaws)
    if server not in w.up:
        return tx.world()  # a server that is down reports ServiceDown for its copies
    for db in sorted(w.dbs):
        if server in tx.w.dbs[db].copies:
            if tx.w.dbs[db].active == server and tx.w.dbs[db].mounted:
                _fail_one(tx, db, env, "store")
            tx.set_copy(db, server, status=FAILED)
    return tx.world()


def responder_failover(w: World, server: str, component: str, env: Env, flaws: frozenset[str] = frozenset()) -> Result:
    """A monitoring component's Failover responder on `server` moves its databases away (AM-032)."""
    tx = Tx(w, flaws)
    _health(tx, server, component, "Unhealthy")
    pam = tx.w.pam
    for db in sorted(w.dbs):
        d = tx.w.dbs[db]
        if d.dag is None or d.active != server or not d.mounted or pam is None:
            continue
        tx.emit(
            db,
            ev.FAILURE,
            server=server,
            what="responder",
            component=component,
            detector=server,
            role="PAM" if server == pam else "SAM",
        )
        if server != pam:
            tx.emit(db, ev.FAILOVER_REQUEST, server=server, pam=pam)
        _move_off(tx, db, Trigger("responder", component), env, pam, "responder")
    return tx.world()


def switchover(w: World, db: str, lossless: bool, env: Env, flaws: frozenset[str] = frozenset()) -> Result:
    """An administrator's targetless switchover (AM-021, AM-037), run by the PAM."""
    tx = Tx(w, flaws)
    pam = w.pam
    if pam is None or not w.dbs[db].mounted or w.dbs[db].dag is None:
        return tx.world()
    tx.emit(db, ev.SWITCHOVER, lossless=lossless)
    _move_off(tx, db, Trigger("switchover", lossless=lossless), env, pam, "switchover")
    return tx.world()


def move_pam(w: World, to: str, flaws: frozenset[str] = frozenset()) -> Result:
    """An administrator moves the PAM (with the quorum resource) to another member of the quorum."""
    tx = Tx(w, flaws)
    q = w.quorum() or frozenset()
    pam = w.pam
    if to not in q or to == pam:
        return tx.world()
    if pam is not None:
        tx.emit(w.dag, ev.PAM_RELEASE, server=pam, reason="move")
    tx.emit(w.dag, ev.PAM_ACQUIRE, server=to, quorum=sorted(q))
    return tx.world()


def maintenance(w: World, server: str, env: Env, flaws: frozenset[str] = frozenset()) -> Result:
    """Take a server offline: when it is the PAM, first move the PAM elsewhere (AM-007)."""
    outs: list = []
    if server == w.pam and "no_pam_move" not in flaws:
        others = sorted((w.quorum() or frozenset()) - {server})
        if others:
            w, outs = move_pam(w, env.choose(others), flaws)
    tx = Tx(w, flaws)
    tx.emit(w.dag, ev.MAINTENANCE, server=server)
    w2, outs2 = change_view(tx.w, w.up - {server}, w.groups, env, flaws)
    return w2, outs + tx.outs + outs2


def _health(tx: Tx, server: str, component: str, state: str) -> None:
    h = tx.w.health[server].set(component, state)
    tx.emit(
        tx.w.dag, ev.SERVER_HEALTH, server=server, component=component, priority=h.components[component][0], state=state
    )


def set_health(w: World, server: str, component: str, state: str) -> Result:
    tx = Tx(w)
    _health(tx, server, component, state)
    return tx.world()


def set_dial(w: World, server: str, dial: str) -> Result:
    """Set-MailboxServer -AutoDatabaseMountDial: configuration, recorded as AM_CONFIG (AM-P01)."""
    tx = Tx(w)
    tx.emit(w.dag, ev.AM_CONFIG, server=server, dial=dial)
    return tx.world()


def set_copy(w: World, db: str, server: str, env: Env, **changes: object) -> Result:
    """Change a passive copy's attributes (status, queues, content index, blocks); retry failovers."""
    tx = Tx(w)
    d = w.dbs[db]
    if d.active == server and d.mounted:
        changes.pop("status", None)  # the mounted copy's status follows mounts and dismounts
    if changes.get("status") in (MOUNTED, SERVICE_DOWN) or server not in w.up:
        changes.pop("status", None)  # step.STATUS_TABLE: these follow mounts and the view, not reports
    tx.set_copy(db, server, **changes)
    if server in w.up:
        failover_all(tx, env)
    return tx.world()


def generate_logs(w: World, db: str, n: int, lags: Mapping[str, int]) -> Result:
    """The active copy writes `n` logs; each passive copy inspects up to `lags[server]` behind."""
    tx = Tx(w)
    d = w.dbs[db]
    if not d.mounted or n <= 0:
        return tx.world()
    lgen = d.lgen + n
    tx.set_lgen(db, lgen)
    tx.set_copy(db, d.active or "", lli=lgen)  # the active copy holds every log it generated
    for s, c in sorted(d.copies.items()):
        if s != d.active and c.status in (HEALTHY,) and w.reachable(d.active or "", s):
            tx.set_copy(db, s, lli=max(c.lli, lgen - max(0, lags.get(s, 0))))
    return tx.world()


def query(w: World, db: str, server: str, flaws: frozenset[str] = frozenset()) -> Result:
    """A SAM answers where the active copy is: the copy mounted last (AM-011, AM-019)."""
    tx = Tx(w, flaws)
    d = w.dbs[db]
    answer = d.last_mounted
    if "stale_location" in flaws:  # mutant: answers from configuration (the preferred copy)
        answer = min(d.copies.values(), key=lambda c: c.preference).server
    if server in w.up:
        tx.emit(db, ev.LOCATION_QUERY, server=server, answer=answer)
    return tx.world()
