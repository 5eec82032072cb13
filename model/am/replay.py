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
from typing import Any, ClassVar

from model.am import events as ev
from model.am import step
from model.am.bcss import Options, responder_ok
from model.am.monitor_bcss import FAILURE, BcssChecks, Run
from model.am.rules import RULES, minority_mounted
from model.am.state import DbState, Trigger, empty_world
from traces.schema import Event
from traces.verdict import Violation

Handler = Callable[[Any, Event, dict[str, Any]], None]


class Replay(BcssChecks):
    """The world folded from the events so far (`step.apply`), and the checks applied before each event.

    `fold_dag`: the DAG events are part of the stream (a whole trace, or the DAG's own group): they are
    folded and AM_DAG_CONFIG is only checked against them. Otherwise (a database's group) the DAG-level
    facts come from AM_DAG_CONFIG. None: not decided yet (`monitor.AmFold` decides it on the first
    AM_DAG_CONFIG, before stepping it).

    State kept for the whole run: the world (DAG facts, dials, health, each database's copies), the open
    BCSS run per database, its last ended run until the next run starts (the remount check reads it),
    the pending trigger and unasked failure report per database, the SERVER_HEALTH changes since the last
    AM_DAG_CONFIG, the violations and notes."""

    TABLE: ClassVar[dict[str, tuple[Handler | None, Callable[..., None] | None]]] = {}  # kind -> (check, step)

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

    def v(self, rule: str, e: Event, why: str, *others: Event, entity: str | None = None) -> None:
        ids = (*(o.event_id for o in others), e.event_id)
        self.out.append(Violation(rule, RULES[rule].requirement, e.trace_id, entity or e.entity, ids, why, "am"))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def step(self, e: Event) -> None:
        """Judge one event against the state so far, then fold it in (in place)."""
        kind = e.kind
        if kind == ev.AM_DAG_CONFIG and self.fold_dag:
            self.check_dag_record(e)
            return
        check, transition = self.TABLE.get(kind, _NOTHING)
        a = e.attrs
        if check is not None:
            check(self, e, a)
        if transition is not None:
            transition(self.w, e.entity, a)

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

    def end(self, last: Event) -> None:
        """The checks at the end of the trace, against its last event; a run still open reports what its
        record restated wrongly (no behaviour rule fired to carry it)."""
        for db in sorted(self.runs):
            self.flush_record(self.runs[db])
        if self.fold_dag:
            self.check_pam(last, "at the end of the trace")
        for db in sorted(self.w.dbs):
            self.check_minority(db, last, "at the end of the trace")

    # --- DAG events ---------------------------------------------------------------------------------
    def check_pam(self, e: Event, when: str) -> None:
        if not self.w.dag:
            return
        q = self.w.quorum() or frozenset()
        for c in sorted(self.w.claims - q):
            self.v(
                "pam-owns-quorum",
                e,
                f"{c} still acts as PAM {when} though it is not in the quorum ({', '.join(sorted(q)) or 'none'})",
            )
        if q and not self.w.claims & q:
            self.v("pam-moves-with-quorum", e, f"the quorum ({', '.join(sorted(q))}) has no PAM {when}")

    def check_minority(self, db: str, e: Event, when: str) -> None:
        for s in minority_mounted(self.w, db):
            self.v(
                "minority-mount",
                e,
                f"{db} is still mounted on {s} {when}, though {s} is outside the quorum "
                f"({', '.join(sorted(self.w.quorum() or ())) or 'none'}) and must have dismounted (AM-I13)",
                entity=db,
            )

    def check_dag_record(self, e: Event) -> None:
        """AM_DAG_CONFIG restates the DAG's state: the view and claims as the DAG events folded so far make them,
        the health entries exactly those SERVER_HEALTH changed since the previous AM_DAG_CONFIG."""
        w, a = self.w, e.attrs
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
                "dag-record",
                e,
                "AM_DAG_CONFIG records "
                + "; ".join(f"{k} {got[k]} where the DAG events make it {want[k]}" for k in wrong),
            )

    def on_am_dag_config(self, e: Event, a: dict[str, Any]) -> None:
        """A database's group: a new view in the DAG facts is 'the next cluster view' for the minority check."""
        if self.w.dag and self._view_changes(a):
            for db in sorted(self.w.dbs):
                self.check_minority(db, e, "when the next cluster view arrives")

    def _view_changes(self, a: dict[str, Any]) -> bool:
        members, up, groups = a["members"], a["up"], a["groups"]
        if (members, up, groups) == self.w.view_source:
            return False  # recorded again from equal lists: the same view (the common case)
        key = self.w.view_key()
        if members == key[0] and up == key[1] and groups == key[2]:
            return False  # recorded in normal form and unchanged: no sorting
        return (list(members), sorted(up), sorted(groups)) != key

    def on_dag_view(self, e: Event, a: dict[str, Any]) -> None:
        self.check_pam(e, "when the next cluster view arrives")
        if self._view_changes(a):
            for db in sorted(self.w.dbs):
                self.check_minority(db, e, "when the next cluster view arrives")

    def on_server_health(self, e: Event, a: dict[str, Any]) -> None:
        self.health_changed.append((a["server"], a["component"]))

    def on_pam_acquire(self, e: Event, a: dict[str, Any]) -> None:
        s = a["server"]
        q = self.w.quorum() or frozenset()
        if self.w.claims - {s}:
            self.v("single-pam", e, f"{s} becomes PAM while {', '.join(sorted(self.w.claims - {s}))} still is")
        if s not in q:
            self.v(
                "pam-owns-quorum", e, f"{s} becomes PAM without being in the quorum ({', '.join(sorted(q)) or 'none'})"
            )
        why = step.pam_fault(self.w, e.kind, s, None)
        if why:
            self.v("pam-transition", e, why)
        if "quorum" in a and sorted(a["quorum"]) != sorted(q):
            self.v(
                "role-record",
                e,
                f"PAM_ACQUIRE records quorum {sorted(a['quorum'])} but the recorded view makes it {sorted(q)}",
            )

    def on_pam_release(self, e: Event, a: dict[str, Any]) -> None:
        why = step.pam_fault(self.w, e.kind, a["server"], a.get("reason"))
        if why:
            self.v("pam-transition", e, why)

    def on_maintenance(self, e: Event, a: dict[str, Any]) -> None:
        if a["server"] in self.w.claims:
            self.v(
                "pam-before-maintenance",
                e,
                f"{a['server']} is taken offline for maintenance while it "
                "is still the PAM; the PAM must be moved first",
            )

    # --- database events ----------------------------------------------------------------------------
    def db(self, name: str) -> DbState:
        return self.w.dbs[name]

    def on_copy_state(self, e: Event, a: dict[str, Any]) -> None:
        d, s = self.w.dbs[e.entity], a["server"]
        why = step.status_fault(self.w, d, s, a["status"])
        if why:
            self.v("copy-status-transition", e, why)
        old = d.copies.get(s)
        for k in _POLICY:
            if k in a:
                configured = bool(getattr(old, k)) if old is not None else False
                if bool(a[k]) != configured:
                    self.v(
                        "copy-config-record",
                        e,
                        f"the copy of {e.entity} on {s} reports {k}={a[k]} but the "
                        f"recorded configuration (AM_CONFIG) makes it {configured}",
                    )

    # --- roles, failures and triggers (AM-003, AM-012, AM-013, AM-021) --------------------------------
    def _role(self, d: DbState, server: str) -> str:
        return "Standalone" if d.dag is None else ("PAM" if server == self.w.pam else "SAM")

    def _is_pam(self, server: str | None) -> bool:
        return server is not None and server == self.w.pam and self.w.claims == {server}

    def on_failure(self, e: Event, a: dict[str, Any]) -> None:
        responder = a["what"] == "responder"
        self.pending[e.entity] = Trigger("responder", a["component"]) if responder else FAILURE
        role = self._role(self.db(e.entity), a["server"])
        if a.get("role") != role:
            self.v(
                "role-record",
                e,
                f"the failure on {a['server']} is recorded as detected by a {a.get('role')} "
                f"but the recorded PAM changes make {a['server']} {role}",
            )
        if role == "SAM":
            self.unasked[e.entity] = e

    def on_failover_request(self, e: Event, a: dict[str, Any]) -> None:
        if a["pam"] != self.w.pam:
            self.v(
                "role-record",
                e,
                f"{a['server']} addresses its failover request to {a['pam']} but the PAM is {self.w.pam or 'nobody'}",
            )
        if self._is_pam(a["pam"]):
            self.unasked.pop(e.entity, None)

    def on_switchover(self, e: Event, a: dict[str, Any]) -> None:
        self.pending[e.entity] = Trigger("switchover", lossless=bool(a["lossless"]))

    def on_active_move(self, e: Event, a: dict[str, Any]) -> None:
        d = self.db(e.entity)
        if d.dag is not None and not self._is_pam(a["by"]):
            self.v(
                "only-pam-activates",
                e,
                f"{a['by']} moves the active copy of {e.entity} to {a['dst']} but the PAM is {self.w.pam or 'nobody'}",
            )
        if a.get("src") != d.active:
            self.v(
                "active-record",
                e,
                f"the active designation of {e.entity} moves from {a.get('src')} but it is on {d.active}",
            )

    # --- mount state (step.MOUNT_TABLE) -------------------------------------------------------------
    def _mount_table(self, e: Event, s: str) -> None:
        why = step.mount_fault(self.db(e.entity), e.kind, s)
        if why:
            self.v("mount-transition", e, why)

    def _outside_quorum(self, e: Event, s: str, what: str) -> None:
        d = self.db(e.entity)
        if d.dag is not None and s not in (self.w.quorum() or frozenset()):
            self.v(
                "minority-mount",
                e,
                f"{what} {e.entity} on {s}, which is outside the quorum "
                f"({', '.join(sorted(self.w.quorum() or ())) or 'none'})",
            )

    def on_mount_start(self, e: Event, a: dict[str, Any]) -> None:
        s, d, run = a["server"], self.db(e.entity), self.runs.get(e.entity)
        self._mount_table(e, s)
        if s != d.active:
            self.v(
                "mount-not-active",
                e,
                f"a mount of {e.entity} is requested on {s} but the active designation is on {d.active}",
            )
        if d.dag is None:
            return
        self._outside_quorum(e, s, "a mount is requested for")
        if not self._is_pam(a["by"]):
            self.v(
                "only-pam-activates",
                e,
                f"{a['by']} asks the store to mount {e.entity} on {s} but the PAM is {self.w.pam or 'nobody'}",
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
            if not remount and (d.last_mounted is not None or a.get("remount")):
                self.v(
                    "mount-outside-bcss",
                    e,
                    f"{e.entity} is mounted on {s} outside any BCSS run, and not as "
                    "the source's remount after a switchover or responder run that mounted nothing",
                )

    def on_mount_fail(self, e: Event, a: dict[str, Any]) -> None:
        self._mount_table(e, a["server"])
        self.mount_failed(e, a["server"])

    def on_mounted(self, e: Event, a: dict[str, Any]) -> None:
        s, d = a["server"], self.db(e.entity)
        self._mount_table(e, s)
        others = sorted(d.on - {s})
        if others:
            self.v("one-active-copy", e, f"{e.entity} is mounted on {s} while still mounted on {', '.join(others)}")
        self._outside_quorum(e, s, "the store mounts")
        run = self.runs.get(e.entity)
        if run is not None and run.trigger.kind == "responder":
            comp = run.trigger.component or ""
            src, tgt = run.snap.health_of(run.snap.source), run.snap.health_of(s)
            if not responder_ok(tgt, src, comp, self.opts):
                self.lead(
                    run,
                    "responder-target",
                    e,
                    f"a {comp} responder failover lands on {s}, where {comp} is "
                    f"{tgt.state(comp)}, not better than {src.state(comp)} on {run.snap.source}",
                    run.start,
                )

    def on_dismounted(self, e: Event, a: dict[str, Any]) -> None:
        s, reason = a["server"], a.get("reason")
        self._mount_table(e, s)
        q = self.w.quorum() or frozenset()
        if reason == "server_down" and s in self.w.up:
            self.v("active-record", e, f"{e.entity} is dismounted on {s} as 'server down' but {s} is up")
        elif reason == "lost_quorum" and s in q:
            self.v(
                "active-record",
                e,
                f"{e.entity} is dismounted on {s} for lost quorum but {s} is in the quorum ({', '.join(sorted(q))})",
            )

    def on_location_query(self, e: Event, a: dict[str, Any]) -> None:
        want = self.db(e.entity).last_mounted
        if a["answer"] != want:
            self.v(
                "location-answer",
                e,
                f"{a['server']} says the active copy of {e.entity} is on "
                f"{a['answer']}, but the copy mounted last is on {want}",
            )


_NOTHING: tuple[None, None] = (None, None)
_POLICY = ("blocked", "suspended")


def _table(cls: type[Replay]) -> dict[str, tuple[Handler | None, Callable[..., None] | None]]:
    """Each event kind's check (`on_<kind>`) and transition (`step.STEPS`), looked up once, not per event."""
    kinds = {name[3:].upper() for name in dir(cls) if name.startswith("on_")} | set(step.STEPS)
    return {kind: (getattr(cls, "on_" + kind.lower(), None), step.STEPS.get(kind)) for kind in sorted(kinds)}


Replay.TABLE = _table(Replay)
