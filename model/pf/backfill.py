"""The public folder monitor's backfill handlers: entries filed as derived, requests only for gaps and only
after their time-out, sources in the order of the five keys (seed 001 "Backfill", seed 003; BF-002,
BF-005, BF-006, BF-011). Mixed into `monitor.PfFold`, like `handlers.Handlers`.
"""

from __future__ import annotations

from model.pf import decide as D
from model.pf import faults as F
from model.pf import rules as R
from model.pf import step as S
from model.pf.cnset import CNSet
from model.pf.foldstate import FoldState
from spec.catalogue import require
from traces.schema import Event

require("BF-002", "BF-005", "BF-006", "BF-011")


class Backfill(FoldState):
    # --- backfill (BF-002, BF-005..BF-007, BF-011..BF-014) -----------------------------------------------
    def file_not_recorded(self, ev: Event) -> None:
        key = (ev.node, ev.entity)
        if ev.kind != "BACKFILL_FILE" and key in self.expect_file:
            entry, recv = self.expect_file.pop(key)
            self.flag(
                R.BACKFILL_ENTRY_DERIVED,
                recv,
                f"the message revealed missing changes {entry.cns} "
                "(a backfill entry) but no BACKFILL_FILE was recorded",
                data={"observed": None, "expected": str(entry.cns)},
            )

    def on_backfill_file(self, ev: Event) -> None:
        got = self.expect_file.pop((ev.node, ev.entity), None)
        a = ev.attrs
        if got is None:
            self.flag(
                R.BACKFILL_ENTRY_DERIVED,
                ev,
                f"filed {a['cns']} although no message revealed a gap",
                data={"observed": a["cns"], "expected": None},
            )
            return
        e, recv = got
        recorded = (F.cnset(a["cns"]), F.as_int(a["due_ms"], "due_ms"), bool(a["local"]))
        derived = (e.cns, e.due_ms, e.local)
        bad = recorded != derived
        self.flag(
            R.BACKFILL_ENTRY_DERIVED,
            ev,
            bad
            and f"filed {a['cns']} due {a['due_ms']} local={a['local']}; the recorded "
            f"configuration and the history give {e.cns} due {e.due_ms} local={e.local}",
            recv,
            data=bad
            and {
                "observed": {"cns": str(recorded[0]), "due_ms": recorded[1], "local": recorded[2]},
                "expected": {"cns": str(e.cns), "due_ms": e.due_ms, "local": e.local},
                "parameters": list(R.BACKFILL_ENTRY_DERIVED.params),
            },
        )

    def on_backfill(self, ev: Event) -> None:
        store, fid = ev.node, ev.entity
        rep = self.reps.get((store, fid))
        if rep is None:
            self.unseen(ev, "a backfill check of")
            for rule in (R.BACKFILL_WITHOUT_GAP, R.BACKFILL_BEFORE_TIMEOUT, R.BACKFILL_SOURCE_ORDER):
                self.tally.skip(rule, "a backfill check of a replica whose creation the trace does not show")
            return
        recorded = [
            (s, F.cnset(c.split("|") if c else [])) for s, _, c in (r.partition("=") for r in ev.attrs["requests"])
        ]
        asked = CNSet()
        for _, cns in recorded:
            asked = asked | cns
        held = asked & rep.cnset
        self.flag(
            R.BACKFILL_WITHOUT_GAP,
            ev,
            held and f"requests {held}, already held",
            data=held and {"observed": str(asked), "held": str(rep.cnset)},
        )
        self.schedule_run(ev, "backfill", self.ctx(store).params.backfill_check_ms)
        due = S.due_entries(rep, ev.ts_ms)
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
                R.BACKFILL_BEFORE_TIMEOUT,
                ev,
                early
                and f"requests {early}, which no entry due at this check holds (each request answers one backfill "
                f"array entry whose time-out has passed; entries, due_ms and change numbers: {pending})",
                data=early
                and {
                    "observed": str(early),
                    "observed_ms": ev.ts_ms,
                    "entries": [{"due_ms": d, "cns": c} for d, c in pending],
                    "parameters": list(R.BACKFILL_BEFORE_TIMEOUT.params),
                },
            )
        log: list = []
        new_rep, _ = S.backfill_tick(rep, ev.ts_ms, self.ctx(store), chosen=chosen, log=log)
        for i, e, cands in log:
            why = D.choice_allowed(e.cns, cands, chosen.get(i, []))
            self.flag(
                R.BACKFILL_SOURCE_ORDER,
                ev,
                why and f"for {e.cns}: {why}",
                data=why and {"missing": str(e.cns), "observed": [[s, str(c)] for s, c in chosen.get(i, [])]},
            )
        self.put((store, fid), new_rep)
        if recorded:  # the requests this check decided replace any still owed
            self.expect_requests[(store, fid)] = [(s, c) for s, c in recorded]
        else:
            self.expect_requests.pop((store, fid), None)
