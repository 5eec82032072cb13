"""The shadow redundancy generator: random topologies, workloads and faults on the kernel.

Seed 000, "Requirements for shadow redundancy" (topologies: DAGs spanning sites, single-site DAGs,
servers outside any DAG, Exchange 2010 Hubs) and "Message processing after an outage" (crashes, long
outages with the same database, new databases, network card failures). One seed draws everything from
`sim.rng`; the run has a fault phase and then a quiet phase (every server restarted, the network healed)
long enough for the liveness rules to apply, and ends with one SNAPSHOT per message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from model.kernel.sim import MINUTE, Simulator
from model.kernel.topology import Server, Topology
from model.sr.cluster import Cluster, Policy, Timing
from model.sr.state import SrConfig
from traces.schema import Event

LAYOUTS = ("multi-site-dag", "single-site-dag", "no-dag", "mixed")


def build_topology(rng: Any, n_servers: int = 5, layout: str | None = None, hub: bool | None = None) -> Topology:
    """Two sites; the layout decides DAG membership; optionally an Exchange 2010 Hub in site0."""
    layout = layout or rng.choice(LAYOUTS)
    servers = []
    for i in range(n_servers):
        site = f"site{i % 2}"
        dag = {
            "multi-site-dag": "dag0",
            "single-site-dag": "dag0" if site == "site0" else None,
            "no-dag": None,
            "mixed": "dag0" if i < n_servers - 1 else None,
        }[layout]
        servers.append(Server(f"MBX{i + 1:02d}", site, dag=dag))
    if hub if hub is not None else rng.random() < 0.4:
        servers.append(Server("HUB2010", "site0", version="2010", role="hub"))
    return Topology(servers, [("site0", "site1", 10)])


def config_warnings(cfg: SrConfig, topo: Topology) -> list[str]:
    """SR-023 (advisory): rejecting on shadow failure where a boundary has a single 2013 server refuses
    every message received there. Returned, not raised: the seed only advises against it."""
    if not (cfg.enabled and cfg.reject_on_failure):
        return []
    out = []
    for name in topo.names():
        if topo.server(name).version != "2013":
            continue
        peers = [n for n in topo.boundary_members(name) if n != name and topo.server(n).version == "2013"]
        if not peers:
            out.append(
                f"SR-023: RejectMessageOnShadowFailure is true but {name} has no other Exchange 2013 "
                f"server in its boundary {topo.boundary(name)}; every message it receives is refused"
            )
    return out


def random_forks(rng: Any, topo: Topology, primary: str) -> list[str]:
    """The forks of a message: mailbox recipients, outside next hops, a 2010 Hub, DSN, journal (SR-063)."""
    forks = []
    if rng.random() < 0.8:
        forks.append("mbx")
    if rng.random() < 0.5:
        forks.append(f"ext:{rng.choice(['contoso.example', 'fabrikam.example'])}")
    hubs = [n for n in topo.names() if topo.server(n).version == "2010" and topo.same_site(n, primary)]
    if hubs and rng.random() < 0.3:
        forks.append(f"hub:{hubs[0]}")
    if rng.random() < 0.1:
        forks.append("dsn")
    if rng.random() < 0.15:
        forks.append("journal")
    return forks or ["mbx"]


@dataclass(frozen=True)
class Workload:
    n_messages: int = 25
    load_ms: int = 90 * MINUTE
    faults: bool = True
    fault_ms: int = 120 * MINUTE
    fault_gap_ms: tuple[int, int] = (5 * MINUTE, 30 * MINUTE)


def _submit_all(cl: Cluster, wl: Workload) -> None:
    rng, topo = cl.sim.rng, cl.topo
    hubs = [n for n in topo.names() if topo.server(n).version == "2010"]
    for i in range(wl.n_messages):
        primary = rng.choice(cl.exchange)
        roll = rng.random()
        origin = (
            "hub2010"
            if hubs and roll < 0.1 and topo.same_site(hubs[0], primary)
            else ("submission" if roll < 0.3 else "outside")
        )
        forks = random_forks(rng, topo, primary)
        msg = f"msg-{i:04d}"
        cl.sim.after(rng.randint(0, wl.load_ms), cl.submit, msg, primary, forks, origin)


def _restart(sim: Simulator, node: str, new_storage: bool) -> None:
    """The end of an outage (a timer record: `Simulator.restart` with its storage as an argument)."""
    sim.restart(node, new_storage=new_storage)


def _fault(cl: Cluster, wl: Workload, end_ms: int) -> None:
    sim, rng = cl.sim, cl.sim.rng
    node = rng.choice(cl.exchange)
    roll = rng.random()
    long_ms = cl.cfg.resubmit_ms + rng.randint(0, 60) * MINUTE
    if roll < 0.45 and sim.is_up(node):
        sim.crash(node)
        new = rng.random() < 0.35
        back = rng.randint(1, 20) * MINUTE if rng.random() < 0.6 else long_ms
        sim.at(min(end_ms, sim.now_ms + back), _restart, sim, node, new)
    elif roll < 0.7 and node not in cl.isolated:
        cl.isolate(node)
        back = rng.randint(1, 20) * MINUTE if rng.random() < 0.5 else long_ms
        sim.at(min(end_ms, sim.now_ms + back), cl.heal)
    elif roll < 0.8:
        cl.safetynet_resubmit(node)
    nxt = sim.now_ms + rng.randint(*wl.fault_gap_ms)
    if nxt < sim.start_ms + wl.fault_ms:
        sim.at(nxt, _fault, cl, wl, end_ms)


def quiet_ms(cfg: SrConfig, timing: Timing) -> int:
    """Length of the fault-free tail: promotion bound, slow next hops and sender retries (fairness)."""
    return cfg.resubmit_ms + 3 * cfg.heartbeat_ms + timing.hop_slow_ms[1] + 4 * timing.retry_ms[1] + 30 * MINUTE


def quiesce(cl: Cluster) -> None:
    """Fairness: every server comes back (same storage) and the network heals."""
    cl.heal()
    for n in cl.exchange:
        if not cl.sim.is_up(n):
            cl.sim.restart(n)


def simulate(
    seed: int,
    *,
    n_servers: int = 5,
    layout: str | None = None,
    hub: bool | None = None,
    config: Mapping[str, Any] | None = None,
    workload: Workload | None = None,
    timing: Timing | None = None,
    policy: Policy | None = None,
    trace_id: str | None = None,
    **cfg_overrides: Any,
) -> list[Event]:
    """One deterministic run: the same arguments give the same events."""
    cfg = SrConfig().replace(**{**dict(config or {}), **cfg_overrides})
    wl, timing = workload or Workload(), timing or Timing()
    sim = Simulator(
        seed,
        trace_id=trace_id or f"sr-s{seed}",
        mechanism="sr",
        config={"n_servers": n_servers, "layout": layout, "sr": cfg.to_json()},
    )
    topo = build_topology(sim.rng, n_servers, layout, hub)
    cl = Cluster(sim, topo, cfg, policy, timing)
    _submit_all(cl, wl)
    quiet_at = sim.start_ms + max(wl.load_ms, wl.fault_ms) + cfg.resubmit_ms + 60 * MINUTE
    if wl.faults:
        sim.at(sim.start_ms + wl.fault_gap_ms[0], _fault, cl, wl, quiet_at)
    sim.run(until_ms=quiet_at)
    quiesce(cl)
    sim.run(until_ms=quiet_at + quiet_ms(cfg, timing))
    cl.snapshot(quiesced=True)
    return sim.events
