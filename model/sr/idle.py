"""When a server's heartbeat tick is a no-op: the condition under which `ModelSystem.advance` jumps time (issue 33).

Seed 000, "How shadow messages are maintained" (SR-054, SR-055: a shadow server queries each primary at least
every ShadowHeartbeatFrequency) and SR-064, SR-I23 (a primary deletes a queued discard event once its shadow has
not queried for ShadowMessageAutoDiscardInterval). A server's heartbeat timer (`Maintenance._tick`) runs every
heartbeat period whatever it holds; a run queries the primaries of the shadows the server holds and expires the
discard events it keeps for shadows that stopped asking. When the server holds no shadow, each run records
nothing, changes nothing and re-arms the timer one period later, up to the first instant at which one of its
kept discard events is due to expire (`_auto_discard`): those runs are replayed without running them
(`model.kernel.idle.fast_forward`, the machinery pf's stores use: the same timers, insertion numbers, counters
and clock as stepping).

Session 12 (helper C): the explorer's `tick` steps sr's idle heartbeats for up to a week of virtual time (two
servers: ~670 runs a tick, twice per edge: once to find how far the tick goes, once to apply it), about a third
of exploring sr. The decisions are the cluster's own (`shadows`, `_remembered`, the policy's `heartbeat_period`
and `auto_discard_ms`), so a policy mutant's are asked; a cluster whose maintenance methods are overridden is
never called idle (its timers are stepped). Exactness against stepping: `tests/sr/test_sr_idle.py`, with twins
that overlook a held shadow or a kept discard event and must diverge.
"""

from __future__ import annotations

import functools
import operator
import types
from typing import TYPE_CHECKING

from model.kernel.idle import NoOp
from model.sr.cluster_maintenance import Maintenance
from spec.catalogue import require

if TYPE_CHECKING:
    from model.kernel.sim import _Item
    from model.sr.cluster import Cluster

require("SR-054", "SR-055", "SR-064")

NEVER = 2**62  # no run of the timer acts, whenever it comes
_OWN = ("_tick", "_query", "_auto_discard", "_remembered", "shadows")  # the methods whose behaviour is mirrored
_OWN_BY_TYPE: dict[type, bool] = {}  # per cluster class: none of them overridden


def acts_from(cl: Cluster, node: str) -> int | None:
    """From which instant a run of `node`'s heartbeat acts in the cluster's present state, every earlier run a
    no-op (None: its next run acts whenever it comes: the node holds a shadow and queries its primary, SR-054)."""
    return None if cl.shadows(node) else discard_due(cl, node)


def discard_due(cl: Cluster, node: str) -> int:
    """The first instant at which `_auto_discard` on `node` expires one of the discard events it keeps (SR-064:
    once `now - max(last query, queued) >= interval`; `NEVER`: it keeps none)."""
    interval, due = cl.pol.auto_discard_ms(cl.cfg), NEVER
    for primary, shadow in cl.world.owed:
        if primary != node:
            continue
        last = cl.world.last_ok.get((shadow, node), -interval)
        for _msg, _inst, _fork, at in cl._remembered(node, shadow):
            due = min(due, max(last, at) + interval)
    return due


def _acts(cl: Cluster, node: str) -> int | None:
    return acts_from(cl, node)  # looked up at each call (a test's twin replaces `acts_from`)


class Rearmer:
    """The `rearm` argument of `fast_forward` for a cluster's heartbeats (each node's state read once a call)."""

    def __init__(self, cl: Cluster) -> None:
        self.cl = cl
        self.period = max(0, int(cl.pol.heartbeat_period(cl.cfg)))  # `sim.after(period)` when it runs
        own = _OWN_BY_TYPE.get(type(cl))
        if own is None:
            own = _OWN_BY_TYPE[type(cl)] = all(getattr(type(cl), n) is getattr(Maintenance, n) for n in _OWN)
        self.own = own
        self.acts: dict[str, int | None] = {}

    def __call__(self, item: _Item) -> NoOp | None:
        fn, cl = item.fn, self.cl
        if not self.own or self.period == 0 or not isinstance(fn, types.MethodType):
            return None
        if fn.__func__ is not Maintenance._tick or fn.__self__ is not cl or item.args != (item.node,):
            return None
        node = item.node
        if node not in self.acts:
            self.acts[node] = _acts(cl, node)
        acts = self.acts[node]
        if acts is None:
            return None
        t, p = item.time_ms, self.period
        first = t if acts <= t else t + -(-(acts - t) // p) * p  # its first run at or after `acts`
        return functools.partial(operator.add, p), min(NEVER, first) - 1
