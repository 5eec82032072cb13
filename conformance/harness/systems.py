"""Each mechanism's `typing.Protocol` implemented over the stdio adapter (`process.ProcessSystem`).

The method names and arguments are the protocol's; each becomes one request of the same name (see
`conformance/PROTOCOL.md`). Shadow redundancy and public folders keep the recorded events on the system
(`events()`); Active Manager methods return the `(entity, kind, attrs)` events each call caused, as its
protocol says. The harness sends the settings the system needs to judge itself by in `setup` (e.g. the
quiet tail's length for shadow redundancy's fairness, the monitoring components for Active Manager).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.harness.am import bcss_in_force
from conformance.harness.core import SutFailure
from conformance.harness.pf import params_of
from conformance.harness.process import ProcessClient, ProcessSystem
from model.pf.sim import build_fixed
from model.pf.state import HIERARCHY
from model.sr.cluster import Timing
from model.sr.sim import build_topology, quiet_ms
from model.sr.state import SrConfig
from traces.schema import Event


class SrProcess(ProcessSystem):
    """`model.sr.protocol.ShadowRedundancySystem` over the adapter.

    The harness records what it configured and the faults it injected, as the kernel does for the model:
    TRACE_START with the settings (`config.sr`), SR_CONFIG with the topology it hands the system in `setup`,
    and CRASH / RESTART / PARTITION / HEAL (the monitor derives reachability and database generations from
    them, never from the system's own events)."""

    mechanism = "sr"

    def _begin(self, first: bool) -> None:
        self.down: set[str] = set()
        self.isolated: set[str] = set()
        super()._begin(first)

    def config(self) -> dict[str, Any]:
        built = {k: self.setup[k] for k in ("layout", "n_servers", "hub") if k in self.setup}
        return {**built, "sr": sr_config(self.setup)}

    def context(self) -> list[dict[str, Any]]:
        return [{"entity": "config", "kind": "SR_CONFIG", "attrs": {"topology": _compact(sr_topology(self.setup))}}]

    def setup_args(self) -> dict[str, Any]:
        return {**self.setup, "topology": sr_topology(self.setup)}

    def _core(self, node: str, entity: str, kind: str, **attrs: Any) -> None:
        self._add({"ts_ms": self.now_ms, "node": node, "entity": entity, "kind": kind, "attrs": attrs}, "core")

    def servers(self) -> list[str]:
        """The system's Exchange 2013 transport servers: a non-empty list of such servers of the topology the
        setup gave it (an Exchange 2010 Hub is not one: the protocol's `servers` operation)."""
        names = list(self.request("servers", [])[1] or [])
        known = {n for n, s in sr_topology(self.setup).items() if s["version"] != "2010"}
        if not names or any(n not in known for n in names):
            what = "lists no servers" if not names else f"lists what is not a 2013 server of the topology: {names}"
            raise SutFailure(
                f"reply to 'servers' (request {self.client.next_id}) {what}; the setup's topology has "
                f"{', '.join(sorted(known))}",
                "result",
            )
        return names

    def submit(self, msg: str, primary: str, forks: Sequence[str], origin: str = "outside") -> None:
        self.request("submit", msg=msg, primary=primary, forks=list(forks), origin=origin)

    def advance(self, ms: int) -> None:
        self.request("advance", ms=ms)
        self.now_ms += ms

    def crash(self, server: str) -> None:
        if server not in self.down:
            self.down.add(server)
            self._core(server, server, "CRASH")
        self.request("crash", server=server)

    def restart(self, server: str, new_database: bool = False) -> None:
        if server in self.down:  # restarting a running server changes nothing (as in the kernel)
            self.down.discard(server)
            self._core(server, server, "RESTART", storage="new" if new_database else "same")
        self.request("restart", server=server, new_database=new_database)

    def isolate(self, server: str) -> None:
        if server not in self.isolated:
            self.isolated.add(server)
            self._core("sim", "network", "PARTITION", groups=sorted(self.isolated))
        self.request("isolate", server=server)

    def heal(self) -> None:
        if self.isolated:
            self.isolated.clear()
            self._core("sim", "network", "HEAL")
        self.request("heal")

    def safetynet_resubmit(self, server: str) -> None:
        self.request("safetynet_resubmit", server=server)

    def kill_and_restart(self, new_state: bool = False) -> bool:
        """With a new state directory the old deployment's trace ends here: it first gets the run's fairness
        end (`finish`: restarts, heal, quiet tail, SNAPSHOTs) so that its liveness rules can be judged; then
        kill -9 and a fresh deployment on an empty directory (a new trace). Without, kill -9 lands mid-run
        and the system must resume from what it persisted."""
        if new_state:
            self.finish()
        return super().kill_and_restart(new_state)

    def finish(self) -> None:
        """Fairness: every crashed server restarts (same storage), the network heals, the quiet tail runs."""
        for server in sorted(self.down):
            self._core(server, server, "RESTART", storage="same")
        self.down.clear()
        if self.isolated:
            self.isolated.clear()
            self._core("sim", "network", "HEAL")
        quiet = quiet_tail_ms(self.setup)
        self.request("finish", quiet_ms=quiet)
        self.now_ms += quiet


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def sr_config(setup: Mapping[str, Any]) -> dict[str, Any]:
    """The `sr` section of TRACE_START: every setting in force (the setup's, the rest at catalogue default)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(SrConfig)}
    return SrConfig().replace(**{k: v for k, v in setup.items() if k in names}).to_json()


def sr_topology(setup: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The servers the harness gives the system (`model.sr.sim.build_topology` of the setup's layout)."""

    topo = build_topology(None, setup["n_servers"], setup["layout"], bool(setup["hub"]))
    return {n: {"site": s.site, "dag": s.dag, "version": s.version} for n, s in sorted(topo.servers.items())}


def quiet_tail_ms(setup: Mapping[str, Any]) -> int:
    """The model's fairness tail for these settings (`model.sr.sim.quiet_ms`)."""

    keys = ("enabled", "reject_on_failure", "preference", "heartbeat_ms", "resubmit_ms")
    cfg = SrConfig().replace(**{k: setup[k] for k in keys if k in setup})
    return quiet_ms(cfg, Timing())


class AmProcess(ProcessSystem):
    """`model.am.protocol.ActiveManagerSystem` over the adapter."""

    mechanism = "am"

    def setup_args(self) -> dict[str, Any]:
        """The BCSS options in force, dial thresholds included (the seed gives none, AM-I09)."""

        return {**self.setup, "bcss": bcss_in_force(self.setup)}

    def _outs(self, raws: list[dict[str, Any]]) -> list[Any]:
        return [(e.entity, e.kind, e.attrs) for e in super()._outs(raws)]

    def _do(self, op: str, **args: Any) -> list[Any]:
        outs, _ = self.request(op, **args)
        return list(outs)

    def kill_and_restart(self, new_state: bool = False) -> bool:
        self.client.restart(new_state)
        if new_state:
            self._begin(first=False)
        else:
            self.initial = self._outs(self._setup_call())
        return new_state

    def crash(self, server: str) -> list[Any]:
        return self._do("crash", server=server)

    def restart(self, server: str) -> list[Any]:
        return self._do("restart", server=server)

    def partition(self, groups: Sequence[Sequence[str]]) -> list[Any]:
        return self._do("partition", groups=[list(g) for g in groups])

    def heal(self) -> list[Any]:
        return self._do("heal")

    def fail_database(self, db: str) -> list[Any]:
        return self._do("fail_database", db=db)

    def fail_store(self, server: str) -> list[Any]:
        return self._do("fail_store", server=server)

    def responder_failover(self, server: str, component: str) -> list[Any]:
        return self._do("responder_failover", server=server, component=component)

    def switchover(self, db: str, lossless: bool) -> list[Any]:
        return self._do("switchover", db=db, lossless=lossless)

    def move_pam(self, to: str) -> list[Any]:
        return self._do("move_pam", to=to)

    def maintenance(self, server: str) -> list[Any]:
        return self._do("maintenance", server=server)

    def set_health(self, server: str, component: str, state: str) -> list[Any]:
        return self._do("set_health", server=server, component=component, state=state)

    def set_dial(self, server: str, dial: str) -> list[Any]:
        return self._do("set_dial", server=server, dial=dial)

    def set_copy(self, db: str, server: str, **changes: Any) -> list[Any]:
        return self._do("set_copy", db=db, server=server, changes=changes)

    def generate_logs(self, db: str, n: int, lags: Mapping[str, int]) -> list[Any]:
        return self._do("generate_logs", db=db, n=n, lags=dict(lags))

    def query(self, db: str, server: str) -> list[Any]:
        return self._do("query", db=db, server=server)

    def pams(self) -> frozenset[str]:
        return frozenset(self.request("pams", [])[1] or [])

    def mounted(self, db: str) -> frozenset[str]:
        return frozenset(self.request("mounted", [], db=db)[1] or [])


class PfProcess(ProcessSystem):
    """`model.pf.protocol.PublicFolderSystem` over the adapter.

    As for shadow redundancy, the harness records the store outages it causes as the kernel does for the
    model: CRASH / RESTART (`storage` same, or new for a restore from backup), and a CRASH and RESTART of every
    running store when it kills the process (kill -9, or a reply time-out) and starts it again on the same state.
    The public folder monitor takes from them which stores owe nothing while down and when their timers
    restart (seed 001, "Replication Process")."""

    mechanism = "pf"

    def _begin(self, first: bool) -> None:
        self.down: set[str] = set()
        self.backed_up: set[str] = set()
        self.fids: list[str] = [HIERARCHY]  # this deployment's replicated folders: the hierarchy, those created
        super()._begin(first)

    def context(self) -> list[dict[str, Any]]:
        """PF_CONFIG: the stores, transport costs, versions and parameters the harness configured (without it
        the public folder monitor judges nothing: verdict unknown)."""
        return [{"entity": "config", "kind": "PF_CONFIG", "attrs": pf_config(self.setup)}]

    def _core(self, node: str, kind: str, **attrs: Any) -> None:
        self._add({"ts_ms": self.now_ms, "node": node, "entity": node, "kind": kind, "attrs": attrs}, "core")

    def _stores(self) -> list[str]:
        return sorted(str(s[0]) for s in self.setup["stores"])

    def _process_restarted(self) -> None:
        """Every store the process ran went down with it and comes back on the same state."""
        running = [s for s in self._stores() if s not in self.down]
        for store in running:
            self._core(store, "CRASH")
        for store in running:
            self._core(store, "RESTART", storage="same")

    def kill_and_restart(self, new_state: bool = False) -> bool:
        if not new_state:
            self.client.restart(False)
            self._process_restarted()
            self._outs(self._setup_call())
            return False
        return super().kill_and_restart(True)

    def create_folder(self, via: str, name: str, *, tree: str = "IPM", replicating: bool = True) -> str:
        fid = str(self.request("create_folder", "", via=via, name=name, tree=tree, replicating=replicating)[1] or "")
        if fid and replicating and fid not in self.fids:  # a local folder has no replica to snapshot (PF-004)
            self.fids.append(fid)
        return fid

    def modify_folder(self, via: str, fid: str, what: str = "description") -> bool:
        return bool(self.request("modify_folder", False, via=via, fid=fid, what=what)[1])

    def post(self, store: str, fid: str, size_kb: int) -> bool:
        return bool(self.request("post", False, store=store, fid=fid, size_kb=size_kb)[1])

    def delete_folder(self, via: str, fid: str) -> bool:
        return bool(self.request("delete_folder", False, via=via, fid=fid)[1])

    def add_replica(self, fid: str, server: str, via: str) -> bool:
        return bool(self.request("add_replica", False, fid=fid, server=server, via=via)[1])

    def remove_replica(self, fid: str, server: str, via: str) -> bool:
        return bool(self.request("remove_replica", False, fid=fid, server=server, via=via)[1])

    def client_access(self, store: str, fid: str) -> str:
        return str(self.request("client_access", "", store=store, fid=fid)[1] or "")

    def crash(self, store: str) -> None:
        if store not in self.down:
            self.down.add(store)
            self._core(store, "CRASH")
        self.request("crash", store=store)

    def restart(self, store: str) -> None:
        if store in self.down:  # restarting a running store changes nothing
            self.down.discard(store)
            self._core(store, "RESTART", storage="same")
        self.request("restart", store=store)

    def backup(self, store: str) -> str:
        backup = str(self.request("backup", "", store=store)[1] or "")
        if backup:
            self.backed_up.add(store)
        return backup

    def restore(self, store: str) -> bool:
        """A restore replaces the store's database (seed 003, BF-023): recorded as a crash and a restart on new
        storage, before the store's own RESTORE events, when the store has a backup to restore from."""
        if store in self.backed_up:
            if store not in self.down:
                self._core(store, "CRASH")
            self.down.discard(store)
            self._core(store, "RESTART", storage="new")
        return bool(self.request("restore", False, store=store)[1])

    def set_loss(self, loss: float) -> None:
        self.request("set_loss", loss=loss)

    def advance(self, ms: int) -> None:
        self.request("advance", ms=ms)
        self.now_ms += ms

    def quiesce(self) -> int:
        """Fairness (PF-035): every store that is down restarts (same storage) before the quiescent phase."""
        for store in sorted(self.down):
            self._core(store, "RESTART", storage="same")
        self.down.clear()
        self.request("quiesce")
        return self.now_ms

    def end(self, quiesce_ms: int, bound_ms: int) -> None:
        """The end-of-run snapshot (PF-035), recorded by the harness from what the system answers through the
        protocol, as the model's `Cluster.end` records its own: one END per folder and store holding a replica
        (`replicas`), with that replica's CNSet (`cnset`) and state, when the quiescent phase began and the
        convergence bound. The monitor's `convergence` rule judges each folder at them, and `restated-state`
        compares them with what the system's own events say its replicas hold."""
        for fid in list(self.fids):
            for store, state in sorted(self.replicas(fid).items()):
                cnset = sorted(self.cnset(store, fid))
                attrs = {"cnset": cnset, "state": state, "quiesce_ms": quiesce_ms, "bound_ms": bound_ms}
                self._add({"ts_ms": self.now_ms, "node": store, "entity": fid, "kind": "END", "attrs": attrs})

    def replicas(self, fid: str) -> dict[str, str]:
        return dict(self.request("replicas", {}, fid=fid)[1] or {})

    def cnset(self, store: str, fid: str) -> list[str]:
        return list(self.request("cnset", [], store=store, fid=fid)[1] or [])

    @property
    def events(self) -> list[Event]:  # type: ignore[override]
        return self._events


def pf_config(setup: Mapping[str, Any]) -> dict[str, Any]:
    """The PF_CONFIG attributes of the setup's stores, links and parameters (the deleted-folder limit, PF-011), as
    the model's `Cluster` records them."""

    servers = [tuple(x) for x in setup["stores"]]
    links = [tuple(x) for x in setup["links"]]
    latency = (1_000, setup["latency_max_ms"])
    cluster = build_fixed(setup.get("seed", 0), servers, links, latency_ms=latency, params=params_of(setup))
    return dict(next(e for e in cluster.events if e.kind == "PF_CONFIG").attrs)


SYSTEMS: dict[str, type[ProcessSystem]] = {"sr": SrProcess, "am": AmProcess, "pf": PfProcess}


def process_factory(mechanism: str, command: str, timeout_s: float = 10.0, state_root: Path | None = None) -> Any:
    """A system factory for the harness: each run starts a fresh child process with an empty state directory."""
    cls = SYSTEMS[mechanism]

    def build(setup: dict[str, Any]) -> Any:
        client = ProcessClient(command, mechanism, timeout_s, state_root)
        try:
            return cls(client, setup)
        except BaseException:
            client.close()
            raise

    return build
