"""The interface an implementation of shadow redundancy offers to the conformance tests.

Seed 000. The conformance suite's state machine, `conformance.harness.machine("sr", factory)` (driver:
`conformance/harness/sr.py`; the project's `tests/sr/test_stateful.py` runs the model through it), drives
any object satisfying `ShadowRedundancySystem` and judges only the events it records, with the same
monitor as for traces; the reference model plugs in through `ModelSystem`. A transport in another
language speaks the stdio protocol of `conformance/PROTOCOL.md` (`haconform conform sr --sut "COMMAND"`)
and records events with the kinds and attributes of `model/sr/README.md`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from model.kernel.idle import fast_forward, noop_until
from model.kernel.sim import Simulator
from model.sr.cluster import Cluster, Policy, Timing
from model.sr.idle import Rearmer
from model.sr.sim import build_topology, quiesce, quiet_ms
from model.sr.state import SrConfig
from traces.schema import Event


@runtime_checkable
class ShadowRedundancySystem(Protocol):
    """Transport servers of one organisation under test, with virtual time and fault injection."""

    def servers(self) -> list[str]: ...

    def submit(self, msg: str, primary: str, forks: Sequence[str], origin: str = "outside") -> None:
        """A sender outside the boundary starts transmitting `msg` to `primary`."""

    def advance(self, ms: int) -> None:
        """Let virtual time pass."""

    def crash(self, server: str) -> None: ...

    def restart(self, server: str, new_database: bool = False) -> None: ...

    def isolate(self, server: str) -> None:
        """The server keeps running but nobody can reach it (network card failure)."""

    def heal(self) -> None: ...

    def safetynet_resubmit(self, server: str) -> None:
        """A mailbox database failover asks the server's Safety Net to resubmit."""

    def finish(self) -> None:
        """Fairness: restart every server, heal the network, run the quiet tail, record SNAPSHOTs."""

    def events(self) -> Sequence[Event]: ...


class ModelSystem:
    """The reference model behind `ShadowRedundancySystem`."""

    def __init__(
        self,
        seed: int,
        *,
        layout: str = "multi-site-dag",
        n_servers: int = 4,
        hub: bool = False,
        config: SrConfig | None = None,
        policy: Policy | None = None,
        timing: Timing | None = None,
        **cfg: Any,
    ) -> None:
        self.cfg = (config or SrConfig()).replace(**cfg)
        self.sim = Simulator(
            seed,
            trace_id=f"sr-stateful-s{seed}",
            mechanism="sr",
            config={"layout": layout, "n_servers": n_servers, "sr": self.cfg.to_json()},
        )
        topo = build_topology(self.sim.rng, n_servers, layout, hub)
        self.timing = timing or Timing()
        self.cluster = Cluster(self.sim, topo, self.cfg, policy, self.timing)

    def servers(self) -> list[str]:
        return list(self.cluster.exchange)

    def submit(self, msg: str, primary: str, forks: Sequence[str], origin: str = "outside") -> None:
        """Forks to an Exchange 2010 Hub are kept only when that Hub is in the primary's site (SR-037)."""
        topo = self.cluster.topo
        kept = [
            f for f in forks if not f.startswith("hub:") or (f[4:] in topo.servers and topo.same_site(f[4:], primary))
        ]
        self.cluster.submit(msg, primary, kept or ["mbx"], origin=origin)

    def advance(self, ms: int) -> None:
        """Run the timers for `ms`, jumping exactly over idle heartbeats (`model/sr/idle.py`, issue 33): the state
        left is the one `sim.run(until_ms=...)` leaves, every timer due by `until` run, those due at `until` itself
        included (session 14: `advance(0)` runs the timers due now, e.g. a queue expiry a restart scheduled for an
        overdue message, SR-067; stopping once the clock reached `until` left them pending, and the explorer's tick
        asked for `advance(0)` forever)."""
        sim, until = self.sim, self.sim.now_ms + ms
        while True:
            fast_forward(sim, until, Rearmer(self.cluster))
            if not sim.run(until_ms=until, max_steps=1):  # nothing due by `until` is left: the clock is at `until`
                return

    def quiet_until(self, until_ms: int) -> int:
        """The last instant, at most `until_ms`, up to which no timer run records anything (`idle.py`)."""
        return max(self.sim.now_ms, noop_until(self.sim, until_ms, Rearmer(self.cluster))[0])

    def crash(self, server: str) -> None:
        self.sim.crash(server)

    def restart(self, server: str, new_database: bool = False) -> None:
        self.sim.restart(server, new_storage=new_database)

    def isolate(self, server: str) -> None:
        self.cluster.isolate(server)

    def heal(self) -> None:
        self.cluster.heal()

    def safetynet_resubmit(self, server: str) -> None:
        self.cluster.safetynet_resubmit(server)

    def finish(self) -> None:
        quiesce(self.cluster)
        self.advance(quiet_ms(self.cfg, self.timing))
        self.cluster.snapshot(quiesced=True)

    def events(self) -> Sequence[Event]:
        return self.sim.events
