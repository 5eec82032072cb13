"""The simulation kernel: stable scheduling, node lifecycle, network faults, topology, determinism."""

from __future__ import annotations

import pytest

from model.kernel.network import NetConfig, Network
from model.kernel.sim import MINUTE, SimulationError, Simulator
from model.kernel.topology import Server, Topology, random_topology
from model.kernel.workload import simulate
from traces.io import write_events

pytestmark = pytest.mark.unit


def _sim(seed: int = 1) -> Simulator:
    return Simulator(seed, trace_id="t", mechanism="core")


def _later(sim: Simulator, delay_ms: int, fn, arg, node: str) -> None:
    """A timer that schedules another (a record, like every timer)."""
    sim.after(delay_ms, fn, arg, node=node)


def test_simultaneous_events_run_in_scheduling_order():
    sim = _sim()
    seen: list[str] = []
    for name in "abcde":
        sim.at(sim.now_ms + 10, seen.append, name)
    sim.at(sim.now_ms + 5, seen.append, "first")
    sim.run()
    assert seen == ["first", "a", "b", "c", "d", "e"]


def test_time_never_goes_back_and_cancel_works():
    sim = _sim()
    fired: list[int] = []
    handle = sim.after(100, fired.append, 1)
    sim.after(50, fired.append, 0)
    sim.cancel(handle)
    sim.run()
    assert fired == [0]
    with pytest.raises(SimulationError):
        sim.at(sim.now_ms - 1, fired.clear)


def test_timers_of_a_crashed_node_never_fire_even_after_restart():
    sim = _sim()
    sim.add_node("a")
    fired: list[str] = []
    sim.after(100, fired.append, "old", node="a")
    sim.after(10, sim.crash, "a")
    sim.after(20, sim.restart, "a")
    sim.after(30, _later, sim, 100, fired.append, "new", "a")
    sim.run()
    assert fired == ["new"]
    kinds = [e.kind for e in sim.events]
    assert kinds == ["TRACE_START", "CRASH", "RESTART"]


def test_restart_with_new_storage_changes_the_storage_epoch_only_then():
    sim = _sim()
    sim.add_node("a")
    seen: list[tuple[str, str]] = []
    sim.on_lifecycle(lambda n, what: seen.append((n, what)))
    sim.crash("a")
    sim.restart("a")
    assert sim.storage_epoch("a") == 0
    sim.crash("a")
    sim.restart("a", new_storage=True)
    assert sim.storage_epoch("a") == 1
    assert seen == [("a", "crash"), ("a", "restart"), ("a", "crash"), ("a", "restart-new-storage")]
    assert sim.events[-1].attrs == {"storage": "new", "storage_epoch": 1}


def _two_servers(seed: int, config: NetConfig) -> tuple[Simulator, Network, list]:
    sim = _sim(seed)
    topo = Topology([Server("a", "s1"), Server("b", "s2")], [("s1", "s2", 5)])
    net = Network(sim, topo, config)
    got: list = []
    net.register("b", got.append)
    return sim, net, got


def test_network_loss_and_duplication_are_recorded():
    sim, net, got = _two_servers(1, NetConfig(latency_ms=(1, 10), loss=1.0))
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    assert got == [] and [e.kind for e in sim.events[1:]] == ["NET_SEND", "NET_DROP"]
    sim, net, got = _two_servers(1, NetConfig(latency_ms=(1, 10), duplicate=1.0))
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    assert len(got) == 2 and [e.kind for e in sim.events[1:]] == ["NET_SEND", "NET_RECV", "NET_RECV"]


def test_random_latency_reorders_messages():
    sim, net, got = _two_servers(3, NetConfig(latency_ms=(1, 1000)))
    for i in range(50):
        net.send("a", "b", {"i": i}, mechanism="core", entity="x", kind="PING")
    sim.run()
    order = [env.payload["i"] for env in got]
    assert sorted(order) == list(range(50)) and order != list(range(50))


def test_partition_and_crash_drop_messages_heal_restores():
    sim, net, got = _two_servers(1, NetConfig(latency_ms=(1, 1)))
    net.partition(["a"])
    assert not net.reachable("a", "b")
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    net.heal()
    sim.crash("b")
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    sim.restart("b")
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    reasons = [e.attrs["reason"] for e in sim.events if e.kind == "NET_DROP"]
    assert reasons == ["partitioned", "receiver down"] and len(got) == 1


def test_transport_cost_is_shortest_path_and_boundaries():
    topo = Topology(
        [Server("a", "s1", dag="d"), Server("b", "s2", dag="d"), Server("c", "s3"), Server("e", "s1")],
        [("s1", "s2", 10), ("s2", "s3", 1), ("s1", "s3", 3)],
    )
    assert topo.transport_cost("a", "b") == 4  # via s3
    assert topo.transport_cost("a", "e") == 0
    assert topo.boundary("a") == "dag:d" and topo.boundary("c") == "site:s3"
    assert topo.dag_spans_sites("d") and topo.boundary_members("a") == ["a", "b"]
    isolated = Topology([Server("a", "s1"), Server("b", "s2")])
    assert isolated.transport_cost("a", "b") is None


def test_random_topology_is_connected_and_deterministic():
    import random

    t1 = random_topology(random.Random(5), n_servers=7, n_sites=3)
    t2 = random_topology(random.Random(5), n_servers=7, n_sites=3)
    assert t1.servers == t2.servers
    assert all(t1.connected(a, b) for a in t1.names() for b in t1.names())


def test_same_seed_gives_byte_identical_traces_and_different_seeds_differ(tmp_path):
    for suffix in ("jsonl", "parquet"):
        a, b, c = (tmp_path / f"{n}.{suffix}" for n in "abc")
        write_events(a, simulate(11, duration_ms=10 * MINUTE))
        write_events(b, simulate(11, duration_ms=10 * MINUTE))
        write_events(c, simulate(12, duration_ms=10 * MINUTE))
        assert a.read_bytes() == b.read_bytes()
        assert a.read_bytes() != c.read_bytes()


def test_network_config_change_is_recorded_and_applies():
    sim, net, got = _two_servers(1, NetConfig(latency_ms=(1, 1)))
    net.set_config(NetConfig(latency_ms=(1, 1), loss=1.0))
    net.send("a", "b", {}, mechanism="core", entity="x", kind="PING")
    sim.run()
    assert got == [] and sim.events[1].kind == "NET_CONFIG" and sim.events[1].attrs["loss_ppm"] == 1_000_000


def test_add_server_joins_the_topology():
    topo = Topology([Server("a", "s1")], [("s1", "s2", 7)])
    topo.add_server(Server("b", "s2"))
    assert topo.transport_cost("a", "b") == 7
    with pytest.raises(Exception, match="duplicate"):
        topo.add_server(Server("b", "s2"))
