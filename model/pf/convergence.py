"""The public folder monitor's convergence check (PF-035) and the fairness assumption it rests on.

Seed 001, "Replication Process" and "Backfill", seed 003: every active replica of a folder holds the same
CNSet within a bound after a quiescent phase starts (`properties.convergence_bound_ms`, from the recorded
configuration). The phase's start is the one the END events state, taken only where the record bears it
out: no recorded fault (a store down, a partition, mail loss) in force at or after it. Judged once per
folder at its END events (the end-of-run snapshot); a folder without one, a trace without a latency bound,
an END stating no phase, a fault in force or a trace ending before the bound leave it unjudged, with the
reason in the fold's tally (issue 29). An END recorded after the bound is judged for the bound, not only for
its own instant (issue 30, family 1): a replica whose CNSet still changed after the bound while another's did
not was not converged at the bound (`late_convergence`). Mixed into `monitor.PfFold`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the fold's and records' locals as C structs (`.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.pf import properties as P
from model.pf.cnset import CNSet
from model.pf.foldstate import FoldState
from model.pf.properties import convergence_bound_ms
from model.pf.rules import CONVERGENCE, RESTATED_STATE
from model.pf.state import ACTIVE
from spec.catalogue import require
from traces.schema import Event

require("PF-035", "PF-032")


class Convergence(FoldState):
    @cython.locals(self=FoldState)
    def init_faults(self) -> None:
        # what the record says broke the fairness assumption of PF-035: faults still in force (a store down,
        # a partition, mail loss) by key, and the ones that ended, with their end
        self.open_faults: dict[tuple[str, ...], str] = {}
        self.ended_faults: list[tuple[int, str]] = []
        # per replica: when it was created (or restored), and when its CNSet last changed (a local change, a
        # received change applied, a restore): one int each, for the convergence bound (`late_convergence`)
        self.created_ms: dict[tuple[str, str], int] = {}
        self.cnset_changed_ms: dict[tuple[str, str], int] = {}

    # --- the fairness assumption of PF-035, from the record -------------------------------------------
    @cython.locals(self=FoldState)
    def note_fault(self, ev: Event) -> Event:
        """Follow the recorded faults: a crash (until the store's restart), a partition (until HEAL), mail
        loss (a NET_CONFIG with `loss_ppm` above 0, until one with 0). Returns `ev`."""
        key: tuple[str, ...]
        if ev.kind in ("CRASH", "RESTART"):
            key, what = ("down", ev.node), f"{ev.node} down from {ev.ts_ms} ({ev.event_id})"
            starts = ev.kind == "CRASH"
        elif ev.kind in ("PARTITION", "HEAL"):
            key, what = ("partition",), f"a network partition from {ev.ts_ms} ({ev.event_id})"
            starts = ev.kind == "PARTITION"
        elif ev.kind == "NET_CONFIG":
            ppm = ev.attrs.get("loss_ppm", 0)
            key, what = ("loss",), f"mail loss of {ppm} ppm from {ev.ts_ms} ({ev.event_id})"
            starts = not isinstance(ppm, int) or ppm > 0
        else:
            return ev
        if key in self.open_faults:
            self.ended_faults.append((ev.ts_ms, self.open_faults.pop(key)))
        if starts:
            self.open_faults[key] = what
        return ev

    @cython.locals(self=FoldState)
    def fairness_broken(self, quiesce_ms: int) -> str | None:
        """Why the record contradicts a quiescent phase from `quiesce_ms` (a fault in force at or after it)."""
        late = sorted(what for end, what in self.ended_faults if end > quiesce_ms)
        found = sorted(self.open_faults.values()) + late
        return (
            f"the trace records {found[0]}" + (f" and {len(found) - 1} more" if len(found) > 1 else "")
            if found
            else None
        )

    # --- convergence (PF-035) -------------------------------------------------------------------------
    @cython.locals(self=FoldState)
    def convergence(self) -> None:
        """PF-035 at the end-of-run snapshot: one instance per folder with END events; a folder with replicas
        and no END is an instance the trace does not let the rule judge."""
        for fid, ends in sorted(self.ends.items()):
            self.converged(fid, ends)
        unseen = len({f for _, f in self.reps} - self.ends.keys())
        if unseen:
            self.tally.skip(CONVERGENCE, "no END snapshot of the folder in the trace", unseen)

    @cython.locals(self=FoldState)
    def converged(self, fid: str, ends: list[Event]) -> None:
        assert self.cfg is not None
        last = ends[-1]
        for e in ends:
            rep = self.reps.get((e.node, fid))
            if rep is None:
                self.flag(RESTATED_STATE, e, f"END for {fid}, which it holds no replica of", data={"observed": fid})
                continue
            stated = (CNSet.decode(e.attrs["cnset"]), e.attrs.get("state", rep.state))
            bad = stated != (rep.cnset, rep.state)
            self.flag(
                RESTATED_STATE,
                e,
                bad and f"END states {stated[0]} {stated[1]}; the replayed replica holds {rep.cnset} {rep.state}",
                data=bad and {"observed": [str(stated[0]), stated[1]], "expected": [str(rep.cnset), rep.state]},
            )
        if self.cfg.latency_max_ms is None:
            self.notes.append(f"{last.event_id}: no mail latency bound recorded: convergence cannot be judged")
            self.tally.skip(CONVERGENCE, "no mail latency bound recorded (NET_CONFIG)")
            return
        bound = convergence_bound_ms(self.cfg.params, self.cfg.latency_max_ms)
        if "bound_ms" in last.attrs:  # the END restates the bound
            stated_bound = int(last.attrs["bound_ms"])
            bad = stated_bound != bound
            self.flag(
                RESTATED_STATE,
                last,
                bad and f"END states bound {stated_bound}; the recorded configuration gives {bound}",
                data=bad and {"observed": stated_bound, "expected": bound, "parameters": list(CONVERGENCE.params)},
            )
        quiesce = last.attrs.get("quiesce_ms")
        if type(quiesce) is not int:
            self.notes.append(f"{last.event_id}: END states no quiescent phase (quiesce_ms): convergence not judged")
            self.tally.skip(CONVERGENCE, "the END states no quiescent phase (quiesce_ms)")
            return
        # the stated start of the quiescent phase is taken only where the record bears it out: no fault in
        # force at or after it (else the END restates a phase that did not happen), and a trace that ends
        # before the bound leaves convergence unjudged, which the report shows, rather than passed
        broken = self.fairness_broken(quiesce)
        self.flag(
            RESTATED_STATE,
            last,
            broken and f"END states a quiescent phase from {quiesce}, but {broken}",
            data=broken and {"observed": quiesce, "fault": broken},
        )
        if broken:
            self.tally.skip(CONVERGENCE, "a recorded fault in force during the quiescent phase the END states")
            return
        if last.ts_ms - quiesce < bound:
            self.notes.append(
                f"{last.event_id}: convergence of {fid} not judged: the trace ends {last.ts_ms - quiesce} ms "
                f"after the quiescent phase its END states, before the bound of {bound} ms"
            )
            self.tally.skip(CONVERGENCE, "the trace ends before the convergence bound")
            return
        active = {s: r.cnset for (s, f), r in self.reps.items() if f == fid and r.state == ACTIVE}
        why = P.converged(active)
        every = CNSet()
        for c in active.values() if why else ():
            every = every | c
        behind = ",".join(s for s, c in sorted(active.items()) if c != every)  # the stores at fault (issue 34)
        if not why:
            why, behind = self.late_convergence(fid, active, quiesce + bound)
        self.flag(
            CONVERGENCE,
            last,
            why,
            *ends[:-1],
            party=behind or None,
            data=why
            and {
                "observed": {s: str(c) for s, c in sorted(active.items())},
                "quiesce_ms": quiesce,
                "bound_ms": bound,
                "observed_ms": last.ts_ms,
                "parameters": list(CONVERGENCE.params),
            },
        )

    @cython.locals(self=FoldState)
    def late_convergence(self, fid: str, active: dict[str, CNSet], bound_at: int) -> tuple[str | None, str]:
        """Converged at the END, but not by `bound_at` (an END recorded after the bound, PF-035): an active replica
        of before the bound whose CNSet changed after it, while another's did not (that one held the final CNSet
        at the bound, the first did not). When every replica changed after the bound (a change made after it,
        or a push from a delete-pending replica to all), the state at the bound is not known: not flagged.
        Returns the explanation (None: not flagged) and the store at fault (the one still behind at the bound)."""
        since = {
            s: self.cnset_changed_ms.get((s, fid), -1) for s in active if self.created_ms.get((s, fid), -1) <= bound_at
        }
        moved = sorted((t, s) for s, t in since.items() if t > bound_at)
        still = sorted(s for s, t in since.items() if t <= bound_at)
        if not moved or not still:
            return None, ""
        t, s = moved[-1]
        return (
            f"converged only after the bound at {bound_at}: {s}'s CNSet still changed at {t} "
            f"({t - bound_at} ms after it), while {still[0]} held the final {active[still[0]]} by the bound"
        ), s

    @cython.locals(self=FoldState)
    def cnset_changed(self, key: tuple[str, str], at: int, *, created: bool = False) -> None:
        """A replica's CNSet changed (or it was created or restored) at `at`."""
        self.cnset_changed_ms[key] = at
        if created:
            self.created_ms[key] = at
