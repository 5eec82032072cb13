"""The Active Manager generator: random DAGs, copy states, failures, switchovers and partitions.

Seed 002, all sections. One `Simulator(seed)` supplies virtual time and the one random generator; every
workload and fault choice is drawn from it, and the configuration is recorded in `TRACE_START`. The
generator drives `ModelSystem` (the reference implementation of `protocol.ActiveManagerSystem`) and
records every event it returns at the current virtual time. Durations here are workload settings, not
requirements (interpretation AM-I15).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from model.am.bcss import Options
from model.am.decisions import Out
from model.am.protocol import Layout, ModelSystem, RngEnv
from model.am.state import (
    C_DEGRADED,
    C_HEALTHY,
    C_UNHEALTHY,
    CI_STATES,
    COMPONENTS,
    DIALS,
    DISCONNECTED_AND_HEALTHY,
    DISCONNECTED_AND_RESYNCHRONIZING,
    FAILED,
    HEALTHY,
    INITIALIZING,
    RESYNCHRONIZING,
    SEEDING_SOURCE,
    SUSPENDED,
)
from model.kernel.sim import MINUTE, SECOND, Simulator
from spec.catalogue import require
from traces.schema import Event

require("AM-017", "AM-021")

PASSIVE_STATUSES = (
    HEALTHY,
    HEALTHY,
    HEALTHY,
    DISCONNECTED_AND_HEALTHY,
    DISCONNECTED_AND_RESYNCHRONIZING,
    SEEDING_SOURCE,
    FAILED,
    SUSPENDED,
    INITIALIZING,
    RESYNCHRONIZING,
)


def record(sim: Simulator, dag: str, outs: list[Out]) -> None:
    """Record the events a step returned; the node is the server that acts or is concerned."""
    for entity, kind, attrs in outs:
        node = attrs.get("by") or attrs.get("pam") or attrs.get("server") or dag
        sim.emit(str(node), "am", entity, kind, **attrs)


class Driver:
    """Draws one input at a time from the rng and applies it to the system."""

    def __init__(self, sim: Simulator, system: ModelSystem, layout: Layout) -> None:
        self.sim, self.sys, self.layout = sim, system, layout
        self.rng: random.Random = sim.rng
        self.servers = layout.members + layout.standalone
        self.dbs = sorted(layout.copies)
        self.actions: list[tuple[int, Callable[[], list[Out]]]] = [
            (30, self.logs),
            (4, self.crash),
            (8, self.restart),
            (3, self.partition),
            (4, self.heal),
            (4, self.fail_db),
            (1, self.fail_store),
            (12, self.repair_or_change),
            (6, self.responder),
            (10, self.health),
            (3, self.dial),
            (5, self.switchover),
            (2, self.move_pam),
            (1, self.maintenance),
            (4, self.query),
        ]

    # --- the timers: records (bound method and arguments), never closures (issue 33) ---------------------
    def opening(self, prelude: Callable[[ModelSystem, Layout], list[Out]]) -> None:
        """A scripted opening: `prelude` is a module-level function (`mutants.PRELUDES`)."""
        record(self.sim, self.layout.dag, prelude(self.sys, self.layout))

    def tick(self, left: int) -> None:
        """One random input, then the next tick 1..120 s later while inputs are left."""
        self.step()
        if left > 1:
            self.sim.after(self.rng.randint(1, 120) * SECOND, self.tick, left - 1)

    def converge(self) -> None:
        record(self.sim, self.layout.dag, converge(self.sys, self.layout))

    def step(self) -> None:
        total = sum(w for w, _ in self.actions)
        pick = self.rng.randrange(total)
        for weight, fn in self.actions:
            if pick < weight:
                record(self.sim, self.layout.dag, fn())
                return
            pick -= weight

    def _server(self) -> str:
        return self.rng.choice(self.servers)

    def _db(self) -> str:
        return self.rng.choice(self.dbs)

    def logs(self) -> list[Out]:
        db = self._db()
        lags = {s: self.rng.choice((0, 0, 1, 3, 8, 15, 40)) for s in self.layout.copies[db]}
        return self.sys.generate_logs(db, self.rng.randint(1, 30), lags)

    def crash(self) -> list[Out]:
        s = self._server()
        if self.sim.is_up(s):
            self.sim.crash(s)
        return self.sys.crash(s)

    def restart(self) -> list[Out]:
        down = [s for s in self.servers if not self.sim.is_up(s)]
        s = self.rng.choice(down) if down else self._server()
        if not self.sim.is_up(s):
            self.sim.restart(s)
        return self.sys.restart(s)

    def partition(self) -> list[Out]:
        k = self.rng.randint(1, max(1, len(self.servers) // 2))
        return self.sys.partition([self.rng.sample(self.servers, k)])

    def heal(self) -> list[Out]:
        return self.sys.heal()

    def fail_db(self) -> list[Out]:
        return self.sys.fail_database(self._db())

    def fail_store(self) -> list[Out]:
        return self.sys.fail_store(self._server())

    def repair_or_change(self) -> list[Out]:
        db = self._db()
        s = self.rng.choice(self.layout.copies[db])
        r = self.rng
        change: dict[str, Any] = self.rng.choice(
            [
                {"status": HEALTHY},
                {"status": HEALTHY},
                {"status": r.choice(PASSIVE_STATUSES)},
                {"ci": r.choice(CI_STATES)},
                {"rq": r.choice((0, 5, 49, 50, 120))},
                {"blocked": r.random() < 0.5},
                {"suspended": r.random() < 0.5},
            ]
        )
        change = {{"ci": "content_index", "rq": "replay_queue"}.get(k, k): v for k, v in change.items()}
        return self.sys.set_copy(db, s, **change)

    def responder(self) -> list[Out]:
        server, comp = self._server(), self.rng.choice(COMPONENTS)[0]
        outs: list[Out] = []
        if self.rng.random() < 0.5:  # a correlated fault: the same component also fails elsewhere
            outs += self.sys.set_health(self._server(), comp, C_UNHEALTHY)
        return outs + self.sys.responder_failover(server, comp)

    def health(self) -> list[Out]:
        state = self.rng.choice((C_HEALTHY, C_DEGRADED, C_UNHEALTHY, C_UNHEALTHY))
        return self.sys.set_health(self._server(), self.rng.choice(COMPONENTS)[0], state)

    def dial(self) -> list[Out]:
        return self.sys.set_dial(self._server(), self.rng.choice(DIALS))

    def switchover(self) -> list[Out]:
        return self.sys.switchover(self._db(), self.rng.random() < 0.3)

    def move_pam(self) -> list[Out]:
        return self.sys.move_pam(self.rng.choice(self.layout.members))

    def maintenance(self) -> list[Out]:
        """The PAM is moved first (recorded), then the server goes down (AM-007)."""
        s = self.rng.choice(self.layout.members)
        record(self.sim, self.layout.dag, self.sys.maintenance(s))
        if self.sim.is_up(s):
            self.sim.crash(s)
        return []

    def query(self) -> list[Out]:
        return self.sys.query(self._db(), self._server())


def converge(system: ModelSystem, layout: Layout) -> list[Out]:
    """The liveness phase: faults stop (heal, restart, repair, health restored, mounts succeed).

    Fairness assumption of property `failover-mounts` (AM-020): after this, every database is mounted
    on exactly one copy and the DAG has a PAM."""
    env = system.env
    env.mount_fail, env.acll_short = 0.0, 0.0
    outs: list[Out] = []
    for s in layout.members + layout.standalone:
        outs += system.restart(s)
        for comp, _ in COMPONENTS:
            outs += system.set_health(s, comp, C_HEALTHY)
    for db, servers in sorted(layout.copies.items()):
        for s in servers:
            outs += system.set_copy(db, s, status=HEALTHY, blocked=False, suspended=False)
    return outs + system.heal()  # the last view change: standalone servers remount their own databases


def simulate(
    seed: int,
    *,
    steps: int = 200,
    members: int = 5,
    databases: int = 3,
    standalone: int = 1,
    flaws: frozenset[str] = frozenset(),
    bcss: Mapping[str, Any] | None = None,
    mount_fail: float = 0.15,
    liveness: bool = False,
    prelude: Callable[[ModelSystem, Layout], list[Out]] | None = None,
) -> list[Event]:
    """Run `steps` random inputs against a random DAG; deterministic in `seed`."""
    opts = Options().with_(**dict(bcss or {}))
    config = {
        "steps": steps,
        "members": members,
        "databases": databases,
        "standalone": standalone,
        "mount_fail": mount_fail,
        "liveness": liveness,
        "flaws": sorted(flaws),
        "bcss": options_json(opts),
    }
    sim = Simulator(
        seed, trace_id=f"am-s{seed}" + ("-" + "-".join(sorted(flaws)) if flaws else ""), mechanism="am", config=config
    )
    layout = Layout.random(sim.rng, members, databases, standalone)
    for s in layout.members + layout.standalone:
        sim.add_node(s)
    system = ModelSystem(layout, RngEnv(sim.rng, mount_fail, choices=sim.choices), flaws, opts=opts)
    record(sim, layout.dag, system.initial)
    driver = Driver(sim, system, layout)
    if prelude is not None:  # a scripted opening (mutants use it to reach their flaw), then random steps
        sim.after(SECOND, driver.opening, prelude)
    sim.after(MINUTE, driver.tick, steps)
    sim.run()
    if liveness:
        sim.after(MINUTE, driver.converge)
        sim.run()
    return sim.events


def options_json(opts: Options) -> dict[str, Any]:
    """Every BCSS option in force, the dial thresholds included: the monitor reads them back from
    TRACE_START (the seed gives no thresholds, AM-I09, so a trace must record the ones it ran under)."""
    return {k: [list(t) for t in v] if k == "thresholds" else v for k, v in asdict(opts).items()}


def shortest_failing(seed: int, fails: Callable[[list[Event]], bool], steps: int, **opts: Any) -> int | None:
    """The fewest steps with which `simulate(seed, steps=k, **opts)` still fails, or None if `steps` passes.

    A run with k steps is a prefix of the run with more (same seed, same draws), so failing is monotone in
    k and a binary search finds the shortest replay: `simulate(seed, steps=k, ...)` is the step list."""
    if not fails(simulate(seed, steps=steps, **opts)):
        return None
    if fails(simulate(seed, steps=0, **opts)):
        return 0  # the boot (and any scripted prelude) alone fails
    lo, hi = 0, steps  # simulate(seed, steps=lo) passes, steps=hi fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(simulate(seed, steps=mid, **opts)):
            hi = mid
        else:
            lo = mid
    return hi
