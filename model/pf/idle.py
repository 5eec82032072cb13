"""When a store's replication timers are no-ops: the condition under which `Cluster.advance` jumps time.

Seed 001, "Replication Process" and "Default Replication Event Schedule" (PF-023, PF-030), seed 003 (BF-007):
a store's four timers (`node.Store.tick_hierarchy`, `tick_content`, `tick_backfill`, `tick_status`) poll its
replicas and act only when there is something to do. When a store holds nothing any of them acts on, each run
records nothing, changes nothing and re-arms the timer one period later (`model.kernel.idle.fast_forward` then
replays those runs without running them). The condition below mirrors the four methods line by line, through
the same decisions (`cluster.rules`, so a rule mutant's own decisions are asked), and holds for every later
instant up to a horizon (an expiry, a backfill entry's due time), since no-op runs change nothing:

- hierarchy: no delete-now replica to remove (BF-034), no hierarchy change left to broadcast to anyone, no
  first status request queued (BF-029);
- content: no active replica with changes to broadcast to anyone, no delete-pending replica with anyone to ask
  for status (BF-029);
- backfill: no backfill entry due (`entry_due`): the runs before the first entry's due time are no-ops (BF-007;
  under another `entry_due`, as a rule mutant's, any entry makes the check act);
- status thread: the runs before the first expiry of an active replica are no-ops (PF-030).

A store of a subclass (the store mutants of `mutants.py` override these methods) is never called idle: its
timers are stepped. The exactness of the jump is tested against stepping (`tests/pf/test_pf_idle.py`).
"""

from __future__ import annotations

import functools
import operator
import types
from typing import TYPE_CHECKING

from model.kernel.idle import NoOp
from model.pf import decisions as D
from model.pf import step as R
from model.pf.decisions import Decisions
from model.pf.node import Store
from model.pf.state import ACTIVE, DELETE_NOW, DELETE_PENDING, HIERARCHY
from spec.catalogue import require

if TYPE_CHECKING:
    from model.kernel.sim import _Item

require("PF-023", "PF-030", "BF-007", "BF-029", "BF-034")

TICKS = (Store.tick_hierarchy, Store.tick_content, Store.tick_backfill, Store.tick_status)
NEVER = 2**62  # no run of the timer acts, whenever it comes


def horizons(store: Store, rules: Decisions) -> dict[object, int] | None:
    """From which instant a run of each of the store's four timers acts in its present state, every earlier run a
    no-op (None: its next runs may act whenever they come; see the module docstring)."""
    if type(store) is not Store or store.first_request or HIERARCHY not in store.replicas:
        return None
    others, local = rules.others, store.local_only
    expiry = backfill = NEVER
    for fid, rep in store.replicas.items():
        if rep.state == DELETE_NOW:
            return None
        if rep.backfill:  # the check acts on the first entry due (`entry_due`, BF-007); another rule: always
            if rules.entry_due is not D.entry_due:
                return None
            backfill = min(backfill, *(e.due_ms for e in rep.backfill))
        if rep.state == ACTIVE and rep.expiry_ms is not None:  # the status thread acts from its expiry (PF-030)
            expiry = min(expiry, rep.expiry_ms)
        broadcasts = fid == HIERARCHY or rep.state == ACTIVE  # tick_hierarchy broadcasts 1-1 whatever its state
        if broadcasts and rep.unsent and fid not in local and others(rep):
            return None
        if fid != HIERARCHY and rep.state == DELETE_PENDING and others(rep):
            return None
    return {
        Store.tick_hierarchy: NEVER,
        Store.tick_content: NEVER,
        Store.tick_backfill: backfill,
        Store.tick_status: expiry,
    }


def rearm_of(stores: dict[str, Store], rules: Decisions) -> _Rearmer:
    """The `rearm` argument of `fast_forward` for a cluster's stores (each store's state read once)."""
    return _Rearmer(stores, rules)


class _Rearmer:
    def __init__(self, stores: dict[str, Store], rules: Decisions) -> None:
        self.stores, self.rules = stores, rules
        self.horizons: dict[str, dict[object, int] | None] = {}

    def __call__(self, item: _Item) -> NoOp | None:
        fn = item.fn
        if item.args or not isinstance(fn, types.MethodType) or fn.__func__ not in TICKS:
            return None
        store = fn.__self__
        if self.stores.get(store.name) is not store or item.node != store.name:
            return None
        if store.name not in self.horizons:
            self.horizons[store.name] = horizons(store, self.rules)
        found = self.horizons[store.name]
        if found is None:
            return None
        p, f, acts = store.p, fn.__func__, found[fn.__func__]
        if f is Store.tick_status:  # re-armed at the next thread time (sim.at)
            t = item.time_ms
            while t < acts < NEVER:  # its runs before the first at or after `acts` are no-ops
                t = R.next_thread_time(t, p)
            return functools.partial(_thread_after, p), (t if acts < NEVER else NEVER) - 1
        interval = max(
            0,
            int(
                p.hierarchy_interval_ms
                if f is Store.tick_hierarchy
                else p.content_interval_ms
                if f is Store.tick_content
                else p.backfill_check_ms
            ),
        )
        if interval == 0:  # re-armed at the instant it ran: stepping it never ends either
            return None
        first = (
            item.time_ms if acts <= item.time_ms else item.time_ms + -(-(acts - item.time_ms) // interval) * interval
        )
        return functools.partial(operator.add, interval), min(NEVER, first) - 1  # sim.after(interval) when it runs


def _thread_after(p: object, t: int) -> int:
    return R.next_thread_time(t, p)  # type: ignore[arg-type]
