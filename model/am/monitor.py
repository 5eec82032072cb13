"""The Active Manager trace monitor: replays recorded events through the model's own rules.

Seed 002, all sections. The monitor folds every `am` event of a trace into a `World` (the same state the
generator uses) and, at each decision the trace records, asks the same functions the generator used
(`rules.snapshot`, `bcss.select`, `bcss.dial_allows`, `World.quorum`) whether the decision was allowed.
Scope is the trace: "only the PAM activates" needs the DAG's PAM while judging a database's events.
Each violation names its rule, requirement ID, events and one sentence.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from conformance.monitor import MonitorResult, Violation
from model.am import events as ev
from model.am.bcss import Choice, Options, dial_allows, dial_threshold, responder_ok, select
from model.am.rules import DbState, World, snapshot
from model.am.state import CopyState, Health, Snapshot, Trigger
from spec.catalogue import require
from traces.schema import Event

RULES = {
    "single-pam": "AM-005", "pam-owns-quorum": "AM-005", "pam-moves-with-quorum": "AM-006",
    "pam-before-maintenance": "AM-007", "only-pam-activates": "AM-008", "one-active-copy": "AM-009",
    "location-answer": "AM-019", "standalone-no-failover": "AM-002", "mount-outside-bcss": "AM-022",
    "acll-source": "AM-023", "dial": "AM-024", "never-blocked": "AM-034", "selection-order": "AM-039",
    "responder-target": "AM-032", "acll-before-mount": "AM-051", "sam-asks-pam": "AM-013",
}
require(*RULES.values())


@dataclass
class Run:
    """One BCSS run being replayed: the list the rules allow and how far the trace has gone."""

    start: Event
    snap: Snapshot
    trigger: Trigger
    pam: str
    expected: tuple[Choice, ...]
    tried: list[str] = field(default_factory=list)
    acll_ok: dict[str, bool] = field(default_factory=dict)
    lli_before: dict[str, int] = field(default_factory=dict)


def _opts(events: Sequence[Event]) -> Options:
    for e in events:
        if e.kind == "TRACE_START":
            cfg = json.loads(str(e.attrs.get("config") or "{}"))
            bcss = cfg.get("bcss") or {}
            return Options().with_(**{k: tuple(map(tuple, v)) if k == "thresholds" else v
                                      for k, v in bcss.items()})
    return Options()


class AmMonitor:
    mechanism = "am"
    scope: Literal["entity", "trace"] = "trace"

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        try:
            replay = Replay(_opts(events))
        except (TypeError, ValueError) as exc:
            return MonitorResult.of((), [f"am monitor: unusable BCSS options in TRACE_START: {exc}"])
        try:
            return MonitorResult.of(replay.feed(events))
        except (KeyError, TypeError, ValueError) as exc:  # a foreign or truncated trace: cannot judge on
            at = replay.current
            where = f"{at.kind} seq {at.seq} ({at.event_id})" if at is not None else "the trace"
            return MonitorResult.of(replay.out, [f"am monitor stopped at {where}: {type(exc).__name__} {exc}"])


class Replay:
    """The state folded from the events so far, and the checks applied at each event."""

    def __init__(self, opts: Options) -> None:
        self.opts = opts
        self.w = World("", (), frozenset(), ())
        self.runs: dict[str, Run] = {}
        self.last_run: dict[str, Run] = {}
        self.mounted: dict[str, dict[str, Event]] = {}
        self.pending: dict[str, Trigger] = {}  # the trigger the last FAILURE/SWITCHOVER implies
        self.unasked: dict[str, Event] = {}  # a SAM's failure report not yet passed to the PAM
        self.out: list[Violation] = []
        self.current: Event | None = None

    def v(self, rule: str, e: Event, why: str, *others: Event) -> None:
        ids = (*(o.event_id for o in others), e.event_id)
        self.out.append(Violation(rule, RULES[rule], e.trace_id, e.entity, ids, why, "am"))

    def feed(self, events: Sequence[Event]) -> list[Violation]:
        last: Event | None = None
        for e in events:
            if e.mechanism != "am":
                continue
            last = self.current = e
            getattr(self, "on_" + e.kind.lower(), self.on_other)(e, e.attrs)
        if last is not None:
            self.check_pam(last, "at the end of the trace")
        return self.out

    def on_other(self, e: Event, a: dict[str, Any]) -> None:
        pass

    # --- DAG events ---------------------------------------------------------------------------------
    def check_pam(self, e: Event, when: str) -> None:
        if not self.w.dag:
            return
        q = self.w.quorum() or frozenset()
        for c in sorted(self.w.claims - q):
            self.v("pam-owns-quorum", e, f"{c} still acts as PAM {when} though it is not in the quorum "
                   f"({', '.join(sorted(q)) or 'none'})")
        if q and not self.w.claims & q:
            self.v("pam-moves-with-quorum", e, f"the quorum ({', '.join(sorted(q))}) has no PAM {when}")

    def on_dag_view(self, e: Event, a: dict[str, Any]) -> None:
        self.check_pam(e, "when the next cluster view arrives")
        groups = tuple(ev.decode_group(g) for g in a["groups"])
        self.w = replace(self.w, dag=e.entity, members=tuple(a["members"]), up=frozenset(a["up"]),
                         groups=groups)
        for mounted in self.mounted.values():  # a server that is down serves nothing
            for s in [s for s in mounted if s not in self.w.up]:
                del mounted[s]

    def on_pam_acquire(self, e: Event, a: dict[str, Any]) -> None:
        s = a["server"]
        if self.w.claims:
            self.v("single-pam", e, f"{s} becomes PAM while {', '.join(sorted(self.w.claims))} still is")
        q = self.w.quorum() or frozenset()
        if s not in q:
            self.v("pam-owns-quorum", e, f"{s} becomes PAM without being in the quorum "
                   f"({', '.join(sorted(q)) or 'none'})")
        self.w = replace(self.w, claims=self.w.claims | {s})

    def on_pam_release(self, e: Event, a: dict[str, Any]) -> None:
        self.w = replace(self.w, claims=self.w.claims - {a["server"]})

    def on_server_health(self, e: Event, a: dict[str, Any]) -> None:
        h = self.w.health.get(a["server"], Health())
        comps = {**h.components, a["component"]: (a["priority"], a["state"])}
        self.w = replace(self.w, health={**self.w.health, a["server"]: Health(comps)})

    def on_server_dial(self, e: Event, a: dict[str, Any]) -> None:
        self.w = replace(self.w, dials={**self.w.dials, a["server"]: a["dial"]})

    def on_maintenance(self, e: Event, a: dict[str, Any]) -> None:
        if a["server"] in self.w.claims:
            self.v("pam-before-maintenance", e, f"{a['server']} is taken offline for maintenance while it "
                   "is still the PAM; the PAM must be moved first")

    # --- database events ----------------------------------------------------------------------------
    def db(self, name: str) -> DbState:
        return self.w.dbs[name]

    def set_db(self, name: str, **changes: Any) -> None:
        self.w = replace(self.w, dbs={**self.w.dbs, name: replace(self.db(name), **changes)})

    def on_db_create(self, e: Event, a: dict[str, Any]) -> None:
        self.w = replace(self.w, dbs={**self.w.dbs, e.entity: DbState(e.entity, a["dag"], {})})
        self.mounted[e.entity] = {}

    def on_copy_state(self, e: Event, a: dict[str, Any]) -> None:
        c = CopyState(a["server"], a["status"], a["lli"], a["rq"], a["ci"], a["pref"], a["blocked"],
                      a["suspended"])
        self.set_db(e.entity, copies={**self.db(e.entity).copies, c.server: c})

    def on_logs(self, e: Event, a: dict[str, Any]) -> None:
        self.set_db(e.entity, lgen=a["lgen"])

    # --- BCSS runs (AM-022..AM-025, AM-032, AM-034, AM-039, AM-051) ---------------------------------
    def _is_pam(self, server: str | None) -> bool:
        return server is not None and server == self.w.pam and self.w.claims == {server}

    def on_bcss_start(self, e: Event, a: dict[str, Any]) -> None:
        d = self.db(e.entity)
        if d.dag is None:
            self.v("standalone-no-failover", e, f"BCSS runs for standalone database {e.entity}, which "
                   "has no other copy and no PAM")
            return
        pam = a["pam"]
        if not self._is_pam(pam):
            self.v("only-pam-activates", e, f"{pam} runs BCSS for {e.entity} but the PAM is "
                   f"{self.w.pam or 'nobody'}: only the PAM chooses the copy to activate")
        unasked = self.unasked.pop(e.entity, None)
        if unasked is not None:
            self.v("sam-asks-pam", e, f"the SAM on {unasked.attrs['server']} reported a failure of {e.entity} "
                   "but BCSS started without its request reaching the PAM", unasked)
        trigger = self.pending.pop(e.entity, Trigger())
        if (trigger.kind, trigger.component, trigger.lossless) != (
                a["trigger"], a.get("component"), bool(a.get("lossless"))):
            self.v("selection-order", e, f"BCSS records trigger {a['trigger']}/{a.get('component')} but the "
                   f"preceding events make it {trigger.kind}/{trigger.component}")
        snap = snapshot(self.w, e.entity, pam)
        sel = select(snap, trigger, self.opts)
        self.runs[e.entity] = Run(e, snap, trigger, pam, sel.order)

    def _order_broken(self, run: Run, e: Event, why: str) -> None:
        want = ", ".join(c.why() for c in run.expected) or "no copy"
        self.v("selection-order", e, f"{why}; the seed's order allows: {want}", run.start)
        run.expected = ()  # one report per run
        run.tried = ["?"]

    def on_failure(self, e: Event, a: dict[str, Any]) -> None:
        responder = a["what"] == "responder"
        self.pending[e.entity] = Trigger("responder", a["component"]) if responder else Trigger()
        if a["role"] == "SAM":
            self.unasked[e.entity] = e

    def on_failover_request(self, e: Event, a: dict[str, Any]) -> None:
        if self._is_pam(a["pam"]):
            self.unasked.pop(e.entity, None)

    def on_switchover(self, e: Event, a: dict[str, Any]) -> None:
        self.pending[e.entity] = Trigger("switchover", lossless=bool(a["lossless"]))

    def on_acll_start(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s = a["server"]
        i = len(run.tried)
        if run.tried != ["?"] and (i >= len(run.expected) or run.expected[i].server != s):
            nxt = run.expected[i].server if i < len(run.expected) else "no further copy"
            self._order_broken(run, e, f"attempt {i + 1} of this BCSS run is {s}, expected {nxt}")
        run.tried.append(s)
        run.lli_before[s] = self.db(e.entity).copies[s].lli

    def on_acll_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s, d = a["server"], self.db(e.entity)
        before = run.lli_before.get(s, d.copies[s].lli)
        src = run.snap.source
        src_ok = src in self.w.up and self.w.reachable(s, src)
        if a["lli"] > d.lgen or (not src_ok and a["lli"] > before):
            self.v("acll-source", e, f"ACLL brought {s} to log {a['lli']} from {before} although the source "
                   f"{src or '?'} {'is unreachable' if not src_ok else 'only generated ' + str(d.lgen)}")
        missing = max(0, d.lgen - a["lli"])
        allowed = dial_allows(missing, run.snap, s, self.opts)
        run.acll_ok[s] = allowed
        if allowed and not a["ok"]:
            self.v("dial", e, f"{s} was passed over with {missing} missing logs, within its dial's "
                   f"{dial_threshold(run.snap, s, self.opts)}")

    def on_active_move(self, e: Event, a: dict[str, Any]) -> None:
        d = self.db(e.entity)
        if d.dag is not None and not self._is_pam(a["by"]):
            self.v("only-pam-activates", e, f"{a['by']} moves the active copy of {e.entity} to "
                   f"{a['dst']} but the PAM is {self.w.pam or 'nobody'}")
        self.set_db(e.entity, active=a["dst"])

    def on_mount_start(self, e: Event, a: dict[str, Any]) -> None:
        s, d, run = a["server"], self.db(e.entity), self.runs.get(e.entity)
        if d.dag is None:
            return
        if not self._is_pam(a["by"]):
            self.v("only-pam-activates", e, f"{a['by']} asks the store to mount {e.entity} on {s} but the "
                   f"PAM is {self.w.pam or 'nobody'}")
        if run is not None:
            self._check_mount_in_run(run, e, s)
        elif a.get("remount"):
            last = self.last_run.get(e.entity)
            if last is None or last.trigger.kind == "failure" or s != last.snap.source:
                self.v("mount-outside-bcss", e, f"{s} is remounted without a preceding switchover or "
                       "responder run whose source it was")
        elif d.last_mounted is not None:
            self.v("mount-outside-bcss", e, f"{e.entity} is mounted on {s} outside any BCSS run")

    def _check_mount_in_run(self, run: Run, e: Event, s: str) -> None:
        c = next((c for c in run.snap.copies if c.server == s), None)
        if c is None or not c.reachable or c.administratively_blocked:
            why = "unreachable" if c is None or not c.reachable else "blocked from activation"
            self.v("never-blocked", e, f"{s} is {why} but BCSS mounts it", run.start)
        if s not in run.acll_ok:
            self.v("acll-before-mount", e, f"{s} is mounted without attempt copy last logs first", run.start)
        elif not run.acll_ok[s]:
            lg = self.db(e.entity).lgen
            self.v("dial", e, f"{s} is mounted with {lg - self.db(e.entity).copies[s].lli} missing logs, "
                   f"over its dial's {dial_threshold(run.snap, s, self.opts)}", run.start)

    def on_mounted(self, e: Event, a: dict[str, Any]) -> None:
        s = a["server"]
        others = {k: x for k, x in self.mounted.setdefault(e.entity, {}).items() if k != s}
        if others:
            self.v("one-active-copy", e, f"{e.entity} is mounted on {s} while still mounted on "
                   f"{', '.join(sorted(others))}", *others.values())
        self.mounted[e.entity][s] = e
        self.set_db(e.entity, last_mounted=s, mounted=True)
        run = self.runs.get(e.entity)
        if run is not None and run.trigger.kind == "responder":
            comp = run.trigger.component or ""
            src, tgt = run.snap.health_of(run.snap.source), run.snap.health_of(s)
            if not responder_ok(tgt, src, comp, self.opts):
                self.v("responder-target", e, f"a {comp} responder failover lands on {s}, where {comp} is "
                       f"{tgt.state(comp)}, not better than {src.state(comp)} on {run.snap.source}",
                       run.start)

    def on_dismounted(self, e: Event, a: dict[str, Any]) -> None:
        self.mounted.setdefault(e.entity, {}).pop(a["server"], None)

    def on_bcss_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.pop(e.entity, None)
        if run is None:
            return
        self.last_run[e.entity] = run
        if run.tried == ["?"] or a["outcome"] == "mounted":
            return
        if len(run.tried) < len(run.expected):
            self._order_broken(run, e, f"the run gives up ({a['outcome']}) after {len(run.tried)} of "
                               f"{len(run.expected)} allowed copies")

    def on_location_query(self, e: Event, a: dict[str, Any]) -> None:
        want = self.db(e.entity).last_mounted
        if a["answer"] != want:
            self.v("location-answer", e, f"{a['server']} says the active copy of {e.entity} is on "
                   f"{a['answer']}, but the copy mounted last is on {want}")
