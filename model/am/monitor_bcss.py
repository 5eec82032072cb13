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
from model.am.diagnose import context, deviation, sort_reason, sort_rule
from model.am.state import DbState, Snapshot, Trigger, World
from spec.catalogue import cite
from traces.schema import Event
from traces.verdict import Violation

cite("AM-022", "AM-024", "AM-025", "AM-034", "AM-039", "AM-051", "AM-I09", "AM-I12", "AM-I16", "AM-I17")

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
    excluded: tuple[tuple[str, str], ...] = ()  # (server, why) left out of the candidates (AM-032, AM-034)
    refused: dict[str, str] = field(default_factory=dict)  # server -> why it did not mount in this run
    failed: set[str] = field(default_factory=set)  # servers whose mount failed in this run
    # what the run's own record restates wrongly (rule, event, sentence): reported at BCSS_END unless a rule
    # on the run's behaviour fires first, which then leads and carries these as its evidence (issue 24)
    deferred: list[tuple[str, Event, str]] = field(default_factory=list)


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
    blocked_listed: tuple[str, str] | None = None  # a copy AM-034 leaves out, found in BCSS_START's list

    def v(self, rule: str, e: Event, why: str, *others: Event, entity: str | None = None) -> None: ...
    def note(self, text: str) -> None: ...
    def db(self, name: str) -> DbState: ...
    def _is_pam(self, server: str | None) -> bool: ...
    def check_minority(self, db: str, e: Event, when: str) -> None: ...

    # --- record findings and the behaviour rule that leads (issue 24) --------------------------------
    def record(self, run: Run | None, rule: str, e: Event, why: str) -> None:
        """A restated fact of the run is wrong: kept as evidence until the run ends (or reported now, outside
        a run)."""
        if run is None:
            self.v(rule, e, why)
        else:
            run.deferred.append((rule, e, why))

    def lead(self, run: Run | None, rule: str, e: Event, why: str, *others: Event) -> None:
        """A behaviour rule fires: it is reported, with the run's record findings so far as its evidence."""
        if run is not None and run.deferred:
            why += " [evidence, the run's own record: " + "; ".join(f"{r}: {w}" for r, _, w in run.deferred) + "]"
            others = (*others, *(x for _, x, _ in run.deferred if x is not e and x not in others))
            run.deferred.clear()
        self.v(rule, e, why, *others)

    def flush_record(self, run: Run) -> None:
        for rule, e, why in run.deferred:
            self.v(rule, e, why, *((run.start,) if e is not run.start else ()))
        run.deferred.clear()

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
        found: list[str] = []  # what BCSS_START restates wrongly: evidence for a behaviour rule of the run
        if (trigger.kind, trigger.component, trigger.lossless) != (
            a["trigger"],
            a.get("component"),
            bool(a.get("lossless")),
        ):
            found.append(
                f"BCSS records trigger {a['trigger']}/{a.get('component')}"
                f"{' lossless' if a.get('lossless') else ''} but the preceding events make it "
                f"{trigger.kind}/{trigger.component}{' lossless' if trigger.lossless else ''}"
            )
        if "source" in a and (a["source"] or None) != d.active:
            found.append(f"BCSS records source {a['source']} but the active copy is on {d.active}")
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
        wrong_sort = judged and "sort" in a and a["sort"] != sel.sort
        recorded = self._recorded_order(a, sel.order, sel.excluded, found) if judged else None
        run = Run(e, snap, trigger, pam, sel.order, recorded, judged, judged and self.thresholds_recorded)
        run.excluded = sel.excluded
        run.deferred = [("bcss-record", e, why) for why in found]
        self.runs[e.entity] = run
        listed, self.blocked_listed = self.blocked_listed, None
        if listed is not None:
            self._order_broken(
                run,
                e,
                f"BCSS lists {listed[0]} among the candidates, but it is {listed[1].replace(' (AM-034)', '')}: such "
                f"a copy is left out of the candidate list and never activated (AM-034)",
                "never-blocked",
            )
        if wrong_sort and not run.broken:  # sorted otherwise than the statement that applies: its rule
            self._order_broken(
                run, e, f"BCSS records sort {a['sort']}, but {sort_reason(snap, trigger)}", sort_rule(snap, trigger)
            )
        # Retired: the previous run's record is read only by a mount outside any run (the remount check);
        # from here every mount of this database is inside this run until its BCSS_END replaces the record.
        self.last_run.pop(e.entity, None)

    def _recorded_order(
        self,
        a: dict[str, Any],
        order: tuple[Choice, ...],
        excluded: tuple[tuple[str, str], ...],
        found: list[str],
    ) -> tuple[str, ...] | None:
        """The run's own list when it is one the seed allows (with the right tier and set for each copy); else
        None, and why it is not in `found`."""
        if "order" not in a:
            return None
        entries = [str(x).split(":") for x in a["order"]]
        servers = tuple(x[0] for x in entries)
        by_server = {c.server: ev.encode_choice(c.server, c.tier, c.criteria_set) for c in order}
        if is_allowed_order(order, servers) and all(
            by_server[s] == str(x) for s, x in zip(servers, a["order"], strict=True)
        ):
            return servers
        allowed = context(order, excluded, {})
        found.append(f"BCSS records the list {list(a['order'])}, not an order the seed allows; {allowed}")
        left_out = dict(excluded)
        listed = [s for s in servers if "(AM-034)" in left_out.get(s, "")]
        if listed:  # the candidate list itself holds a copy AM-034 leaves out: that statement's rule
            self.blocked_listed = (listed[0], left_out[listed[0]])
        return None

    def _order_broken(self, run: Run, e: Event, why: str, rule: str = "selection-order") -> None:
        self.lead(run, rule, e, why, run.start)
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
        i = len(run.tried)
        retried_or_excluded = s in run.tried or s in dict(run.excluded)
        if not run.broken and (run.judged or retried_or_excluded):
            allowed = [c.server for c in allowed_next(run.expected, run.tried)]
            if s not in allowed:
                rule, why = deviation(
                    s, i + 1, run.expected, run.tried, run.excluded, run.refused, run.snap, run.trigger
                )
                self._order_broken(run, e, why, rule)
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
            self.record(
                run,
                "acll-record",
                e,
                f"ACLL_END says {s} reached log {a['lli']} but its recorded copy state says {d.copies[s].lli}",
            )
        missing = max(0, d.lgen - a["lli"])
        if "lli_before" in a and a["lli_before"] != before:
            self.record(
                run, "acll-record", e, f"ACLL_END says {s} started at log {a['lli_before']}, its state said {before}"
            )
        if "missing" in a and a["missing"] != missing:
            self.record(
                run,
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
        if not allowed:
            run.refused[s] = f"was over its dial ({missing} missing logs, threshold {threshold})"
        if "threshold" in a and a["threshold"] != threshold:
            self.record(
                run,
                "acll-record",
                e,
                f"ACLL_END records threshold {a['threshold']} for {s} but the configured "
                f"dial ({run.snap.dial(s)}) and thresholds make it {threshold}",
            )
        if allowed and not a["ok"]:
            self.lead(run, "dial", e, f"{s} was passed over with {missing} missing logs, within its dial's {threshold}")
        elif not allowed and a["ok"]:
            self.record(
                run,
                "acll-record",
                e,
                f"ACLL_END says {s} passes the dial with {missing} missing logs, over its dial's {threshold}",
            )

    def _check_mount_in_run(self, run: Run, e: Event, s: str) -> None:
        c = next((c for c in run.snap.copies if c.server == s), None)
        if c is None or not c.reachable or c.administratively_blocked:
            why = "unreachable" if c is None or not c.reachable else _policy(c)
            self.lead(
                run,
                "never-blocked",
                e,
                f"{s} is {why}, left out of the candidates, but BCSS asks the store to mount it; "
                f"{context(run.expected, run.excluded, run.refused)}",
                run.start,
            )
        if s in run.failed:
            self.lead(
                run,
                "next-best-copy",
                e,
                f"the mount of {e.entity} on {s} failed earlier in this BCSS run and the PAM asks the store to mount "
                f"it again: a failed mount sends the PAM on to the next best copy, each copy at most once per run "
                f"(AM-I12); {context(run.expected, run.excluded, run.refused)}",
                run.start,
            )
        if s not in run.acll_done:
            self.lead(run, "acll-before-mount", e, f"{s} is mounted without attempt copy last logs first", run.start)
        elif s in run.acll_ok and not run.acll_ok[s]:
            d = self.db(e.entity)
            self.lead(
                run,
                "dial",
                e,
                f"{s} is mounted with {d.lgen - d.copies[s].lli} missing logs, "
                f"over its dial's {dial_threshold(run.snap, s, self.opts)}",
                run.start,
            )

    def mount_failed(self, e: Event, s: str) -> None:
        run = self.runs.get(e.entity)
        if run is not None:
            run.failed.add(s)
            run.refused[s] = "did not mount"

    def on_bcss_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.pop(e.entity, None)
        if run is None:
            return
        self.last_run[e.entity] = run
        run.outcome = a["outcome"]
        d = self.db(e.entity)
        if a["outcome"] == "mounted" and not (a.get("server") == d.active and d.mounted):
            self.record(
                run,
                "bcss-record",
                e,
                f"BCSS ends 'mounted' on {a.get('server')} but {e.entity} is mounted on "
                f"{', '.join(sorted(d.on)) or 'no copy'}",
            )
        elif a["outcome"] == "no_candidate" and run.judged and run.expected:
            self.record(
                run,
                "bcss-record",
                e,
                f"BCSS ends with no candidate but the seed's list has {', '.join(c.server for c in run.expected)}",
            )
        if not (run.broken or not run.judged or a["outcome"] == "mounted"):
            left = [c.server for c in run.expected if c.server not in run.tried]
            if left:
                self._order_broken(
                    run,
                    e,
                    f"the run gives up ({a['outcome']}) without trying {', '.join(left)}; "
                    f"{context(run.expected, run.excluded, run.refused)}",
                )
        self.flush_record(run)


def _policy(c: Any) -> str:
    """Why a reachable copy is blocked from activation, from its recorded activation policy (AM_CONFIG)."""
    flags = [k for k in ("blocked", "suspended") if getattr(c, k, False)]
    return f"blocked from activation (its recorded policy: {', '.join(f'{k}=true' for k in flags) or 'blocked'})"
