"""The public folder generator: a cluster of stores on the kernel, driven by random workloads and faults.

`Cluster` implements `protocol.PublicFolderSystem` (the interface the stateful tests drive). `simulate`
draws a topology (routing groups with transport costs, Exchange versions), folders, posts, edits, replica
adds and removals, store outages, mail loss and restores from backup from the simulator's one generator
(the activity: `model.pf.workload`), then runs a quiescent phase (no faults, every store touches the hierarchy
and every replica its folder: the fairness assumption of PF-035) and records `END` for every replica.
Seeds: 001 "Replication Overview", "Hierarchy Replication", "Content Replication"; 003 "Example
Replication Cycles".
"""

from __future__ import annotations

import random
from typing import Any

from model.kernel.idle import fast_forward, noop_until
from model.kernel.network import NetConfig, Network
from model.kernel.sim import HOUR, MINUTE, SECOND, Simulator
from model.kernel.topology import Server, Topology
from model.pf.cnset import CNSet
from model.pf.decisions import DECISIONS, Decisions
from model.pf.idle import rearm_of
from model.pf.node import Store
from model.pf.properties import convergence_bound_ms, touch_gap_ms
from model.pf.state import ACTIVE, HIERARCHY, Ctx, Params, default_params
from model.pf.workload import remove_two_at_once, workload
from spec.catalogue import param_default, require

require("PF-001", "PF-002", "PF-003", "PF-004", "PF-005", "PF-006", "PF-035", "BF-024")

VERSIONS = {"5.5": 55, "2000": 2000, "2003": 2003}
IDLE_CHECK_MS = 15 * MINUTE  # while runs act, `advance` steps this long between asking whether it may jump


class Cluster:
    """Stores of one top level hierarchy on one simulator and one mail network."""

    def __init__(
        self,
        sim: Simulator,
        topology: Topology,
        net_config: NetConfig,
        *,
        params: Params | None = None,
        rules: Decisions = DECISIONS,
        preferred: tuple[str, ...] | None = None,
        store_class: type[Store] = Store,
    ) -> None:
        self.sim, self.topology, self.rules, self.store_class = sim, topology, rules, store_class
        self.params = params or default_params()
        self.net = Network(sim, topology, net_config)
        self.preferred = tuple(param_default("PreferredBackfillServers")) if preferred is None else preferred
        self.stores: dict[str, Store] = {}
        self.backups: dict[str, tuple[str, dict[str, Any]]] = {}
        self.backups_made = 0  # numbers every backup: a store backed up twice never reuses an ID (issue 34)
        self.folders: list[str] = []
        self.scratch: list[str] = []  # folders created to be deleted together (see `scratch`)
        self._fid = 0x2A40
        sim.on_lifecycle(self._lifecycle)
        self._record_config()

    def _record_config(self) -> None:
        """The run's configuration as a context event (PF_CONFIG): servers, transport costs, versions,
        preferred backfill servers and the parameters that differ from the catalogue. Monitors take every
        duration and every sort key from here, never from the event they judge."""
        names = self.topology.names()
        self._recorded_servers = set(names)
        costs = [
            f"{a}>{b}={c}"
            for a in names
            for b in names
            if a != b and (c := self.topology.transport_cost(a, b)) is not None
        ]
        versions = [f"{s}={VERSIONS.get(self.topology.server(s).version, 0)}" for s in names]
        self.sim.emit(
            "sim",
            "pf",
            "config",
            "PF_CONFIG",
            servers=list(names),
            costs=costs,
            versions=versions,
            preferred=list(self.preferred),
            params=self.params.to_json(),
            latency_ms=list(self.net.config.latency_ms),
        )

    # --- membership ----------------------------------------------------------------------------------
    def _ctx(self, name: str) -> Ctx:
        names = self.topology.names()
        costs = {s: c for s in names if s != name and (c := self.topology.transport_cost(name, s)) is not None}
        versions = {s: VERSIONS.get(self.topology.server(s).version, 0) for s in names}
        return Ctx(name, costs, versions, self.preferred, self.params)

    def add_store(self, name: str) -> None:
        """Mount a public folder store on a server (BF-020 when the hierarchy already has stores)."""
        joining = bool(self.stores)
        if name not in self._recorded_servers:  # the topology grew: a configuration change, recorded
            self._record_config()
            for other in self.stores.values():
                other.ctx = self._ctx(other.name)
        store = self.store_class(self, name, self._ctx(name))
        self.stores[name] = store
        self.net.register(name, store.on_envelope)
        store.start(sorted(self.stores), joining=joining)
        for other in self.stores.values():
            if other is not store and self.sim.is_up(other.name):
                other.members_changed(sorted(self.stores))

    def _lifecycle(self, name: str, what: str) -> None:
        if what == "restart" and name in self.stores:
            self.stores[name].restarted(sorted(self.stores))

    # --- administration and clients --------------------------------------------------------------------
    def create_folder(self, via: str, name: str, *, tree: str = "IPM", replicating: bool = True) -> str:
        if not self.sim.is_up(via):
            return ""
        self._fid += 1
        store = self.stores[via]
        if not replicating:  # Restrictions and Views (PF-004): local folders, no hierarchy entry
            fid = f"L-{via}-{self._fid:X}"
            store.local_only.add(fid)
            store.emit(fid, "FOLDER_CREATE", name=name, tree=tree, replicating=False)
            return fid
        fid = f"1-{self._fid:X}"
        store.emit(fid, "FOLDER_CREATE", name=name, tree=tree, replicating=True)
        store.local_change(HIERARCHY, "create", target=fid, detail=f"{name}")
        store.local_change(HIERARCHY, "replica", target=fid, detail=f"{via}:{ACTIVE}")
        self.folders.append(fid)
        return fid

    def modify_folder(self, via: str, fid: str, what: str = "description") -> bool:
        """A hierarchy modification (rename, permissions, description, schedule...: PF-025)."""
        if not self.sim.is_up(via) or not self.stores[via].views.get(fid):
            return False
        self.stores[via].local_change(HIERARCHY, "modify", target=fid, detail=what)
        return True

    def delete_folders(self, via: str, fids: list[str]) -> int:
        """Delete folders (a hierarchy change each, PF-025); their replicas go with them. Returns how many."""
        s = self.stores[via]
        if not self.sim.is_up(via):
            return 0
        done = 0
        for fid in fids:
            if s.views.get(fid):
                s.local_change(HIERARCHY, "delete", target=fid, detail="delete")
                done += 1
        return done

    def delete_folder(self, via: str, fid: str) -> bool:
        """One folder deleted (the protocol's form of `delete_folders`)."""
        return self.delete_folders(via, [fid]) == 1

    def post(self, store: str, fid: str, size_kb: int) -> bool:
        s = self.stores[store]
        if not self.sim.is_up(store) or (fid not in s.replicas and fid not in s.local_only):
            return False
        if fid in s.replicas and s.replicas[fid].state != ACTIVE:
            return False
        s.local_change(fid, "post", size_kb=size_kb)
        if self.params.content_touches_hierarchy and fid in s.replicas:  # PF-I08, the literal reading
            s.local_change(HIERARCHY, "modify", target=fid, detail="content")
        return True

    def add_replica(self, fid: str, server: str, via: str) -> bool:
        s = self.stores[via]
        if not self.sim.is_up(via) or server in s.views.get(fid, {}) or not s.views.get(fid):
            return False
        s.local_change(HIERARCHY, "replica", target=fid, detail=f"{server}:{ACTIVE}")
        return True

    def remove_replica(self, fid: str, server: str, via: str) -> bool:
        s = self.stores[via]
        view = s.views.get(fid, {})
        if not self.sim.is_up(via) or view.get(server) != ACTIVE or sum(st == ACTIVE for st in view.values()) < 2:
            return False  # the last active replica cannot be removed (BF-I11)
        s.local_change(HIERARCHY, "replica", target=fid, detail=f"{server}:delete_pending")
        return True

    def client_access(self, store: str, fid: str) -> str:
        return self.stores[store].client_access(fid) if self.sim.is_up(store) else ""

    # --- faults ------------------------------------------------------------------------------------------
    def crash(self, store: str) -> None:
        self.sim.crash(store)

    def restart(self, store: str) -> None:
        self.sim.restart(store)

    def backup(self, store: str) -> str:
        s = self.stores[store]
        if not self.sim.is_up(store):
            return ""
        self.backups_made += 1
        backup_id = f"{store}-b{self.backups_made}"
        self.backups[store] = (backup_id, s.snapshot())
        for fid in sorted(s.replicas):
            s.emit(fid, "BACKUP", backup=backup_id)
        return backup_id

    def restore(self, store: str) -> bool:
        """Replace a store's database with its last backup (BF-023, BF-024)."""
        if store not in self.backups:
            return False
        self.sim.crash(store)
        self.sim.restart(store, new_storage=True)
        backup_id, snap = self.backups[store]
        self.stores[store].restore(snap, backup_id)
        return True

    def set_loss(self, loss: float) -> None:
        cfg = self.net.config
        if cfg.loss != loss:
            self.net.set_config(NetConfig(latency_ms=cfg.latency_ms, loss=loss, duplicate=cfg.duplicate))

    def advance(self, ms: int) -> None:
        """Run the timers for `ms`; once every store is idle (`idle.py`), jump the rest exactly (issue 33)."""
        sim, until = self.sim, self.sim.now_ms + ms
        while True:
            runs = sim.steps
            if fast_forward(sim, until, rearm_of(self.stores, self.rules)) and sim.now_ms >= until:
                return
            if sim.steps > runs:  # idle runs jumped up to one that acts: run its instant, then ask again
                sim.run(until_ms=sim.now_ms + 1)
            else:  # runs act (mail, changes): asked again after IDLE_CHECK_MS, asking at each instant costs more
                sim.run(until_ms=min(until, sim.now_ms + IDLE_CHECK_MS))
            if sim.now_ms >= until:
                return

    def quiet_until(self, until_ms: int) -> int:
        """The last instant, at most `until_ms`, up to which no timer run records anything (`idle.py`)."""
        return max(self.sim.now_ms, noop_until(self.sim, until_ms, rearm_of(self.stores, self.rules))[0])

    # --- the quiescent phase (PF-035) --------------------------------------------------------------------
    def quiesce(self) -> int:
        """Stop faults and give every replica one delivered message: restart every store, stop loss, heal,
        touch the hierarchy from every store, and later every active replica's folder. Returns the
        start of the quiescent phase."""
        self.set_loss(0.0)
        self.net.heal()
        for name in sorted(self.stores):
            if not self.sim.is_up(name):
                self.sim.restart(name)
        start = self.sim.now_ms
        for name in sorted(self.stores):
            self.stores[name].local_change(HIERARCHY, "modify", target=HIERARCHY, detail="touch")
        self.sim.after(touch_gap_ms(self.params), self._touch_content)
        return start

    def _touch_content(self) -> None:
        for name in sorted(self.stores):
            s = self.stores[name]
            for fid in sorted(s.replicas):
                if fid != HIERARCHY and s.replicas[fid].state == ACTIVE:
                    s.local_change(fid, "post", size_kb=1)

    def end(self, quiesce_ms: int, bound_ms: int) -> None:
        for name in sorted(self.stores):
            s = self.stores[name]
            for fid in sorted(s.replicas):
                rep = s.replicas[fid]
                s.emit(
                    fid,
                    "END",
                    cnset=rep.cnset.encode(),
                    state=rep.state,
                    quiesce_ms=quiesce_ms,
                    bound_ms=bound_ms,
                )

    # --- observation -------------------------------------------------------------------------------------
    def replicas(self, fid: str) -> dict[str, str]:
        return {n: s.replicas[fid].state for n, s in sorted(self.stores.items()) if fid in s.replicas}

    def cnset(self, store: str, fid: str) -> CNSet:
        return self.stores[store].cnset(fid)

    @property
    def events(self) -> list:
        return self.sim.events


def random_pf_topology(rng: random.Random, n_stores: int) -> Topology:
    n_groups = rng.randint(1, min(3, n_stores))
    groups = [f"rg{i}" for i in range(n_groups)]
    servers = [
        Server(
            f"pf{i:02d}",
            site=groups[i % n_groups] if i < n_groups else rng.choice(groups),
            version=rng.choice(("2003", "2003", "2000", "5.5")),
            role="public",
        )
        for i in range(n_stores)
    ]
    links = [(groups[i], groups[rng.randrange(i)], rng.randint(1, 20)) for i in range(1, n_groups)]
    return Topology(servers, links)


def build(
    seed: int,
    *,
    n_stores: int = 4,
    loss: float = 0.05,
    duplicate: float = 0.02,
    params: Params | None = None,
    rules: Decisions = DECISIONS,
    store_class: type[Store] = Store,
    trace_id: str | None = None,
) -> Cluster:
    config = {"n_stores": n_stores, "loss": loss, "duplicate": duplicate}
    sim = Simulator(seed, trace_id=trace_id or f"pf-s{seed}", mechanism="pf", config=config)
    topo = random_pf_topology(sim.rng, n_stores)
    preferred = (sim.rng.choice(topo.names()),) if sim.rng.random() < 0.2 else None
    cluster = Cluster(
        sim,
        topo,
        NetConfig(latency_ms=(SECOND, 10 * MINUTE), loss=loss, duplicate=duplicate),
        params=params,
        rules=rules,
        preferred=preferred,
        store_class=store_class,
    )
    for name in topo.names():
        cluster.add_store(name)
    return cluster


def simulate(
    seed: int,
    *,
    n_stores: int = 4,
    duration_ms: int = 36 * HOUR,
    loss: float = 0.05,
    duplicate: float = 0.02,
    rules: Decisions = DECISIONS,
    params: Params | None = None,
    store_class: type[Store] = Store,
    concurrent_removal: bool = False,
) -> list:
    """A deterministic run: workload with faults, then a quiescent phase long enough for convergence.
    `concurrent_removal` starts with a folder whose two replicas are removed at once (BF-I14)."""
    c = build(
        seed,
        n_stores=n_stores,
        loss=loss,
        duplicate=duplicate,
        params=params,
        rules=rules,
        store_class=store_class,
    )
    if concurrent_removal:
        remove_two_at_once(c)
    workload(c, duration_ms)
    start = c.quiesce()
    bound = convergence_bound_ms(c.params, c.net.config.latency_ms[1])
    c.sim.run(until_ms=start + bound)
    c.end(start, bound)
    return c.events


def build_fixed(
    seed: int,
    servers: list[tuple[str, str, str]],
    links: list[tuple[str, str, int]] | None = None,
    *,
    latency_ms: tuple[int, int] = (SECOND, 2 * MINUTE),
    loss: float = 0.0,
    duplicate: float = 0.0,
    params: Params | None = None,
    rules: Decisions = DECISIONS,
    store_class: type[Store] = Store,
) -> Cluster:
    """A cluster on a given topology: `servers` as (name, routing group, version), for scenarios."""
    sim = Simulator(seed, trace_id=f"pf-fixed-s{seed}", mechanism="pf", config={"servers": len(servers)})
    topo = Topology([Server(n, g, version=v, role="public") for n, g, v in servers], links or [])
    cluster = Cluster(
        sim,
        topo,
        NetConfig(latency_ms=latency_ms, loss=loss, duplicate=duplicate),
        params=params,
        rules=rules,
        store_class=store_class,
        preferred=(),
    )
    for name, _, _ in servers:
        cluster.add_store(name)
    return cluster
