"""The BCSS part of the Active Manager monitor: each BCSS run judged against the choices the seed allows.

Seed 002, sections "Best Copy Selection" and "Best copy selection process" (AM-022..AM-025, AM-032, AM-034,
AM-039, AM-051; interpretations AM-I09, AM-I12, AM-I16, AM-I17). At BCSS_START the monitor recomputes the
ordered list from the state it folded (`decide.snapshot`, `bcss.select`); each attempt must be one of the
copies `bcss.allowed_next` allows (copies tied on every key the seed names in any order), the dial is
compared with the recorded thresholds and dials only, and what the run's events restate is checked.
`BcssChecks` is mixed into `monitor.Replay`, which owns the folded world and the violation list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from model.am import events as ev
from model.am.bcss import (
    Choice,
    Options,
    allowed_next,
    dial_allows,
    dial_threshold,
    is_allowed_order,
    select,
)
from model.am.decide import snapshot
from model.am.state import DbState, Snapshot, Trigger, World
from spec.catalogue import cite
from traces.schema import Event
from traces.verdict import Violation

cite("AM-022", "AM-024", "AM-034", "AM-039", "AM-051", "AM-I09", "AM-I12", "AM-I16", "AM-I17")

FAILURE = Trigger()  # a detected failure (AM-021), the trigger when nothing else is pending; a frozen value


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
    outcome: str | None = None  # BCSS_END's outcome, once the run has ended


class BcssChecks:
    """The checks at BCSS_START, ACLL_START/END, a mount request inside a run and BCSS_END."""

    w: World
    opts: Options
    thresholds_recorded: bool
    runs: dict[str, Run]
    last_run: dict[str, Run]
    pending: dict[str, Trigger]
    unasked: dict[str, Event]
    out: list[Violation]

    def v(self, rule: str, e: Event, why: str, *others: Event, entity: str | None = None) -> None: ...
    def note(self, text: str) -> None: ...
    def db(self, name: str) -> DbState: ...
    def _is_pam(self, server: str | None) -> bool: ...
    def check_minority(self, db: str, e: Event, when: str) -> None: ...

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
        trigger = self.pending.pop(e.entity, FAILURE)
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
        # Retired: the previous run's record is read only by a mount outside any run (the remount check);
        # from here every mount of this database is inside this run until its BCSS_END replaces the record.
        self.last_run.pop(e.entity, None)

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

    def on_bcss_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.pop(e.entity, None)
        if run is None:
            return
        self.last_run[e.entity] = run
        run.outcome = a["outcome"]
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
