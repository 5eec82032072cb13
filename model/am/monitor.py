"""The Active Manager trace monitor: a fold of the recorded events over the model's own transitions.

Seed 002, all sections. The monitor rebuilds the world with `step.apply` (the very function the generator
changes its world with) and, before each event, asks whether the seed allows it: the transition tables of
`step.py` (mount state, PAM role, copy status), and at each BCSS decision the same functions the
generator used (`decide.snapshot`, `bcss.select`, `bcss.dial_allows`, `World.quorum`). Every configured
value (the BCSS reading, the dial thresholds, each server's dial, each copy's activation policy) comes
from the recorded configuration (TRACE_START `config.bcss`, AM_CONFIG events); every other fact from the
events seen before. What an event restates about itself is compared with that derivation, never trusted.
Where copies tie on every key the seed names, any of them may be tried (`bcss.allowed_next`).
Scope is the trace: "only the PAM activates" needs the DAG's PAM while judging a database's events.
Each violation names its rule (`rules.RULES`), requirement ID, events and one sentence.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from conformance.monitor import MonitorResult, Violation
from model.am import events as ev
from model.am import step
from model.am.bcss import (
    Choice,
    Options,
    allowed_next,
    dial_allows,
    dial_threshold,
    is_allowed_order,
    responder_ok,
    select,
)
from model.am.decide import snapshot
from model.am.rules import RULES, minority_mounted
from model.am.state import EMPTY_WORLD, DbState, Snapshot, Trigger
from traces.schema import Event, is_context_kind


@dataclass
class Run:
    """One BCSS run being replayed: the choices the seed allows and how far the trace has gone."""

    start: Event
    snap: Snapshot
    trigger: Trigger
    pam: str
    expected: tuple[Choice, ...]
    recorded: tuple[str, ...] | None  # the run's own list, when it is one the seed allows
    judged: bool  # False when the configuration needed to judge the order is not recorded
    dial_known: bool
    tried: list[str] = field(default_factory=list)
    acll_ok: dict[str, bool] = field(default_factory=dict)
    lli_before: dict[str, int] = field(default_factory=dict)
    acll_done: set[str] = field(default_factory=set)
    broken: bool = False


@dataclass(frozen=True)
class Config:
    """What the recorded configuration says: the BCSS reading and whether the dial thresholds are recorded
    (the seed gives no numbers for them, AM-I09: without a recorded value the dial is not judged)."""

    opts: Options
    thresholds_recorded: bool

    @staticmethod
    def from_events(context: Sequence[Event]) -> Config:
        for e in context:
            if e.kind == "TRACE_START":
                cfg = json.loads(str(e.attrs.get("config") or "{}"))
                bcss = cfg.get("bcss") or {}
                opts = Options().with_(**{k: tuple(map(tuple, v)) if k == "thresholds" else v for k, v in bcss.items()})
                return Config(opts, "thresholds" in bcss)
        return Config(Options(), False)


def _opts(events: Sequence[Event]) -> Options:
    """The BCSS reading a trace was recorded under (kept for callers of the old name)."""
    return Config.from_events([e for e in events if is_context_kind(e.kind)]).opts


class AmMonitor:
    mechanism = "am"
    scope: Literal["entity", "trace"] = "trace"

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        ctx = list(context) or [e for e in events if is_context_kind(e.kind)]
        try:
            cfg = Config.from_events(ctx)
        except (TypeError, ValueError) as exc:
            return MonitorResult.of((), [f"am monitor: unusable BCSS options in TRACE_START: {exc}"])
        replay = Replay(cfg.opts, cfg.thresholds_recorded)
        try:
            replay.feed(events)
        except (KeyError, TypeError, ValueError) as exc:  # a foreign or truncated trace: cannot judge on
            at = replay.current
            where = f"{at.kind} seq {at.seq} ({at.event_id})" if at is not None else "the trace"
            return MonitorResult.of(
                replay.out, [*replay.notes, f"am monitor stopped at {where}: {type(exc).__name__} {exc}"]
            )
        return MonitorResult.of(replay.out, replay.notes)


class Replay:
    """The world folded from the events so far (`step.apply`), and the checks applied before each event."""

    def __init__(self, opts: Options, thresholds_recorded: bool = True) -> None:
        self.opts = opts
        self.thresholds_recorded = thresholds_recorded
        self.w = replace(EMPTY_WORLD, opts=opts)
        self.runs: dict[str, Run] = {}
        self.last_run: dict[str, Run] = {}
        self.pending: dict[str, Trigger] = {}  # the trigger the last FAILURE/SWITCHOVER implies
        self.unasked: dict[str, Event] = {}  # a SAM's failure report not yet passed to the PAM
        self.out: list[Violation] = []
        self.notes: list[str] = []
        self.current: Event | None = None

    def v(self, rule: str, e: Event, why: str, *others: Event) -> None:
        ids = (*(o.event_id for o in others), e.event_id)
        self.out.append(Violation(rule, RULES[rule].requirement, e.trace_id, e.entity, ids, why, "am"))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def step(self, e: Event) -> None:
        """Judge one event against the state so far, then fold it in."""
        self.current = e
        getattr(self, "on_" + e.kind.lower(), self.on_other)(e, e.attrs)
        self.w = step.apply(self.w, e.entity, e.kind, e.attrs)

    def feed(self, events: Sequence[Event]) -> list[Violation]:
        last: Event | None = None
        for e in events:
            if e.mechanism != "am":
                continue
            last = e
            self.step(e)
        if last is not None:
            self.check_pam(last, "at the end of the trace")
            for db in sorted(self.w.dbs):
                self.check_minority(db, last, "at the end of the trace")
        return self.out

    def on_other(self, e: Event, a: dict[str, Any]) -> None:
        pass

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
            )

    def on_dag_view(self, e: Event, a: dict[str, Any]) -> None:
        self.check_pam(e, "when the next cluster view arrives")
        for db in sorted(self.w.dbs):
            self.check_minority(db, e, "when the next cluster view arrives")

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
        d, s = self.db(e.entity), a["server"]
        why = step.status_fault(self.w, d, s, a["status"])
        if why:
            self.v("copy-status-transition", e, why)
        old = d.copies.get(s)
        for k in ("blocked", "suspended"):
            configured = bool(getattr(old, k)) if old is not None else False
            if k in a and bool(a[k]) != configured:
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
        self.pending[e.entity] = Trigger("responder", a["component"]) if responder else Trigger()
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

    # --- BCSS runs (AM-022..AM-025, AM-032, AM-034, AM-039, AM-051) ---------------------------------
    def _dials_unrecorded(self, snap: Snapshot) -> list[str]:
        return sorted(c.server for c in snap.copies if c.server not in self.w.dials)

    def on_bcss_start(self, e: Event, a: dict[str, Any]) -> None:
        d = self.db(e.entity)
        if d.dag is None:
            self.v(
                "standalone-no-failover",
                e,
                f"BCSS runs for standalone database {e.entity}, which has no other copy and no PAM",
            )
            return
        pam = a["pam"]
        if not self._is_pam(pam):
            self.v(
                "only-pam-activates",
                e,
                f"{pam} runs BCSS for {e.entity} but the PAM is "
                f"{self.w.pam or 'nobody'}: only the PAM chooses the copy to activate",
            )
        self.check_minority(e.entity, e, "when the PAM starts BCSS")
        unasked = self.unasked.pop(e.entity, None)
        if unasked is not None:
            self.v(
                "sam-asks-pam",
                e,
                f"the SAM on {unasked.attrs['server']} reported a failure of {e.entity} "
                "but BCSS started without its request reaching the PAM",
                unasked,
            )
        trigger = self.pending.pop(e.entity, Trigger())
        if (trigger.kind, trigger.component, trigger.lossless) != (
            a["trigger"],
            a.get("component"),
            bool(a.get("lossless")),
        ):
            self.v(
                "bcss-record",
                e,
                f"BCSS records trigger {a['trigger']}/{a.get('component')} but the "
                f"preceding events make it {trigger.kind}/{trigger.component}",
            )
        if "source" in a and (a["source"] or None) != d.active:
            self.v("bcss-record", e, f"BCSS records source {a['source']} but the active copy is on {d.active}")
        snap = snapshot(self.w, e.entity, pam)
        sel = select(snap, trigger, self.opts)
        unrecorded = self._dials_unrecorded(snap)
        judged = not unrecorded
        if unrecorded:
            self.note(
                f"AutoDatabaseMountDial of {', '.join(unrecorded)} not recorded (AM_CONFIG): BCSS runs of "
                f"{e.entity} are not judged on order or dial"
            )
        if not self.thresholds_recorded:
            self.note(
                "dial thresholds not recorded in TRACE_START config.bcss.thresholds (the seed gives none, "
                "AM-I09): the dial (AM-024) is not judged"
            )
        recorded = self._recorded_order(e, a, sel.order) if judged else None
        if judged and "sort" in a and a["sort"] != sel.sort:
            self.v(
                "bcss-record", e, f"BCSS records sort {a['sort']} but the recorded dials and trigger make it {sel.sort}"
            )
        self.runs[e.entity] = Run(
            e, snap, trigger, pam, sel.order, recorded, judged, judged and self.thresholds_recorded
        )

    def _recorded_order(self, e: Event, a: dict[str, Any], order: tuple[Choice, ...]) -> tuple[str, ...] | None:
        """The run's own list when it is one the seed allows (with the right tier and set for each copy)."""
        if "order" not in a:
            return None
        entries = [str(x).split(":") for x in a["order"]]
        servers = tuple(x[0] for x in entries)
        by_server = {c.server: ev.encode_choice(c.server, c.tier, c.criteria_set) for c in order}
        if is_allowed_order(order, servers) and all(
            by_server[s] == str(x) for s, x in zip(servers, a["order"], strict=True)
        ):
            return servers
        want = ", ".join(c.why() for c in order) or "no copy"
        self.v("bcss-record", e, f"BCSS records the list {list(a['order'])}, not an order the seed allows: {want}")
        return None

    def _order_broken(self, run: Run, e: Event, why: str) -> None:
        want = ", ".join(c.why() for c in run.expected) or "no copy"
        self.v("selection-order", e, f"{why}; the seed's order allows: {want}", run.start)
        run.broken = True  # one report per run

    def on_acll_start(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s = a["server"]
        if "source" in a and (a["source"] or "") != run.snap.source:
            self.v(
                "acll-record",
                e,
                f"ACLL for {s} names source {a['source']} but the run's source is {run.snap.source}",
                run.start,
            )
        if run.judged and not run.broken:
            allowed = [c.server for c in allowed_next(run.expected, run.tried)]
            i = len(run.tried)
            if s not in allowed:
                nxt = " or ".join(allowed) or "no further copy"
                self._order_broken(run, e, f"attempt {i + 1} of this BCSS run is {s}, allowed: {nxt}")
            elif run.recorded is not None and run.recorded[i] != s:
                self._order_broken(
                    run,
                    e,
                    f"attempt {i + 1} is {s} but the run's own list has "
                    f"{run.recorded[i]} there (AM-I12: the list is computed once)",
                )
        run.tried.append(s)
        run.lli_before[s] = self.db(e.entity).copies[s].lli

    def on_acll_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s, d = a["server"], self.db(e.entity)
        run.acll_done.add(s)
        before = run.lli_before.get(s, d.copies[s].lli)
        src = run.snap.source
        src_ok = src in self.w.up and self.w.reachable(s, src)
        if a["lli"] > d.lgen or (not src_ok and a["lli"] > before):
            self.v(
                "acll-source",
                e,
                f"ACLL brought {s} to log {a['lli']} from {before} although the source "
                f"{src or '?'} {'is unreachable' if not src_ok else 'only generated ' + str(d.lgen)}",
            )
        if d.copies[s].lli != a["lli"]:
            self.v(
                "acll-record",
                e,
                f"ACLL_END says {s} reached log {a['lli']} but its recorded copy state says {d.copies[s].lli}",
            )
        missing = max(0, d.lgen - a["lli"])
        if "lli_before" in a and a["lli_before"] != before:
            self.v(
                "acll-record", e, f"ACLL_END says {s} started at log {a['lli_before']}, its copy state said {before}"
            )
        if "missing" in a and a["missing"] != missing:
            self.v(
                "acll-record",
                e,
                f"ACLL_END says {s} misses {a['missing']} logs; the last log generated "
                f"({d.lgen}) and its LastLogInspected ({a['lli']}) make it {missing} (AM-I02)",
            )
        if not run.dial_known:
            return
        threshold = dial_threshold(run.snap, s, self.opts)
        allowed = dial_allows(missing, run.snap, s, self.opts)
        run.acll_ok[s] = allowed
        if "threshold" in a and a["threshold"] != threshold:
            self.v(
                "acll-record",
                e,
                f"ACLL_END records threshold {a['threshold']} for {s} but the configured "
                f"dial ({run.snap.dial(s)}) and thresholds make it {threshold}",
            )
        if allowed and not a["ok"]:
            self.v("dial", e, f"{s} was passed over with {missing} missing logs, within its dial's {threshold}")
        elif not allowed and a["ok"]:
            self.v(
                "acll-record",
                e,
                f"ACLL_END says {s} passes the dial with {missing} missing logs, over its dial's {threshold}",
            )

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
        elif a.get("remount"):
            last = self.last_run.get(e.entity)
            if last is None or last.trigger.kind == "failure" or s != last.snap.source:
                self.v(
                    "mount-outside-bcss",
                    e,
                    f"{s} is remounted without a preceding switchover or responder run whose source it was",
                )
        elif d.last_mounted is not None:
            self.v("mount-outside-bcss", e, f"{e.entity} is mounted on {s} outside any BCSS run")

    def _check_mount_in_run(self, run: Run, e: Event, s: str) -> None:
        c = next((c for c in run.snap.copies if c.server == s), None)
        if c is None or not c.reachable or c.administratively_blocked:
            why = "unreachable" if c is None or not c.reachable else "blocked from activation"
            self.v("never-blocked", e, f"{s} is {why} but BCSS mounts it", run.start)
        if s not in run.acll_done:
            self.v("acll-before-mount", e, f"{s} is mounted without attempt copy last logs first", run.start)
        elif s in run.acll_ok and not run.acll_ok[s]:
            d = self.db(e.entity)
            self.v(
                "dial",
                e,
                f"{s} is mounted with {d.lgen - d.copies[s].lli} missing logs, "
                f"over its dial's {dial_threshold(run.snap, s, self.opts)}",
                run.start,
            )

    def on_mount_fail(self, e: Event, a: dict[str, Any]) -> None:
        self._mount_table(e, a["server"])

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
                self.v(
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

    def on_bcss_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.pop(e.entity, None)
        if run is None:
            return
        self.last_run[e.entity] = run
        d = self.db(e.entity)
        if a["outcome"] == "mounted" and not (a.get("server") == d.active and d.mounted):
            self.v(
                "bcss-record",
                e,
                f"BCSS ends 'mounted' on {a.get('server')} but {e.entity} is mounted on "
                f"{', '.join(sorted(d.on)) or 'no copy'}",
                run.start,
            )
        elif a["outcome"] == "no_candidate" and run.judged and run.expected:
            self.v(
                "bcss-record",
                e,
                f"BCSS ends with no candidate but the seed's list has {', '.join(c.server for c in run.expected)}",
                run.start,
            )
        if run.broken or not run.judged or a["outcome"] == "mounted":
            return
        left = [c.server for c in run.expected if c.server not in run.tried]
        if left:
            self._order_broken(run, e, f"the run gives up ({a['outcome']}) without trying {', '.join(left)}")

    def on_location_query(self, e: Event, a: dict[str, Any]) -> None:
        want = self.db(e.entity).last_mounted
        if a["answer"] != want:
            self.v(
                "location-answer",
                e,
                f"{a['server']} says the active copy of {e.entity} is on "
                f"{a['answer']}, but the copy mounted last is on {want}",
            )
