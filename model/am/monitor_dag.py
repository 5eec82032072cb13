"""The DAG part of the Active Manager monitor: PAM, quorum, maintenance and the DAG facts recorded for databases.

Seed 002, section "Exchange Server Active Manager": one PAM, owning quorum (AM-005), moving with it (AM-006),
moved before maintenance (AM-007), roles restated as the views make them (AM-003), no copy left mounted
outside the quorum (AM-009 with AM-I13); AM_DAG_CONFIG checked against the DAG events it restates. `DagChecks`
is mixed into `replay.Replay`, which owns the folded world, the violation list and the tally (issue 29).
`DagFacts`: the DAG facts a database's group folds from its context, derived once per trace (issue 32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`monitor_dag.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.am import rules as R
from model.am import step
from model.am.faults import DAG_FACTS, check_attrs, check_present, strings
from model.am.replay_state import ReplayState
from model.am.rules import minority_mounted
from model.am.state import World, empty_world
from spec.catalogue import cite
from traces.event import Event
from traces.verdict import Rule, Tally

cite("AM-003", "AM-005", "AM-006", "AM-007", "AM-009", "AM-I13")


class DagChecks(ReplayState):
    """The checks of DAG_VIEW, PAM_ACQUIRE/RELEASE, MAINTENANCE, SERVER_HEALTH and AM_DAG_CONFIG."""

    __slots__ = ()

    w: World
    tally: Tally
    health_changed: list[tuple[str, str]]

    @cython.locals(self=ReplayState, e=Event)
    def v(self, rule: Rule, e: Event, why: str, *others: Event, entity: str | None = None, **data: Any) -> None: ...

    @cython.locals(self=ReplayState, e=Event)
    def check_pam(self, e: Event, when: str, at_end: bool = False) -> None:
        """AM-005/AM-006 at a view's end (the next view, or the end of the trace): every PAM claim judged for
        quorum, and a view with a quorum judged for having a PAM in it (the eventually rule, under the
        fairness its statement gives). Without any view there is nothing to judge them against."""
        tally = self.tally
        if not self.w.dag:
            if at_end:
                why = "no DAG_VIEW in the trace: the quorum is not known"
                tally.skip(R.PAM_MOVES_WITH_QUORUM, why)
                tally.skip(R.PAM_OWNS_QUORUM, why)
            return
        q = self.w.quorum() or frozenset()
        if self.w.claims:
            tally.judge(R.PAM_OWNS_QUORUM, len(self.w.claims))
        for c in sorted(self.w.claims - q):
            self.v(
                R.PAM_OWNS_QUORUM,
                e,
                f"{c} still acts as PAM {when} though it is not in the quorum ({', '.join(sorted(q)) or 'none'})",
                observed=c,
                quorum=sorted(q),
            )
        if q:
            tally.judge(R.PAM_MOVES_WITH_QUORUM)
        if q and not self.w.claims & q:
            why = f"the quorum ({', '.join(sorted(q))}) has no PAM {when}"
            self.v(R.PAM_MOVES_WITH_QUORUM, e, why, observed=sorted(self.w.claims), quorum=sorted(q))

    @cython.locals(self=ReplayState, e=Event)
    def check_minority(self, db: str, e: Event, when: str) -> None:
        if self.w.dbs[db].dag is not None:
            self.tally.judge(R.MINORITY_MOUNT)  # a DAG database judged for copies left mounted outside the quorum
        for s in minority_mounted(self.w, db):
            self.v(
                R.MINORITY_MOUNT,
                e,
                f"{db} is still mounted on {s} {when}, though {s} is outside the quorum "
                f"({', '.join(sorted(self.w.quorum() or ())) or 'none'}) and must have dismounted (AM-I13)",
                entity=db,
                observed=s,
                quorum=sorted(self.w.quorum() or ()),
            )

    @cython.locals(self=ReplayState, e=Event)
    def check_dag_record(self, e: Event) -> None:
        """AM_DAG_CONFIG restates the DAG's state: the view and claims as the DAG events folded so far make them,
        the health entries exactly those SERVER_HEALTH changed since the previous AM_DAG_CONFIG."""
        w, a = self.w, e.attrs
        check_present(e, DAG_FACTS)
        self.tally.judge(R.DAG_RECORD)
        members, up, groups = w.view_key()
        claims = sorted(w.claims)
        health = sorted(step.health_entries(w, self.health_changed))
        self.health_changed = []
        if (
            (a.get("members") or []) == members
            and (a.get("up") or []) == up
            and (a.get("groups") or []) == groups
            and (a.get("claims") or []) == claims
            and (a.get("health") or []) == health
        ):
            return  # recorded exactly as derived, already in normal form (the generator's, and the common case)
        for key in ("up", "groups", "claims", "health"):
            strings(repr(key), a.get(key) or [])
        want = {"members": members, "up": up, "groups": groups, "claims": claims, "health": health}
        got = {
            "members": list(a.get("members") or []),
            "up": sorted(a.get("up") or []),
            "groups": sorted(a.get("groups") or []),
            "claims": sorted(a.get("claims") or []),
            "health": sorted(a.get("health") or []),
        }
        wrong = [k for k in want if got[k] != want[k]]
        if wrong:
            self.v(
                R.DAG_RECORD,
                e,
                "AM_DAG_CONFIG records "
                + "; ".join(f"{k} {got[k]} where the DAG events make it {want[k]}" for k in wrong),
                observed={k: got[k] for k in wrong},
                expected={k: want[k] for k in wrong},
            )

    @cython.locals(self=ReplayState, e=Event)
    def on_am_dag_config(self, e: Event, a: dict[str, Any]) -> None:
        """A database's group: a new view in the DAG facts is 'the next cluster view' for the minority check."""
        if self.w.dag and view_changes(self.w, a):
            self.new_view(e)

    @cython.locals(self=ReplayState, e=Event)
    def new_view(self, e: Event) -> None:
        """A database's group: the DAG facts record a new view (`on_am_dag_config`, `DagFacts.changes`)."""
        for db in sorted(self.w.dbs):
            self.check_minority(db, e, "when the next cluster view arrives")

    @cython.locals(self=ReplayState, e=Event)
    def on_dag_view(self, e: Event, a: dict[str, Any]) -> None:
        self.check_pam(e, "when the next cluster view arrives")
        if view_changes(self.w, a):
            for db in sorted(self.w.dbs):
                self.check_minority(db, e, "when the next cluster view arrives")

    @cython.locals(self=ReplayState, e=Event)
    def on_server_health(self, e: Event, a: dict[str, Any]) -> None:
        self.health_changed.append((a["server"], a["component"]))

    @cython.locals(self=ReplayState, e=Event)
    def on_pam_acquire(self, e: Event, a: dict[str, Any]) -> None:
        s, tally = a["server"], self.tally
        q = self.w.quorum() or frozenset()
        tally.judge(R.SINGLE_PAM)
        if self.w.claims - {s}:
            others = sorted(self.w.claims - {s})
            self.v(R.SINGLE_PAM, e, f"{s} becomes PAM while {', '.join(others)} still is", observed=[s, *others])
        tally.judge(R.PAM_OWNS_QUORUM)
        if s not in q:
            why = f"{s} becomes PAM without being in the quorum ({', '.join(sorted(q)) or 'none'})"
            self.v(R.PAM_OWNS_QUORUM, e, why, observed=s, quorum=sorted(q))
        tally.judge(R.PAM_TRANSITION)
        why = step.pam_fault(self.w, e.kind, s, None)
        if why:
            self.v(R.PAM_TRANSITION, e, why)
        if "quorum" in a:
            tally.judge(R.ROLE_RECORD)
            if sorted(a["quorum"]) != sorted(q):
                self.v(
                    R.ROLE_RECORD,
                    e,
                    f"PAM_ACQUIRE records quorum {sorted(a['quorum'])} but the recorded view makes it {sorted(q)}",
                    observed=sorted(a["quorum"]),
                    expected=sorted(q),
                )

    @cython.locals(self=ReplayState, e=Event)
    def on_pam_release(self, e: Event, a: dict[str, Any]) -> None:
        self.tally.judge(R.PAM_TRANSITION)
        why = step.pam_fault(self.w, e.kind, a["server"], a.get("reason"))
        if why:
            self.v(R.PAM_TRANSITION, e, why)

    @cython.locals(self=ReplayState, e=Event)
    def on_maintenance(self, e: Event, a: dict[str, Any]) -> None:
        self.tally.judge(R.PAM_BEFORE_MAINTENANCE)
        if a["server"] in self.w.claims:
            self.v(
                R.PAM_BEFORE_MAINTENANCE,
                e,
                f"{a['server']} is taken offline for maintenance while it "
                "is still the PAM; the PAM must be moved first",
            )


def view_changes(w: World, a: dict[str, Any]) -> bool:
    """Does the view DAG_VIEW or AM_DAG_CONFIG records (`a`) differ from the world's?"""
    members, up, groups = a["members"], a["up"], a["groups"]
    if (members, up, groups) == w.view_source:
        return False  # recorded again from equal lists: the same view (the common case)
    key = w.view_key()
    if members == key[0] and up == key[1] and groups == key[2]:
        return False  # recorded in normal form and unchanged: no sorting
    strings("'up', 'groups'", up, groups)
    return (list(members), sorted(up), sorted(groups)) != key


class DagFacts:
    """The DAG facts a database's group folds from the AM_DAG_CONFIG events of its context (`monitor.AmFold`
    while `fold_dag` is false), derived once per trace and shared by its databases' folds (issue 32: each
    fold replayed every AM_DAG_CONFIG, so the DAG facts were derived once per database).

    A node holds the facts after one AM_DAG_CONFIG (`world`: only its DAG fields are set; the root: before
    any) and whether that event records a new view (`changes`, which the fold's minority check reads before
    it takes the facts). `after(e)` is the next node, derived on first use by the functions a fold applies
    (`faults.check_attrs`, `view_changes`, `step.dag_config`) and kept for the other folds of the trace, which
    take the same context events in the same order; a different event at that place is derived again, not
    kept. An event those functions find faulty raises, and no node is made: the fold applies it to its own
    world, which faults at the same point. Nodes are read only once made; `put` copies the facts into a
    fold's world (the health mapping as a new dict: a DAG-state event fed later changes it in place)."""

    __slots__ = ("changes", "event", "next", "world")

    def __init__(self, world: World, event: Event | None = None, changes: bool = False) -> None:
        self.world, self.event, self.changes = world, event, changes
        self.next: DagFacts | None = None

    @staticmethod
    def root() -> DagFacts:
        return DagFacts(empty_world())

    @cython.locals(e=Event)
    def after(self, e: Event) -> DagFacts:
        nxt = self.next
        if nxt is not None:
            was = nxt.event
            if was is e or (was is not None and was.seq == e.seq and was.entity == e.entity and was.attrs == e.attrs):
                return nxt
        check_attrs(e)
        a, old = e.attrs, self.world
        changes = bool(old.dag) and view_changes(old, a)
        w = World(old.dag, old.members, old.up, old.groups, old.claims, health=old.health)  # a copy of the dict
        w.view_source, w.cached_quorum, w.cached_view = old.view_source, old.cached_quorum, old.cached_view
        step.dag_config(w, e.entity, a)
        w.quorum()
        w.view_key()
        node = DagFacts(w, e, changes)
        if nxt is None:
            self.next = node
        return node

    def put(self, w: World) -> None:
        """The facts into a fold's world, as `step.dag_config` would have left it."""
        f = self.world
        w.dag, w.members, w.up, w.groups, w.claims = f.dag, f.members, f.up, f.groups, f.claims
        w.view_source, w.cached_quorum, w.cached_view = f.view_source, f.cached_quorum, f.cached_view
        w.health = dict(f.health)
