"""The kernel's own workload (`net`): servers gossip over a faulty network.

It exists to exercise the kernel (scheduler, network faults, crashes, restarts, partitions) and the
mechanism-independent trace rules TR-001..TR-006 on every corpus, before and beside the mechanism
models. Its mutants plant one recording bug each, giving traces with a known violation. Its registry entry
(`model.registry.NET`) names `simulate` and `MUTANTS` here, loaded on first use (session 14).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from model.kernel.network import Envelope, NetConfig, Network
from model.kernel.sim import MINUTE, SECOND, Simulator
from model.kernel.topology import random_topology
from traces.corpus import rename_trace
from traces.schema import Event


def _build(seed: int, n_servers: int, loss: float, duplicate: float) -> tuple[Simulator, Network]:
    config = {"n_servers": n_servers, "loss": loss, "duplicate": duplicate}
    sim = Simulator(seed, trace_id=f"net-s{seed}", mechanism="core", config=config)
    topo = random_topology(sim.rng, n_servers=n_servers, n_sites=2, n_dags=1)
    net = Network(sim, topo, NetConfig(latency_ms=(5, 200), loss=loss, duplicate=duplicate))
    return sim, net


class _Gossip:
    """The gossip run's behaviour as methods, so that every timer is a record (issue 33): a node's tick, a
    fault, and the answer to a PING (each draw from `sim.rng` in the order the closures it replaces drew)."""

    def __init__(self, sim: Simulator, net: Network) -> None:
        self.sim, self.net = sim, net
        self.names = net.topology.names()
        for n in self.names:
            net.register(n, self.on_message)

    def on_message(self, env: Envelope) -> None:
        if env.kind == "PING" and self.sim.rng.random() < 0.5:
            self.net.send(env.dst, env.src, {"of": env.wire_id}, mechanism="core", entity=env.entity, kind="PONG")

    def tick(self, node: str) -> None:
        sim = self.sim
        peer = sim.rng.choice([m for m in self.names if m != node])
        self.net.send(node, peer, {}, mechanism="core", entity=f"{node}->{peer}", kind="PING")
        sim.after(sim.rng.randint(1, 30) * SECOND, self.tick, node, node=node)

    def fault(self) -> None:
        sim, names = self.sim, self.names
        node = sim.rng.choice(names)
        roll = sim.rng.random()
        if not sim.is_up(node):
            sim.restart(node, new_storage=roll < 0.3)
            sim.after(sim.rng.randint(1, 30) * SECOND, self.tick, node, node=node)
        elif roll < 0.5:
            sim.crash(node)
        elif roll < 0.75:
            half = sim.rng.sample(names, len(names) // 2)
            self.net.partition(half)
        else:
            self.net.heal()
        sim.after(sim.rng.randint(1, 5) * MINUTE, self.fault)


def _gossip(sim: Simulator, net: Network, duration_ms: int) -> None:
    g = _Gossip(sim, net)
    for n in g.names:
        sim.after(sim.rng.randint(0, 10) * SECOND, g.tick, n, node=n)
    sim.after(MINUTE, g.fault)
    sim.run(until_ms=sim.start_ms + duration_ms)


def simulate(
    seed: int, *, n_servers: int = 4, duration_ms: int = 20 * MINUTE, loss: float = 0.05, duplicate: float = 0.05
) -> list[Event]:
    """A deterministic gossip run: the same seed gives the same events."""
    sim, net = _build(seed, n_servers, loss, duplicate)
    _gossip(sim, net, duration_ms)
    return sim.events


def _mutant(name: str, corrupt: Callable[[list[Event]], list[Event]]) -> Callable[..., list[Event]]:
    """A mutant run: the clean run, corrupted, under its own trace ID so corpora can mix them."""

    def run(seed: int, **options: int) -> list[Event]:
        return corrupt(rename_trace(simulate(seed, **options), name))

    return run


def _recv_without_send(events: list[Event]) -> list[Event]:
    """TR-003 twin: the first delivered message's NET_SEND is never recorded (a hole in the log)."""
    recv = next(e for e in events if e.kind == "NET_RECV")
    wire = recv.attrs["wire"]
    return [e for e in events if not (e.kind == "NET_SEND" and e.attrs.get("wire") == wire)]


def _clock_backwards(events: list[Event]) -> list[Event]:
    """TR-004 twin: one node's clock jumps back an hour half-way through the trace."""
    node = events[len(events) // 2].node
    return [
        dataclasses.replace(e, ts_ms=e.ts_ms - 60 * MINUTE) if e.node == node and i > len(events) // 2 else e
        for i, e in enumerate(events)
    ]


def _seq_repeat(events: list[Event]) -> list[Event]:
    """TR-001 twin: an event is recorded twice with the same sequence number under a new event ID."""
    mid = events[len(events) // 2]
    return [*events[: mid.seq + 1], dataclasses.replace(mid, event_id=mid.event_id + "b"), *events[mid.seq + 1 :]]


def _id_repeat(events: list[Event]) -> list[Event]:
    """TR-002 twin: two events share one event ID."""
    a, b = events[1], events[2]
    return [*events[:2], dataclasses.replace(b, event_id=a.event_id), *events[3:]]


def _no_start(events: list[Event]) -> list[Event]:
    """TR-006 twin: the TRACE_START event is missing."""
    return events[1:]


MUTANTS = {
    name: _mutant(name, corrupt)
    for name, corrupt in {
        "recv-without-send": _recv_without_send,
        "clock-backwards": _clock_backwards,
        "seq-repeat": _seq_repeat,
        "event-id-repeat": _id_repeat,
        "no-trace-start": _no_start,
    }.items()
}
