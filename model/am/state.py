"""State of the Active Manager model: copies, servers, health, snapshots.

Values (`CopyState`, `Health`, `Snapshot`, `Trigger`) are never changed once made (all frozen but
`CopyState`, see there): a snapshot or a BCSS run may hold them while the world moves on. The world
(`World`, `DbState`) is mutable and changed in place by `step.apply` only (issue 19: the generator and
the monitor fold events over it without rebuilding it per event); a caller that needs the world as it
was copies what it needs (`decisions.snapshot`).

Seed 002, sections "Exchange Server Active Manager" (roles, one active copy, cluster database) and
"Best copy selection process" (the copy attributes BCSS reads: status, copy and replay queue lengths,
LastLogInspected, content index, activation preference, blocked, reachable). Requirement IDs: AM-009,
AM-016, AM-026, AM-034, AM-038; interpretations AM-I02 (copy queue from LastLogInspected) and AM-I03
(component state ranking).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from model.am.events import encode_group
from model.kernel.records import Record, Value, compiled, fill
from spec.catalogue import param_default, require
from traces.verdict import restored

require("AM-005", "AM-009", "AM-016", "AM-026", "AM-034", "AM-038", "AM-P01")

# Copy statuses (Get-MailboxDatabaseCopyStatus); the list plus the transient ones.
HEALTHY = "Healthy"
DISCONNECTED_AND_HEALTHY = "DisconnectedAndHealthy"
DISCONNECTED_AND_RESYNCHRONIZING = "DisconnectedAndResynchronizing"
SEEDING_SOURCE = "SeedingSource"
FAILED = "Failed"
SUSPENDED = "Suspended"
FAILED_AND_SUSPENDED = "FailedAndSuspended"
MOUNTED = "Mounted"
DISMOUNTED = "Dismounted"
SERVICE_DOWN = "ServiceDown"
INITIALIZING = "Initializing"
RESYNCHRONIZING = "Resynchronizing"
COPY_STATUSES = (
    HEALTHY,
    DISCONNECTED_AND_HEALTHY,
    DISCONNECTED_AND_RESYNCHRONIZING,
    SEEDING_SOURCE,
    FAILED,
    SUSPENDED,
    FAILED_AND_SUSPENDED,
    MOUNTED,
    DISMOUNTED,
    SERVICE_DOWN,
    INITIALIZING,
    RESYNCHRONIZING,
)
# AM-038: the statuses a copy must have to be activated.
ACCEPTABLE_STATUSES = frozenset({HEALTHY, DISCONNECTED_AND_HEALTHY, DISCONNECTED_AND_RESYNCHRONIZING, SEEDING_SOURCE})

# Content index states.
CI_HEALTHY = "Healthy"
CI_CRAWLING = "Crawling"
CI_FAILED = "Failed"
CI_STATES = (CI_HEALTHY, CI_CRAWLING, CI_FAILED, "Suspended", "Unknown")

# AutoDatabaseMountDial values (AM-P01).
LOSSLESS = "Lossless"
GOOD_AVAILABILITY = "GoodAvailability"
BEST_AVAILABILITY = "BestAvailability"
DIALS = (LOSSLESS, GOOD_AVAILABILITY, BEST_AVAILABILITY)

# Managed-availability component states, ranked (AM-I03), and priorities (AM-I05).
C_HEALTHY = "Healthy"
C_DEGRADED = "Degraded"
C_UNHEALTHY = "Unhealthy"
STATE_RANK = MappingProxyType({C_HEALTHY: 2, C_DEGRADED: 1, C_UNHEALTHY: 0})
PRIORITY_RANK = MappingProxyType({"High": 2, "Normal": 1, "Low": 0})
# The monitoring components every server runs, with their priority.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("OutlookWeb", "High"),
    ("ActiveSync", "Normal"),
    ("Transport", "High"),
    ("Search", "Low"),
)


# The records below that the fold makes per event are plain classes, not dataclasses (issue 32, session 15): the
# compiled build declares them `cdef class`es in `state.pxd` (C fields; `__init__`, `__eq__` and `_values`
# compiled) on the bases of `model.kernel.records` (a dataclass's methods; see there), as pf's records.
def _probe() -> None:
    """Says which path this module runs: its type is Cython's when compiled."""


_COMPILED = compiled(_probe)


class CopyState(Record):
    """One database copy as Active Manager sees it. `lli` is LastLogInspected (AM-I02).

    A value: never changed once made, replaced by a new one (`with_`, `reach`, `step.copy_state`), so a
    snapshot or a BCSS run may hold it while the world moves on. Not frozen only because a frozen
    instance costs more to build and the fold builds one per COPY_STATE (issue 19); hashable by its fields
    (a dataclass's `unsafe_hash`), but encoded as a mutable object by the explorer's fingerprint, as before."""

    __fields__ = ("server", "status", "lli", "replay_queue", "content_index", "preference", "blocked", "suspended",
                  "reachable")  # fmt: skip
    __slots__ = __fields__

    def __init__(
        self,
        server: str,
        status: str = HEALTHY,
        lli: int = 0,
        replay_queue: int = 0,
        content_index: str = CI_HEALTHY,
        preference: int = 1,
        blocked: bool = False,  # AutoActivationPolicy Blocked on the server (administrative block)
        suspended: bool = False,  # ActivationSuspended on the copy (administrative block)
        reachable: bool = True,
    ) -> None:
        self.server, self.status, self.lli, self.replay_queue, self.content_index = (
            server, status, lli, replay_queue, content_index)  # fmt: skip
        self.preference, self.blocked, self.suspended, self.reachable = preference, blocked, suspended, reachable

    def _values(self) -> tuple:
        return (self.server, self.status, self.lli, self.replay_queue, self.content_index, self.preference,
                self.blocked, self.suspended, self.reachable)  # fmt: skip

    def __eq__(self, other: object) -> bool:  # restated: a compiled subclass defining `__hash__` loses it
        return Record.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self._values())

    def copy_queue(self, last_log_generated: int) -> int:
        """Copy queue length derived from LastLogInspected (AM-I02), never below zero."""
        return max(0, last_log_generated - self.lli)

    @property
    def administratively_blocked(self) -> bool:
        return self.blocked or self.suspended

    def with_(self, **changes: object) -> CopyState:
        return self.but(**changes)

    def reach(self, reachable: bool) -> CopyState:
        """This copy as seen from a side of the cluster that does or does not reach it (`decisions.snapshot`)."""
        s = self
        return CopyState(
            s.server, s.status, s.lli, s.replay_queue, s.content_index, s.preference, s.blocked, s.suspended, reachable
        )


class Health(Value):
    """Managed-availability state of one server: component -> (priority, state)."""

    __fields__ = ("components",)
    __slots__ = __fields__

    def __init__(self, components: Mapping[str, tuple[str, str]] | None = None) -> None:
        if components is None:
            components = {}
        if _COMPILED:
            self.components = components
        else:
            fill(self, (components,))

    def _values(self) -> tuple:
        return (self.components,)

    def state(self, component: str) -> str:
        entry = self.components.get(component)
        return entry[1] if entry else C_UNHEALTHY  # AM-I03: a missing component counts as Unhealthy

    def rank(self, component: str) -> int:
        return STATE_RANK[self.state(component)]

    @staticmethod
    def uniform(state: str = C_HEALTHY) -> Health:
        return Health({name: (prio, state) for name, prio in COMPONENTS})

    def set(self, component: str, state: str) -> Health:
        prio = self.components.get(component, (dict(COMPONENTS).get(component, "Normal"), state))[0]
        new = dict(self.components)
        new[component] = (prio, state)
        return Health(new)


class Snapshot(Value):
    """Everything BCSS reads about one database at the moment it runs.

    `source` is the server hosting the affected (active) copy; `copies` includes it. `dials` maps every
    server hosting a copy to its AutoDatabaseMountDial; `health` maps servers to their components.
    """

    __fields__ = ("database", "source", "last_log_generated", "copies", "dials", "health")
    __slots__ = __fields__

    def __init__(
        self,
        database: str,
        source: str,
        last_log_generated: int,
        copies: tuple[CopyState, ...],
        dials: Mapping[str, str] | None = None,
        health: Mapping[str, Health] | None = None,
    ) -> None:
        if dials is None:
            dials = {}
        if health is None:
            health = {}
        if _COMPILED:
            self.database, self.source, self.last_log_generated, self.copies, self.dials, self.health = (
                database, source, last_log_generated, copies, dials, health)  # fmt: skip
        else:
            fill(self, (database, source, last_log_generated, copies, dials, health))

    def _values(self) -> tuple:
        return (self.database, self.source, self.last_log_generated, self.copies, self.dials, self.health)

    def copy(self, server: str) -> CopyState:
        for c in self.copies:
            if c.server == server:
                return c
        raise KeyError(f"{self.database} has no copy on {server}")

    def dial(self, server: str) -> str:
        dials = self.dials
        if server in dials:
            return dials[server]

        return param_default("AutoDatabaseMountDial")

    def health_of(self, server: str) -> Health:
        return self.health.get(server, Health())


@dataclass(frozen=True, slots=True)
class Trigger:
    """Why BCSS runs (AM-021): a detected failure, a responder, or a targetless switchover."""

    kind: str = "failure"  # "failure" | "responder" | "switchover"
    component: str | None = None  # the monitoring component whose responder triggered the failover
    lossless: bool = False  # a lossless targetless switchover (AM-037)

    def __post_init__(self) -> None:
        if self.kind not in ("failure", "responder", "switchover"):
            raise ValueError(f"unknown trigger kind {self.kind!r}")
        if self.kind == "responder" and not self.component:
            raise ValueError("a responder trigger names its component")


class DbState(Record):
    """One database as the cluster database holds it (AM-016): its copies, the active designation, which
    copies are mounted (`on`; AM-009 allows at most one), a pending mount request and the last log.

    Mutable, changed in place by `step.apply` only; `copies` is this state's own dict (copied at
    construction, so two states never share it) of immutable `CopyState` values, replaced per change.

    A plain record, not a dataclass (issue 32, session 26): the compiled build declares it a `cdef class`
    (`state.pxd`), so the transitions typed with it (`@cython.locals(d=DbState)`) read its fields as C struct
    members. Equal, `repr` and pickled as the dataclass it was (`model.kernel.records.Record`); a pickle loads it
    through `traces.verdict.restored`, without `__init__` (the explorer's copies: no second copy of `copies`)."""

    __fields__ = ("name", "dag", "copies", "active", "on", "mounting", "lgen", "last_mounted", "stuck")
    __slots__ = __fields__

    def __init__(
        self,
        name: str,
        dag: str | None,  # None: a standalone database (AM-002)
        copies: Mapping[str, CopyState],
        active: str | None = None,
        on: frozenset[str] = frozenset(),  # servers whose copy is mounted (AM-009: at most one)
        mounting: str | None = None,  # the server a mount request (MOUNT_START) is outstanding for
        lgen: int = 0,
        last_mounted: str | None = None,
        stuck: bool = False,  # the last BCSS run activated nothing (used only to avoid idle re-runs)
    ) -> None:
        self.name, self.dag, self.copies, self.active, self.on = name, dag, dict(copies), active, on
        self.mounting, self.lgen, self.last_mounted, self.stuck = mounting, lgen, last_mounted, stuck

    def _values(self) -> tuple:
        return (self.name, self.dag, self.copies, self.active, self.on, self.mounting, self.lgen, self.last_mounted,
                self.stuck)  # fmt: skip

    def __reduce__(self) -> tuple:
        return restored, (type(self), self._values())

    @property
    def mounted(self) -> bool:
        """The active copy is mounted (another mounted copy would break AM-009)."""
        return self.active is not None and self.active in self.on


_UNSET: Any = ...  # the quorum and view key are not computed for the current view (Ellipsis: pickles as itself)


class World(Record):
    """One DAG (plus standalone servers outside it) and its databases, as the cluster database holds it.

    Every field changes only through `step.apply` (one function per event kind), in place; the generator
    and the monitor both build it by folding events, so they cannot drift. The view (`members`, `up`,
    `groups`) changes only through `set_view`, which drops the cached quorum (AM-I13) and view key: both are
    derived once per view, not at each of the dozen places that ask. `opts` is configuration (the BCSS
    reading recorded in TRACE_START), not state. The mappings are this world's own (copied at construction).

    A plain record, not a dataclass (issue 32, session 26; as `DbState`): a `cdef class` in the compiled build.
    Equal and `repr` by its first nine fields (the three caches after them are not compared: a dataclass's
    `compare=False`); pickled with all twelve, loaded without `__init__` (`traces.verdict.restored`)."""

    __fields__ = ("dag", "members", "up", "groups", "claims", "dials", "health", "dbs", "opts", "cached_quorum",
                  "cached_view", "view_source")  # fmt: skip
    __slots__ = __fields__
    # derived from the view (`set_view` drops them): left out of the explorer's fingerprint (issue 33, session 16).
    # `view_source` too since session 22: a cache compared by value (`step._set_view`), kept in before only because
    # its sharing with the boot facts told states apart, and the boot facts are no longer walked (`ModelSystem`)
    __not_state__ = ("cached_quorum", "cached_view", "view_source")

    def __init__(
        self,
        dag: str,
        members: tuple[str, ...],
        up: frozenset[str],
        groups: tuple[frozenset[str], ...],
        claims: frozenset[str] = frozenset(),  # servers acting as PAM (AM-005: at most one)
        dials: Mapping[str, str] | None = None,
        health: Mapping[str, Health] | None = None,
        dbs: Mapping[str, DbState] | None = None,
        opts: Any = None,  # bcss.Options in force (configuration, not state)
    ) -> None:
        self.dag, self.members, self.up, self.groups, self.claims = dag, members, up, groups, claims
        self.dials = dict(dials) if dials is not None else {}
        self.health = dict(health) if health is not None else {}
        self.dbs = dict(dbs) if dbs is not None else {}
        self.opts = opts
        self.cached_quorum = self.cached_view = _UNSET
        self.view_source = None  # the recorded lists the view came from

    def _values(self) -> tuple:
        return (self.dag, self.members, self.up, self.groups, self.claims, self.dials, self.health, self.dbs,
                self.opts, self.cached_quorum, self.cached_view, self.view_source)  # fmt: skip

    def _state(self) -> tuple:
        return (self.dag, self.members, self.up, self.groups, self.claims, self.dials, self.health, self.dbs,
                self.opts)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return self._state() == other._state() if type(other) is type(self) else NotImplemented  # type: ignore[attr-defined]

    def __reduce__(self) -> tuple:
        return restored, (type(self), self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__fields__[:9])
        return f"{type(self).__qualname__}({fields})"

    def set_view(
        self,
        members: tuple[str, ...],
        up: frozenset[str],
        groups: tuple[frozenset[str], ...],
        source: Any = None,
    ) -> None:
        """The only way the view changes: the derived quorum and view key are recomputed on next use.
        `source`: the recorded (members, up, groups) lists it was built from (`step.view`): a view recorded
        again from equal lists is the same view, and keeps what was derived from it."""
        self.members, self.up, self.groups = members, up, groups
        self.cached_quorum = self.cached_view = _UNSET
        self.view_source = source

    def group_of(self, server: str) -> frozenset[str]:
        for g in self.groups:
            if server in g:
                return g & self.up
        return frozenset({server}) & self.up

    def quorum(self) -> frozenset[str] | None:
        """AM-I13: the up members reachable from each other forming a strict majority of the DAG (computed
        once per view: `set_view` drops it)."""
        q = self.cached_quorum
        if q is _UNSET:
            q = self.cached_quorum = self._quorum()
        return q

    def _quorum(self) -> frozenset[str] | None:
        for g in self.groups:
            live = g & self.up & set(self.members)
            if 2 * len(live) > len(self.members):
                return live
        return None

    def view_key(self) -> tuple[list[str], list[str], list[str]]:
        """The view as AM_DAG_CONFIG and DAG_VIEW record it, normalised (members in order, up and the
        encoded groups sorted); computed once per view. Callers must not change the lists."""
        k = self.cached_view
        if k is _UNSET:
            k = self.cached_view = (
                list(self.members),
                sorted(self.up),
                sorted(encode_group(g) for g in self.groups),
            )
        return k

    @property
    def pam(self) -> str | None:
        q = self.quorum() or frozenset()
        inside = sorted(self.claims & q)
        return inside[0] if inside else None

    def reachable(self, a: str, b: str) -> bool:
        return a in self.up and b in self.group_of(a)


def empty_world(opts: Any = None) -> World:
    """A new world with no DAG and no database (each caller gets its own: worlds are mutable)."""
    return World("", (), frozenset(), (), opts=opts)
