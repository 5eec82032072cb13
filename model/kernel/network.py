"""The simulated network: latency, loss, duplication, reordering, partitions and dead nodes.

Every send records `NET_SEND` at the sender; a delivered copy records `NET_RECV` at the receiver and
calls the receiver's handler; a lost copy records `NET_DROP` with the reason. Reordering arises from
independent random latencies. Partitions split the servers into groups that cannot reach each other; a
crashed node neither sends nor receives. Loss, duplication and latency are choice points (issue 33: `NET_LOST`,
`NET_DUPLICATE`, `NET_LATENCY` through `sim.choices`): in simulation drawn from the simulator's one generator
exactly as the direct `sim.rng` calls were (traces byte-identical per seed), in exploration each allowed outcome
is a successor (a probability of 0 or a fixed latency is no choice).
These events let the mechanism-independent rule TR-003 (received implies sent earlier) be checked on
any trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.kernel.sim import Simulator
from model.kernel.topology import Topology

NET_LOST = "net.lost"  # a copy of the message is lost (NetConfig.loss)
NET_DUPLICATE = "net.duplicate"  # the message is delivered twice (NetConfig.duplicate)
NET_LATENCY = "net.latency"  # how long a copy takes, in NetConfig.latency_ms


@dataclass(frozen=True, slots=True)
class NetConfig:
    latency_ms: tuple[int, int] = (5, 50)
    loss: float = 0.0
    duplicate: float = 0.0

    def __post_init__(self) -> None:
        lo, hi = self.latency_ms
        if not 0 <= lo <= hi:
            raise ValueError(f"latency_ms must satisfy 0 <= lo <= hi, got {self.latency_ms}")
        for name in ("loss", "duplicate"):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability, got {p}")


@dataclass(frozen=True, slots=True)
class Envelope:
    wire_id: int
    src: str
    dst: str
    sent_ms: int
    mechanism: str
    entity: str
    kind: str
    payload: Mapping[str, Any] = field(default_factory=dict)


Handler = Callable[[Envelope], None]


class Network:
    def __init__(self, sim: Simulator, topology: Topology, config: NetConfig | None = None) -> None:
        self.sim = sim
        self.topology = topology
        self.config = config or NetConfig()
        self._handlers: dict[str, Handler] = {}
        self._group: dict[str, int] = {}
        self._next_wire = 0
        for name in topology.names():
            sim.add_node(name)

    def register(self, node: str, handler: Handler) -> None:
        self.sim.add_node(node)
        self._handlers[node] = handler

    def set_config(self, config: NetConfig) -> None:
        """Change latency, loss or duplication from now on (recorded, so the trace shows the change)."""
        self.config = config
        self.sim.emit(
            "sim",
            "core",
            "network",
            "NET_CONFIG",
            latency_ms=list(config.latency_ms),
            loss_ppm=round(config.loss * 1_000_000),
            duplicate_ppm=round(config.duplicate * 1_000_000),
        )

    # --- partitions -------------------------------------------------------------------------------
    def partition(self, *groups: Iterable[str]) -> None:
        """Split the network: nodes in different groups cannot reach each other; unlisted nodes form
        one further group together."""
        self._group = {}
        for i, g in enumerate(groups):
            for n in g:
                self._group[n] = i
        self.sim.emit("sim", "core", "network", "PARTITION", groups=[",".join(sorted(g)) for g in map(list, groups)])

    def heal(self) -> None:
        self._group = {}
        self.sim.emit("sim", "core", "network", "HEAL")

    def reachable(self, a: str, b: str) -> bool:
        """Both up, on the same side of any partition, and joined in the topology."""
        return self.sim.is_up(a) and not self._blocked(a, b)

    # --- sending ----------------------------------------------------------------------------------
    def send(
        self,
        src: str,
        dst: str,
        payload: Mapping[str, Any] | None = None,
        *,
        mechanism: str,
        entity: str,
        kind: str,
    ) -> int:
        wire = self._next_wire
        self._next_wire += 1
        env = Envelope(wire, src, dst, self.sim.now_ms, mechanism, entity, kind, dict(payload or {}))
        self.sim.emit(src, mechanism, entity, "NET_SEND", wire=wire, src=src, dst=dst, msg=kind)
        if not self.sim.is_up(src):
            self._drop(env, "sender down")
            return wire
        choose = self.sim.choices  # choice points (issue 33): drawn as `sim.rng` did in simulation
        if choose.chance(NET_LOST, self.config.loss):
            self._drop(env, "lost")
            return wire
        copies = 2 if choose.chance(NET_DUPLICATE, self.config.duplicate) else 1
        for _ in range(copies):
            self.sim.after(choose.randint(NET_LATENCY, *self.config.latency_ms), self._arrive, env)
        return wire

    def _drop(self, env: Envelope, reason: str) -> None:
        self.sim.emit(
            env.src,
            env.mechanism,
            env.entity,
            "NET_DROP",
            wire=env.wire_id,
            src=env.src,
            dst=env.dst,
            msg=env.kind,
            reason=reason,
        )

    def _arrive(self, env: Envelope) -> None:
        """A copy in flight survives its sender's crash; it is lost if the receiver is down or cut off."""
        reason = self._blocked(env.src, env.dst)
        if reason:
            self._drop(env, reason)
        else:
            self._deliver(env)

    def _blocked(self, src: str, dst: str) -> str:
        if not self.sim.is_up(dst):
            return "receiver down"
        if self._group.get(src, -1) != self._group.get(dst, -1):
            return "partitioned"
        if src in self.topology.servers and dst in self.topology.servers and not self.topology.connected(src, dst):
            return "no route"
        return ""

    def _deliver(self, env: Envelope) -> None:
        self.sim.emit(
            env.dst, env.mechanism, env.entity, "NET_RECV", wire=env.wire_id, src=env.src, dst=env.dst, msg=env.kind
        )
        handler = self._handlers.get(env.dst)
        if handler is not None:
            handler(env)
