"""The public folder monitor's backfill handlers: entries filed as derived, requests only for gaps and only
after their time-out, sources in the order of the five keys (seed 001 "Backfill", seed 003; BF-002,
BF-005, BF-006, BF-011). Mixed into `monitor.PfFold`, like `handlers.Handlers`.

Key 1 of the sort ("Servers that are down or unavailable drop to the end of the list", seed 003) is judged
in every form the trace can show a server down or unavailable (BF-I16, issue 30): marked down for not
answering (BF-014, BF-I07), crashed and not restarted (core CRASH/RESTART), or on the other side of a
recorded network partition from the requester (core PARTITION/HEAL).

Seed 001's "new folder replica" (the 15-minute BackfillNewReplicaDelay, BF-008) is read every way the seeds
allow (BF-I17, issue 30): a store's entries must fit one reading throughout the trace, any of `NEW_READINGS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the fold's and records' locals as C structs (`.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.pf.cnset import CNSet
from model.pf.decisions import choice_allowed, entry_delay
from model.pf.faults import as_int, cnset
from model.pf.foldstate import FoldState
from model.pf.rules import BACKFILL_BEFORE_TIMEOUT, BACKFILL_ENTRY_DERIVED, BACKFILL_SOURCE_ORDER, BACKFILL_WITHOUT_GAP
from model.pf.state import HIERARCHY, Entry, Params, Replica
from model.pf.step import backfill_tick, due_entries
from spec.catalogue import require
from traces.schema import Event

require("BF-002", "BF-005", "BF-006", "BF-011", "BF-014")


def partition_groups(groups: object) -> dict[str, int]:
    """A recorded PARTITION's groups (`a+b` or `a,b` each) as node -> group number; a node no group names is in
    one further group with the other unlisted nodes (`model/kernel/network.py`)."""
    out: dict[str, int] = {}
    for i, g in enumerate(groups if isinstance(groups, list) else []):
        for n in str(g).replace("+", ",").split(","):
            if n.strip():
                out[n.strip()] = i
    return out


# BF-I17: what makes a replica "a new folder replica" (seed 001, "Default Replication Event Schedule"); the
# seeds never say, so each is allowed: new from its creation until its first backfill request (the model's, the
# folder creator's replica included); new while it holds no change of the folder; new only when added to a
# folder that already had other replicas, until its first backfill request (the creator's replica never is).
UNTIL_FIRST_REQUEST, UNTIL_CONTENT, ADDED_ONLY = "until-first-request", "until-content", "added-replica-only"
NEW_READINGS = (UNTIL_FIRST_REQUEST, UNTIL_CONTENT, ADDED_ONLY)


def is_new(reading: str, rep: Replica, created_sole: bool) -> bool:
    """Whether `rep` counts as a new folder replica under `reading` (BF-008, BF-I17); never the hierarchy."""
    if rep.fid == HIERARCHY:
        return False
    if reading == UNTIL_CONTENT:
        return not rep.cnset
    return rep.new_replica and not (reading == ADDED_ONLY and created_sole)


def readings_entries(
    rep: Replica, filed: Entry, created_sole: bool, readings: tuple[str, ...], p: Params
) -> dict[str, Entry]:
    """The entry `filed` (filed by `step.receive` under the model's reading) as each of `readings` files it:
    the initial time-out of a new replica or of any other gap (BF-005, BF-008; a delete-pending source's
    entry is the same under all, BF-I02)."""
    out = {}
    for reading in readings:
        cause = filed.cause
        if cause != "delete_pending":
            cause = "new_replica" if is_new(reading, rep, created_sole) else "gap"
        due = filed.base_ms + entry_delay(0, filed.local, cause, p)
        out[reading] = filed if (cause, due) == (filed.cause, filed.due_ms) else filed.but(cause=cause, due_ms=due)
    return out


class Backfill(FoldState):
    # --- server status, key 1 of the source order (BF-011, BF-014, BF-I07, BF-I16) -------------------------
    @cython.locals(self=FoldState)
    def note_reach(self, ev: Event) -> None:
        """A recorded PARTITION (its groups) or HEAL: which stores can reach which from now on."""
        if ev.kind == "PARTITION":
            self.groups = partition_groups(ev.attrs.get("groups"))
        elif ev.kind == "HEAL":
            self.groups = {}

    @cython.locals(self=FoldState)
    def unavailable(self, requester: str, server: str) -> str | None:
        """Why `server` is down or unavailable to `requester` by the record (None if it is not): crashed and not
        restarted, or across a partition in force."""
        if self.up.get(server, True) is False:
            return "crashed and not restarted"
        groups = self.groups
        if groups and groups.get(server, -1) != groups.get(requester, -1):
            return "across a network partition from the requester"
        return None

    # --- backfill (BF-002, BF-005..BF-007, BF-011..BF-014) -----------------------------------------------
    @cython.locals(self=FoldState)
    def file_not_recorded(self, ev: Event) -> None:
        key = (ev.node, ev.entity)
        if ev.kind != "BACKFILL_FILE" and key in self.expect_file:
            entry, recv = self.expect_file.pop(key)
            self.new_alts.pop(key, None)  # the entry stays as the first reading still open files it
            self.flag(
                BACKFILL_ENTRY_DERIVED,
                recv,
                f"the message revealed missing changes {entry.cns} "
                "(a backfill entry) but no BACKFILL_FILE was recorded",
                data={"observed": None, "expected": str(entry.cns)},
            )

    @cython.locals(self=FoldState)
    def on_backfill_file(self, ev: Event) -> None:
        got = self.expect_file.pop((ev.node, ev.entity), None)
        a = ev.attrs
        if got is None:
            self.flag(
                BACKFILL_ENTRY_DERIVED,
                ev,
                f"filed {a['cns']} although no message revealed a gap",
                data={"observed": a["cns"], "expected": None},
            )
            return
        e, recv = got
        recorded = (cnset(a["cns"]), as_int(a["due_ms"], "due_ms"), bool(a["local"]))
        open_ = self.new_readings.get(ev.node, NEW_READINGS)
        alts = self.new_alts.pop((ev.node, ev.entity), None) or dict.fromkeys(open_, e)
        fits = tuple(r for r in open_ if (alts[r].cns, alts[r].due_ms, alts[r].local) == recorded)
        bad = not fits
        if fits:  # the store's behaviour narrows the readings it may follow (BF-I17), and the entry is its own
            self.new_readings[ev.node] = fits
            self.adopt((ev.node, ev.entity), e, alts[fits[0]])
        dues = {}
        for r in open_:
            dues.setdefault(alts[r].due_ms, []).append(r)
        self.flag(
            BACKFILL_ENTRY_DERIVED,
            ev,
            bad
            and f"filed {a['cns']} due {a['due_ms']} local={a['local']}; the recorded "
            f"configuration and the history give {e.cns} local={e.local} due "
            + " or ".join(f"{d} (new replica read as {'/'.join(rs)})" for d, rs in sorted(dues.items()))
            + (f"; its earlier entries fit only {'/'.join(open_)} (BF-I17)" if open_ != NEW_READINGS else ""),
            recv,
            data=bad
            and {
                "observed": {"cns": str(recorded[0]), "due_ms": recorded[1], "local": recorded[2]},
                "expected": {"cns": str(e.cns), "due_ms": sorted(dues), "local": e.local},
                "readings": {str(d): rs for d, rs in sorted(dues.items())},
                "parameters": list(BACKFILL_ENTRY_DERIVED.params),
            },
        )

    @cython.locals(self=FoldState)
    def file_readings(self, key: tuple[str, str], rep: Replica, filed: Entry, recv: Event) -> None:
        """An entry just filed by `recv` (`step.receive`, the model's reading): as each reading still open for the
        store files it, for the BACKFILL_FILE to come to choose among; until then, as the first (BF-008, BF-I17)."""
        open_ = self.new_readings.get(key[0], NEW_READINGS)
        alts = readings_entries(rep, filed, key in self.created_sole, open_, self.ctx(key[0]).params)
        if any(alt is not filed for alt in alts.values()):
            self.new_alts[key] = alts
        self.adopt(key, filed, alts[open_[0]])
        self.expect_file[key] = (alts[open_[0]], recv)

    @cython.locals(self=FoldState)
    def adopt(self, key: tuple[str, str], old: Entry, new: Entry) -> None:
        """The replica's entry `old` is `new` (the same gap, filed under another reading): deadlines re-derived."""
        rep = self.reps.get(key)
        if new is old or rep is None:
            return
        rep.backfill = tuple(new if x is old else x for x in rep.backfill)
        self.dirty.add(key)

    @cython.locals(self=FoldState)
    def on_backfill(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        if rep is None:
            self.unseen(ev, "a backfill check of")
            for rule in (BACKFILL_WITHOUT_GAP, BACKFILL_BEFORE_TIMEOUT, BACKFILL_SOURCE_ORDER):
                self.tally.skip(rule, "a backfill check of a replica whose creation the trace does not show")
            return
        recorded = [
            (s, cnset(c.split("|") if c else [])) for s, _, c in (r.partition("=") for r in ev.attrs["requests"])
        ]
        asked = CNSet()
        for _, cns in recorded:
            asked = asked | cns
        held = asked & rep.cnset
        self.flag(
            BACKFILL_WITHOUT_GAP,
            ev,
            held and f"requests {held}, already held",
            data=held and {"observed": str(asked), "held": str(rep.cnset)},
        )
        self.schedule_run(ev, "backfill", self.ctx(store).params.backfill_check_ms)
        due = due_entries(rep, ev.ts_ms)
        chosen: dict[int, list[tuple[str, CNSet]]] = {i: [] for i, _ in due}
        early = CNSet()
        for s, cns in recorded:
            home = next((i for i, e in due if cns and cns <= e.cns), None)
            if home is None:
                early = early | cns
            else:
                chosen[home].append((s, cns))
        if recorded:  # the requests of this check, each judged against its entry's time-out
            pending = early and [(e.due_ms, str(e.cns)) for e in rep.backfill]
            self.flag(
                BACKFILL_BEFORE_TIMEOUT,
                ev,
                early
                and f"requests {early}, which no entry due at this check holds (each request answers one backfill "
                f"array entry whose time-out has passed; entries, due_ms and change numbers: {pending})",
                data=early
                and {
                    "observed": str(early),
                    "observed_ms": ev.ts_ms,
                    "entries": [{"due_ms": d, "cns": c} for d, c in pending],
                    "parameters": list(BACKFILL_BEFORE_TIMEOUT.params),
                },
            )
        log: list = []
        gone = {s: why for s in rep.view if (why := self.unavailable(store, s))}
        new_rep, _ = backfill_tick(rep, ev.ts_ms, self.ctx(store), chosen=chosen, log=log, unavailable=gone)
        for i, e, cands in log:
            why = choice_allowed(e.cns, cands, chosen.get(i, []))
            down = {c.server: gone.get(c.server, "marked down (BF-I07)") for c in cands if c.down}
            self.flag(
                BACKFILL_SOURCE_ORDER,
                ev,
                why and f"for {e.cns}: {why}" + (f" (down or unavailable: {down})" if down else ""),
                data=why
                and {"missing": str(e.cns), "observed": [[s, str(c)] for s, c in chosen.get(i, [])], "down": down},
            )
        self.put((store, fid), new_rep)
        if recorded:  # the requests this check decided replace any still owed
            self.expect_requests[(store, fid)] = [(s, c) for s, c in recorded]
        else:
            self.expect_requests.pop((store, fid), None)
