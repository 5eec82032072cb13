"""The public folder trace monitor: a fold of one trace's events over `step.py`, judged by the rules of `rules.py`.

Scope "trace": the checker feeds it every event of one trace in sequence order (the hierarchy 1-1 and
every folder, and the kernel's CRASH/RESTART), with the trace's context (TRACE_START, PF_CONFIG,
NET_CONFIG) given at `start` and/or fed inline (`traces.verdict.ContextCursor` takes each once). It keeps
every store's replica of every folder, and every store's replica list folded from the hierarchy changes
that store holds (PF-025, PF-I14, `step.HeldHierarchy`), calling the same transitions as the generator.
Durations, sort keys and the convergence bound come from the recorded configuration (`config.py`); flags
and timestamps an event states about itself are checked against what the monitor derived (family 1 of
issue 9). Seeds 001 and 003. The state is mutable, updated in place, and picklable at any point
(`traces.verdict.save_fold`); what it keeps for the whole run, and why, is in `README.md` ("Monitor state").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the fold's and records' locals as C structs (`.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from model.pf import faults as F
from model.pf.backfill import Backfill
from model.pf.config import PF_CONFIG, RESTATED_CONTEXT, restated_config, restated_data
from model.pf.convergence import Convergence
from model.pf.deadlines import Deadlines
from model.pf.events import MECH
from model.pf.faults import check_attrs
from model.pf.foldstate import FoldState, Mark
from model.pf.handlers import Handlers
from model.pf.lifecycle import Lifecycle
from model.pf.rules import RECORDED_CONFIG
from model.pf.schedule import Schedule
from model.pf.state import HIERARCHY, Ctx
from model.pf.step import HeldHierarchy, set_view
from spec.catalogue import require
from traces.schema import Event, is_context_kind
from traces.verdict import ContextCursor, InputFault, MonitorResult, Rule, fold_all, in_seq_order

require("PF-025", "PF-035", "PF-032")

FAULTS = ("CRASH", "RESTART", "PARTITION", "HEAL")
CONFIGS = (PF_CONFIG, "NET_CONFIG")

# fold class -> event kind -> its handler (None: none); a cache of class attributes, never fold state
_HANDLERS: dict[type, dict[str, Callable[..., None] | None]] = {}
# event kind -> whether it is a context kind (`traces.schema.is_context_kind`, per kind once: no string method per
# event); a cache of a pure function, bounded by the kinds a corpus names
_CONTEXT_KINDS: dict[str, bool] = {}


class PfFold(Handlers, Backfill, Lifecycle, Deadlines, Convergence, Schedule):
    """One trace's judgement in progress: the state of every replica, message and obligation."""

    @cython.locals(self=FoldState)
    def __init__(self, context: Sequence[Event] = ()) -> None:
        super().__init__(context)
        self.init_deadlines()
        self.init_faults()
        self.init_schedule()

    # --- the fold ---------------------------------------------------------------------------------------
    @cython.locals(self=FoldState, cursor=ContextCursor)
    def feed(self, ev: Event) -> None:
        """Judge one event (in sequence order): the context due before it first, then its handler after
        the deadlines it may have passed (`Deadlines.due`). Seed 001 "Replication Process", seed 003."""
        if self.stopped is not None:
            return
        cursor = self.cursor
        context, at = cursor.events, cursor.index
        if at < len(context) and context[at].seq < ev.seq:  # one due (`ContextCursor.due`'s test, before its generator)
            for c in cursor.due(ev.seq):
                if not self.take_context(c):
                    return
        kind = ev.kind
        context_kind = _CONTEXT_KINDS.get(kind)
        if context_kind is None:
            context_kind = _CONTEXT_KINDS[kind] = is_context_kind(kind)
        if context_kind:
            if not cursor.taken(ev) and not self.take_context(ev):
                return
            if kind in CONFIGS:
                return
        mechanism = ev.mechanism
        if mechanism != MECH:
            if mechanism == "core" and kind in FAULTS:
                if kind == "CRASH" and self.cfg is not None:
                    self.due(ev)  # what the store owed before it went down was late by then (issue 30, family 1)
                self.note_fault(ev)
                self.note_reach(ev)
                if kind in ("CRASH", "RESTART"):
                    self.lifecycle(ev)
                    self.schedule_reset(ev.node)
            return
        if self.cfg is None:
            note = f"{ev.event_id}: no PF_CONFIG before the first pf event: the configuration to judge by is unknown"
            self.stop(MonitorResult.of((), [note], tally=self.tally))
            return
        if ev.node not in self.mounted and not (kind == "REPLICA_CREATE" and ev.entity == HIERARCHY):
            self.notes.append(
                f"{ev.event_id}: {ev.node} records {kind} before mounting its store "
                "(REPLICA_CREATE of 1-1): a partial trace"
            )
            return
        self.due(ev)
        table = _HANDLERS.get(type(self))
        if table is None:
            table = _HANDLERS[type(self)] = {}
        handler = table.get(kind, False)
        if handler is False:
            handler = table[kind] = getattr(type(self), "on_" + kind.lower(), None)
        if handler is None:
            return
        if self.expect_file:
            self.file_not_recorded(ev)
        try:
            check_attrs(ev)
            handler(self, ev)
            self.note_due(ev)
        except InputFault as exc:  # a partial or foreign trace (`faults.py`): judging stops here
            self.notes.append(f"{ev.event_id}: cannot replay {kind} ({exc})")
            self.stop(MonitorResult.of(self.violations, self.notes, tally=self.tally))

    @cython.locals(self=FoldState)
    def take_context(self, c: Event) -> bool:
        """A context event, in sequence order: the recorded configuration in force from it (config.py). False
        when it does not parse (`faults.config`): judging stops, with a note."""
        if c.kind in CONFIGS:
            if c.kind == PF_CONFIG and self.cfg is not None:
                self.due(c)  # what was late under the configuration in force is judged before it changes
            try:
                self.cfg = F.config(self.note_fault(c), self.cfg)
            except InputFault as exc:
                self.notes.append(f"{c.event_id}: cannot read {c.kind} ({exc})")
                self.stop(MonitorResult.of(self.violations, self.notes, tally=self.tally))
                return False
        return True

    @cython.locals(self=FoldState)
    def stop(self, result: MonitorResult) -> None:
        """Judging ends with `result`: no later event can change it, so every other state is dropped."""
        self.clear()
        self.stopped = result

    @cython.locals(self=FoldState)
    def finish(self) -> MonitorResult:
        """The verdict: the context left (its faults), then convergence at the END of each folder (PF-035)."""
        if self.stopped is None:
            for c in self.cursor.rest():  # context after the last event: only its faults matter
                if c.kind in CONFIGS:
                    self.note_fault(c)
            self.owed_at_end()
            self.convergence()
            self.stop(MonitorResult.of(self.violations, self.notes, tally=self.tally))
        assert self.stopped is not None
        return self.stopped

    @cython.locals(self=FoldState)
    def flag(
        self,
        rule: Rule,
        ev: Event,
        why: str | bool | None,
        *more: Event | Mark,
        entity: str | None = None,
        data: Mapping[str, Any] | Any = None,
        party: str | None = None,
    ) -> None:
        """One instance of `rule` judged at `ev` (`tally.judge`), violated when `why` says so: the events `more`
        cited before `ev`, and `data` the values compared (a JSON-able mapping, built by the caller only on a
        violation: `bad and {...}`; anything falsy otherwise). The message names the party at fault first:
        `party` (a store that owes what it did not do, the stores a folder did not converge on), else the
        store of `ev` (issue 34)."""
        judged = self.tally.judged  # Tally.judge, inlined: the hot path
        name = rule.name
        judged[name] = judged.get(name, 0) + 1
        if why:
            evs: Any = (*more, ev)  # a Mark stands for its REPL_SEND: it has the event's ID
            text = f"{party or ev.node}: {why}"
            self.violations.append(rule.violated(evs, text, at=ev, entity=entity, **(data or {})))

    @cython.locals(self=FoldState)
    def describe(self, entity: str | None = None) -> dict[str, Any]:
        """A compact, JSON-able summary of the fold's state now, for the report (`conformance.audit`): the
        mounted stores, and for `entity` (a folder) each store's replica of it: its state, the change numbers
        it holds (its CNSet) and those not yet broadcast (seed 001, "Replication State Tables"). Read only."""
        out: dict[str, Any] = {
            "stores mounted": sorted(self.mounted),
            "replication messages sent": len(self.sends),
            "judging": "stopped" if self.stopped is not None else "on",
            "violations so far": len(self.violations),
        }
        if entity is not None:
            reps = {store: rep for (store, fid), rep in self.reps.items() if fid == entity}
            out[f"replicas of {entity}"] = {
                store: {"state": rep.state, "holds": str(rep.cnset) or "-", "not yet broadcast": str(rep.unsent) or "-"}
                for store, rep in sorted(reps.items())
            } or "none recorded yet"
        return out

    # --- helpers the handlers share --------------------------------------------------------------------
    @cython.locals(self=FoldState)
    def ctx(self, store: str) -> Ctx:
        """The store's context under the configuration in force (built once per configuration and store)."""
        assert self.cfg is not None
        if self.ctx_of[0] is not self.cfg:
            self.ctx_of = (self.cfg, {})
        found = self.ctx_of[1].get(store)
        if found is None:
            found = self.ctx_of[1][store] = self.cfg.ctx(store)
        return found

    @cython.locals(self=FoldState)
    def view(self, store: str, fid: str) -> dict[str, str]:
        if fid == HIERARCHY:
            rep = self.reps.get((store, fid))
            return dict(rep.view) if rep is not None else {}
        return self.views.get((store, fid), {})

    @cython.locals(self=FoldState)
    def refresh_views(self, store: str, targets: Sequence[str]) -> None:
        """Re-read the replica lists of `targets` (in name order, never 1-1) from the store's fold (PF-I14)."""
        held = self.held.get(store)
        if store in self.announce_owed:  # a removal it owes announcing may be discharged (`Deadlines.announcements`)
            self.dirty.add((store, HIERARCHY))
        for t in targets:
            view = held.view(t) if held is not None else {}
            self.views[(store, t)] = view
            rep = self.reps.get((store, t))
            if rep is not None and rep.view != view:  # an equal list changes no deadline: not re-derived
                self.put((store, t), set_view(rep, view))

    @cython.locals(self=FoldState)
    def hold_hierarchy(self, store: str, cns: Sequence[str]) -> None:
        """The store now holds the hierarchy changes `cns` (CN texts): fold them into its replica lists."""
        found = [c for c in map(self.changes.get, cns) if c is not None]
        held = self.held.get(store)
        if held is None:
            held = self.held[store] = HeldHierarchy()
        self.refresh_views(store, held.hold(found))

    @cython.locals(self=FoldState)
    def check_restated_config(self, ev: Event) -> None:
        assert self.cfg is not None
        if "params" in ev.attrs:
            F.params(ev.attrs["params"])
        if any(k in ev.attrs for k in RESTATED_CONTEXT):  # the event restates the store's context
            why = restated_config(self.cfg, ev.node, ev.attrs)
            self.flag(
                RECORDED_CONFIG,
                ev,
                why,
                data=why and restated_data(self.cfg, ev.node, ev.attrs),
            )


class PFMonitor:
    """Monitor for mechanism `pf`: one trace at a time (every folder, the hierarchy and store outages)."""

    mechanism = MECH
    scope: Literal["entity", "trace"] = "trace"
    # the mechanisms whose events the fold reads (`conformance.engine.folds.GroupFolds`): of any other it takes
    # only context events, which the engine feeds it anyway (`PfFold.feed` returns on the rest)
    reads = frozenset((MECH, "core"))

    def start(self, context: Sequence[Event] = ()) -> PfFold:
        return PfFold(context)

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        return fold_all(self, in_seq_order(events), context)


def monitor() -> PFMonitor:
    return PFMonitor()
