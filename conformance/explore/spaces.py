"""What the explorer may do in a state: the harness's protocol steps, enumerated within a bound (issue 22).

Seeds 000 (sr), 002 (am), 001/003 (pf). Each step is one the conformance harness sends
(`conformance/harness/{sr,am,pf}.py`, the same op names and protocol calls), so a path is a replay file that
`haconform replay` runs against the model or `--sut`. Virtual time is abstracted to the moments that matter:
`tick` advances to the next pending timer of the model's kernel (a timer firing, a time-out, a message
arriving), plus the bound's fixed `waits`. The explorer's own bookkeeping (`Book`: messages sent, faults
used, servers down or cut off) is part of the state: it decides which steps remain.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from conformance.harness.am import _components, _default_dial
from conformance.harness.core import Call, Session
from conformance.harness.pf import LATENCY_MAX_MS, LINKS, SERVERS
from conformance.harness.sr import _fixed_config, durations
from model.am.properties import check_world

Book = tuple[int, int, frozenset[str], frozenset[str]]  # (messages or folders, faults used, down, cut off)
EMPTY: Book = (0, 0, frozenset(), frozenset())


class BoundError(ValueError):
    """A bound that cannot be explored (usage: exit 2), naming where it came from and the field."""


@dataclass(frozen=True)
class Bound:
    """A named bound: the setup's size and what the environment may do, at most `depth` steps."""

    mechanism: str
    name: str
    servers: int
    messages: int  # sr messages submitted, pf folders created (after the harness's first), am databases
    faults: int
    kinds: tuple[str, ...]  # the steps offered: crash, partition, resubmit, loss, add_replica, ...; `no-tick`
    depth: int
    waits_ms: tuple[int, ...] = ()
    setup: dict[str, Any] = field(default_factory=dict)  # overrides of the mechanism's explored setup
    symmetry: bool = False
    # the model's random choices branched on (choice points, issue 33) or drawn by the seed; sr: or the labels
    # branched on (the others drawn by the seed: `Simulator.branching`)
    choices: bool | tuple[str, ...] = True
    ranges: str = "ends"  # the values of a range explored (`model.kernel.choice.RANGE_POINTS`)
    # the construction's choices branched on too, one root per resolution (with `choices` on; session 13), or
    # drawn by the seed (`construction = false`)
    construction: bool = True
    # the fairness end's choices: its first `end_choices` resolutions judged (`conformance.explore.ends`, session
    # 13; odometer order), 0: drawn by the seed
    end_choices: int = 2

    def with_(self, **changes: Any) -> Bound:
        return replace(self, **changes)


@dataclass(frozen=True)
class Action:
    op: str
    calls: list[Call]
    book: Book
    probed: bool = False  # a `tick` whose probe left the session it ran on in the state after it (`time_steps`)

    def step(self) -> dict[str, Any]:
        return {"op": self.op, "calls": self.calls}


def c(call: str, **args: Any) -> Call:
    return {"call": call, "args": args}


def next_timer_ms(sim: Any) -> int | None:
    """How long until the kernel's next live timer fires (None: nothing pending)."""
    live = [i.time_ms for i in sim._queue if not i.cancelled and sim._live(i)]
    return min(live) - sim.now_ms if live else None


QUIET_LIMIT_MS = 7 * 24 * 3_600_000  # a tick that records nothing for a week of virtual time stops there
NO_TICK = "no-tick"  # a kind: time passes only by the bound's `waits_ms`


def time_steps(system: Any, sim: Any, bound: Bound, book: Book) -> list[Action]:
    """The bound's fixed waits, then `tick`: time advanced timer by timer to the first instant at which an
    event is recorded (timers that record nothing, such as a store's idle poll, are not moments that matter;
    the replayed `advance(ms)` runs the same timers). A bound whose kinds name `no-tick` moves time only by its
    waits (a path to a mutant that needs hours between its steps, without the states of every instant between).
    Runs the live system forward: call it last."""
    out = [Action("advance", [c("advance", ms=w)], book) for w in bound.waits_ms]
    if NO_TICK in bound.kinds:
        return out
    start, seen = sim.now_ms, len(sim.events)
    quiet = getattr(system, "quiet_until", None)  # a model that knows its timers' no-op runs (pf) skips them
    while len(sim.events) == seen and sim.now_ms - start < QUIET_LIMIT_MS:
        if quiet is not None and (q := quiet(start + QUIET_LIMIT_MS - 1)) > sim.now_ms:
            system.advance(q - sim.now_ms)  # the instants before q record nothing: as if stepped one by one
            continue
        nxt = next_timer_ms(sim)
        if nxt is None:
            break
        ran = sim.steps
        system.advance(nxt)
        if sim.steps == ran and nxt == 0:  # a live timer due now that `advance(0)` does not run: it never would
            raise RuntimeError(f"{bound.name}: the model's advance(0) left a timer due at {sim.now_ms} unrun")
    if sim.now_ms > start or len(sim.events) > seen:  # the probe's system is now in the state after the tick
        out.append(Action("advance", [c("advance", ms=sim.now_ms - start)], book, probed=True))
    return out


def _fault(book: Book, bound: Bound, kind: str) -> bool:
    return kind in bound.kinds and book[1] < bound.faults


def _used(book: Book, down: frozenset[str] | None = None, cut: frozenset[str] | None = None, n: int = 1) -> Book:
    return (book[0], book[1] + n, book[2] if down is None else down, book[3] if cut is None else cut)


def server_faults(names: list[str], book: Book, bound: Bound, crash: str, restart: str, **rk: Any) -> list[Action]:
    """Crash an up server (a fault), restart a down one (free: fairness brings it back anyway), with the same or,
    where the bound's kinds say `new-database`, a new database (part of the crash's fault)."""
    out = []
    key = "server" if crash != "crash_store" else "store"
    for s in names:
        if s in book[2]:
            back = (*book[:2], book[2] - {s}, book[3])
            out.append(Action("restart", [c(restart, **{key: s}, **rk)], back))
            if "new-database" in bound.kinds:
                out.append(Action("restart", [c(restart, **{key: s}, new_database=True)], back))
        elif _fault(book, bound, "crash"):
            out.append(Action("crash", [c("crash", **{key: s})], _used(book, down=book[2] | {s})))
    return out


# --- shadow redundancy -------------------------------------------------------------------------------------
def sr_setup(bound: Bound) -> dict[str, Any]:

    base = {
        **_fixed_config(),
        **durations("short-all"),
        "seed": 1,
        "layout": "multi-site-dag",
        "reject_on_failure": False,
        "preference": "PreferRemote",
        "enabled": True,
        "heartbeat_ms": 30 * 60_000,
        "hub": False,
        "n_servers": bound.servers,
        "stall_p": 0.0,
    }
    if isinstance(bound.choices, tuple):  # the labels branched on (`model.sr.choice_points`), the rest seeded
        base["branching"] = sorted(bound.choices)
    return {**base, **{k: v for k, v in bound.setup.items() if k != "forks"}}  # forks: what sr_actions submits


def sr_actions(s: Session, book: Book, bound: Bound) -> list[Action]:
    names = list(s.state["servers"])
    forks = bound.setup.get("forks", ["mbx"])
    out = []
    if book[0] < bound.messages:
        nb = (book[0] + 1, *book[1:])
        out += [Action("submit", [c("submit", msg=f"m{book[0] + 1}", primary=p, forks=forks)], nb) for p in names]
    out += server_faults(names, book, bound, "crash", "restart", new_database=False)
    for x in names:
        if x not in book[3] and _fault(book, bound, "partition"):
            out.append(Action("isolate", [c("isolate", server=x)], _used(book, cut=book[3] | {x})))
        if _fault(book, bound, "resubmit"):
            out.append(Action("resubmit_last_primary", [c("safetynet_resubmit", server=x)], _used(book)))
    if book[3]:
        out.append(Action("heal", [c("heal")], (*book[:3], frozenset())))
    return out + time_steps(s.system, s.system.sim, bound, book)


# --- Active Manager ----------------------------------------------------------------------------------------
def am_setup(bound: Bound) -> dict[str, Any]:

    members = [f"MBX{i + 1}" for i in range(bound.servers)]
    base = {
        "seed": 1,
        "dag": "DAG1",
        "members": members,
        "standalone": [],
        "copies": {f"DB{i + 1}": list(members) for i in range(bound.messages)},
        "bcss": {},
        "components": _components(),
        "default_dial": _default_dial(),
        "mount_fail": 0.0,
    }
    return {**base, **bound.setup}


def am_actions(s: Session, book: Book, bound: Bound) -> list[Action]:
    names, dbs = list(s.setup["members"]), sorted(s.setup["copies"])
    out = server_faults(names, book, bound, "crash", "restart")
    for x in names:
        if x not in book[3] and _fault(book, bound, "partition"):
            cut = book[3] | {x}
            out.append(Action("partition", [c("partition", groups=[sorted(cut)])], _used(book, cut=cut)))
    if book[3]:
        out.append(Action("heal", [c("heal")], (*book[:3], frozenset())))
    for db in dbs:
        if _fault(book, bound, "fail_database"):
            out.append(Action("fail_database", [c("fail_database", db=db)], _used(book)))
        if "switchover" in bound.kinds:
            out.append(Action("switchover", [c("switchover", db=db, lossless=False)], book))
    if "move_pam" in bound.kinds:
        out += [Action("move_pam", [c("move_pam", to=x)], book) for x in names]
    return out + am_admin(names, dbs, book, bound, s.setup["copies"])


# the lag patterns of `logs` (seed 002, AM-024/AM-039): every copy behind, or copies behind by preference order
LAGS: dict[str, Callable[[list[str]], dict[str, int]]] = {
    "behind": lambda names: dict.fromkeys(names, 25),
    "uneven": lambda names: {m: 2 * i for i, m in enumerate(names)},
    "uneven-reversed": lambda names: {m: 2 * (len(names) - i) for i, m in enumerate(names)},
}


def am_admin(
    names: list[str], dbs: list[str], book: Book, bound: Bound, copies: Mapping[str, Sequence[str]]
) -> list[Action]:
    """Administration and monitoring steps, each one of the bound's faults: logs generated with a lag pattern,
    a copy suspended (on a server holding one: `copies`, the configuration's database -> its copies' servers), a
    component Unhealthy, a responder failing over, a Lossless dial, maintenance, a query (any member's SAM)."""
    out: list[Action] = []
    used = _used(book)
    for db in dbs:
        if _fault(book, bound, "logs"):
            out += [Action("logs", [c("generate_logs", db=db, n=30, lags=f(names))], used) for f in LAGS.values()]
        if _fault(book, bound, "switchover"):
            out.append(Action("switchover", [c("switchover", db=db, lossless=True)], used))
        for x in names:
            if _fault(book, bound, "block") and x in copies[db]:
                out.append(Action("block", [c("set_copy", db=db, server=x, suspended=True)], used))
            if _fault(book, bound, "query"):
                out.append(Action("query", [c("query", db=db, server=x)], used))
    for x in names:
        if _fault(book, bound, "health"):
            out.append(Action("health", [c("set_health", server=x, component="OutlookWeb", state="Unhealthy")], used))
        if _fault(book, bound, "responder"):
            out.append(Action("responder", [c("responder_failover", server=x, component="OutlookWeb")], used))
        if _fault(book, bound, "dial"):
            out.append(Action("dial", [c("set_dial", server=x, dial="Lossless")], used))
        if _fault(book, bound, "maintenance"):
            out.append(Action("maintenance", [c("maintenance", server=x)], used))
    return out


# --- public folders ----------------------------------------------------------------------------------------
def pf_setup(bound: Bound) -> dict[str, Any]:

    base = {
        "seed": 1,
        "faults": True,
        "stores": [list(x) for x in SERVERS[: bound.servers]],
        "links": [list(link) for link in LINKS] if bound.servers > 2 else [],
        "latency_max_ms": LATENCY_MAX_MS,
        "deleted_folder_limit": 500,
    }
    return {**base, **bound.setup}


def pf_actions(s: Session, book: Book, bound: Bound) -> list[Action]:
    stores = [x[0] for x in s.setup["stores"]]
    fids = s.state.get("fids", [])
    out = []
    if book[0] < bound.messages:
        name = f"f{s.state.get('created', 0)}"
        out.append(Action("create_folder", [c("create_folder", via="A", name=name)], (book[0] + 1, *book[1:])))
    for k, fid in enumerate(fids):
        ref = {"$folder": k}
        held = s.system.replicas(fid)
        for x in stores:
            if x in book[2]:
                continue
            out.append(Action("post", [c("post", store=x, fid=ref, size_kb=1)], book))
            if x not in held and "add_replica" in bound.kinds:
                out.append(Action("add_replica", [c("add_replica", fid=ref, server=x, via=x)], book))
            if held.get(x) == "active" and "remove_replica" in bound.kinds and _fault(book, bound, "remove_replica"):
                out.append(Action("remove_replica", [c("remove_replica", fid=ref, server=x, via=x)], _used(book)))
    out += pf_more(s, stores, fids, book, bound)
    out += server_faults(stores, book, bound, "crash_store", "restart")
    if "loss" in bound.kinds:
        lost = "loss" in book[3]
        if lost:
            out.append(Action("set_loss", [c("set_loss", loss=0.0)], (*book[:3], frozenset())))
        elif _fault(book, bound, "loss"):
            out.append(Action("set_loss", [c("set_loss", loss=1.0)], _used(book, cut=frozenset({"loss"}))))
    return out + time_steps(s.system, s.system.sim, bound, book)


def pf_more(s: Session, stores: list[str], fids: list[str], book: Book, bound: Bound) -> list[Action]:
    """The harness's further public folder steps, where the bound's kinds name them: `local` (a Views folder that
    never replicates, PF-004; one of the bound's folders), `big` (three 400 KB posts), `client` (a client's access),
    `delete` (every folder deleted on one store in one instant, PF-011/PF-025; a fault) and `remove_at_once`
    (every active replica of a folder removed in one instant, each on its own store, BF-I14; a fault)."""
    out: list[Action] = []
    if "local" in bound.kinds and book[0] < bound.messages:
        name = f"Views{s.state.get('created', 0)}"
        call = c("create_folder", via="A", name=name, tree="NON_IPM", replicating=False)
        out.append(Action("create_local_folder", [call], (book[0] + 1, *book[1:])))
    up = [x for x in stores if x not in book[2]]
    for k, fid in enumerate(fids):
        ref = {"$folder": k}
        if "big" in bound.kinds:
            out += [Action("post", [c("post", store=x, fid=ref, size_kb=400)] * 3, book) for x in up]
        if "client" in bound.kinds:
            out += [Action("client", [c("client_access", store=x, fid=ref)], book) for x in up]
        active = sorted(x for x, st in s.system.replicas(fid).items() if st == "active")
        if "remove_at_once" in bound.kinds and len(active) > 1 and _fault(book, bound, "remove_at_once"):
            calls = [c("remove_replica", fid=ref, server=x, via=x) for x in active]
            out.append(Action("remove_replicas_at_once", calls, _used(book)))
    if "delete" in bound.kinds and fids and _fault(book, bound, "delete"):
        for x in up:
            calls = [c("delete_folder", via=x, fid={"$folder": k}) for k in range(len(fids))]
            out.append(Action("delete_folders", calls, _used(book)))
    return out


def am_invariants(s: Session) -> list[tuple[str, str, str]]:
    """Active Manager's state-level safety rules on the model's world (`model.am.properties.check_world`, the
    same functions of `rules.py` the monitor uses): (rule, requirement, text)."""

    out = []
    for text in check_world(s.system.world):
        rule, _, rest = text.partition(" (")
        out.append((rule, rest.partition(")")[0], text))
    return out


@dataclass(frozen=True)
class Space:
    """One mechanism's explorable space: its setup for a bound, its steps, and what its state is."""

    mechanism: str
    setup: Callable[[Bound], dict[str, Any]]
    actions: Callable[[Session, Book, Bound], list[Action]]
    always_end_checks: bool  # the driver's end_checks are safety (am: one PAM, one mounted copy) or liveness (pf)
    invariants: Callable[[Session], list[tuple[str, str, str]]] | None = None  # state-level safety rules
    forward: bool = True  # `actions` may run the session forward (time steps); am: no time, it only reads it

    def roots(self, s: Session, book: Book) -> list[Any]:
        """What the state is: the system and the driver's bookkeeping (not the recorded trace), and the book."""
        state = {k: v for k, v in s.state.items() if k not in ("seq", "trace", "trace_id", "scratching")}
        return [s.system, state, book]


SPACES: dict[str, Space] = {
    "sr": Space("sr", sr_setup, sr_actions, False),
    "am": Space("am", am_setup, am_actions, True, am_invariants, forward=False),
    "pf": Space("pf", pf_setup, pf_actions, False),
}


def symmetric_servers(bound: Bound, setup: dict[str, Any]) -> list[list[str]]:
    """The groups of servers a bound declares interchangeable: `model.<mechanism>.symmetry.interchangeable(setup)`
    where the mechanism states them (issue 33; a list of groups, or of names: one group), else am's DAG members
    (every database on each). No group at all is a usage error: the reduction would merge nothing."""
    try:
        mod = importlib.import_module(f"model.{bound.mechanism}.symmetry")
    except ModuleNotFoundError:
        mod = None
    if mod is not None:
        raw = list(mod.interchangeable(setup))
        groups = [list(g) for g in raw] if raw and not isinstance(raw[0], str) else [list(raw)]
        groups = [g for g in groups if len(g) > 1]
        if groups:
            return groups
    elif bound.mechanism == "am":
        return [list(setup["members"])]
    raise BoundError(
        f"{bound.name}: field 'symmetry': {bound.mechanism} has no symmetry reduction here (no servers "
        f"interchangeable under this setup: model/{bound.mechanism}/symmetry.py, conformance/explore/README.md)"
    )
