"""The BCSS part of the Active Manager monitor: each BCSS run judged against the choices the seed allows.

Seed 002, sections "Best Copy Selection" and "Best copy selection process" (AM-022..AM-025, AM-032, AM-034,
AM-039, AM-051; interpretations AM-I09, AM-I12, AM-I16, AM-I17). At BCSS_START the monitor recomputes the
ordered list from the state it folded (`decisions.snapshot`, `bcss.select`); each attempt must be one of the
copies `bcss.allowed_next` allows (copies tied on every key the seed names in any order), the dial is
compared with the recorded thresholds and dials only, and what the run's events restate is checked.
`BcssChecks` is mixed into `monitor.Replay`, which owns the folded world and the violation list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`monitor_bcss.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.am import rules as R
from model.am.bcss import (
    Options,
    allowed_next,
    dial_allows,
    dial_threshold,
    select,
)
from model.am.bcss_run import DIAL_UNKNOWN, FAILURE, Run, RunRecords, bound, policy, recorded_order
from model.am.decisions import snapshot
from model.am.diagnose import context, deviation, sort_reason
from model.am.faults import copy_of
from model.am.replay_state import ReplayState
from model.am.state import DbState, Snapshot, Trigger, World
from spec.catalogue import cite
from traces.event import Event
from traces.verdict import Rule, Tally, Violation

cite("AM-022", "AM-024", "AM-025", "AM-034", "AM-039", "AM-051", "AM-I09", "AM-I12", "AM-I16", "AM-I17")


class BcssChecks(RunRecords):
    """The checks at BCSS_START, ACLL_START/END, a mount request inside a run and BCSS_END. Each counts in
    `tally` the instances it judges (a run judged for its record and sort, an attempt judged for its order,
    an ACLL judged for its source, record and dial, a mount judged inside its run) and the ones the recorded
    configuration does not let it judge (issue 29)."""

    __slots__ = ()

    w: World
    opts: Options
    thresholds_recorded: bool
    runs: dict[str, Run]
    last_run: dict[str, Run]
    pending: dict[str, Trigger]
    unasked: dict[str, Event]
    out: list[Violation]
    tally: Tally

    @cython.locals(self=ReplayState, e=Event)
    def v(self, rule: Rule, e: Event, why: str, *others: Event, entity: str | None = None, **data: Any) -> None: ...
    @cython.locals(self=ReplayState)
    def note(self, text: str) -> None: ...
    @cython.locals(self=ReplayState)
    def db(self, name: str) -> DbState: ...
    @cython.locals(self=ReplayState)
    def _is_pam(self, server: str | None) -> bool: ...
    @cython.locals(self=ReplayState, e=Event)
    def check_minority(self, db: str, e: Event, when: str) -> None: ...

    # --- BCSS runs (AM-022..AM-025, AM-032, AM-034, AM-039, AM-051) ---------------------------------
    def _dials_unrecorded(self, snap: Snapshot) -> list[str]:  # (not typed: a generator cannot close over it)
        return sorted(c.server for c in snap.copies if c.server not in self.w.dials)

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_bcss_start(self, e: Event, a: dict[str, Any]) -> None:
        d, tally = self.db(e.entity), self.tally
        tally.judge(R.STANDALONE_NO_FAILOVER)
        if d.dag is None:
            self.v(
                R.STANDALONE_NO_FAILOVER,
                e,
                f"BCSS runs for standalone database {e.entity}, which has no other copy and no PAM",
            )
            return
        pam = a["pam"]
        tally.judge(R.ONLY_PAM_ACTIVATES)
        if not self._is_pam(pam):
            self.v(
                R.ONLY_PAM_ACTIVATES,
                e,
                f"{pam} runs BCSS for {e.entity} but the PAM is "
                f"{self.w.pam or 'nobody'}: only the PAM chooses the copy to activate",
                observed=pam,
                expected=self.w.pam,
            )
        self.check_minority(e.entity, e, "when the PAM starts BCSS")
        unasked = self.unasked.pop(e.entity, None)
        if unasked is not None:
            tally.judge(R.SAM_ASKS_PAM)  # a SAM's failure report, judged when BCSS starts before its request
            self.v(
                R.SAM_ASKS_PAM,
                e,
                f"the SAM on {unasked.attrs['server']} reported a failure of {e.entity} "
                "but BCSS started without its request reaching the PAM",
                unasked,
            )
        trigger = self.pending.pop(e.entity, FAILURE)
        # what BCSS_START restates wrongly, with the values compared: evidence for a behaviour rule of the run
        found: list[tuple[str, dict[str, Any]]] = []
        recorded_trigger = (a["trigger"], a.get("component"), bool(a.get("lossless")))
        tally.judge(R.BCSS_RECORD)
        if (trigger.kind, trigger.component, trigger.lossless) != recorded_trigger:
            found.append(
                (
                    f"BCSS records trigger {a['trigger']}/{a.get('component')}"
                    f"{' lossless' if a.get('lossless') else ''} but the preceding events make it "
                    f"{trigger.kind}/{trigger.component}{' lossless' if trigger.lossless else ''}",
                    {
                        "observed": list(recorded_trigger),
                        "expected": [trigger.kind, trigger.component, trigger.lossless],
                    },
                )
            )
        if "source" in a:
            tally.judge(R.BCSS_RECORD)
            if (a["source"] or None) != d.active:
                found.append(
                    (
                        f"BCSS records source {a['source']} but the active copy is on {d.active}",
                        {"observed": a["source"], "expected": d.active},
                    )
                )
        snap = snapshot(self.w, e.entity, pam)
        sel = select(snap, trigger, self.opts)
        unrecorded = self._dials_unrecorded(snap)
        judged = not unrecorded
        if unrecorded:
            why = (
                f"AutoDatabaseMountDial of {', '.join(unrecorded)} not recorded (AM_CONFIG): BCSS runs of "
                f"{e.entity} are not judged on order or dial"
            )
            self.note(why)
            for rule in (sel.sort_rule, R.SELECTION_ORDER, *((R.BCSS_RECORD,) if "order" in a else ())):
                tally.skip(rule, why)
        if not self.thresholds_recorded:
            self.note(
                "dial thresholds not recorded in TRACE_START config.bcss.thresholds (the seed gives none, "
                "AM-I09): the dial (AM-024) is not judged"
            )
        wrong_sort = judged and "sort" in a and a["sort"] != sel.sort
        if judged and "order" in a:
            tally.judge(R.BCSS_RECORD)
            tally.judge(R.NEVER_BLOCKED)  # the recorded list judged for a copy AM-034 leaves out
        recorded, listed = recorded_order(a, sel.order, sel.excluded, found) if judged else (None, None)
        dial_known = judged and self.thresholds_recorded
        run = Run(e, snap, trigger, pam, sel.order, recorded, judged, dial_known, sel.sort_rule)
        run.excluded = sel.excluded
        run.deferred = [(R.BCSS_RECORD, e, why, data) for why, data in found]
        self.runs[e.entity] = run
        if listed is not None:
            self._order_broken(
                run,
                e,
                f"BCSS lists {listed[0]} among the candidates, but it is {listed[1].replace(' (AM-034)', '')}: such "
                f"a copy is left out of the candidate list and never activated (AM-034)",
                R.NEVER_BLOCKED,
                observed=listed[0],
                excluded=listed[1],
            )
        if judged and "sort" in a:
            tally.judge(sel.sort_rule)
        if wrong_sort and not run.broken:  # sorted otherwise than the statement that applies: its rule
            why = f"BCSS records sort {a['sort']}, but {sort_reason(sel.sort_rule, snap)}"
            self._order_broken(run, e, why, sel.sort_rule, observed=a["sort"], expected=sel.sort)
        # Retired: the previous run's record is read only by a mount outside any run (the remount check);
        # from here every mount of this database is inside this run until its BCSS_END replaces the record.
        self.last_run.pop(e.entity, None)

    @cython.locals(self=ReplayState, e=Event)
    def _order_broken(self, run: Run, e: Event, why: str, rule: Rule = R.SELECTION_ORDER, **data: Any) -> None:
        self.lead(run, rule, e, why, run.start, **data)
        run.broken = True  # one report per run

    @cython.locals(self=ReplayState)
    def _judge_attempt(self, run: Run, order_known: bool) -> None:
        """One attempt judged against the statements of the run's order: not tried before (AM-025), a candidate
        (AM-034, AM-032 for a responder), in tier and criteria order (AM-039) and sort order (AM-035..037);
        the last two only when the dials that order it are recorded."""
        tally = self.tally
        tally.judge(R.NEXT_BEST_COPY)
        tally.judge(R.NEVER_BLOCKED)
        if run.trigger.kind == "responder":
            tally.judge(R.RESPONDER_TARGET)
        if order_known:
            tally.judge(R.SELECTION_ORDER)
            tally.judge(run.sort)
        else:
            why = "the dials of the run's copies are not recorded (AM_CONFIG): the attempt's order is not judged"
            tally.skip(R.SELECTION_ORDER, why)
            tally.skip(run.sort, why)

    @cython.locals(self=ReplayState, e=Event)
    def on_acll_start(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s = a["server"]
        if "source" in a:
            self.tally.judge(R.ACLL_RECORD)
            if (a["source"] or "") != run.snap.source:
                self.v(
                    R.ACLL_RECORD,
                    e,
                    f"ACLL for {s} names source {a['source']} but the run's source is {run.snap.source}",
                    run.start,
                    observed=a["source"],
                    expected=run.snap.source,
                )
        i = len(run.tried)
        retried_or_excluded = s in run.tried or s in dict(run.excluded)
        if not run.broken:
            self._judge_attempt(run, run.judged or retried_or_excluded)
        if not run.broken and (run.judged or retried_or_excluded):
            allowed = [c.server for c in allowed_next(run.expected, run.tried)]
            if s not in allowed:
                rule, why = deviation(s, i + 1, run.expected, run.tried, run.excluded, run.refused, run.snap, run.sort)
                self._order_broken(run, e, why, rule, observed=s, allowed=allowed, attempt=i + 1)
            elif run.recorded is not None and run.recorded[i] != s:
                self._order_broken(
                    run,
                    e,
                    f"attempt {i + 1} is {s} but the run's own list has "
                    f"{run.recorded[i]} there (AM-I12: the list is computed once)",
                    observed=s,
                    expected=run.recorded[i],
                    attempt=i + 1,
                )
        run.tried.append(s)
        run.lli_before[s] = copy_of(self.db(e.entity), s, e).lli

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_acll_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.get(e.entity)
        if run is None:
            return
        s, d, tally = a["server"], self.db(e.entity), self.tally
        run.acll_done.add(s)
        state_lli = copy_of(d, s, e).lli
        before = run.lli_before.get(s, state_lli)
        src = run.snap.source
        src_ok = src in self.w.up and self.w.reachable(s, src)
        tally.judge(R.ACLL_SOURCE)
        if a["lli"] > d.lgen or (not src_ok and a["lli"] > before):
            self.v(
                R.ACLL_SOURCE,
                e,
                f"ACLL brought {s} to log {a['lli']} from {before} although the source "
                f"{src or '?'} {'is unreachable' if not src_ok else 'only generated ' + str(d.lgen)}",
                observed=a["lli"],
                before=before,
                generated=d.lgen,
                source_reachable=src_ok,
            )
        tally.judge(R.ACLL_RECORD, 1 + ("lli_before" in a) + ("missing" in a))
        if state_lli != a["lli"]:
            why = f"ACLL_END says {s} reached log {a['lli']} but its recorded copy state says {state_lli}"
            self.record(run, R.ACLL_RECORD, e, why, observed=a["lli"], expected=state_lli)
        missing = max(0, d.lgen - a["lli"])
        if "lli_before" in a and a["lli_before"] != before:
            why = f"ACLL_END says {s} started at log {a['lli_before']}, its state said {before}"
            self.record(run, R.ACLL_RECORD, e, why, observed=a["lli_before"], expected=before)
        if "missing" in a and a["missing"] != missing:
            why = (
                f"ACLL_END says {s} misses {a['missing']} logs; the last log generated "
                f"({d.lgen}) and its LastLogInspected ({a['lli']}) make it {missing} (AM-I02)"
            )
            self.record(run, R.ACLL_RECORD, e, why, observed=a["missing"], expected=missing)
        if not run.dial_known:
            tally.skip(R.DIAL, DIAL_UNKNOWN[run.judged])
            return
        threshold = dial_threshold(run.snap, s, self.opts)
        allowed = dial_allows(missing, run.snap, s, self.opts)
        limit = bound(run.snap, s, self.opts, threshold)
        run.acll_ok[s] = allowed
        if not allowed:
            run.refused[s] = f"was over its dial ({missing} missing logs, threshold {threshold})"
        tally.judge(R.ACLL_RECORD, 1 + ("threshold" in a))
        if "threshold" in a and a["threshold"] != threshold:
            why = (
                f"ACLL_END records threshold {a['threshold']} for {s} but the configured "
                f"dial ({run.snap.dial(s)}) and thresholds make it {threshold}"
            )
            self.record(run, R.ACLL_RECORD, e, why, observed=a["threshold"], expected=threshold, **limit)
        tally.judge(R.DIAL)
        if allowed and not a["ok"]:
            why = f"{s} was passed over with {missing} missing logs, within its dial's {threshold}"
            self.lead(run, R.DIAL, e, why, observed=missing, passed_over=True, **limit)
        elif not allowed and a["ok"]:
            why = f"ACLL_END says {s} passes the dial with {missing} missing logs, over its dial's {threshold}"
            self.record(run, R.ACLL_RECORD, e, why, observed=True, expected=False, missing=missing, **limit)

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def _check_mount_in_run(self, run: Run, e: Event, s: str) -> None:
        tally = self.tally
        tally.judge(R.NEVER_BLOCKED)
        c = next((c for c in run.snap.copies if c.server == s), None)
        if c is None or not c.reachable or c.administratively_blocked:
            why = "unreachable" if c is None or not c.reachable else policy(c)
            self.lead(
                run,
                R.NEVER_BLOCKED,
                e,
                f"{s} is {why}, left out of the candidates, but BCSS asks the store to mount it; "
                f"{context(run.expected, run.excluded, run.refused)}",
                run.start,
                observed=s,
            )
        tally.judge(R.NEXT_BEST_COPY)
        if s in run.failed:
            self.lead(
                run,
                R.NEXT_BEST_COPY,
                e,
                f"the mount of {e.entity} on {s} failed earlier in this BCSS run and the PAM asks the store to mount "
                f"it again: a failed mount sends the PAM on to the next best copy, each copy at most once per run "
                f"(AM-I12); {context(run.expected, run.excluded, run.refused)}",
                run.start,
                observed=s,
            )
        tally.judge(R.ACLL_BEFORE_MOUNT)
        if s not in run.acll_done:
            self.lead(run, R.ACLL_BEFORE_MOUNT, e, f"{s} is mounted without attempt copy last logs first", run.start)
        elif s in run.acll_ok:
            tally.judge(R.DIAL)
            if not run.acll_ok[s]:
                d = self.db(e.entity)
                missing, threshold = d.lgen - copy_of(d, s, e).lli, dial_threshold(run.snap, s, self.opts)
                self.lead(
                    run,
                    R.DIAL,
                    e,
                    f"{s} is mounted with {missing} missing logs, over its dial's {threshold}",
                    run.start,
                    observed=missing,
                    **bound(run.snap, s, self.opts, threshold),
                )

    @cython.locals(self=ReplayState, e=Event)
    def mount_failed(self, e: Event, s: str) -> None:
        run = self.runs.get(e.entity)
        if run is not None:
            run.failed.add(s)
            run.refused[s] = "did not mount"

    @cython.locals(self=ReplayState, e=Event, d=DbState)
    def on_bcss_end(self, e: Event, a: dict[str, Any]) -> None:
        run = self.runs.pop(e.entity, None)
        if run is None:
            return
        self.last_run[e.entity] = run
        run.outcome = a["outcome"]
        d = self.db(e.entity)
        if a["outcome"] == "mounted" or (a["outcome"] == "no_candidate" and run.judged):
            self.tally.judge(R.BCSS_RECORD)
        if a["outcome"] == "mounted" and not (a.get("server") == d.active and d.mounted):
            self.record(
                run,
                R.BCSS_RECORD,
                e,
                f"BCSS ends 'mounted' on {a.get('server')} but {e.entity} is mounted on "
                f"{', '.join(sorted(d.on)) or 'no copy'}",
                observed=a.get("server"),
                expected=sorted(d.on),
            )
        elif a["outcome"] == "no_candidate" and run.judged and run.expected:
            self.record(
                run,
                R.BCSS_RECORD,
                e,
                f"BCSS ends with no candidate but the seed's list has {', '.join(c.server for c in run.expected)}",
                observed=a["outcome"],
                expected=[c.server for c in run.expected],
            )
        if not (run.broken or not run.judged or a["outcome"] == "mounted"):
            self.tally.judge(R.SELECTION_ORDER)  # the run judged for giving up only after trying every copy
            left = [c.server for c in run.expected if c.server not in run.tried]
            if left:
                self._order_broken(
                    run,
                    e,
                    f"the run gives up ({a['outcome']}) without trying {', '.join(left)}; "
                    f"{context(run.expected, run.excluded, run.refused)}",
                    observed=a["outcome"],
                    untried=left,
                )
        self.flush_record(run)
