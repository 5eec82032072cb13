"""The Active Manager monitor's replay: the world folded from the events so far, and the checks before each.

Seed 002, section "Exchange Server Active Manager" (PAM and quorum AM-005..AM-007, roles AM-003, the
active copy AM-008/AM-009/AM-016/AM-019, SAM duties AM-012/AM-013, maintenance AM-007) and the mount
request of "Best Copy Selection" (AM-022, AM-025, AM-032); the BCSS run checks are mixed in from
`monitor_bcss.BcssChecks`. Each event is judged against the world before it and then applied with
`step.apply` in place (issue 19): the world is mutable, the quorum cached per view (`World.quorum`), and
the handler of each kind found in one table (`Replay.TABLE`). `monitor.AmFold` drives a replay for one
group; `feed` here is the whole-list form kept for scripted scenarios and `explain`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`replay.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.am import events as ev
from model.am import rules as R
from model.am import step
from model.am.bcss import Options, responder_ok
from model.am.faults import check_attrs
from model.am.monitor_bcss import FAILURE, BcssChecks, Run
from model.am.monitor_dag import DagChecks
from model.am.replay_state import ReplayState
from model.am.state import DbState, Trigger, empty_world
from traces.event import Event
from traces.verdict import Rule, Tally, Violation, input_fault

Handler = Callable[[Any, Event, dict[str, Any]], None]


class Replay(DagChecks, BcssChecks):
    """The world folded from the events so far (`step.apply`), and the checks applied before each event.

    `fold_dag`: the DAG events are part of the stream (a whole trace, or the DAG's own group): they are
    folded and AM_DAG_CONFIG is only checked against them. Otherwise (a database's group) the DAG-level
    facts come from AM_DAG_CONFIG. None: not decided yet (`monitor.AmFold` decides it on the first
    AM_DAG_CONFIG, before stepping it).

    State kept for the whole run: the world (DAG facts, dials, health, each database's copies), the open
    BCSS run per database, its last ended run until the next run starts (the remount check reads it),
    the pending trigger and unasked failure report per database, the SERVER_HEALTH changes since the last
    AM_DAG_CONFIG, the violations and notes."""

    __slots__ = ()

    TABLE: ClassVar[dict[str, tuple[Handler | None, Callable[..., None] | None]]] = {}  # kind -> (check, step)

    @cython.locals(self=ReplayState)
    def __init__(self, opts: Options, thresholds_recorded: bool = True, fold_dag: bool | None = True) -> None:
        self.opts = opts
        self.thresholds_recorded = thresholds_recorded
        self.fold_dag = fold_dag
        self.w = empty_world(opts)
        self.runs: dict[str, Run] = {}
        self.last_run: dict[str, Run] = {}
        self.pending: dict[str, Trigger] = {}  # the trigger the last FAILURE/SWITCHOVER implies
        self.unasked: dict[str, Event] = {}  # a SAM's failure report not yet passed to the PAM
        self.out: list[Violation] = []
        self.notes: list[str] = []
        self.health_changed: list[tuple[str, str]] = []  # SERVER_HEALTH since the last AM_DAG_CONFIG
        self.tally = Tally()  # what each rule judged (issue 29)

    @cython.locals(self=ReplayState, e=Event)
    def v(self, rule: Rule, e: Event, why: str, *others: Event, entity: str | None = None, **data: Any) -> None:
        """A violation of `rule` judged at `e` (the events involved: `others`, then `e`), with the values compared."""
        self.out.append(rule.violated((*others, e), why, at=e, entity=entity, **data))

    @cython.locals(self=ReplayState)
    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    @cython.locals(self=ReplayState, e=Event)
    def step(self, e: Event) -> None:
        """Judge one event against the state so far, then fold it in (in place)."""
        kind = e.kind
        if kind == ev.AM_DAG_CONFIG and self.fold_dag:
            self.check_dag_record(e)
            return
        check_attrs(e)
        check, transition = self.TABLE.get(kind, _NOTHING)
        a = e.attrs
        if check is not None:
            check(self, e, a)
        if transition is not None:
            transition(self.w, e.entity, a)

    @cython.locals(self=ReplayState)
    def feed(self, events: Iterable[Event]) -> list[Violation]:
        """Every `am` event of a list, then the end-of-trace checks (the scripted scenarios' form)."""
        last: Event | None = None
        for e in events:
            if e.mechanism != "am":
                continue
            last = e
            self.step(e)
        if last is not None:
            self.end(last)
        return self.out

    @cython.locals(self=ReplayState, last=Event)
    def end(self, last: Event) -> None:
        """The checks at the end of the trace, against its last event; a run still open reports what its
        record restated wrongly (no behaviour rule fired to carry it)."""
        for db in sorted(self.runs):
            self.flush_record(self.runs[db])
        if self.fold_dag:
            self.check_pam(last, "at the end of the trace", at_end=True)
        for db in sorted(self.w.dbs):
            self.check_minority(db, last, "at the end of the trace")
        if self.unasked:  # issue 30: no time bound in seed 002, so the end shows nothing overdue: not judged
            why = "the trace ends before the SAM's failure report reached the PAM or BCSS ran"
            self.tally.skip(R.SAM_ASKS_PAM, why, len(self.unasked))

    # --- database events ----------------------------------------------------------------------------
    @cython.locals(self=ReplayState)
    def db(self, name: str) -> DbState:
        return self.w.dbs[name]

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_copy_state(self, e: Event, a: dict[str, Any]) -> None:
        d, s, tally = self.w.dbs[e.entity], a["server"], self.tally
        tally.judge(R.COPY_STATUS_TRANSITION)
        why = step.status_fault(self.w, d, s, a["status"])
        if why:
            self.v(R.COPY_STATUS_TRANSITION, e, why, observed=a["status"])
        old = d.copies.get(s)
        for k in _POLICY:
            if k in a:
                tally.judge(R.COPY_CONFIG_RECORD)
                configured = bool(getattr(old, k)) if old is not None else False
                if bool(a[k]) != configured:
                    self.v(
                        R.COPY_CONFIG_RECORD,
                        e,
                        f"the copy of {e.entity} on {s} reports {k}={a[k]} but the "
                        f"recorded configuration (AM_CONFIG) makes it {configured}",
                        attribute=k,
                        observed=a[k],
                        expected=configured,
                    )

    # --- roles, failures and triggers (AM-003, AM-012, AM-013, AM-021) --------------------------------
    @cython.locals(self=ReplayState)
    def _role(self, d: DbState, server: str) -> str:
        return "Standalone" if d.dag is None else ("PAM" if server == self.w.pam else "SAM")

    @cython.locals(self=ReplayState)
    def _is_pam(self, server: str | None) -> bool:
        return server is not None and server == self.w.pam and self.w.claims == {server}

    @cython.locals(self=ReplayState, e=Event)
    def on_failure(self, e: Event, a: dict[str, Any]) -> None:
        responder = a["what"] == "responder"
        if responder and not a["component"]:  # fault 2 of `faults`: the trigger is read as a structure
            raise input_fault("a responder FAILURE names no component (the responder that triggered it)", e)
        self.pending[e.entity] = Trigger("responder", a["component"]) if responder else FAILURE
        role = self._role(self.db(e.entity), a["server"])
        self.tally.judge(R.ROLE_RECORD)
        if a.get("role") != role:
            self.v(
                R.ROLE_RECORD,
                e,
                f"the failure on {a['server']} is recorded as detected by a {a.get('role')} "
                f"but the recorded PAM changes make {a['server']} {role}",
                observed=a.get("role"),
                expected=role,
            )
        if role == "SAM":
            self.unasked[e.entity] = e

    @cython.locals(self=ReplayState, e=Event)
    def on_failover_request(self, e: Event, a: dict[str, Any]) -> None:
        self.tally.judge(R.ROLE_RECORD)
        if a["pam"] != self.w.pam:
            self.v(
                R.ROLE_RECORD,
                e,
                f"{a['server']} addresses its failover request to {a['pam']} but the PAM is {self.w.pam or 'nobody'}",
                observed=a["pam"],
                expected=self.w.pam,
            )
        if self._is_pam(a["pam"]) and self.unasked.pop(e.entity, None) is not None:
            self.tally.judge(R.SAM_ASKS_PAM)  # a SAM's failure report that reached the PAM: held

    @cython.locals(self=ReplayState, e=Event)
    def on_switchover(self, e: Event, a: dict[str, Any]) -> None:
        self.pending[e.entity] = Trigger("switchover", lossless=bool(a["lossless"]))

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_active_move(self, e: Event, a: dict[str, Any]) -> None:
        d, tally = self.db(e.entity), self.tally
        if d.dag is not None:
            tally.judge(R.ONLY_PAM_ACTIVATES)
            if not self._is_pam(a["by"]):
                self.v(
                    R.ONLY_PAM_ACTIVATES,
                    e,
                    f"{a['by']} moves the active copy of {e.entity} to {a['dst']} but the PAM is "
                    f"{self.w.pam or 'nobody'}",
                    observed=a["by"],
                    expected=self.w.pam,
                )
        tally.judge(R.ACTIVE_RECORD)
        if a.get("src") != d.active:
            self.v(
                R.ACTIVE_RECORD,
                e,
                f"the active designation of {e.entity} moves from {a.get('src')} but it is on {d.active}",
                observed=a.get("src"),
                expected=d.active,
            )

    # --- mount state (step.MOUNT_TABLE) -------------------------------------------------------------
    @cython.locals(self=ReplayState, e=Event)
    def _mount_table(self, e: Event, s: str) -> None:
        self.tally.judge(R.MOUNT_TRANSITION)
        why = step.mount_fault(self.db(e.entity), e.kind, s)
        if why:
            self.v(R.MOUNT_TRANSITION, e, why)

    @cython.locals(self=ReplayState, e=Event)
    def _outside_quorum(self, e: Event, s: str, what: str) -> None:
        if self.db(e.entity).dag is None:
            return
        self.tally.judge(R.MINORITY_MOUNT)
        if s not in (self.w.quorum() or frozenset()):
            self.v(
                R.MINORITY_MOUNT,
                e,
                f"{what} {e.entity} on {s}, which is outside the quorum "
                f"({', '.join(sorted(self.w.quorum() or ())) or 'none'})",
                observed=s,
                quorum=sorted(self.w.quorum() or ()),
            )

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_mount_start(self, e: Event, a: dict[str, Any]) -> None:
        s, d, run, tally = a["server"], self.db(e.entity), self.runs.get(e.entity), self.tally
        self._mount_table(e, s)
        tally.judge(R.MOUNT_NOT_ACTIVE)
        if s != d.active:
            self.v(
                R.MOUNT_NOT_ACTIVE,
                e,
                f"a mount of {e.entity} is requested on {s} but the active designation is on {d.active}",
                observed=s,
                expected=d.active,
            )
        if d.dag is None:
            return
        self._outside_quorum(e, s, "a mount is requested for")
        tally.judge(R.ONLY_PAM_ACTIVATES)
        if not self._is_pam(a["by"]):
            self.v(
                R.ONLY_PAM_ACTIVATES,
                e,
                f"{a['by']} asks the store to mount {e.entity} on {s} but the PAM is {self.w.pam or 'nobody'}",
                observed=a["by"],
                expected=self.w.pam,
            )
        if run is not None:
            self._check_mount_in_run(run, e, s)
        else:  # outside a run: only the first mount, or the source's remount after a run that found nothing
            last = self.last_run.pop(e.entity, None)
            remount = (
                last is not None
                and last.outcome != "mounted"
                and last.trigger.kind != "failure"
                and s == last.snap.source
            )
            tally.judge(R.MOUNT_OUTSIDE_BCSS)
            if not remount and (d.last_mounted is not None or a.get("remount")):
                self.v(
                    R.MOUNT_OUTSIDE_BCSS,
                    e,
                    f"{e.entity} is mounted on {s} outside any BCSS run, and not as "
                    "the source's remount after a switchover or responder run that mounted nothing",
                )

    @cython.locals(self=ReplayState, e=Event)
    def on_mount_fail(self, e: Event, a: dict[str, Any]) -> None:
        self._mount_table(e, a["server"])
        self.mount_failed(e, a["server"])

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_mounted(self, e: Event, a: dict[str, Any]) -> None:
        s, d = a["server"], self.db(e.entity)
        self._mount_table(e, s)
        others = sorted(d.on - {s})
        self.tally.judge(R.ONE_ACTIVE_COPY)
        if others:
            self.v(R.ONE_ACTIVE_COPY, e, f"{e.entity} is mounted on {s} while still mounted on {', '.join(others)}")
        self._outside_quorum(e, s, "the store mounts")
        run = self.runs.get(e.entity)
        if run is not None and run.trigger.kind == "responder":
            comp = run.trigger.component or ""
            src, tgt = run.snap.health_of(run.snap.source), run.snap.health_of(s)
            self.tally.judge(R.RESPONDER_TARGET)
            if not responder_ok(tgt, src, comp, self.opts):
                self.lead(
                    run,
                    R.RESPONDER_TARGET,
                    e,
                    f"a {comp} responder failover lands on {s}, where {comp} is "
                    f"{tgt.state(comp)}, not better than {src.state(comp)} on {run.snap.source}",
                    run.start,
                    component=comp,
                    observed=tgt.state(comp),
                    source_state=src.state(comp),
                    parameter="AM-P11",
                )

    @cython.locals(self=ReplayState, e=Event)
    def on_dismounted(self, e: Event, a: dict[str, Any]) -> None:
        s, reason = a["server"], a.get("reason")
        self._mount_table(e, s)
        q = self.w.quorum() or frozenset()
        if reason in ("server_down", "lost_quorum"):
            self.tally.judge(R.ACTIVE_RECORD)  # the reason a dismount records, judged against the view
        if reason == "server_down" and s in self.w.up:
            why = f"{e.entity} is dismounted on {s} as 'server down' but {s} is up"
            self.v(R.ACTIVE_RECORD, e, why, observed=reason, up=sorted(self.w.up))
        elif reason == "lost_quorum" and s in q:
            self.v(
                R.ACTIVE_RECORD,
                e,
                f"{e.entity} is dismounted on {s} for lost quorum but {s} is in the quorum ({', '.join(sorted(q))})",
                observed=reason,
                quorum=sorted(q),
            )

    @cython.locals(self=ReplayState, e=Event)
    def on_location_query(self, e: Event, a: dict[str, Any]) -> None:
        want = self.db(e.entity).last_mounted
        self.tally.judge(R.LOCATION_ANSWER)
        if a["answer"] != want:
            self.v(
                R.LOCATION_ANSWER,
                e,
                f"{a['server']} says the active copy of {e.entity} is on "
                f"{a['answer']}, but the copy mounted last is on {want}",
                observed=a["answer"],
                expected=want,
            )


_NOTHING: tuple[None, None] = (None, None)
_POLICY = ("blocked", "suspended")


def _table(cls: type[Replay]) -> dict[str, tuple[Handler | None, Callable[..., None] | None]]:
    """Each event kind's check (`on_<kind>`) and transition (`step.STEPS`), looked up once, not per event."""
    kinds = {name[3:].upper() for name in dir(cls) if name.startswith("on_")} | set(step.STEPS)
    return {kind: (getattr(cls, "on_" + kind.lower(), None), step.STEPS.get(kind)) for kind in sorted(kinds)}


Replay.TABLE = _table(Replay)
