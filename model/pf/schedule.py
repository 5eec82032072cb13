"""The lower side of the public folder store's schedules (issue 18, family 1: two-sided schedules).

Seed 001, "Replication Process" and "Default Replication Event Schedule" (seed 004 the same in Chinese): a
thread polls for timed replication events, the hierarchy event every ReplicationSendFolderTree (5 minutes), the
content event every ReplicationSendAlways (15 minutes), the backfill check every ReplicationTimeout (5 minutes).
`deadlines.py` judges the upper side (a run late, PF-023, BF-007); this module the lower side: two runs of one
store's activity at different instants come at least the interval apart (the smaller of the values in force at
the two, should the recorded configuration change) while the store stays up (PF-038, BF-036). Every message of
one run shares its instant. Allowed early triggers are never flagged: a broadcast at the instant of a local
change of that store ("a hierarchy replication message is generated whenever the hierarchy is modified",
PF-I17) neither breaks nor restarts the schedule; replies (status answers, backfill responses, pushes) answer a
request and are not runs. A crash or restart of the store starts its schedule afresh. Mixed into
`monitor.PfFold`; state: one (time, interval) per store and activity, and each store's last local change time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the fold's and records' locals as C structs (`.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.pf.foldstate import FoldState
from model.pf.rules import BACKFILL_CHECK_NOT_EARLY, BROADCAST_NOT_EARLY
from spec.catalogue import require
from traces.schema import Event

require("PF-038", "BF-036")

RULE_OF = {"hierarchy": BROADCAST_NOT_EARLY, "content": BROADCAST_NOT_EARLY, "backfill": BACKFILL_CHECK_NOT_EARLY}
PARAMETER = {"hierarchy": "PF-P01", "content": "PF-P02", "backfill": "PF-P07"}  # the interval's catalogue ID
NAMES = {
    "hierarchy": "hierarchy broadcast (ReplicationSendFolderTree)",
    "content": "content broadcast (ReplicationSendAlways)",
    "backfill": "backfill check (ReplicationTimeout)",
}


class Schedule(FoldState):
    @cython.locals(self=FoldState)
    def init_schedule(self) -> None:
        self.runs: dict[tuple[str, str], tuple[int, int]] = {}  # (store, activity) -> (last run, interval then)
        self.changed_at: dict[str, int] = {}  # store -> when it last recorded a local CHANGE

    @cython.locals(self=FoldState)
    def schedule_reset(self, store: str) -> None:
        """A CRASH or RESTART of the store: its timers start afresh."""
        for activity in RULE_OF:
            self.runs.pop((store, activity), None)

    @cython.locals(self=FoldState)
    def triggered_by_change(self, ev: Event) -> bool:
        """The store recorded a local change at this instant: an allowed immediate broadcast (PF-I17)."""
        return self.changed_at.get(ev.node) == ev.ts_ms

    @cython.locals(self=FoldState)
    def schedule_run(self, ev: Event, activity: str, interval_ms: int) -> None:
        """One run of `activity` at the store of `ev`: flagged when sooner than the interval after the last."""
        key = (ev.node, activity)
        last = self.runs.get(key)
        if last is not None and last[0] == ev.ts_ms:
            return  # another message of the same run
        self.runs[key] = (ev.ts_ms, interval_ms)
        if last is None:
            return
        gap, least = ev.ts_ms - last[0], min(last[1], interval_ms)
        bad = gap < least
        self.flag(
            RULE_OF[activity],
            ev,
            bad and f"a {NAMES[activity]} run {gap} ms after the previous one, sooner than the configured {least} ms",
            data=bad and {"observed_ms": gap, "bound_ms": least, "parameter": PARAMETER[activity]},
        )
