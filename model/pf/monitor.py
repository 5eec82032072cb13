"""The public folder trace monitor: a fold of one trace's events over `step.py`, judged by `rules.RULES`.

Scope "trace": the checker hands it every event of one trace (the hierarchy 1-1 and every folder, and the
kernel's CRASH/RESTART), plus the trace's context (TRACE_START, PF_CONFIG, NET_CONFIG). It rebuilds every
store's replica of every folder, and every store's replica list from the hierarchy changes that store
holds (PF-025, PF-I14), calling the same transitions as the generator. Durations, sort keys and the
convergence bound come from the recorded configuration (`config.py`); flags and timestamps an event states
about itself are checked against what the monitor derived (family 1 of issue 9). Seeds 001 and 003.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from conformance.monitor import MonitorResult, Violation
from model.pf import decide as D
from model.pf import step as S
from model.pf.cnset import CNSet
from model.pf.config import PF_CONFIG, RunConfig, restated_config
from model.pf.deadlines import Deadlines
from model.pf.events import MECH
from model.pf.handlers import Handlers
from model.pf.lifecycle import Lifecycle
from model.pf.rules import RULES
from model.pf.state import HIERARCHY, Change, Ctx, Msg, Replica
from traces.schema import Event


class Replay(Handlers, Lifecycle, Deadlines):
    """The monitor's state for one trace and its fold."""

    def __init__(self, events: Sequence[Event], context: Sequence[Event]) -> None:
        self.events = sorted(events, key=lambda e: e.seq)
        self.context = sorted((e for e in context if e.kind in (PF_CONFIG, "NET_CONFIG")), key=lambda e: e.seq)
        self.cfg: RunConfig | None = None
        self.ctx_of: tuple[RunConfig | None, dict[str, Ctx]] = (None, {})
        self.changes: dict[str, Change] = {}
        self.change_fid: dict[str, str] = {}
        self.hier_targets: set[str] = set()
        self.sends: dict[str, tuple[Msg, Event]] = {}
        self.received: set[tuple[str, str]] = set()  # (store, msg id)
        self.reps: dict[tuple[str, str], Replica] = {}
        self.hindex: dict[str, dict[str, list[Change]]] = {}  # store -> target -> hierarchy changes held
        self.views: dict[tuple[str, str], dict[str, str]] = {}  # derived replica lists
        self.mounted: set[str] = set()
        self.local_home: dict[str, str] = {}  # local (non-replicating) folder -> the store holding its one copy
        self.backups: dict[tuple[str, str], tuple[dict[str, Replica], dict[str, list[Change]]]] = {}
        self.pending_since: dict[tuple[str, str], int] = {}
        self.restored: dict[str, int] = {}
        self.removed_after_delete_now: set[tuple[str, str]] = set()
        self.expired_now: dict[tuple[str, str], int] = {}
        self.expect_file: dict[tuple[str, str], tuple[object, Event]] = {}
        self.expect_requests: dict[tuple[str, str], list[tuple[str, CNSet]]] = {}
        self.ends: dict[str, list[Event]] = {}
        self.violations: list[Violation] = []
        self.notes: list[str] = []
        self.init_deadlines()

    def flag(self, rule: str, ev: Event, why: str | bool | None, *more: Event, entity: str | None = None) -> None:
        if why:
            ids = (*(m.event_id for m in more), ev.event_id)
            req = RULES[rule].requirement
            self.violations.append(
                Violation(rule, req, ev.trace_id, entity or ev.entity, ids, f"{ev.node}: {why}", MECH)
            )

    def run(self) -> MonitorResult:
        pending_cfg = list(self.context)
        handlers: dict[str, Any] = {}  # event kind -> bound handler (None: no handler)
        for ev in self.events:
            while pending_cfg and pending_cfg[0].seq <= ev.seq:
                self.cfg = RunConfig.of(self.note_fault(pending_cfg.pop(0)), self.cfg)
            if ev.mechanism == "core" and ev.kind in ("CRASH", "RESTART", "PARTITION", "HEAL"):
                self.note_fault(ev)
                if ev.kind in ("CRASH", "RESTART"):
                    self.lifecycle(ev)
                continue
            if ev.mechanism != MECH or ev.kind == PF_CONFIG:
                continue
            if self.cfg is None:
                return MonitorResult.of(
                    (),
                    [
                        f"{ev.event_id}: no PF_CONFIG before the first pf event: "
                        "the configuration to judge by is unknown"
                    ],
                )
            if ev.node not in self.mounted and not (ev.kind == "REPLICA_CREATE" and ev.entity == HIERARCHY):
                self.notes.append(
                    f"{ev.event_id}: {ev.node} records {ev.kind} before mounting its store "
                    "(REPLICA_CREATE of 1-1): a partial trace"
                )
                continue
            self.due(ev)
            handler = handlers.get(ev.kind, False)
            if handler is False:
                handler = handlers[ev.kind] = getattr(self, "on_" + ev.kind.lower(), None)
            if handler is None:
                continue
            self.file_not_recorded(ev)
            try:
                handler(ev)
                self.note_due(ev)
            except (KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:  # a partial trace
                self.notes.append(f"{ev.event_id}: cannot replay {ev.kind} ({type(exc).__name__}: {exc})")
                return MonitorResult.of(self.violations, self.notes)
        for ev in pending_cfg:  # context after the last event: only its faults matter
            self.note_fault(ev)
        self.convergence()
        return MonitorResult.of(self.violations, self.notes)

    # --- helpers the handlers share --------------------------------------------------------------------
    def ctx(self, store: str) -> Ctx:
        """The store's context under the configuration in force (built once per configuration and store)."""
        assert self.cfg is not None
        if self.ctx_of[0] is not self.cfg:
            self.ctx_of = (self.cfg, {})
        found = self.ctx_of[1].get(store)
        if found is None:
            found = self.ctx_of[1][store] = self.cfg.ctx(store)
        return found

    def view(self, store: str, fid: str) -> dict[str, str]:
        if fid == HIERARCHY:
            rep = self.reps.get((store, fid))
            return dict(rep.view) if rep is not None else {}
        return self.views.get((store, fid), {})

    def refresh_views(self, store: str, targets: set[str]) -> None:
        """Re-fold the replica lists of `targets` from the hierarchy changes the store holds (PF-I14)."""
        index = self.hindex.setdefault(store, {})
        for t in sorted(targets - {HIERARCHY}):
            view = D.fold_view(index.get(t, []))
            self.views[(store, t)] = view
            rep = self.reps.get((store, t))
            if rep is not None:
                self.reps[(store, t)] = S.set_view(rep, view)

    def hold_hierarchy(self, store: str, cns: CNSet) -> None:
        targets = set()
        for cn in cns:
            c = self.changes.get(str(cn))
            if c is None:
                continue
            self.hindex.setdefault(store, {}).setdefault(c.target, []).append(c)
            targets.add(c.target)
        self.refresh_views(store, targets)

    def check_restated_config(self, ev: Event) -> None:
        assert self.cfg is not None
        self.flag("recorded-config", ev, restated_config(self.cfg, ev.node, ev.attrs))


class PFMonitor:
    """Monitor for mechanism `pf`: one trace at a time (every folder, the hierarchy and store outages)."""

    mechanism = MECH
    scope: Literal["entity", "trace"] = "trace"

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        return Replay(events, context).run()


def monitor() -> PFMonitor:
    return PFMonitor()
