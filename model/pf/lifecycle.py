"""The public folder monitor's replica-lifecycle handlers (family 3 of issue 9): every change of a replica's
state is checked against `step.REPLICA_TRANSITIONS` and the route's condition; replica lists are derived
from the hierarchy changes a store holds (seed 001 "Adding a Replica", "Deleting a Replica", "Hierarchy
Replication"; seed 003 "Example Replication Cycles"). Mixed into `monitor.PfFold`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the fold's and records' locals as C structs (`.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.pf import faults as F
from model.pf.decisions import has_others
from model.pf.faults import as_int
from model.pf.foldstate import FoldState
from model.pf.properties import delete_after_status, no_content_loss
from model.pf.rules import (
    DELETE_NOW_AFTER_STATUS,
    NO_CONTENT_LOSS,
    REDIRECT_TO_ACTIVE_REPLICA,
    REPLICA_CREATED_BY_HIERARCHY,
    REPLICA_LIST_DERIVED,
    REPLICA_STATE_TRANSITION,
    RESTATED_STATE,
    SERVED_BY_ACTIVE_REPLICA,
)
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY, Replica
from model.pf.step import ABSENT, HeldHierarchy, delete_now, enter_delete_pending, new_replica, set_view, transition
from spec.catalogue import require
from traces.schema import Event

require("BF-021", "BF-028", "BF-029", "BF-032", "BF-033", "BF-034", "BF-035", "PF-025")


def _pairs(items: list[str]) -> dict[str, str]:
    out = {}
    for i in items:  # (a loop, not a generator: one per REPLICA_VIEW)
        k, _, v = i.partition("=")
        out[k] = v
    return out


def _state(rep: Replica | None) -> str:
    return ABSENT if rep is None else rep.state


def _new_why(fid: str, store: str, rep: Replica) -> str:
    if fid == HIERARCHY:
        return "the hierarchy is no new folder replica"
    return f"a replica added to a folder with other replicas ({sorted(s for s in rep.view if s != store)}) is new"


class Lifecycle(FoldState):
    # --- the replica lifecycle (family 3: step.REPLICA_TRANSITIONS) ----------------------------------
    @cython.locals(self=FoldState)
    def move(self, ev: Event, rep: Replica | None, condition: str | None) -> bool:
        """Check one replica-state change against the table and its route's condition."""
        before = _state(rep)
        after = transition(before, ev.kind)
        if after is None:
            why: str | None = f"{ev.kind} from state {before}: no such route in the protocol"
        elif condition:
            why = f"{ev.kind} from {before}: {condition}"
        else:
            why = None
        self.flag(REPLICA_STATE_TRANSITION, ev, why, data=why and {"observed": ev.kind, "state": before})
        return why is None

    @cython.locals(self=FoldState)
    def on_folder_create(self, ev: Event) -> None:
        """Whether a folder replicates is derived from the hierarchy (PF-004), not from here; a store creating
        a local folder (Restrictions, Views) is only noted as the home of its one copy (PF-I16)."""
        if ev.attrs.get("replicating") is False and ev.entity != HIERARCHY:
            self.local_home.setdefault(ev.entity, ev.node)

    @cython.locals(self=FoldState)
    def local_copy(self, store: str, fid: str) -> bool:
        """Whether `store` holds the one copy of a local folder (PF-I16): it recorded creating the folder as a
        local one, and no hierarchy change of the trace names the folder (one that does makes it a replicated
        folder, judged by its replicas)."""
        return self.local_home.get(fid) == store and fid not in self.hier_targets

    @cython.locals(self=FoldState)
    def on_replica_create(self, ev: Event) -> None:
        store, fid, a = ev.node, ev.entity, ev.attrs
        self.check_restated_config(ev)
        rep = self.reps.get((store, fid))
        if rep is not None:
            self.move(ev, rep, None)
            return
        if fid == HIERARCHY:
            self.mounted.add(store)
            self.mount(ev)
        else:
            bad = self.view(store, fid).get(store) != ACTIVE
            self.flag(
                REPLICA_CREATED_BY_HIERARCHY,
                ev,
                bad
                and f"created a replica of {fid}, but its replica list (from the hierarchy changes it holds) is "
                f"{self.view(store, fid)}",
                data=bad and {"observed": dict(self.view(store, fid)), "expected": {store: ACTIVE}},
            )
        rep = new_replica(fid, store, a["origin"], self.view(store, fid), new=True)
        sole = fid != HIERARCHY and not has_others(rep)
        if sole:  # the folder's first replica (its creator's): not "added" to an existing folder (BF-I17)
            self.created_sole.add((store, fid))
        self.cnset_changed((store, fid), ev.ts_ms, created=True)
        if "new" in a:  # the event restates whether the replica is new: a content replica added to a folder
            new = bool(a["new"])  # with other replicas is; the hierarchy is not; the creator's, either (BF-I17)
            allowed = [False] if fid == HIERARCHY else [True, False] if sole else [True]
            bad = new not in allowed
            self.flag(
                RESTATED_STATE,
                ev,
                bad and f"REPLICA_CREATE says new={new}; " + _new_why(fid, store, rep),
                data=bad and {"observed": new, "allowed": allowed},
            )
        self.put((store, fid), rep)

    @cython.locals(self=FoldState)
    def on_replica_view(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        recorded = _pairs(ev.attrs["replicas"])
        if fid == HIERARCHY and store not in self.mounted:
            self.notes.append(
                f"{ev.event_id}: {store} records a hierarchy replica list before mounting (partial trace)"
            )
            self.tally.skip(REPLICA_LIST_DERIVED, "a hierarchy replica list recorded before its store mounted")
            return
        if fid == HIERARCHY:
            wrong = {s for s, st in recorded.items() if st != ACTIVE or s not in self.mounted} | (
                {store} - set(recorded)
            )
            self.flag(
                REPLICA_LIST_DERIVED,
                ev,
                wrong
                and f"hierarchy replica list {recorded} names {sorted(wrong)} wrongly (mounted: "
                f"{sorted(self.mounted)})",
                data=wrong and {"observed": recorded, "wrong": sorted(wrong), "mounted": sorted(self.mounted)},
            )
            rep = self.reps.get((store, fid))
            if rep is not None:
                self.put((store, fid), set_view(rep, recorded))
            return
        derived = self.view(store, fid)
        bad = recorded != derived
        self.flag(
            REPLICA_LIST_DERIVED,
            ev,
            bad and f"records replica list {recorded} for {fid}; its hierarchy changes give {derived}",
            data=bad and {"observed": recorded, "expected": dict(derived)},
        )

    @cython.locals(self=FoldState)
    def on_delete_pending(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        mine = self.view(store, fid).get(store)
        cond = mine != DELETE_PENDING and f"its replica list shows it {mine or 'absent'}, not delete pending"
        if self.move(ev, rep, cond or None) and rep is not None:
            self.pending_since[(store, fid)] = ev.seq
            self.anchor(self.last_request, (store, fid), ev.ts_ms)
            self.put((store, fid), enter_delete_pending(rep))

    @cython.locals(self=FoldState)
    def on_delete_now(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        if not self.move(ev, rep, None) or rep is None:
            return
        p = self.ctx(store).params
        why = delete_after_status(rep.statuses, rep.view, rep.cnset, store, p)
        self.flag(
            DELETE_NOW_AFTER_STATUS,
            ev,
            why,
            data=why
            and {
                "holds": str(rep.cnset),
                "statuses": {s: str(c) for s, c in sorted(rep.statuses.items())},
                "requires_all": p.delete_requires_all,
                "parameters": list(DELETE_NOW_AFTER_STATUS.params),
            },
        )
        others = {s: r.cnset for (s, f), r in self.reps.items() if f == fid and s != store and r.state == ACTIVE}
        since = self.pending_since.get((store, fid), -1)
        confirmed_then_restored = {s: c for s, c in rep.statuses.items() if self.restored.get(s, -1) > since}
        why = no_content_loss(rep.cnset, others, confirmed_then_restored)
        self.flag(
            NO_CONTENT_LOSS,
            ev,
            why,
            data=why and {"holds": str(rep.cnset), "others": {s: str(c) for s, c in sorted(others.items())}},
        )
        stated = ev.attrs.get("cnset")
        if stated is not None:  # the event restates what the replica holds
            bad = F.cnset(stated) != rep.cnset
            self.flag(
                RESTATED_STATE,
                ev,
                bad and f"DELETE_NOW states {stated}; the replica holds {rep.cnset}",
                data=bad and {"observed": stated, "expected": str(rep.cnset)},
            )
        self.put((store, fid), delete_now(rep))
        self.anchor(self.dead_since, (store, fid), ev.ts_ms)
        self.owe_announcement(store, fid, ev.ts_ms)

    @cython.locals(self=FoldState)
    def on_replica_removed(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        listed = self.view(store, fid).get(store) if fid != HIERARCHY else ACTIVE
        cond = None
        if rep is not None and rep.state != DELETE_NOW and listed is not None:
            cond = f"removed while {rep.state} and still {listed} on its replica list (no delete now, no deletion)"
        if self.move(ev, rep, cond):
            if rep is not None and rep.state == DELETE_NOW:
                self.removed_after_delete_now.add((store, fid))
            self.drop((store, fid))
            self.anchor(self.dead_since, (store, fid), None)

    @cython.locals(self=FoldState)
    def on_backup(self, ev: Event) -> None:
        store = ev.node
        key = (store, ev.attrs["backup"])
        if key not in self.backups:
            held = self.held.get(store)
            self.backups[key] = ({}, held.copy() if held is not None else HeldHierarchy())
        reps = self.backups[key][0]
        if (store, ev.entity) in self.reps:  # a copy: the live replica changes in place
            reps[ev.entity] = self.reps[(store, ev.entity)].copy()

    @cython.locals(self=FoldState)
    def on_restore(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        self.restored[store] = ev.seq
        snap = self.backups.get((store, ev.attrs["backup"]))
        if snap is None:
            self.notes.append(f"{ev.event_id}: restore of {store} from a backup not in the trace")
            self.drop((store, fid))
            return
        reps, held = snap
        if self.restoring.get(store) != ev.attrs["backup"]:  # the first RESTORE event of this restore
            self.restoring[store] = ev.attrs["backup"]
            self.held[store] = held.copy()
            targets = {k[1] for k in self.views if k[0] == store} | set(held.targets())
            self.refresh_views(store, sorted(targets - {HIERARCHY}))
        present = fid in reps
        if fid in self.announce_owed.get(store, {}) and (not present or reps[fid].state != DELETE_NOW):
            self.owe_announcement(store, fid, None)  # the restore undid the delete now
        if "present" in ev.attrs:  # the event restates whether the backup holds the folder
            stated = bool(ev.attrs["present"])
            has = "holds" if present else "lacks"
            bad = stated != present
            self.flag(
                RESTATED_STATE,
                ev,
                bad and f"RESTORE says present={stated}; the backup {has} it",
                data=bad and {"observed": stated, "expected": present},
            )
        if not present:
            self.drop((store, fid))
            return
        rep = reps[fid].copy()  # the backup stays as it was (another restore may read it)
        self.cnset_changed((store, fid), ev.ts_ms, created=True)
        rep.origin = ev.attrs["origin"]
        if fid != HIERARCHY:
            rep.view = self.view(store, fid)
        self.put((store, fid), rep)
        if rep.unsent:
            self.anchor(self.owed_from, (store, fid), ev.ts_ms)

    @cython.locals(self=FoldState)
    def on_client_access(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        outcome, target = ev.attrs["outcome"], ev.attrs["target"]
        rep = self.reps.get((store, fid))
        if outcome == "served":
            held = (rep is not None and rep.state == ACTIVE) or (rep is None and self.local_copy(store, fid))
            ok = held and target in (store, "")
            where = f"from {target}" if target not in (store, "") else f"from a replica in state {_state(rep)}"
            home = self.local_home.get(fid)
            local = f" (a local folder whose one copy is on {home})" if home and fid not in self.hier_targets else ""
            self.flag(
                SERVED_BY_ACTIVE_REPLICA,
                ev,
                not ok and f"served a client of {fid}{local} {where}",
                data=None if ok else {"observed": target or store, "state": _state(rep)},
            )
        if outcome == "redirect":
            shown = self.view(store, fid).get(target)
            bad = shown != ACTIVE
            self.flag(
                REDIRECT_TO_ACTIVE_REPLICA,
                ev,
                bad
                and f"redirected a client to {target}, which its replica list (from the hierarchy changes it holds) "
                f"shows as {self.view(store, fid).get(target, 'no replica')}",
                data=bad and {"observed": target, "state": shown, "expected": ACTIVE},
            )

    @cython.locals(self=FoldState)
    def on_end(self, ev: Event) -> None:
        """The end-of-run snapshot, judged at `finish` (convergence.py): what it states must parse now."""
        F.cnset(ev.attrs["cnset"])
        if "bound_ms" in ev.attrs:
            as_int(ev.attrs["bound_ms"], "bound_ms")
        self.ends.setdefault(ev.entity, []).append(ev)
