"""What the shadow redundancy fold knows: the recorded configuration and topology, the recorded faults, and
the copies of every message. The generator and the monitor keep the same `World` (`step.py` changes it).

Seed 000, "Shadow redundancy components" (copies, shadow queues, discard status, Safety Net), "Requirements
for shadow redundancy" and "How shadow messages are created" (boundaries, SR-006), "How shadow messages are
maintained" (last contact, heartbeats). Everything here is derived from the recorded context (`TRACE_START`
`config.sr`, `SR_CONFIG` events with `topology` and/or `sr`) and from events already seen (the kernel's
CRASH / RESTART / PARTITION / HEAL records, the shadow sessions): never from the event being judged.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from model.sr import rules as R
from model.sr.decisions import attempt_plan
from model.sr.state import ConfigError, SrConfig
from traces.verdict import InputFault, Rule, Tally, input_fault, reduced

# Where a copy of one delivery attempt sits on one server (the states of `step.TRANSITIONS`).
ABSENT, RECEIVING, QUEUED, REFUSED, ABORTED, FAILED = "absent", "receiving", "queued", "refused", "aborted", "failed"
SHADOW, RELEASED, EXPIRED, SAFETYNET, GONE, LOST = "shadow", "released", "expired", "safetynet", "gone", "lost"
# which family of rules a state belongs to (the rule reported for a change the table forbids)
HOLDER: dict[str, Rule] = {
    RECEIVING: R.PRIMARY_COPY_TRANSITION,
    QUEUED: R.PRIMARY_COPY_TRANSITION,
    REFUSED: R.PRIMARY_COPY_TRANSITION,
    ABORTED: R.PRIMARY_COPY_TRANSITION,
    FAILED: R.PRIMARY_COPY_TRANSITION,
    SHADOW: R.SHADOW_COPY_TRANSITION,
    RELEASED: R.SHADOW_COPY_TRANSITION,
    EXPIRED: R.SHADOW_COPY_TRANSITION,
    SAFETYNET: R.SAFETYNET_TRANSITION,
    GONE: R.SAFETYNET_TRANSITION,
}

Pair = tuple[str, str]  # (shadow server, primary server)
Key = tuple[str, int]  # (network message ID, instance)


@dataclass
class Copy:
    state: str
    since_ms: int  # when it entered its current place (queue: acceptance or shadow creation; Safety Net: entry)
    # forks still queued (QUEUED); an empty frozenset until the queue takes them (no set per copy that never
    # queues: fewer objects for the collector), replaced by a set by ACCEPT and PROMOTE
    left: set[str] | frozenset[str] = frozenset()
    promoted: bool = False
    # forks Safety Net was asked to resubmit, not yet sent; a set only once one is asked (RESUBMIT)
    resubmitted: set[str] | frozenset[str] = frozenset()


@dataclass
class Inst:
    """One delivery attempt of a message by its sender (`inst`), judged under the configuration at RECEIVE."""

    msg: str
    inst: int
    primary: str
    received_ms: int
    forks: tuple[str, ...]
    enabled: bool
    reject: bool
    plan: tuple[str, ...] | None  # None: no recorded topology, the plan cannot be derived
    timeout_ends: str
    tries: int = 0
    attempt_open: str = ""
    attempt_ms: int = 0
    attempt_id: str = ""  # the event ID of the last shadow attempt (HAREDIRECT): what SR-031 waits on
    shadow: str = ""
    shadow_ms: int = 0
    shadow_epoch: int = 0  # the primary's storage generation when the shadow was made (its database ID)
    shadow_acked: bool = False
    failed: bool = False  # shadow creation failed, or may have (no recorded plan): acceptance without a shadow allowed
    gave_up: bool = False  # shadow creation is over for certain: no further attempt (SR-028)
    inbound_open: bool = True
    outcome: str = ""
    redundant: bool = False
    processed: set[str] | frozenset[str] = frozenset()  # forks completed by the primary's own queue (`grown`)
    notified: set[str] | frozenset[str] = frozenset()  # forks whose discard notification the shadow got
    expired: set[str] | frozenset[str] = frozenset()  # forks expired (FAIL: `|=` makes a new one, rarely)
    copies: dict[str, Copy] = field(default_factory=dict)
    primary_lost: bool = False
    shadow_lost: bool = False

    def state(self, node: str) -> str:
        c = self.copies.get(node)
        return c.state if c else ABSENT


@dataclass
class Msg:
    insts: dict[int, Inst] = field(default_factory=dict)
    delivered: set[str] | frozenset[str] = frozenset()  # forks that reached their destination (`grown`)
    licences: set[str] | frozenset[str] = frozenset()  # documented reasons for duplicates seen so far (SR-076)


def grown(items: set[str] | frozenset[str], item: str) -> set[str]:
    """`items` with `item` added. The sets of a message start as an empty frozenset and become a set at their
    first addition: most stay empty, and fewer live objects keep the collector's full passes away."""
    if isinstance(items, set):
        items.add(item)
        return items
    return {*items, item}


class SrTally(Tally):
    """What each rule judged (`traces.verdict.Tally`), and `moves`: the events judged per kind, each an instance
    of the rules `step.EVERY[kind]` lists (`step.tally_of` adds them). History, not state: the explorer's state
    fingerprint leaves every `Tally` out (`conformance.explore.fingerprint`)."""

    __slots__ = ("moves",)

    def __init__(self) -> None:
        super().__init__()
        self.moves: dict[str, int] = {}


class World:
    """The fold's state for one trace; see the module docstring.

    A `cdef class` in the compiled build (`world.pxd`; issue 32, session 26): its fields are C struct members, so a
    function whose locals are typed `World` (`@cython.locals(w=World)`, its module's `.pxd` cimporting this one)
    reads and writes them without an attribute lookup. `__slots__`: no field outside the list. Pickled and copied
    (`copy.copy`) as its class and fields (`__reduce__`, through `traces.verdict.restored`), on either path alike.
    """

    __fields__ = ("cfg", "topo", "notes", "up", "boot", "epoch", "group", "db_names", "db_owner", "contact",
                  "last_query", "last_heartbeat", "last_ok", "observed_epoch", "held", "held_since", "owed",
                  "handed", "owed_at_boot", "msgs", "at", "due", "db_due", "db_pending", "db_late",
                  "unread_queries", "destroyed", "held_unseen", "end_checked", "ended", "tally", "_plans")  # fmt: skip
    __slots__ = __fields__

    def __init__(self, cfg: SrConfig | None = None) -> None:
        self.cfg = cfg or _DEFAULTS  # one frozen value for every fold (issue 32: 1% of the check, built per trace)
        self.topo: dict[str, tuple[str, str | None, str]] | None = None  # server -> (site, dag, version)
        self.notes: list[str] = []
        self.up: dict[str, bool] = {}
        self.boot: dict[str, int] = {}
        self.epoch: dict[str, int] = {}
        self.group: dict[str, int] = {}
        self.db_names: dict[tuple[str, int], str] = {}
        self.db_owner: dict[str, tuple[str, int]] = {}
        self.contact: dict[Pair, int] = {}  # last successful session between shadow and primary
        self.last_query: dict[Pair, int] = {}
        self.last_heartbeat: dict[Pair, tuple[int, int]] = {}  # (when, ShadowHeartbeatFrequency then): SR-078
        self.last_ok: dict[Pair, int] = {}
        self.observed_epoch: dict[Pair, int] = {}
        self.held: dict[Pair, set[Key]] = {}
        self.held_since: dict[Pair, int] = {}
        self.owed: dict[Pair, dict[tuple[str, int, str], int]] = {}  # (primary, shadow) -> queued discard events
        # (primary, shadow) -> the discard events the primary handed over at the pair's last successful
        # XQUERYDISCARD (SR-053: the query's answer carries them; the shadow server takes those for shadows it still
        # holds as DISCARD_NOTIFY, the others are of shadows already gone). The generator notifies from it (issue 33)
        self.handed: dict[Pair, dict[tuple[str, int, str], int]] = {}
        # primary -> the discard events it had queued when it last restarted with the same storage, (shadow, msg,
        # inst, fork): kept on disk (SR-011); what a primary that kept them in memory would have lost (issue 33)
        self.owed_at_boot: dict[str, frozenset[tuple[str, str, int, str]]] = {}
        self.msgs: dict[str, Msg] = {}
        # node -> the instances with a copy on it, so that a CRASH or RESTART touches only those (`step._apply`)
        self.at: dict[str, dict[Key, Inst]] = {}
        # failed queries after which nothing held at the query may stay held, oldest first (`liveness.flush_due`):
        # (time, shadow, primary, the query, the shadows held at it: one made later in that instant is not owed);
        # a deque, so that taking the oldest costs O(1) and the order stays the recording order
        self.due: deque[tuple[int, str, str, Any, frozenset[Any]]] = deque()
        # SR-059, SR-I07: successful sessions that showed a primary's new database ID while shadows made under the
        # old one were held, as a heap of (promotion deadline, seq, shadow, primary, the session's event, the database
        # epoch it showed), and the pairs in it (`liveness.flush_due`: late is judged once a later event or the end
        # passes the deadline)
        self.db_due: list[tuple[int, int, str, str, Any, int]] = []
        self.db_pending: set[Pair] = set()
        self.db_late: set[tuple[str, str, int]] = set()  # (shadow, primary, its database generation) reported late
        # (shadow server, time) of successful-looking XQUERYDISCARDs the fold could not read (an input fault): the
        # discard notifications they carried cannot be judged against them (SR-053, issue 30)
        self.unread_queries: set[tuple[str, int]] = set()
        # node -> the copies its last new transport database destroyed, (instance, state before): the generator
        # records them as LOST and takes the entry (`model.sr.cluster`); issue 33
        self.destroyed: dict[str, list[tuple[Key, str]]] = {}
        self.held_unseen: set[Pair] = set()  # pairs said to hold shadows the trace never showed made (`partial`)
        self.end_checked = False
        self.ended: set[str] = set()  # messages judged at a quiesced SNAPSHOT (`liveness.at_end` judges the others)
        self.tally = SrTally()  # what each rule judged (issue 29): rule code counts its instances here
        self._plans: tuple[SrConfig, Any, dict[str, tuple[str, ...] | None]] | None = None  # `plan_for`

    def __reduce__(self) -> tuple:
        return reduced(self)

    # --- recorded context -------------------------------------------------------------------------------
    def configure(self, kind: str, attrs: dict[str, Any]) -> None:
        """TRACE_START (`config` is JSON with an `sr` section) or SR_CONFIG (`topology`, `sr`). A configuration
        that does not parse is an input fault (`inputs`, item 4): noted, and the defaults kept."""
        try:
            if kind == "TRACE_START":
                raw = attrs.get("config") or "{}"
                if not isinstance(raw, str):
                    raise input_fault(f"the recorded config is {type(raw).__name__}, not JSON text")
                cfg = _json(raw)
                if not isinstance(cfg, dict):
                    raise input_fault(f"the recorded config is {type(cfg).__name__}, not an object")
                sr, topo = cfg.get("sr"), cfg.get("sr_topology")
            else:
                sr, topo = attrs.get("sr"), attrs.get("topology")
                sr, topo = (_json(x) if isinstance(x, str) else x for x in (sr, topo))
            if sr is not None:
                if not isinstance(sr, dict):
                    raise input_fault(f"the recorded sr configuration is {type(sr).__name__}, not an object")
                merged = {**self.cfg.to_json(), **sr} if kind != "TRACE_START" else sr
                self.cfg = _settings(merged)
            if topo is not None:
                self.topo = _topology(topo)
        except InputFault as exc:
            self.notes.append(f"{kind}: the recorded configuration cannot be read ({exc}); defaults assumed")

    # --- topology (SR-006, SR-014, SR-015, SR-047) ----------------------------------------------------------
    def knows(self, *servers: str) -> bool:
        topo = self.topo
        if topo is None:
            return False
        for s in servers:  # noqa: SIM110 (a loop: no generator per call on the hot path)
            if s not in topo:
                return False
        return True

    def site(self, server: str) -> str:
        return self.topo[server][0]  # type: ignore[index]

    def boundary(self, server: str) -> str:
        site, dag, _ = self.topo[server]  # type: ignore[index]
        return f"dag:{dag}" if dag else f"site:{site}"

    def plan_for(self, primary: str) -> tuple[str, ...] | None:
        """The attempt plan of a message received by `primary`, under the configuration and topology now
        (SR-044): computed once per primary while neither changes (a cache holding the two it was made for)."""
        cfg, topo = self.cfg, self.topo
        cache = self._plans
        if cache is None or cache[0] is not cfg or cache[1] is not topo:
            cache = self._plans = (cfg, topo, {})
        plans = cache[2]
        if primary not in plans:
            plans[primary] = self._plan(primary)
        return plans[primary]

    def _plan(self, primary: str) -> tuple[str, ...] | None:
        if not self.knows(primary):
            return None
        _, dag, _ = self.topo[primary]  # type: ignore[index]
        multi = bool(dag) and len({s for s, d, _ in self.topo.values() if d == dag}) > 1  # type: ignore[union-attr]
        c = self.cfg
        return attempt_plan(c.preference_of(primary), bool(dag), multi, c.max_remote, c.max_local, c.retry_meaning)

    def eligible(self, primary: str, site_class: str) -> list[str]:
        """Every server the seed allows as the shadow for this attempt: the model's choice is one of them."""
        if not self.knows(primary):
            return []
        b, site = self.boundary(primary), self.site(primary)
        return [
            n
            for n, (s, _, version) in sorted(self.topo.items())  # type: ignore[union-attr]
            if n != primary and version == "2013" and self.boundary(n) == b and (s != site) == (site_class == "remote")
        ]

    # --- recorded faults --------------------------------------------------------------------------------
    def reach(self, a: str, b: str) -> bool:
        return self.up.get(a, True) and self.up.get(b, True) and self.group.get(a, -1) == self.group.get(b, -1)

    def db_consistent(self, server: str, name: Any) -> str:
        """'' when `name` may be the database ID of `server`'s current transport database, else why not (a
        recorded database ID judged: SR-068)."""
        if name is None:
            return ""
        self.tally.judge(R.DATABASE_ID_AS_RECORDED)
        key, name = (server, self.epoch.get(server, 0)), str(name)
        known, owner = self.db_names.get(key), self.db_owner.get(name)
        if known is None and owner is None:
            self.db_names[key], self.db_owner[name] = name, key
            return ""
        if known == name:
            return ""
        if known is not None:
            return f"{server}'s current transport database was recorded as {known}, not {name}"
        return f"database ID {name} belonged to {owner[0]}'s earlier transport database, not {server}'s current one"

    # --- shadows held (SR-061) ----------------------------------------------------------------------------
    def hold(self, pair: Pair, key: Key, now: int) -> None:
        held = self.held.setdefault(pair, set())
        if not held:
            self.held_since[pair] = now
        held.add(key)

    def unhold(self, pair: Pair, key: Key) -> None:
        self.held.get(pair, set()).discard(key)

    def held_count(self, pair: Pair) -> int:
        return len(self.held.get(pair, ()))

    def msg(self, name: str) -> Msg:
        return self.msgs.setdefault(name, Msg())

    def place(self, node: str, inst: Inst, copy: Copy) -> None:
        """A new copy of `inst` on `node` (the only way a copy is made: `step._move`), indexed by node."""
        inst.copies[node] = copy
        self.at.setdefault(node, {})[(inst.msg, inst.inst)] = inst


def _json(text: str) -> Any:
    """A recorded JSON value (`inputs`, item 4: text that is not JSON is an input fault)."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise input_fault(str(exc)) from exc


def _topology(topo: Any) -> dict[str, tuple[str, str | None, str]]:
    """The recorded topology: server -> (site, dag, version) (`inputs`, item 4: an entry without its site, or a
    topology that is not an object of objects, is an input fault)."""
    if not isinstance(topo, dict):
        raise input_fault(f"the recorded topology is {type(topo).__name__}, not an object")
    out = {}
    for n, s in topo.items():
        if not isinstance(s, dict) or "site" not in s:
            raise input_fault(f"the recorded topology gives {n} no site")
        if isinstance(s["site"], (list, dict)) or isinstance(s.get("dag"), (list, dict)):
            raise input_fault(f"the recorded topology gives {n} a site or DAG that is not a name")
        out[n] = (s["site"], s.get("dag"), str(s.get("version", "2013")))
    return out


_DEFAULTS = SrConfig()


def _settings(merged: dict[str, Any]) -> SrConfig:
    """The recorded sr settings (`inputs`, item 4): every value of the type of its catalogue default (a number
    for a number, a flag for a flag, a name for a name), and a configuration the seed allows (`ConfigError`)."""
    for name, value in merged.items():
        default = getattr(_DEFAULTS, name, None)
        if default is None:
            continue  # an unknown key: `SrConfig.from_json` names it
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, dict):
            ok = isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        else:
            ok = isinstance(value, type(default))
        if not ok:
            raise input_fault(f"the recorded sr setting {name}={value!r} is not a {type(default).__name__}")
    try:
        return SrConfig.from_json(merged)
    except ConfigError as exc:
        raise input_fault(str(exc)) from exc
